"""Cost functions per step, given a Platform: pure functions returning a StepCost with named parts.

time = max(compute, memory) + overhead, with the bound named (reference/dla.md s1.5 and s6.1: the NVDLA
performance spreadsheet's per-layer max of MAC and DRAM cycles; gpu_tensorrt.md s6.5: max(floor, FLOPs
over effective peak, bytes over bandwidth)). `parts` carries the pieces the explain step attributes to
causes (ideal time, channel padding, CBUF refetch, tile/wave quantization, sparsity outcome).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..plan import Plan, Step


@dataclass(slots=True)
class StepCost:
    compute_s: float
    memory_s: float
    overhead_s: float
    total_s: float
    bound: str                  # "compute" | "memory" | "overhead"
    macs: int = 0
    bytes: int = 0
    parts: dict = field(default_factory=dict)


def finish(compute_s: float, memory_s: float, overhead_s: float, macs: int = 0, nbytes: int = 0,
           floor_s: float = 0.0, **parts) -> StepCost:
    """Combine parts: max(compute, memory, floor) + overhead, and name the bound."""
    body = max(compute_s, memory_s)
    bound = "compute" if compute_s >= memory_s else "memory"
    if floor_s > body:
        parts["floor_s"] = floor_s - body
        body = floor_s
        bound = "overhead"
    total = body + overhead_s
    if overhead_s > body:
        bound = "overhead"
    return StepCost(compute_s, memory_s, overhead_s, total, bound, int(macs), int(nbytes), parts)


def elems(tensors) -> int:
    """Elements of all `tensors` together (a loop: cheaper than sum() over a generator for one or two)."""
    total = 0
    for t in tensors:
        total += math.prod(t.shape)
    return total


def cost_step(step: Step, plan: Plan) -> StepCost:
    if step.kind in ("reformat", "transition"):
        return copies.copy_cost(step, plan.platform)
    if step.kind == "overhead":
        return dla.launch_cost(step, plan.platform)
    if step.device == "dla":
        return dla.layer_cost(step, plan.graph, plan.platform, plan.options.sparsity)
    return gpu.layer_cost(step, plan.graph, plan.platform, plan.options.sparsity)


def cost_plan(plan: Plan) -> list[StepCost]:
    return [cost_step(s, plan) for s in plan.steps]


# The cost models import StepCost and finish from this module, so they are imported once it defines them.
from . import copies, dla, gpu  # noqa: E402


def clear_caches() -> None:
    """Forget the per-layer results the cost model reuses (cost/dla.py)."""
    dla.clear_caches()
