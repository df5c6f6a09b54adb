"""Cost functions per step, given a Platform: pure functions returning a StepCost with named parts.

time = max(compute, memory) + overhead, with the bound named (reference/dla.md s1.5 and s6.1: the NVDLA
performance spreadsheet's per-layer max of MAC and DRAM cycles; gpu_tensorrt.md s6.5: max(floor, FLOPs
over effective peak, bytes over bandwidth)). `parts` (a CostParts) carries the pieces the explain step
attributes to causes (ideal time, channel padding, CBUF refetch, tile/wave quantization, sparsity outcome).
"""
from __future__ import annotations

from ..plan import Plan, Step
from . import copies, dla, gpu
from .geometry import ConvShape, step_conv_shape
from .parts import CostParts, StepCost, Tiling, finish

__all__ = ["CostParts", "StepCost", "Tiling", "clear_caches", "cost_layer", "cost_step", "finish"]


def cost_step(step: Step, plan: Plan) -> StepCost:
    if step.kind in ("reformat", "transition"):
        return copies.copy_cost(step, plan.platform)
    if step.kind == "overhead":
        return dla.launch_cost(step, plan.platform)
    return cost_layer(step, plan, step_conv_shape(step, plan.graph))


def cost_layer(step: Step, plan: Plan, cs: ConvShape | None) -> StepCost:
    """A layer step's cost, `cs` its convolution shape (geometry.step_conv_shape; None: not a conv/FC/MatMul),
    for a caller that has it already (simulate.estimate_plan reads it for the report too)."""
    if step.device == "dla":
        return dla.layer_cost(step, plan.graph, plan.platform, cs, plan.options.sparsity)
    return gpu.layer_cost(step, plan.graph, plan.platform, cs, plan.options.sparsity)


def clear_caches() -> None:
    """Forget the per-layer results the cost model reuses (cost/dla.py, cost/gpu.py, cost/copies.py)."""
    dla.clear_caches()
    gpu.clear_caches()
    copies.clear_caches()
