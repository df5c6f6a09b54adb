"""Operator vocabulary: shape inference and MAC counts, one small function per op.

Op names follow ONNX (Conv, Gemm, MatMul, MaxPool, ...); Caffe layers are mapped onto them by the importer.
Layout is NCHW with the batch in dimension 0. Shape functions take the layer and the shapes of all its
inputs (constants included) and return the shapes of its outputs.
"""
from __future__ import annotations

import math
import numbers
from typing import Callable, Sequence

from .errors import ModelError

Shape = tuple[int, ...]

ACTIVATIONS = frozenset({
    "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Clip", "Mish", "Softplus", "Elu", "Selu",
    "HardSigmoid", "HardSwish", "Gelu", "Exp", "Log", "Sqrt", "Abs", "Neg", "Erf", "Sin", "Cos",
    "Reciprocal", "Floor", "Ceil", "Not", "Swish",
})
ELEMENTWISE = frozenset({"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Pow", "Equal", "Greater", "Less",
                         "Mod", "And", "Or", "Xor", "GreaterOrEqual", "LessOrEqual"})
NORMS = frozenset({"BatchNormalization", "Scale", "InstanceNormalization", "GroupNormalization",
                   "LayerNormalization", "LRN"})
CONVS = frozenset({"Conv", "ConvTranspose"})
MATMULS = frozenset({"Gemm", "MatMul", "Einsum"})   # Einsum: a two-operand contraction (a batched GEMM)
# convolutions and matrix products: the only ops with MACs (`macs` counts no other), and the layer that anchors
# a fused step and sets its cost (the conv of conv + bn + relu)
MAC_OPS = CONVS | MATMULS
WINDOW_POOLS = frozenset({"MaxPool", "AveragePool"})              # pools with a kernel window
QDQ = frozenset({"QuantizeLinear", "DequantizeLinear"})   # explicit quantization: same shape, new dtype
SAME_SHAPE = ACTIVATIONS | NORMS | QDQ | frozenset({"Identity", "Dropout", "Softmax", "LogSoftmax", "Cast"})
FOLDABLE = frozenset({"Dropout", "Identity", "Constant"})           # inference no-ops TensorRT's parsers remove
RESHAPES = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze"})  # views; removed when the shape is unchanged


def rule_op(op: str) -> str:
    """The op name a TensorRT rule list is looked up under: Squeeze, Unsqueeze and Flatten are imported by
    TensorRT's ONNX parser as the layer Reshape is (IShuffleLayer: dla.md s3.2 "Shuffle (Reshape/Transpose)";
    the Shuffle layer's parameters, gpu_tensorrt.md s4: FirstTranspose, Reshape, SecondTranspose), so a rule
    that names Reshape covers them."""
    return "Reshape" if op in RESHAPES else op
# global pools and reductions: one output per (image, channel); a GPU reduction kernel (cost/gpu.py kernel_class)
REDUCTIONS = frozenset({"GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceMax", "ReduceSum", "ReduceMin"})
# data movement without arithmetic: on the DLA a RUBIK / bridge-DMA pass over the tensor (cost/dla.py)
SHUFFLES = RESHAPES | frozenset({"Transpose", "Slice", "Split", "Resize", "Upsample"})
LUT_OPS = frozenset({"Sigmoid", "Tanh"})     # the DLA SDP runs them through its LUT (reference/dla.md s1.3)
JOINS = frozenset({"Add", "Sum", "Mul"})     # elementwise ops that take a second operand (a fusion region's join)


def _pair(v, default: int) -> tuple[int, int]:
    if not isinstance(v, (list, tuple)):       # lists first: what importers and the builder write
        if v is None:
            return (default, default)
        if isinstance(v, int):
            return (v, v)
        v = list(v)
    return (int(v[0]), int(v[-1])) if len(v) else (default, default)


def conv_params(attrs: dict) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int, int, int], tuple[int, int]]:
    """(kernel, stride, pads t/l/b/r, dilation) from Conv/Pool attributes."""
    k, s, d = attrs.get("kernel_shape"), attrs.get("strides"), attrs.get("dilations")
    # two-element lists, what importers and the builder write, without a _pair call (twice per conv per estimate)
    k = (int(k[0]), int(k[1])) if type(k) is list and len(k) == 2 else _pair(k, 1)
    s = (int(s[0]), int(s[1])) if type(s) is list and len(s) == 2 else _pair(s, 1)
    d = (int(d[0]), int(d[1])) if type(d) is list and len(d) == 2 else _pair(d, 1)
    p = attrs.get("pads") or (0, 0, 0, 0)
    if len(p) == 2:
        p = (p[0], p[1], p[0], p[1])
    return k, s, (int(p[0]), int(p[1]), int(p[2]), int(p[3])), d


