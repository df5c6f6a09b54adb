"""Caffe layer types -> dlasim layers (ONNX op names, dlasim/ops.py): one small handler per type.

Parameters and defaults follow caffe/src/caffe/proto/caffe.proto (V1 type names: V1LayerParameter). A handler
takes the network being built (importers/caffe.py: `add`, `const`, `shape`, `error`, `graph_batch`, `file_batch`)
and one Entry; HANDLERS maps a V2 type string to its handler. Types not in the table go through `unknown`:
a layer of that type whose output shape is assumed (flagged by ops.infer's unknown-op path).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .prototxt import Message, boolean, enum_name, repeated, single

# V1 LayerParameter.LayerType names (caffe.proto, V1LayerParameter) -> V2 type strings.
V1_TYPES = {"ABSVAL": "AbsVal", "ACCURACY": "Accuracy", "BNLL": "BNLL", "CONCAT": "Concat",
            "CONVOLUTION": "Convolution", "DATA": "Data", "DECONVOLUTION": "Deconvolution", "DROPOUT": "Dropout",
            "DUMMY_DATA": "DummyData", "ELTWISE": "Eltwise", "EXP": "Exp", "FLATTEN": "Flatten",
            "IMAGE_DATA": "ImageData", "INNER_PRODUCT": "InnerProduct", "LRN": "LRN", "POOLING": "Pooling",
            "POWER": "Power", "RELU": "ReLU", "SIGMOID": "Sigmoid", "SOFTMAX": "Softmax",
            "SOFTMAX_LOSS": "SoftmaxWithLoss", "SPLIT": "Split", "SLICE": "Slice", "TANH": "TanH",
            "SILENCE": "Silence"}
# Parameterless element-wise types -> op
_SIMPLE = {"Sigmoid": "Sigmoid", "TanH": "Tanh", "AbsVal": "Abs", "Exp": "Exp", "Log": "Log", "BNLL": "Softplus"}


@dataclass(frozen=True)
class Entry:
    """One Caffe layer to convert: its name and type, its parameters, the tensors it reads (`ins`, the first of
    shape `x`) and the blobs it writes (`tops`)."""
    name: str
    kind: str
    msg: Message
    ins: list[str]
    tops: list[str]
    x: tuple[int, ...]

    def param(self, block: str) -> Message:
        """The layer's `<block> { ... }` (e.g. convolution_param), empty when absent."""
        return single(self.msg, block, {})


def _hw(p: Message, key: str, default: int | None) -> tuple[int, int] | None:
    """Caffe's `kernel_size`/`kernel_h`+`kernel_w` (also stride, pad) spellings -> (h, w)."""
    h, w = single(p, f"{key}_h"), single(p, f"{key}_w")
    if h is not None or w is not None:  # caffe.proto: pad_h/stride_h default 0/1; kernel_h needs kernel_w
        h, w = (h if h is not None else default), (w if w is not None else default)
        return None if h is None or w is None else (int(h), int(w))
    v = repeated(p, "kernel_size" if key == "kernel" else key)
    if not v:
        return None if default is None else (default, default)
    return int(v[0]), int(v[-1])


