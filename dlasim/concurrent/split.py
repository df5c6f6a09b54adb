"""Cut one network into pipeline stages: the layers up to each cut layer (in the graph's order) form a stage;
the tensors a later stage reads from an earlier one become that stage's inputs and the earlier stage's
outputs. Each stage is then built as its own engine (its own I/O reformats: the hand-over copies)."""
from __future__ import annotations

from ..errors import DlasimError
from ..ir import Graph, Tensor


def split_graph(g: Graph, cuts: list[str]) -> list[Graph]:
    """Stages of `g` cut after each layer named in `cuts` (len(cuts) + 1 graphs)."""
    index = {l.name: i for i, l in enumerate(g.layers)}
    missing = [c for c in cuts if c not in index]
    if missing:
        raise DlasimError(f"--cut: {g.name} has no layer {missing[0]!r}")
    for a, b in zip(cuts, cuts[1:]):     # stage i ends at cuts[i]: the stages' labels follow the cuts' order
        if index[b] <= index[a]:
            raise DlasimError(f"--cut: {b!r} is given twice" if a == b else
                              f"--cut: give the cuts in the graph's order: {b!r} comes before {a!r}")
    bounds = [index[c] + 1 for c in cuts]
    if bounds and bounds[-1] >= len(g.layers):
        raise DlasimError(f"--cut: {cuts[-1]!r} is the last layer; nothing is left for the next stage")
    edges = [0, *bounds, len(g.layers)]
    producer_stage = {}
    for s in range(len(edges) - 1):
        for l in g.layers[edges[s]:edges[s + 1]]:
            for t in l.outputs:
                producer_stage[t] = s
    stages = []
    for s in range(len(edges) - 1):
        layers = g.layers[edges[s]:edges[s + 1]]
        produced = {t for l in layers for t in l.outputs}
        inputs, seen = [], set()
        for l in layers:
            for t in l.inputs:
                if t and t not in produced and t not in seen and not g.tensors[t].const:
                    seen.add(t)
                    inputs.append(t)
        later = {t for l in g.layers[edges[s + 1]:] for t in l.inputs}
        outputs = [t for t in dict.fromkeys(t for l in layers for t in l.outputs)
                   if t in later or t in g.outputs]
        names = set(inputs) | produced | {t for l in layers for t in l.inputs if t}
        tensors = {n: Tensor(n, g.tensors[n].shape, g.tensors[n].dtype, g.tensors[n].const)
                   for n in names if n in g.tensors}
        sub = Graph(f"{g.name}[{s}]", [l for l in layers], tensors, inputs, outputs, g.source)
        stages.append(sub.validate())
    return stages
