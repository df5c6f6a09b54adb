"""Reformat and transition copies: bytes over an effective bandwidth plus a fixed floor.

reference/gpu_tensorrt.md s3.3: t_reformat ~ max(t_floor, bytes_rw / BW_eff) with BW_eff a fraction of
DRAM peak; reference/dla.md s0.1 fact 14 and s5.1: copies into and out of DLA memory ("data to nvm",
"from nvm") and GPU<->DLA hand-overs add a synchronisation cost per boundary.
"""
from __future__ import annotations

from ..hardware import Platform
from ..plan import Step
from . import StepCost, finish


def copy_cost(step: Step, plat: Platform) -> StepCost:
    cp = plat.copies
    nbytes = step.attrs["bytes_read"] + step.attrs["bytes_written"]
    touches_dla = step.kind == "transition" or "dla" in (step.attrs.get("toward"), step.attrs.get("from"))
    eff = cp.dla_copy_efficiency if (touches_dla and cp.dla_copy_efficiency) else cp.reformat_efficiency
    memory = nbytes / (plat.memory.dram_bandwidth_bytes_per_s * eff)
    sync = cp.transition_overhead_s if touches_dla else 0.0
    return finish(0.0, memory, sync, 0, nbytes, cp.reformat_floor_s)