def _convolution(net, e: Entry) -> None:
    p = e.param("convolution_param")
    k_out = single(p, "num_output")
    k = _hw(p, "kernel", None)
    if k_out is None or k is None:
        raise net.error(f"layer {e.name!r} ({e.kind}): convolution_param needs num_output and kernel_size")
    s, pad = _hw(p, "stride", 1), _hw(p, "pad", 0)
    d = repeated(p, "dilation") or [1]
    g = int(single(p, "group", 1))
    x = e.x
    if x[1] % g or int(k_out) % g:
        raise net.error(f"layer {e.name!r} ({e.kind}): group {g} does not divide {x[1]} input and "
                        f"{k_out} output channels")
    w = (k_out, x[1] // g, *k) if e.kind == "Convolution" else (x[1], int(k_out) // g, *k)
    inputs = [e.ins[0], net.const(e.name, "weight", w)]
    if boolean(single(p, "bias_term", True)):
        inputs.append(net.const(e.name, "bias", (k_out,)))
    attributes = {"kernel_shape": list(k), "strides": list(s), "pads": [pad[0], pad[1], pad[0], pad[1]],
                  "dilations": [int(d[0]), int(d[-1])], "group": g}
    net.add(e.name, "Conv" if e.kind == "Convolution" else "ConvTranspose", inputs, e.tops, attributes)


def _pooling(net, e: Entry) -> None:
    p = e.param("pooling_param")
    pool = enum_name(single(p, "pool"), ["MAX", "AVE", "STOCHASTIC"], "MAX")
    op = "MaxPool" if pool == "MAX" else "AveragePool"
    if boolean(single(p, "global_pooling", False)):
        net.add(e.name, "Global" + op, e.ins[:1], e.tops)
        return
    k = _hw(p, "kernel", None)
    if k is None:
        raise net.error(f"layer {e.name!r} (Pooling): pooling_param needs kernel_size or global_pooling")
    s, pad = _hw(p, "stride", 1), _hw(p, "pad", 0)
    ceil = enum_name(single(p, "round_mode"), ["CEIL", "FLOOR"], "CEIL") == "CEIL"
    attributes = {"kernel_shape": list(k), "strides": list(s), "pads": [pad[0], pad[1], pad[0], pad[1]],
                  "ceil_mode": int(ceil)}
    if op == "AveragePool":
        attributes["count_include_pad"] = 1  # Caffe divides by the padded window
    net.add(e.name, op, e.ins[:1], e.tops, attributes)


def _inner_product(net, e: Entry) -> None:
    p = e.param("inner_product_param")
    n = single(p, "num_output")
    if n is None:
        raise net.error(f"layer {e.name!r} (InnerProduct): inner_product_param needs num_output")
    k = math.prod(e.x[1:])
    trans = boolean(single(p, "transpose", False))
    inputs = [e.ins[0], net.const(e.name, "weight", (k, n) if trans else (n, k))]
    if boolean(single(p, "bias_term", True)):
        inputs.append(net.const(e.name, "bias", (n,)))
    net.add(e.name, "Gemm", inputs, e.tops, {"transB": 0 if trans else 1})


def _relu(net, e: Entry) -> None:
    slope = float(single(e.param("relu_param"), "negative_slope", 0.0))
    net.add(e.name, "LeakyRelu" if slope else "Relu", e.ins, e.tops, {"alpha": slope} if slope else {})


def _relu6(net, e: Entry) -> None:
    net.add(e.name, "Clip", e.ins, e.tops, {"min": 0.0, "max": 6.0})


def _prelu(net, e: Entry) -> None:
    shared = boolean(single(e.param("prelu_param"), "channel_shared", False))
    net.add(e.name, "PRelu", [e.ins[0], net.const(e.name, "slope", (1,) if shared else (e.x[1],))], e.tops)


def _elu(net, e: Entry) -> None:
    net.add(e.name, "Elu", e.ins, e.tops, {"alpha": float(single(e.param("elu_param"), "alpha", 1.0))})


def _simple(net, e: Entry) -> None:
    net.add(e.name, _SIMPLE[e.kind], e.ins, e.tops)


def _batch_norm(net, e: Entry) -> None:
    eps = float(single(e.param("batch_norm_param"), "eps", 1e-5))
    params = [net.const(e.name, w, (e.x[1],)) for w in ("scale", "bias", "mean", "var")]
    net.add(e.name, "BatchNormalization", [e.ins[0]] + params, e.tops, {"epsilon": eps})


def _scale(net, e: Entry) -> None:
    bias = boolean(single(e.param("scale_param"), "bias_term", False))
    inputs = list(e.ins) if len(e.ins) > 1 else [e.ins[0], net.const(e.name, "scale", (e.x[1],))]
    if bias:
        inputs.append(net.const(e.name, "bias", (e.x[1],)))
    net.add(e.name, "Scale", inputs, e.tops)


def _eltwise(net, e: Entry) -> None:
    p = e.param("eltwise_param")
    operation = enum_name(single(p, "operation"), ["PROD", "SUM", "MAX"], "SUM")
    coeff = [float(c) for c in repeated(p, "coeff")]
    # caffe.proto EltwiseParameter: coeff is "blob-wise coefficient for SUM operation"; eltwise_layer.cpp checks
    # "Eltwise layer only takes coefficients for summation." and "... takes one coefficient per bottom blob."
    if coeff and operation != "SUM":
        raise net.error(f"layer {e.name!r} (Eltwise): coeff is for operation SUM only, got {operation}")
    if coeff and len(coeff) != len(e.ins):
        raise net.error(f"layer {e.name!r} (Eltwise): {len(coeff)} coeff for {len(e.ins)} bottoms (one per bottom)")
    op = {"PROD": "Mul", "MAX": "Max"}.get(operation, "Add" if len(e.ins) == 2 else "Sum")
    ins = list(e.ins)
    if operation == "SUM" and len(ins) == 2 and sorted(coeff) == [-1.0, 1.0]:
        if coeff[0] != 1.0:                   # -a + b = b - a: the operand with coefficient 1 first
            ins.reverse()
        op, coeff = "Sub", []
    net.add(e.name, op, ins, e.tops, {"coeff": coeff} if coeff and any(c != 1.0 for c in coeff) else {})


def _concat(net, e: Entry) -> None:
    p = e.param("concat_param")
    net.add(e.name, "Concat", e.ins, e.tops, {"axis": int(single(p, "axis", single(p, "concat_dim", 1)))})


def _lrn(net, e: Entry) -> None:
    p = e.param("lrn_param")
    attributes = {"size": int(single(p, "local_size", 5)), "alpha": float(single(p, "alpha", 1.0)),
                  "beta": float(single(p, "beta", 0.75)), "bias": float(single(p, "k", 1.0))}
    region = enum_name(single(p, "norm_region"), ["ACROSS_CHANNELS", "WITHIN_CHANNEL"], "ACROSS_CHANNELS")
    if region != "ACROSS_CHANNELS":
        attributes["norm_region"] = "WITHIN_CHANNEL"
    net.add(e.name, "LRN", e.ins, e.tops, attributes)


def _softmax(net, e: Entry) -> None:
    net.add(e.name, "Softmax", e.ins, e.tops, {"axis": int(single(e.param("softmax_param"), "axis", 1))})


def _dropout(net, e: Entry) -> None:
    ratio = float(single(e.param("dropout_param"), "dropout_ratio", 0.5))
    net.add(e.name, "Dropout", e.ins[:1], e.tops, {"ratio": ratio})


def _split(net, e: Entry) -> None:
    for i, top in enumerate(e.tops):
        net.add(e.name if len(e.tops) == 1 else f"{e.name}_{i}", "Identity", e.ins[:1], [top])


def _flatten(net, e: Entry) -> None:
    p, x = e.param("flatten_param"), e.x
    axis, end = int(single(p, "axis", 1)) % len(x), int(single(p, "end_axis", -1)) % len(x)
    if end == len(x) - 1:
        net.add(e.name, "Flatten", e.ins, e.tops, {"axis": axis})
    else:
        shape = [0] * axis + [math.prod(x[axis:end + 1])] + list(x[end + 1:])
        net.add(e.name, "Reshape", e.ins, e.tops, {"shape": shape})


def _reshape(net, e: Entry) -> None:
    p, x = e.param("reshape_param"), e.x
    dims = [int(d) for d in repeated(single(p, "shape", {}), "dim")]
    axis, num = int(single(p, "axis", 0)), int(single(p, "num_axes", -1))
    axis = axis % (len(x) + 1)
    tail = list(x[axis + num:]) if num >= 0 else []
    shape = [0] * axis + dims + tail
    if axis == 0 and shape and shape[0] in (net.file_batch, net.graph_batch()) and x[0] == net.graph_batch():
        shape[0] = 0  # a batch written into the file: keep following --batch
    net.add(e.name, "Reshape", e.ins, e.tops, {"shape": shape})


def _upsample(net, e: Entry) -> None:
    p, x = e.param("upsample_param"), e.x
    sh = float(single(p, "scale_h", single(p, "scale", 2)))
    sw = float(single(p, "scale_w", single(p, "scale", 2)))
    if single(p, "upsample_h") is not None:
        sh, sw = int(single(p, "upsample_h")) / x[2], int(single(p, "upsample_w", x[3])) / x[3]
    net.add(e.name, "Resize", e.ins[:1], e.tops, {"scales": [1.0, 1.0, sh, sw], "mode": "nearest"})


def _slice(net, e: Entry) -> None:
    p, x = e.param("slice_param"), e.x
    axis = int(single(p, "axis", single(p, "slice_dim", 1))) % len(x)
    points = [0] + [int(v) for v in repeated(p, "slice_point")] + [x[axis]]
    sizes = [b - a for a, b in zip(points, points[1:])] if len(points) > 2 else []
    net.add(e.name, "Split", e.ins[:1], e.tops, {"axis": axis, **({"split": sizes} if sizes else {})})


def _permute(net, e: Entry) -> None:
    order = [int(v) for v in repeated(e.param("permute_param"), "order")]
    order += [i for i in range(len(e.x)) if i not in order]
    net.add(e.name, "Transpose", e.ins, e.tops, {"perm": order})


def _crop(net, e: Entry) -> None:
    if len(e.ins) != 2:          # cropped to a reference blob only
        unknown(net, e)
        return
    p, x = e.param("crop_param"), e.x
    ref = net.shape(e.ins[1])
    axis = int(single(p, "axis", 2)) % len(x)
    offs = [int(v) for v in repeated(p, "offset")] or [0]
    axes = list(range(axis, len(x)))
    starts = [offs[min(i, len(offs) - 1)] for i in range(len(axes))]
    ends = [s + ref[a] for s, a in zip(starts, axes)]
    net.add(e.name, "Slice", e.ins[:1], e.tops, {"starts": starts, "ends": ends, "axes": axes})


def unknown(net, e: Entry) -> None:
    """A type with no handler: kept under its own name (the unknown-op path of ops.infer flags it)."""
    net.add(e.name, e.kind or "Unknown", e.ins, e.tops)


HANDLERS: dict[str, Callable[..., None]] = {
    "Convolution": _convolution, "Deconvolution": _convolution, "Pooling": _pooling,
    "InnerProduct": _inner_product, "ReLU": _relu, "ReLU6": _relu6, "PReLU": _prelu, "ELU": _elu,
    **{kind: _simple for kind in _SIMPLE},
    "BatchNorm": _batch_norm, "Scale": _scale, "Eltwise": _eltwise, "Concat": _concat, "LRN": _lrn,
    "Softmax": _softmax, "Dropout": _dropout, "Split": _split, "Flatten": _flatten, "Reshape": _reshape,
    "Upsample": _upsample, "Slice": _slice, "Permute": _permute, "Crop": _crop,
}
