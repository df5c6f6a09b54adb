"""Network rewrites the advisors propose: each returns a changed copy of the graph (shapes re-inferred).

Recipes (../shared/reference): dla.md s4.1 operator support and reconstruction recipes
(hardware_specs/rules/rewrites.toml): Mish -> ReLU (seed 002), MatMul with a constant second operand = 1x1 conv,
Group/InstanceNormalization -> BatchNormalization, GlobalAveragePool -> AveragePool (kernel <= the pooling
window, jetson_dla_tutorial), a large stride-1 MaxPool -> cascaded 5x5 pools (SPPF identity); 2:4 sparse
kernels pay only on wide layers: channels rounded to multiples of 128 and >= 256 (gpu_tensorrt.md s2.3
items 1-2, seed 001).
"""
from __future__ import annotations

import math

from .. import ops
from ..errors import DlasimError
from ..ir import Graph, Layer, Tensor


def _rebuilt(g: Graph) -> Graph:
    """Drop the layers whose outputs nobody reads (a rewrite cut them off), re-sort, re-infer shapes."""
    while True:
        used = {t for l in g.layers for t in l.inputs} | set(g.outputs)
        kept = [l for l in g.layers if any(t in used for t in l.outputs)]
        if len(kept) == len(g.layers):
            return g.validate().infer_shapes()
        g.layers = kept


def relu_for_mish(g: Graph) -> Graph:
    """Copy with Mish (one op, or Softplus -> Tanh -> Mul(x, .)) replaced by one Relu (seed 002)."""
    g = g.copy()
    drop = set()
    for l in g.layers:
        if l.op == "Mish":
            l.op, l.attributes = "Relu", {}
        elif l.op == "Mul" and len(l.inputs) == 2:
            for x, y in (l.inputs, l.inputs[::-1]):
                tanh = g.producer(y)
                sp = g.producer(tanh.inputs[0]) if tanh is not None and tanh.op == "Tanh" else None
                if sp is not None and sp.op == "Softplus" and sp.inputs[0] == x \
                        and len(g.consumers(sp.outputs[0])) == 1 and len(g.consumers(y)) == 1:
                    drop |= {sp.name, tanh.name}
                    l.op, l.inputs, l.attributes = "Relu", [x], {}
                    break
    g.layers = [l for l in g.layers if l.name not in drop]
    return _rebuilt(g)


def silu_pairs(g: Graph) -> list[tuple[str, str]]:
    """(Sigmoid, Mul) name pairs that compute SiLU, x * sigmoid(x), with the Sigmoid read by that Mul alone
    and not a network output (what torch.onnx exports for nn.SiLU before opset 24 and Ultralytics models are
    built of)."""
    out = []
    for l in g.layers:
        if l.op != "Mul" or len(l.inputs) != 2:
            continue
        for x, y in (l.inputs, l.inputs[::-1]):
            sig = g.producer(y)
            if sig is not None and sig.op == "Sigmoid" and sig.inputs[0] == x and len(g.consumers(y)) == 1 \
                    and y not in g.outputs:
                out.append((sig.name, l.name))
                break
    return out


def relu_for_silu(g: Graph, muls: set[str]) -> Graph:
    """Copy with each named SiLU (its Mul, see silu_pairs) replaced by one Relu of the same input: an
    activation the DLA runs inside the convolution's SDP pass (dla.md s1.3 X1/X2 at 16 elem/cycle, s6.1
    conv + bias/BN + ReLU in one hardware layer), where SiLU needs the LUT and an element-wise pass."""
    g = g.copy()
    by_name = {l.name: l for l in g.layers}
    for sig, mul in silu_pairs(g):
        if mul in muls:
            l = by_name[mul]
            l.op, l.inputs, l.attributes = "Relu", list(by_name[sig].inputs), {}
    return _rebuilt(g)          # the Sigmoids no one reads any more are dropped there


def constant_matmul(g: Graph, names: set[str]) -> Graph:
    """Copy where the second operand of each named MatMul is a constant (weights): a 1x1 conv on DLA."""
    g = g.copy()
    for l in g.layers:
        if l.name in names:
            src = g.tensors[l.inputs[1]]
            w = f"{l.name}.weight"
            g.tensors[w] = Tensor(w, src.shape, src.dtype, const=True)
            l.inputs[1] = w
    return _rebuilt(g)


def batchnorm_for_norms(g: Graph, names: set[str]) -> Graph:
    """Copy with the named Group/InstanceNormalization layers as BatchNormalization (same shapes)."""
    g = g.copy()
    for l in g.layers:
        if l.name in names:
            c = g.tensors[l.inputs[0]].shape[1]
            params = [f"{l.name}.bn_{p}" for p in ("scale", "bias", "mean", "var")]
            for p in params:
                g.tensors[p] = Tensor(p, (c,), const=True)
            l.op, l.inputs, l.attributes = "BatchNormalization", [l.inputs[0]] + params, {"epsilon": 1e-5}
    return _rebuilt(g)