def _out_dim(size: int, k: int, s: int, p0: int, p1: int, d: int = 1, ceil: bool = False) -> int:
    span = size + p0 + p1 - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + p0:  # Caffe: the last window must start inside the input
        out -= 1
    return out


# the window attributes of Conv, ConvTranspose and the pools, with the least value ONNX allows each
WINDOW_ATTRS = (("kernel_shape", 1), ("strides", 1), ("dilations", 1), ("pads", 0), ("group", 1))


def _window(layer):
    """conv_params of a windowed layer after checking its attributes are integers in their ONNX ranges
    (kernel, strides, dilations, group >= 1, pads >= 0): conv_params would truncate 0.5 to 0 and fail on inf."""
    a = layer.attributes
    for key, low in WINDOW_ATTRS:
        v = a.get(key)
        if v is None:
            continue
        for x in (v if isinstance(v, (list, tuple)) else (v,)):
            if type(x) is int and x >= low:
                continue                      # what importers and the builder write
            whole = not isinstance(x, bool) and (isinstance(x, numbers.Integral)      # numpy integers too
                                                 or isinstance(x, numbers.Real) and float(x).is_integer())
            if not whole or x < low:
                got = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
                what = "integers" if isinstance(v, (list, tuple)) else "an integer"
                raise ModelError(f"layer {layer.name!r} ({layer.op}): {key} must be {what} >= {low}, got {got}")
    return conv_params(a)


def _conv(layer, shapes):
    x, w = shapes[0], shapes[1]
    if len(x) != 4 or len(w) != 4:
        raise ModelError(f"layer {layer.name!r}: Conv needs a 4-D input and weight, got {x} and {w}")
    k, s, p, d = _window(layer)
    g = int(layer.attributes.get("group", 1))
    if x[1] != w[1] * g:
        raise ModelError(f"layer {layer.name!r}: input has {x[1]} channels, weight expects {w[1]}x{g} groups")
    return [(x[0], w[0], _out_dim(x[2], k[0], s[0], p[0], p[2], d[0]), _out_dim(x[3], k[1], s[1], p[1], p[3], d[1]))]


def _conv_transpose(layer, shapes):
    x, w = shapes[0], shapes[1]
    k, s, p, d = _window(layer)
    g = int(layer.attributes.get("group", 1))
    op = _pair(layer.attributes.get("output_padding"), 0)
    h = s[0] * (x[2] - 1) + op[0] + (k[0] - 1) * d[0] + 1 - p[0] - p[2]
    wd = s[1] * (x[3] - 1) + op[1] + (k[1] - 1) * d[1] + 1 - p[1] - p[3]
    return [(x[0], w[1] * g, h, wd)]


def _pool(layer, shapes):
    x = shapes[0]
    k, s, p, d = _window(layer)
    ceil = bool(layer.attributes.get("ceil_mode", 0))
    return [(x[0], x[1], _out_dim(x[2], k[0], s[0], p[0], p[2], 1, ceil), _out_dim(x[3], k[1], s[1], p[1], p[3], 1, ceil))]


def _global_pool(layer, shapes):
    x = shapes[0]
    return [tuple(x[:2]) + (1,) * (len(x) - 2)]


def _flatten_2d(x: Shape, axis: int = 1) -> Shape:
    axis = axis % len(x) if len(x) else 0
    return (math.prod(x[:axis]), math.prod(x[axis:]))


def _gemm(layer, shapes):
    a, b = shapes[0], shapes[1]
    if len(a) != 2:
        a = _flatten_2d(a)
    if layer.attributes.get("transA"):
        a = (a[1], a[0])
    bn = (b[1], b[0]) if layer.attributes.get("transB") else tuple(b)
    if a[1] != bn[0]:
        raise ModelError(f"layer {layer.name!r}: Gemm inner dimensions differ ({a} x {bn})")
    return [(a[0], bn[1])]


def broadcast(*shapes: Shape) -> Shape:
    if len(shapes) == 2 and tuple(shapes[0]) == tuple(shapes[1]):
        return tuple(shapes[0])          # equal shapes (a residual Add, SiLU's Mul): nothing to broadcast
    n = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (n - len(s)) + tuple(s) for s in shapes]):
        big = max(dims)
        if any(d not in (1, big) for d in dims):
            raise ModelError(f"shapes {list(shapes)} do not broadcast")
        out.append(big)
    return tuple(out)


def _matmul(layer, shapes):
    a, b = tuple(shapes[0]), tuple(shapes[1])
    if len(a) == 1:
        a = (1,) + a
    if len(b) == 1:
        b = b + (1,)
    if a[-1] != b[-2]:
        raise ModelError(f"layer {layer.name!r}: MatMul inner dimensions differ ({shapes[0]} x {shapes[1]})")
    batch = broadcast(a[:-2], b[:-2]) if (len(a) > 2 or len(b) > 2) else ()
    out = batch + (a[-2], b[-1])
    if len(shapes[1]) == 1:
        out = out[:-1]
    if len(shapes[0]) == 1:
        out = out[:-2] + out[-1:]
    return [out]


