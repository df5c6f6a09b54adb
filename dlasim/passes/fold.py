"""Fold no-ops and turn the remaining layers into one Step each.

TensorRT removes Dropout/Identity, constant-only layers and shape-preserving Reshape/Flatten at build time
(reference/gpu_tensorrt.md s5.2: "Trivial Scale ... erased", Shuffle+Shuffle fused). A Pad of zeros on every
side is the identity too (torchvision Swin pads each window partition to a multiple of the window, by 0 at
224x224) and goes the same way. One that passes a network input straight to a network output is kept: the
application binds the two as separate buffers, so the engine copies one into the other. Concatenation is kept
as a step: on both engines it is done by writing producers into one buffer, and the cost model prices it.
"""
from __future__ import annotations

from ..ops import CONVS, FOLDABLE, RESHAPES, conv_params
from ..plan import Decision, Step, joins_bindings

NO_OPS = FOLDABLE | RESHAPES | {"Pad"}                               # the ops the pass may remove


def fold(plan) -> None:
    g = plan.graph
    tensors = g.tensors
    alias = plan.alias
    resolve = plan.resolve

    steps: list[Step] = []
    consts: set[str] = set()
    for layer in g.layers:
        op = layer.op
        data = []                                   # activations read (loops: cheaper than comprehensions here)
        for t in layer.inputs:
            if t and not (x := tensors[t]).const:
                data.append(x)
        if consts:
            data = [x for x in data if x.name not in consts]
        if op in NO_OPS and _folded(layer, op, data, plan, consts):
            continue
        inputs = [tensors[resolve(x.name)] for x in data] if alias else data
        outputs = []
        for t in layer.outputs:
            outputs.append(tensors[t])
        step = Step(layer.name, "layer", op, "gpu", "fp16", [layer], inputs, outputs)
        if op in CONVS:      # attributes parsed once, kept on the step
            step.conv = conv_params(layer.attributes)
        steps.append(step)
    plan.steps = steps


def _folded(layer, op: str, data: list, plan, consts: set[str]) -> bool:
    """Remove a no-op layer (recording why): a constant-only one, or one that passes its input through."""
    if op in FOLDABLE and not data:
        plan.decisions.append(Decision(layer.name, "fold", "removed", "constant"))
        consts.update(layer.outputs)
        return True
    tensors = plan.graph.tensors
    same = len(layer.outputs) == 1 and len(data) == 1 and data[0].shape == tensors[layer.outputs[0]].shape
    zero_pad = op == "Pad" and same and not any(layer.attributes.get("pads") or ())
    if len(data) == 1 and joins_bindings(plan.graph, plan.resolve(data[0].name), layer.outputs):
        return False    # input binding -> output binding: two buffers, so TensorRT keeps a copy
    if len(data) == 1 and (op in FOLDABLE or (op in RESHAPES and same) or zero_pad):
        for t in layer.outputs:
            plan.alias[t] = plan.resolve(data[0].name)
        plan.decisions.append(Decision(layer.name, "fold", "removed", f"{op} is a no-op at inference"))
        return True
    return False
