"""Partition DLA steps into loadables (maximal connected DLA regions), enforcing the per-core limit.

TensorRT turns each maximal DLA-runnable region into one ForeignNode loadable (reference/dla.md s0.1 fact
13, s3.4). A region may not leave the DLA and come back (that would be a cycle between engines), so a step
joins a neighbouring region only if none of its other inputs depends on that region through the GPU.
At most `max_loadables_per_core` loadables fit one core (s3.1); later ones fall back to the GPU.
"""
from __future__ import annotations

from ..plan import Decision


def partition(plan) -> None:
    if not any(s.device == "dla" for s in plan.steps):
        regions = {}          # nothing on the DLA (a GPU build, or every layer fell back): no loadables
    else:
        while True:
            regions = _regions(plan.steps)
            limit = plan.platform.dla.support.max_loadables_per_core if plan.platform.dla else 0
            n = len(set(regions.values()))
            if n <= limit or plan.device != "dla":
                break
            # regions are numbered in execution order; the ones past the limit go to the GPU
            reason = f"past the {limit}th DLA loadable of core {plan.dla_core} (at most {limit} per core)"
            for step in plan.steps:
                if regions.get(id(step), -1) >= limit:
                    step.device = "gpu"
                    step.reason = reason
                    for layer in step.members:
                        plan.fallback.append({"name": layer.name, "op": layer.op, "reason": reason})
                    plan.decisions.append(Decision(step.name, "partition", "gpu fallback", reason))
    for step in plan.steps:
        step.subgraph = regions.get(id(step), -1)
    plan.dla_subgraphs = len(set(regions.values()))


def _regions(steps) -> dict[int, int]:
    """Region index per DLA step (by id), regions numbered in order of first step."""
    producer = {}
    for s in steps:
        for t in s.outputs:
            producer[t.name] = s
    region: dict[int, int] = {}
    parent: list[int] = []
    # regions each step depends on (through any path), by step id. Ids are recorded as they were then:
    # compare find(x), since regions merge later. Sets are never changed once recorded, so a chain link
    # shares its producer's set.
    ancestors: dict[int, set[int]] = {}

    def find(r: int) -> int:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for s in steps:
        preds = [producer[t.name] for t in s.inputs if t.name in producer]
        if len(preds) == 1:
            anc = ancestors[id(preds[0])]
            r = region.get(id(preds[0]))
            if r is not None and r not in anc:
                anc = anc | {r}
        else:
            anc = set()
            for p in preds:
                anc |= ancestors[id(p)]
                if id(p) in region:
                    anc.add(region[id(p)])
        if s.device == "dla":
            pred_roots = [find(region[id(p)]) if id(p) in region else None for p in preds]   # None: GPU
            ok = {pr for pr in pred_roots if pr is not None}
            if len(preds) > 1:
                # a region is joinable unless another input reaches us from it via the GPU or another region
                ok = {r for r in ok if not any(find(x) == r for p, pr in zip(preds, pred_roots) if pr != r
                                               for x in ancestors[id(p)])}
            if ok:
                root = min(ok)
                for r in ok:
                    parent[r] = root
            else:
                root = len(parent)
                parent.append(root)
            region[id(s)] = root
        ancestors[id(s)] = anc
    # renumber roots in order of first appearance
    order: dict[int, int] = {}
    out = {}
    for s in steps:
        if id(s) in region:
            r = find(region[id(s)])
            out[id(s)] = order.setdefault(r, len(order))
    return out
