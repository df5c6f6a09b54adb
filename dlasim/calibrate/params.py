"""Fittable spec parameters: dotted names, their priors and bounds, and a platform with values applied.

Parameters are dotted spec paths ("dla.mac_efficiency", "gpu.kernel_floor_s", "copies.reformat_floor_s", ...).
Bounds come from the pydantic field constraints, narrowed to sensible ranges: efficiencies (0.02, 1], times
(0, 1 ms]. A parameter vector is applied with `model_copy(update=...)` on the sub-block, so nothing is read or
written in a fit's loop.
"""
from __future__ import annotations

import math

from ..errors import DlasimError
from ..hardware import Copies, Dla, Gpu, Memory, Platform

BLOCKS = {"dla": Dla, "gpu": Gpu, "copies": Copies, "memory": Memory}
# Optional fields whose unset value falls back to another field in the cost model (hardware.py, cost/)
FALLBACK_PRIOR = {"dla.mac_efficiency_fp16": "dla.mac_efficiency",
                  "copies.dla_copy_efficiency": "copies.reformat_efficiency",
                  "gpu.conv1x1_efficiency": "gpu.memory_efficiency", "gpu.conv1x1_floor_s": "gpu.kernel_floor_s",
                  "gpu.gemm_floor_s": "gpu.kernel_floor_s",
                  "gpu.gemv_efficiency": "gpu.memory_efficiency", "gpu.gemv_floor_s": "gpu.kernel_floor_s",
                  "gpu.depthwise_efficiency": "gpu.memory_efficiency",
                  "gpu.depthwise_floor_s": "gpu.memory_kernel_floor_s",
                  "gpu.reduce_efficiency": "gpu.memory_efficiency", "gpu.reduce_floor_s": "gpu.memory_kernel_floor_s"}
EFF_BOUNDS = (0.02, 1.0)
TIME_BOUNDS = (1e-8, 1e-3)          # 0 is not reachable in log space; 10 ns is zero for every step
DEFAULT_PARAMS = {
    "gpu": ["gpu.tensor_efficiency", "gpu.kernel_floor_s", "gpu.memory_kernel_floor_s", "gpu.memory_efficiency",
            "copies.reformat_floor_s"],
    "dla": ["dla.layer_overhead_s", "dla.subgraph_overhead_s", "copies.dla_copy_efficiency",
            "copies.transition_overhead_s"],
}


def _split(name: str) -> tuple[str, str]:
    block, _, key = name.rpartition(".")
    if block not in BLOCKS or key not in BLOCKS[block].model_fields:
        known = ", ".join(f"{b}.<field>" for b in BLOCKS)
        raise DlasimError(f"calibrate: unknown parameter {name!r} (expected {known}, a numeric spec field)")
    return block, key


def get_param(plat: Platform, name: str) -> float | None:
    block, key = _split(name)
    obj = getattr(plat, block)
    if obj is None:
        raise DlasimError(f"calibrate: {plat.name} has no [{block}] block for parameter {name}")
    value = getattr(obj, key)
    if value is not None and not isinstance(value, (int, float)) or isinstance(value, bool):
        raise DlasimError(f"calibrate: {name} is not a number")
    return None if value is None else float(value)


def prior_value(plat: Platform, name: str) -> float:
    """The value the cost model uses now (an unset optional field falls back as the model does)."""
    v = get_param(plat, name)
    if v is None and name in FALLBACK_PRIOR:
        v = get_param(plat, FALLBACK_PRIOR[name])
    if v is None:
        raise DlasimError(f"calibrate: {name} is not set in {plat.name} and has no fallback")
    return v


def apply(plat: Platform, values: dict[str, float]) -> Platform:
    """A copy of `plat` with the dotted parameters replaced (no validation, no file I/O)."""
    per_block: dict[str, dict] = {}
    for name, v in values.items():
        block, key = _split(name)
        per_block.setdefault(block, {})[key] = None if v is None else float(v)
    upd = {}
    for block, kv in per_block.items():
        obj = getattr(plat, block)
        if obj is None:
            raise DlasimError(f"calibrate: {plat.name} has no [{block}] block")
        upd[block] = obj.model_copy(update=kv)
    return plat.model_copy(update=upd)


def bounds_of(name: str) -> tuple[float, float]:
    """Bounds of a parameter: its pydantic constraints intersected with a sensible range."""
    block, key = _split(name)
    info = BLOCKS[block].model_fields[key]
    lo, hi = -math.inf, math.inf
    for m in info.metadata:
        for attr, side in (("gt", "lo"), ("ge", "lo"), ("lt", "hi"), ("le", "hi")):
            v = getattr(m, attr, None)
            if v is not None:
                if side == "lo":
                    lo = max(lo, float(v))
                else:
                    hi = min(hi, float(v))
    if "efficiency" in key:
        dlo, dhi = EFF_BOUNDS
    elif key.endswith("_bytes_per_s"):          # a bandwidth, not a time
        dlo, dhi = 1e9, 1e14
    elif key.endswith("_s"):
        dlo, dhi = TIME_BOUNDS
    elif key.endswith("_per_cycle"):         # bytes or elements per clock of a unit
        dlo, dhi = 0.1, 1e4
    elif key == "sparse_k_half":
        dlo, dhi = 1.0, 1e5
    else:
        dlo, dhi = 1e-6, 1e12
    return max(lo, dlo), min(hi, dhi)


def check_names(names: list[str]) -> None:
    """Raise DlasimError naming the first name that is not a numeric field of a spec block."""
    for name in names:
        _split(name)
