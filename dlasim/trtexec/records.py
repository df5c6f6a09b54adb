"""Record types of a measured trtexec profile, shared by the readers of each format.

Kinds and the DLA time note follow gpu_tensorrt.md s3.2, s4.2 and dla.md s3.4 (paths relative to the shared
reference folder).
"""
from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("reformat", "dla_subgraph", "conv", "pool", "pointwise", "fc", "softmax", "concat", "noop",
         "other")

# Per executed layer, the profiled sum exceeds the un-profiled GPU compute time by 1.7 us (TITAN RTX,
# 6610 iterations) to 5.5-7.5 us (A100, one iteration): gpu_tensorrt.md s4.2 and s7 item 13.
DEFAULT_PER_LAYER_OVERHEAD_MS = 0.002

DLA_TIME_NOTE = (
    "On TensorRT 7 (Xavier) the DLA subgraph row '{...}' holds only the enqueue (~0.16 ms); the DLA "
    "execution time is carried by the GPU-side row that waits for the result (the subgraph's 'output "
    "reformatter', 'X from nvm', or the next layer's 'input reformatter'), see dla.md s3.4 and "
    "data/README.md. On TensorRT >= 8.5 (Orin) the time sits in the {ForeignNode[...]} row itself "
    "(on discrete GPUs a ForeignNode is a Myelin graph, not DLA)."
)


@dataclass
class MeasuredLayer:
    """One row of a measured profile (times per inference, in ms)."""
    name: str
    time_ms: float                      # averageMs: total over the profiled runs / runs
    kind: str                           # one of KINDS
    median_ms: float | None = None      # medianMs (TRT >= 8.4)
    percentage: float | None = None
    layers: list[str] = field(default_factory=list)   # original layer names the row covers
    extra: dict = field(default_factory=dict)


@dataclass
class MeasuredProfile:
    """A parsed `--exportProfile` file; `total_ms` is the sum of the rows' averageMs."""
    rows: list[MeasuredLayer]
    count: int | None
    total_ms: float
    source: str
    warnings: list[str] = field(default_factory=list)
    summary: dict | None = None         # performance summary of the same run, when found next to it


def load_json(path) -> object:
    """Parse a JSON file (a regular file, size-capped) or raise a one-line ModelError naming it."""
    from ..safeio import load_json as _load
    return _load(path, "trtexec JSON file")
