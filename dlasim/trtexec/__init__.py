"""Measured trtexec files -> MeasuredProfile: tolerant readers for calibration and validation, one per format.

- `profile`: `--exportProfile` JSON (gpu_tensorrt.md s4.2), and the profiling-overhead correction;
- `layer_info`: `--exportLayerInfo` JSON (gpu_tensorrt.md s4.3) and its join onto a profile;
- `log`: the console "Performance summary" of TRT 7.x / 8.x; `metadata`: trex `*.metadata.json` (s4.5);
- `names`: profile row names -> covered layer names and kinds (gpu_tensorrt.md s3.2, s5.2; dla.md s3.4);
- `records`: the MeasuredLayer / MeasuredProfile records they share; `summary`: `dlasim profile`.

Nothing here prints; unreadable or malformed files raise ModelError with one line naming the file.
"""
from .layer_info import join_layer_info, parse_layer_info, tile_from_tactic
from .log import parse_trtexec_log
from .metadata import parse_metadata
from .names import KNOWN_LAYER_TYPES, abbreviate_name, classify, split_layer_names
from .profile import corrected_rows, parse_profile
from .records import DEFAULT_PER_LAYER_OVERHEAD_MS, DLA_TIME_NOTE, KINDS, MeasuredLayer, MeasuredProfile
from .summary import profile_summary, render_profile_table

__all__ = ["DEFAULT_PER_LAYER_OVERHEAD_MS", "DLA_TIME_NOTE", "KINDS", "KNOWN_LAYER_TYPES", "MeasuredLayer",
           "MeasuredProfile", "abbreviate_name", "classify", "corrected_rows", "join_layer_info", "parse_layer_info",
           "parse_metadata", "parse_profile", "parse_trtexec_log", "profile_summary", "render_profile_table",
           "split_layer_names", "tile_from_tactic"]