def avgpool_for_global(g: Graph, names: set[str]) -> Graph:
    """Copy with each named GlobalAveragePool as AveragePool over the whole H x W (dla.md s4.1)."""
    g = g.copy()
    for l in g.layers:
        if l.name in names:
            h, w = g.tensors[l.inputs[0]].shape[2:4]
            l.op, l.attributes = "AveragePool", {"kernel_shape": [h, w], "strides": [h, w], "pads": [0, 0, 0, 0]}
    return _rebuilt(g)


def cascade_maxpool(g: Graph, names: set[str]) -> Graph:
    """Copy with each named stride-1 'same' MaxPool k (k = 4n+1) as n cascaded 5x5 pools (SPPF identity)."""
    g = g.copy()
    layers = []
    for l in g.layers:
        if l.name not in names:
            layers.append(l)
            continue
        n, x = (ops.conv_params(l.attributes)[0][0] - 1) // 4, l.inputs[0]
        for i in range(n):
            out = l.outputs[0] if i == n - 1 else f"{l.name}.5x5_{i}"
            if i < n - 1:
                g.tensors[out] = Tensor(out, g.tensors[x].shape)
            layers.append(Layer(f"{l.name}.5x5_{i}", "MaxPool", [x], [out],
                                {"kernel_shape": [5, 5], "strides": [1, 1], "pads": [2, 2, 2, 2]}))
            x = out
    g.layers = layers
    return _rebuilt(g)


def sparse_width(c: int) -> int:
    """Channels rounded up so 2:4 sparse tiles fill: a multiple of 128 and at least 256 (seed 001)."""
    return max(256, -(-c // 128) * 128)


def widen_channels(g: Graph, width) -> Graph | None:
    """Copy whose conv output channels K become width(K) (graph outputs keep theirs); downstream weights,
    per-channel parameters and Split sizes follow and shapes are re-inferred. None if the widths would
    not stay consistent (e.g. an element-wise op mixing widths)."""
    g = g.copy()
    try:
        splits = _split_sources(g)
        for l in g.layers:
            x = g.tensors[l.inputs[0]].shape if l.inputs and l.inputs[0] else None
            if l.op == "Conv":
                _widen_conv(g, l, x, width, splits)
            elif l.op == "Split" and l.attributes.get("split") and sum(l.attributes["split"]) != x[1]:
                l.attributes["split"] = [width(s) for s in l.attributes["split"]]
            elif l.op in ops.NORMS | {"PRelu"}:
                for t in l.inputs[1:]:
                    if t and g.tensors[t].const and len(g.tensors[t].shape) == 1:
                        g.tensors[t].shape = (x[1],)
            elif l.op in ("Gemm", "MatMul") and g.tensors[l.inputs[1]].const and len(x) > 1:
                w = g.tensors[l.inputs[1]]
                fan_in = math.prod(x[1:]) if l.op == "Gemm" else x[-1]
                w.shape = (w.shape[0], fan_in) if l.attributes.get("transB") else (fan_in,) + tuple(w.shape[1:])
            elif l.op in ops.ELEMENTWISE:
                cs = {g.tensors[t].shape[1] for t in l.inputs if t and len(g.tensors[t].shape) > 1
                      and not g.tensors[t].const}
                if len(cs) > 1:
                    return None
            outs = ops.infer(l, [g.tensors[t].shape for t in l.inputs if t])
            for t, s in zip(l.outputs, outs):
                g.tensors[t].shape = tuple(int(d) for d in s)
    except (DlasimError, KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        return None
    return g


def _split_sources(g: Graph) -> dict[str, Layer]:
    """{conv name: the Split that cuts its output} through channel-preserving layers (BN, SiLU, ...)."""
    out = {}
    for sp in (l for l in g.layers if l.op == "Split" and l.attributes.get("split")):
        p = g.producer(sp.inputs[0])
        while p is not None and p.op != "Conv" and (p.op in ops.SAME_SHAPE or p.op in ops.ELEMENTWISE):
            p = g.producer(p.inputs[0])
        if p is not None and p.op == "Conv":
            out[p.name] = sp
    return out


def _widen_conv(g: Graph, l: Layer, x, width, splits) -> None:
    w = g.tensors[l.inputs[1]]
    k, groups = w.shape[0], int(l.attributes.get("group", 1))
    c_old = w.shape[1] * groups
    if groups > 1 and groups == c_old:                      # depthwise follows its input
        k, groups = x[1] * (k // c_old), x[1]
        l.attributes["group"] = groups
    elif l.outputs[0] not in g.outputs:
        sp = splits.get(l.name)
        k = sum(width(s) for s in sp.attributes["split"]) if sp and sum(sp.attributes["split"]) == k else width(k)
    if x[1] % groups:
        raise ValueError("groups")
    w.shape = (k, x[1] // groups) + tuple(w.shape[2:])
    for b in l.inputs[2:]:
        if b:
            g.tensors[b].shape = (k,)