def einsum_terms(equation, shapes, name: str = "?") -> tuple[list[str], str, dict[str, int]]:
    """(input subscripts, output subscripts, size of each letter) of a two-operand ONNX Einsum (the form
    torch.einsum exports for attention: "bghid,bghjd->bghij"). Without "->" the output is the letters that
    appear once, in alphabetical order (ONNX Einsum, implicit mode). Other forms (ellipsis, one or three
    operands) raise KeyError: dlasim does not model them and imports the layer as an unknown op."""
    eq = str(equation or "").replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if "." in eq or len(ins) != 2 or len(shapes) != 2 or not all(t.isalpha() for t in ins + ([out] if out else [])):
        raise KeyError("Einsum")
    if not arrow:
        letters = "".join(ins)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    sizes: dict[str, int] = {}
    for term, shape in zip(ins, shapes):
        if len(term) != len(shape):
            raise ModelError(f"layer {name!r}: Einsum term {term!r} does not fit input shape {shape}")
        for c, d in zip(term, shape):
            if sizes.setdefault(c, d) != d and 1 not in (d, sizes[c]):
                raise ModelError(f"layer {name!r}: Einsum index {c!r} is {sizes[c]} and {d}")
            sizes[c] = max(sizes[c], d)
    if any(c not in sizes for c in out):
        raise ModelError(f"layer {name!r}: Einsum output index not in its inputs ({eq})")
    return ins, out, sizes


def _einsum(layer, shapes):
    _, out, sizes = einsum_terms(layer.attributes.get("equation"), shapes, layer.name)
    return [tuple(sizes[c] for c in out)]


def _elementwise(layer, shapes):
    try:
        return [broadcast(*shapes)]
    except ModelError as e:
        raise ModelError(f"layer {layer.name!r}: {e}") from None


def _concat(layer, shapes):
    axis = int(layer.attributes.get("axis", 1))
    r = len(shapes[0])
    axis %= r
    for s in shapes[1:]:
        if len(s) != r or any(s[i] != shapes[0][i] for i in range(r) if i != axis):
            raise ModelError(f"layer {layer.name!r}: Concat inputs {shapes} differ outside axis {axis}")
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    return [tuple(out)]


def _flatten(layer, shapes):
    return [_flatten_2d(shapes[0], int(layer.attributes.get("axis", 1)))]


def _reshape(layer, shapes):
    x = shapes[0]
    target = list(layer.attributes["shape"])
    out = [x[i] if d == 0 else d for i, d in enumerate(target)]
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        out[out.index(-1)] = math.prod(x) // max(known, 1)
    if math.prod(out) != math.prod(x):
        raise ModelError(f"layer {layer.name!r}: cannot reshape {x} to {target}")
    return [tuple(out)]


def _transpose(layer, shapes):
    x = shapes[0]
    perm = layer.attributes.get("perm") or list(range(len(x)))[::-1]
    return [tuple(x[p] for p in perm)]


def _resize(layer, shapes):
    x = shapes[0]
    if layer.attributes.get("sizes"):
        return [tuple(int(v) for v in layer.attributes["sizes"])]
    scales = layer.attributes.get("scales") or [1.0] * len(x)
    return [tuple(int(math.floor(d * s)) for d, s in zip(x, scales))]


