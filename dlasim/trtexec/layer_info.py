"""`--exportLayerInfo` JSON -> normalized layer dicts, and their join onto a MeasuredProfile.

`{"Layers": [...], "Bindings": [...]}` with detailed dicts, or names only (the default `layer_names_only`
verbosity); older files lack `Bindings` (gpu_tensorrt.md s4.3).
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ..errors import ModelError
from .names import KNOWN_LAYER_TYPES, classify, strip_profile_suffix
from .records import MeasuredProfile, load_json

_TILE = re.compile(r"tilesize(\d+(?:x\d+)+)")
_CUDNN_TILE = re.compile(r"cudnn_(?:int8x4_|int8_)?(\d+x\d+)(?:_|$)")
_VECTOR_WIDTH = {"two": 2, "four": 4, "eight": 8, "sixteen": 16, "thirty-two": 32}
_DTYPES = ("fp32", "fp16", "bf16", "fp8", "fp4", "int8", "int32", "int64", "int4", "uint8", "bool")


def tile_from_tactic(tactic: str | None) -> list[int] | None:
    """CTA tile of a kernel name: `..._tilesize256x64x32_...` -> [256, 64, 32]; cuDNN `_128x64_` too."""
    if not tactic:
        return None
    m = _TILE.search(tactic) or _CUDNN_TILE.search(tactic)
    return [int(v) for v in m.group(1).split("x")] if m else None


def _layout(fmt: str) -> str | None:
    """Short layout of a TRT "Format/Datatype" string, after trex activations.py (gpu_tensorrt.md s3.4)."""
    f = fmt.lower()
    m = re.match(r"(two|four|eight|sixteen|thirty-two) wide channel vectorized", f)
    if m:
        k = _VECTOR_WIDTH[m.group(1)]
        return f"NC/{k}HW{k}"
    if f.startswith("channel major"):
        m = re.search(r"channel % (\d+) == 0", f)
        return "NHWC" + (m.group(1) if m else "")
    if f.startswith("row major"):
        return "NCHW"
    return None


def _tensor(t) -> dict:
    if not isinstance(t, dict):
        return {"name": str(t), "dims": None, "format": None, "dtype": None, "layout": None}
    fmt = t.get("Format/Datatype")
    dtype = None
    if isinstance(fmt, str):
        dtype = next((d for d in _DTYPES if re.search(rf"\b{d}\b", fmt.lower())), None)
    return {"name": t.get("Name"), "dims": t.get("Dimensions"), "format": fmt, "dtype": dtype,
            "layout": _layout(fmt) if isinstance(fmt, str) else None, "location": t.get("Location")}


_LAYER_KEYS = {"Name", "LayerType", "Inputs", "Outputs", "TacticName", "TacticValue", "Origin",
               "HasSparseWeights", "ConvHasSparseWeights"}


def _layer(entry, index: int, bindings: set) -> dict:
    """Normalize one exportLayerInfo entry (detailed dict, or a bare name)."""
    if isinstance(entry, str):
        return {"name": entry, "layer_type": None, "inputs": [], "outputs": [], "tactic": None,
                "tactic_value": None, "tile": None, "has_sparse_weights": None, "origin": None,
                "unknown_type": False, "detailed": False, "params": {}}
    if not isinstance(entry, dict):
        return _layer(str(entry), index, bindings)
    layer_type = entry.get("LayerType")
    sparse = entry.get("HasSparseWeights", entry.get("ConvHasSparseWeights"))
    tactic = entry.get("TacticName")
    inputs = [_tensor(t) for t in entry.get("Inputs") or []]
    outputs = [_tensor(t) for t in entry.get("Outputs") or []]
    for t in inputs + outputs:
        t["binding"] = t["name"] in bindings
    return {"name": entry.get("Name") or f"<layer {index}>", "layer_type": layer_type,
            "inputs": inputs, "outputs": outputs, "tactic": tactic, "tactic_value": entry.get("TacticValue"),
            "tile": tile_from_tactic(tactic), "has_sparse_weights": None if sparse is None else bool(sparse),
            "origin": entry.get("Origin"),
            "unknown_type": layer_type is not None and layer_type not in KNOWN_LAYER_TYPES,
            "detailed": True, "params": {k: v for k, v in entry.items() if k not in _LAYER_KEYS}}


def _check_layer_entry(path, index: int, entry) -> None:
    """A layer-info entry is a name or an object whose Name (when given) is a string."""
    if isinstance(entry, str) and entry:
        return
    if isinstance(entry, dict):
        name = entry.get("Name")
        if name is not None and not isinstance(name, str):
            raise ModelError(f"{path}: Layers[{index}]: field Name: expected a string, got {type(name).__name__}")
        for key in ("Inputs", "Outputs"):
            if entry.get(key) is not None and not isinstance(entry[key], list):
                raise ModelError(f"{path}: Layers[{index}]: field {key}: expected a list, "
                                 f"got {type(entry[key]).__name__}")
        return
    got = "null" if entry is None else "an empty name" if entry == "" else type(entry).__name__
    raise ModelError(f"{path}: Layers[{index}] is {got}, expected a layer name or an object")


def parse_layer_info(path) -> list[dict]:
    """Read a trtexec `--exportLayerInfo` JSON file (gpu_tensorrt.md s4.3) into normalized dicts.

    Each dict has name, layer_type (None for the names-only form), inputs/outputs ({name, dims, format,
    dtype, layout, binding}), tactic, tactic_value, tile, has_sparse_weights, origin, unknown_type
    (a layer type this module does not know; kept), detailed, and params (the remaining keys).
    """
    p = Path(path)
    data = load_json(p)
    bindings: set = set()
    if isinstance(data, dict):
        if "Layers" not in data:
            raise ModelError(f"{p}: expected a 'Layers' list (trtexec --exportLayerInfo)")
        layers = data["Layers"]
        bindings = {b for b in data.get("Bindings") or [] if isinstance(b, str)}
    else:
        layers = data
    if not isinstance(layers, list):
        raise ModelError(f"{p}: 'Layers' must be a list, got {type(layers).__name__}")
    for i, entry in enumerate(layers):
        _check_layer_entry(p, i, entry)
    return [_layer(entry, i, bindings) for i, entry in enumerate(layers)]


def join_layer_info(profile: MeasuredProfile, layer_info: list[dict]) -> MeasuredProfile:
    """Attach layer types, tactics, tiles and sparse flags to the profile rows, matching by name."""
    by_name = {}
    for info in layer_info:
        by_name.setdefault(info["name"], info)
        by_name.setdefault(strip_profile_suffix(info["name"]), info)
    rows, unmatched = [], 0
    for row in profile.rows:
        info = by_name.get(row.name) or by_name.get(strip_profile_suffix(row.name))
        if info is None:
            unmatched += 1
            rows.append(row)
            continue
        extra = dict(row.extra, layer_type=info["layer_type"], tactic=info["tactic"], tile=info["tile"],
                     has_sparse_weights=info["has_sparse_weights"], origin=info["origin"])
        rows.append(replace(row, kind=classify(row.name, info["layer_type"], row.time_ms), extra=extra))
    warnings = list(profile.warnings)
    if rows and unmatched == len(rows):
        raise ModelError(f"{profile.source}: none of its {len(rows)} rows has an entry in the layer info: the "
                         f"names differ; give the --exportLayerInfo of the same engine")
    if unmatched:
        warnings.append(f"{unmatched} profile row(s) have no entry in the layer info "
                        f"({len(rows) - unmatched} of {len(rows)} matched)")
    unknown = sorted({i["layer_type"] for i in layer_info if i["unknown_type"]})
    if unknown:
        warnings.append("unknown layer type(s) kept: " + ", ".join(unknown))
    return replace(profile, rows=rows, warnings=warnings)
