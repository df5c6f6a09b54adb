"""Partition DLA steps into loadables (maximal connected DLA regions), enforcing the per-core limit.

TensorRT turns each maximal DLA-runnable region into one ForeignNode loadable (reference/dla.md s0.1 fact
13, s3.4). A region may not leave the DLA and come back (that would be a cycle between engines), so a step
joins a neighbouring region only if none of its other inputs depends on that region through the GPU.
At most `max_loadables_per_core` loadables fit one core (s3.1); later ones fall back to the GPU.
"""
from __future__ import annotations

from ..plan import Decision, Fallback, FallbackKind
from ..precision import run_precision
from .place import gpu_precision


def partition(plan) -> None:
    steps = plan.steps
    regions = [-1] * len(steps)       # nothing on the DLA (a GPU build, or every layer fell back): no loadables
    if any(s.device == "dla" for s in steps):
        limit = plan.platform.dla.support.max_loadables_per_core if plan.platform.dla else 0
        while True:
            regions = _regions(steps)
            if max(regions) < limit or plan.device != "dla":
                break
            # regions are numbered in execution order; the ones past the limit go to the GPU
            gpu_p = plan.gpu_run_precision()
            reason = f"past the {limit}th DLA loadable of core {plan.dla_core} (at most {limit} per core)"
            for step, r in zip(steps, regions):
                if r >= limit:
                    step.device = "gpu"
                    step.reason = reason
                    # the precision the GPU runs it in, not the DLA's (INT8 Sigmoid/Tanh run FP16 on the DLA only)
                    step.precision, why = gpu_precision(step, gpu_p)
                    step.precision_unsupported = bool(why)
                    for layer in step.members:
                        plan.fallback.append(Fallback(layer.name, layer.op, reason, FallbackKind.LOADABLE_LIMIT))
                    plan.decisions.append(Decision(step.name, "partition", "gpu fallback", reason))
                    if why:             # on the GPU it runs wider than asked: say so, as assign_precision does
                        step.reason = f"{reason}; {why}"
                        plan.decisions.append(Decision(step.name, "precision", step.precision, why))
    for step, r in zip(steps, regions):
        step.subgraph = r
    plan.dla_subgraphs = max(regions, default=-1) + 1


def _regions(steps) -> list[int]:
    """Region index of each step (-1 off the DLA), regions numbered 0, 1, ... in order of first step."""
    producer = {}                     # tensor name -> index of the step writing it
    for i, s in enumerate(steps):
        for t in s.outputs:
            producer[t.name] = i
    region: list[int | None] = [None] * len(steps)
    parent: list[int] = []
    # regions each step depends on (through any path), by step index. Ids are recorded as they were then:
    # compare find(x), since regions merge later. Sets are never changed once recorded, so a chain link
    # shares its producer's set.
    ancestors: list[set[int]] = []

    def find(r: int) -> int:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    def join(preds: list[int]) -> int:
        """The region a DLA step joins: its inputs' joinable regions merged into one, else a new one."""
        if len(preds) == 1 and region[preds[0]] is not None:
            return find(region[preds[0]])               # a chain link: its producer's region
        pred_roots = [None if region[p] is None else find(region[p]) for p in preds]   # None: GPU
        ok = {pr for pr in pred_roots if pr is not None}
        if len(preds) > 1:
            # a region is joinable unless another input reaches us from it via the GPU or another region
            ok = {r for r in ok if not any(find(x) == r for p, pr in zip(preds, pred_roots) if pr != r
                                           for x in ancestors[p])}
        if not ok:
            parent.append(len(parent))
            return parent[-1]
        root = min(ok)
        for r in ok:
            parent[r] = root
        return root

    for i, s in enumerate(steps):
        preds = [producer[t.name] for t in s.inputs if t.name in producer]
        if len(preds) == 1:
            anc = ancestors[preds[0]]
            r = region[preds[0]]
            if r is not None and r not in anc:
                anc = anc | {r}
        else:
            anc = set()
            for p in preds:
                anc |= ancestors[p]
                if region[p] is not None:
                    anc.add(region[p])
        if s.device == "dla":
            region[i] = join(preds)
        ancestors.append(anc)
    # renumber roots in order of first appearance
    order: dict[int, int] = {}
    return [-1 if r is None else order.setdefault(find(r), len(order)) for r in region]