def _slice(layer, shapes):
    x = list(shapes[0])
    starts, ends = layer.attributes["starts"], layer.attributes["ends"]
    axes = layer.attributes.get("axes") or list(range(len(starts)))
    steps = layer.attributes.get("steps") or [1] * len(starts)
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        ax %= len(x)
        n = x[ax]
        st = max(0, min(n, st + n if st < 0 else st))
        en = max(0, min(n, en + n if en < 0 else en))
        x[ax] = max(0, -(-(en - st) // sp))
    return [tuple(x)]


def _split(layer, shapes):
    x = shapes[0]
    axis = int(layer.attributes.get("axis", 0)) % len(x)
    parts = layer.attributes.get("split")
    n = len(layer.outputs)
    if not parts:
        parts = [x[axis] // n] * n
    if sum(parts) != x[axis]:
        raise ModelError(f"layer {layer.name!r}: Split sizes {parts} do not add up to {x[axis]}")
    return [tuple(p if i == axis else d for i, d in enumerate(x)) for p in parts]


def _pad(layer, shapes):
    x = shapes[0]
    p = layer.attributes.get("pads") or [0] * (2 * len(x))
    r = len(x)
    return [tuple(d + p[i] + p[i + r] for i, d in enumerate(x))]


def _reduce(layer, shapes):
    x = shapes[0]
    axes = [a % len(x) for a in (layer.attributes.get("axes") or range(len(x)))]
    if layer.attributes.get("keepdims", 1):
        return [tuple(1 if i in axes else d for i, d in enumerate(x))]
    return [tuple(d for i, d in enumerate(x) if i not in axes)]


def _squeeze(layer, shapes):
    x = shapes[0]
    axes = layer.attributes.get("axes")
    if axes is None:
        return [tuple(d for d in x if d != 1)]
    axes = [a % len(x) for a in axes]
    return [tuple(d for i, d in enumerate(x) if i not in axes)]


def _unsqueeze(layer, shapes):
    out = list(shapes[0])
    for a in sorted(layer.attributes.get("axes", [])):
        out.insert(a % (len(out) + 1), 1)
    return [tuple(out)]


def _gather(layer, shapes):
    """ONNX Gather: data dims before `axis`, then the indices' dims, then the data dims after it."""
    x, idx = shapes[0], shapes[1] if len(shapes) > 1 else ()
    axis = int(layer.attributes.get("axis", 0)) % len(x)
    return [tuple(x[:axis]) + tuple(idx) + tuple(x[axis + 1:])]


def _expand(layer, shapes):
    """ONNX Expand: the input broadcast against the target shape (numpy rules, either may be larger)."""
    target = layer.attributes.get("shape")
    if target is None:
        raise KeyError(layer.op)        # target not static: keep ONNX's inferred shape
    return [broadcast(shapes[0], tuple(int(d) for d in target))]


def _tile(layer, shapes):
    reps = layer.attributes.get("repeats")
    if reps is None:
        raise KeyError(layer.op)
    return [tuple(d * int(r) for d, r in zip(shapes[0], reps))]


def _same(layer, shapes):
    # the data input's shape (PRelu's slope constant has a shape of its own)
    return [tuple(shapes[0])] * (len(layer.outputs) or 1)


def _constant(layer, shapes):
    return [tuple(layer.attributes.get("shape", ()))]


SHAPE_FNS: dict[str, Callable] = {
    "Conv": _conv, "ConvTranspose": _conv_transpose,
    "MaxPool": _pool, "AveragePool": _pool, "GlobalAveragePool": _global_pool, "GlobalMaxPool": _global_pool,
    "Gemm": _gemm, "MatMul": _matmul, "Einsum": _einsum, "Concat": _concat, "Flatten": _flatten, "Reshape": _reshape,
    "Transpose": _transpose, "Resize": _resize, "Upsample": _resize, "Slice": _slice, "Split": _split,
    "Pad": _pad, "ReduceMean": _reduce, "ReduceMax": _reduce, "ReduceSum": _reduce,
    "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Constant": _constant,
    "Gather": _gather, "Expand": _expand, "Tile": _tile, "Where": _elementwise,
    **{op: _elementwise for op in ELEMENTWISE},
    **{op: _same for op in SAME_SHAPE},
}


def infer(layer, shapes: Sequence[Shape], as_tuples: bool = True) -> list[Shape]:
    """The output shapes of `layer` from its input shapes. `as_tuples=False`: the caller's `shapes` is a list of
    tuples already (GraphBuilder's), used as it is; the shape functions never change it."""
    fn = SHAPE_FNS.get(layer.op)
    if fn is None:
        raise KeyError(layer.op)
    if layer.op in ELEMENTWISE and len(shapes) < 1:
        raise ModelError(f"layer {layer.name!r}: {layer.op} needs inputs")
    return fn(layer, [tuple(s) for s in shapes] if as_tuples else shapes)


def macs(op: str, attrs: dict, in_shapes: Sequence[Shape], out_shapes: Sequence[Shape]) -> int:
    """Multiply-accumulates of one layer (the whole batch)."""
    if op == "Conv":
        w, y = in_shapes[1], out_shapes[0]
        return math.prod(y) * w[1] * w[2] * w[3]
    if op == "ConvTranspose":
        x, w = in_shapes[0], in_shapes[1]
        return math.prod(x) * w[1] * w[2] * w[3]
    if op == "Gemm":
        a = in_shapes[0]
        k = (math.prod(a[1:]) if len(a) != 2 else (a[0] if attrs.get("transA") else a[1]))
        return math.prod(out_shapes[0]) * k
    if op == "MatMul":
        return math.prod(out_shapes[0]) * in_shapes[0][-1]
    if op == "Einsum":       # one MAC per combination of all its indices (each output x each summed index)
        return math.prod(einsum_terms(attrs.get("equation"), in_shapes)[2].values())
    return 0
