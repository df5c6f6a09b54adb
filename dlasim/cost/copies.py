"""Reformat and transition copies: bytes over an effective bandwidth plus a fixed floor.

- GPU reformats (reference/gpu_tensorrt.md s3.3): t ~ max(t_floor, (bytes read + written) / BW_eff), BW_eff
  a share of DRAM peak; the A100 table there shows time growing with the bytes written (FP32 -> FP16 NHWC4
  takes 1.32x the FP32 -> INT8 NC/4HW4 copy of the same input).
- Copies into and out of DLA memory ("data to nvm", "from nvm") and GPU<->DLA transitions (reference/dla.md
  s0.1 fact 14, s5.1): seed 000's breakdown (validation/data/seeds/xavier_dla_conv_breakdown.csv) shows the
  same time for INT8 and FP16 engines although one writes half the bytes, so the larger of the read and
  write streams sets the time; each such copy also pays the hand-over synchronisation.
- Both kinds are GPU kernels (TensorRT's reformat / "to nvm" copies run on the SMs): their DRAM share is
  scaled by the same SM-side streaming limit as other memory-bound GPU kernels (cost/gpu.py sm_stream_scale).
"""
from __future__ import annotations

from ..hardware import Platform
from ..plan import Step
from .parts import StepCost, entry, finish
from .gpu import sm_stream_scale


# copy_cost results by everything they depend on: the platform (matched by identity, kept by the entry: frozen),
# the bytes read and written and whether the copy touches DLA memory; the same boundary copies recur across a
# network's islands and a search's candidates. Bounded: emptied when full (cost.clear_caches empties it too).
_COPY: dict = {}
COPY_CACHE_SIZE = 4096


def clear_caches() -> None:
    _COPY.clear()


def copy_cost(step: Step, plat: Platform) -> StepCost:
    rd, wr = step.copy.bytes_read, step.copy.bytes_written
    touches_dla = step.kind == "transition" or step.copy.touches_dla
    key = (id(plat), rd, wr, touches_dla)
    hit = _COPY.get(key)
    if hit is None or hit[0] is not plat:
        if len(_COPY) >= COPY_CACHE_SIZE:
            _COPY.clear()
        hit = _COPY[key] = entry(plat, _copy_cost_of(plat, rd, wr, touches_dla))
    # a record of the caller's own (StepCost is mutable), the parts shared (CostParts is frozen)
    return StepCost(*hit[1:])


def _copy_cost_of(plat: Platform, rd: int, wr: int, touches_dla: bool) -> StepCost:
    cp = plat.copies
    bw = plat.memory.dram_bandwidth_bytes_per_s * sm_stream_scale(plat)
    if touches_dla:
        memory = max(rd, wr) / (bw * (cp.dla_copy_efficiency or cp.reformat_efficiency))
        sync = cp.transition_overhead_s
    else:
        memory = (rd + wr) / (bw * cp.reformat_efficiency)
        sync = 0.0
    return finish(0.0, memory, sync, 0, rd + wr, cp.reformat_floor_s)
