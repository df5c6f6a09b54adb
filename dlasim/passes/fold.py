"""Fold no-ops and turn the remaining layers into one Step each.

TensorRT removes Dropout/Identity, constant-only layers and shape-preserving Reshape/Flatten at build time
(reference/gpu_tensorrt.md s5.2: "Trivial Scale ... erased", Shuffle+Shuffle fused). Concatenation is kept
as a step: on both engines it is done by writing producers into one buffer, and the cost model prices it.
"""
from __future__ import annotations

from ..plan import Decision, Step

FOLDABLE = frozenset({"Dropout", "Identity", "Constant"})


def fold(ctx) -> None:
    g = ctx.graph
    alias: dict[str, str] = {}

    def resolve(t: str) -> str:
        while t in alias:
            t = alias[t]
        return t

    steps: list[Step] = []
    consts: set[str] = set()
    for layer in g.layers:
        data = [t for t in layer.inputs if t and not g.tensors[t].const and t not in consts]
        same_shape = (len(data) == 1 and len(layer.outputs) == 1
                      and g.tensors[data[0]].shape == g.tensors[layer.outputs[0]].shape)
        if layer.op in FOLDABLE and not data:
            ctx.decisions.append(Decision(layer.name, "fold", "removed", "constant"))
            consts.update(layer.outputs)
            continue
        if (layer.op in FOLDABLE or (layer.op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze") and same_shape)) \
                and len(data) == 1:
            for t in layer.outputs:
                alias[t] = resolve(data[0])
            ctx.decisions.append(Decision(layer.name, "fold", "removed", f"{layer.op} is a no-op at inference"))
            continue
        steps.append(Step(name=layer.name, kind="layer", op=layer.op, device="gpu", members=[layer],
                          inputs=[g.tensors[resolve(t)] for t in data],
                          outputs=[g.tensors[t] for t in layer.outputs]))
    ctx.steps = steps
    ctx.alias = alias
    ctx.resolve = resolve
