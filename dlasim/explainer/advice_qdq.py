"""Advice for explicitly quantized networks: where to add Q/DQ pairs so the explicit reformats disappear.

TensorRT's Q/DQ placement recommendations (developer guide "Working with Quantized Types", Q/DQ layer
placement: quantize all inputs of element-wise additions in residual blocks, and the inputs of pooling
layers that feed quantized layers; gpu_tensorrt.md s7 fact 9: the A100 ResNet-18 engines run 0.883 ms
naive, 0.546 ms with the residual inputs quantized, 0.500 ms with the global average pool quantized too).
The rewrite (`quantize_residuals`) adds a QuantizeLinear/DequantizeLinear pair
- on every input of a residual Add except the one the convolution producing it fuses (the first input
  written by a convolution, passes/fuse.py), unless it is already a DQ output, and
- on the input of an average pool whose output reaches a Q through commuting layers.
The advice is re-estimated like every other one (advice.py).
"""
from __future__ import annotations

from ..ir import Graph, Layer, Tensor
from ..ops import MAC_OPS
from ..passes.qdq import DQ, Q, QDQ_RULES
from ..report import Estimate
from .config import Change, Config, Findings
from .texts import listed

ADD_OPS = frozenset({"Add", "Sum"})
AVG_POOLS = frozenset({"GlobalAveragePool", "AveragePool"})
THROUGH = frozenset({"BatchNormalization", "Scale"})    # fused into the conv that writes the Add input


def _conv_written(g: Graph, t: str) -> bool:
    p = g.producer(t)
    while p is not None and p.op in THROUGH:
        p = g.producer(p.inputs[0])
    return p is not None and p.op in MAC_OPS


def _reaches_q(g: Graph, t: str) -> bool:
    rs = g.consumers(t)
    return bool(rs) and all(r.op == Q or (r.op in QDQ_RULES.commuting and _reaches_q(g, r.outputs[0])) for r in rs)


def quantize_residuals(g: Graph) -> tuple[Graph, list[str]]:
    """A copy with Q/DQ pairs on the residual Add inputs and average-pool inputs named above, and the names
    of the layers that got one."""
    g = g.copy()
    want: list[tuple[Layer, int]] = []
    for l in g.layers:
        if l.op in ADD_OPS and len(l.inputs) == 2:
            fused = next((i for i, t in enumerate(l.inputs) if _conv_written(g, t)), None)
            want += [(l, i) for i, t in enumerate(l.inputs)
                     if i != fused and not (g.producer(t) is not None and g.producer(t).op == DQ)]
        elif l.op in AVG_POOLS and _reaches_q(g, l.outputs[0]):
            p = g.producer(l.inputs[0])
            if p is None or p.op != DQ:
                want.append((l, 0))
    if not want:
        return g, []
    # the scale and zero point of an existing Q (shape () constants), reused by the new pairs
    ref = next(l for l in g.layers if l.op == Q)
    params = ref.inputs[1:]
    layers, names = [], []
    todo = {(id(l), i) for l, i in want}
    for l in g.layers:
        for i, t in enumerate(list(l.inputs)):
            if (id(l), i) not in todo:
                continue
            base = f"{l.name}.input{i}"
            q, d = f"{base}.quantize", f"{base}.dequantize"
            g.tensors[q] = Tensor(q, g.tensors[t].shape, "int8")
            g.tensors[d] = Tensor(d, g.tensors[t].shape)
            layers += [Layer(q, Q, [t] + params, [q], dict(ref.attributes)), Layer(d, DQ, [q] + params, [d], dict(ref.attributes))]
            l.inputs[i] = d
            names.append(l.name)
        layers.append(l)
    g.layers = layers
    return g.validate().infer_shapes(), names


def advise_qdq(cfg: Config, est: Estimate, found: Findings) -> list[Change]:
    """An explicitly quantized network whose Q/DQ pairs became reformat copies (passes/qdq.py rule 5)."""
    copies = [d.layer for d in est.decisions if d.pass_name == "qdq" and d.action == "explicit reformat"]
    if not copies:
        return []
    g, names = quantize_residuals(cfg.graph)
    if not names:
        return []
    return [Change("quantize_residuals", f"add Q/DQ pairs on the inputs of {listed(names)} (residual Add skip "
                   f"inputs, average pools before a Q) so the INT8 layers before them write INT8 and the Q/DQ "
                   f"copies between INT8 layers fuse away (now {len(copies)}, e.g. {listed(copies, 2)})", graph=g)]
