"""Constant folding of ONNX shape arithmetic, as TensorRT folds it at build time.

Each folder takes (shape_of, node, input values, node attributes) and returns the output value(s), or None when
the node cannot be evaluated (an input value unknown). `shape_of(tensor)` gives a tensor's static shape or None.
Numbers follow the ONNX operator definitions (onnx/docs/Operators.md).
"""
from __future__ import annotations

import math

import numpy as np

SMALL = 64  # integer initializers up to this many elements are shape arithmetic, not weights


def node_attributes(node) -> dict:
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _need(vals: list, n: int) -> bool:
    return len(vals) >= n and all(v is not None for v in vals[:n])


def _fold_shape(shape_of, node, vals, attributes):
    s = shape_of(node.input[0])
    if s is None:
        return None
    start, end = attributes.get("start", 0), attributes.get("end")
    return np.array(s[start:end] if end is not None else s[start:], dtype=np.int64)


def _fold_unsqueeze(shape_of, node, vals, attributes):
    axes = attributes.get("axes") if "axes" in attributes else (vals[1].tolist() if _need(vals, 2) else None)
    if vals[0] is None or axes is None:
        return None
    out = vals[0]
    rank = out.ndim + len(axes)
    for a in sorted(a % rank for a in axes):
        out = np.expand_dims(out, a)
    return out


def _fold_squeeze(shape_of, node, vals, attributes):
    axes = attributes.get("axes") if "axes" in attributes else (vals[1].tolist() if _need(vals, 2) else None)
    if vals[0] is None:
        return None
    return np.squeeze(vals[0], axis=None if axes is None else tuple(a % vals[0].ndim for a in axes))


def _fold_slice(shape_of, node, vals, attributes):
    x = vals[0]
    if x is None:
        return None
    if "starts" in attributes:  # opset < 10
        starts, ends, axes, steps = attributes["starts"], attributes["ends"], attributes.get("axes"), None
    else:
        if not _need(vals, 3) or any(v is None for v in vals[3:] if v is not None) or \
                any(t and v is None for t, v in zip(node.input[3:], vals[3:])):
            return None
        starts, ends = vals[1].tolist(), vals[2].tolist()
        axes = vals[3].tolist() if len(vals) > 3 and vals[3] is not None else None
        steps = vals[4].tolist() if len(vals) > 4 and vals[4] is not None else None
    index = [slice(None)] * x.ndim
    for i, a in enumerate(axes if axes is not None else range(len(starts))):
        index[a % x.ndim] = slice(starts[i], ends[i], steps[i] if steps else 1)
    return x[tuple(index)]


def _fold_div(shape_of, node, vals, attributes):
    if not _need(vals, 2):
        return None
    a, b = vals
    if np.issubdtype(a.dtype, np.integer):
        return np.trunc(a / b).astype(a.dtype)
    return a / b


def _fold_cast(shape_of, node, vals, attributes):
    from onnx import helper
    if vals[0] is None:
        return None
    return vals[0].astype(helper.tensor_dtype_to_np_dtype(attributes["to"]))


def _fold_constant_of_shape(shape_of, node, vals, attributes):
    from onnx import numpy_helper
    if vals[0] is None or math.prod(vals[0].tolist()) > SMALL:
        return None
    fill = numpy_helper.to_array(attributes["value"]).reshape(-1) if "value" in attributes else np.zeros(1, np.float32)
    return np.full(tuple(vals[0].tolist()), fill[0], dtype=fill.dtype)


def _elementwise(fn, n: int = 2):
    def fold(shape_of, node, vals, attributes):
        return fn(*vals[:n]) if _need(vals, n) and len(vals) == n else None
    return fold


def _variadic(fn):
    def fold(shape_of, node, vals, attributes):
        return fn(vals) if vals and all(v is not None for v in vals) else None
    return fold


def _fold_size(shape_of, node, vals, attributes):
    s = shape_of(node.input[0])
    return None if s is None else np.array(math.prod(s), np.int64)


def _fold_gather(shape_of, node, vals, attributes):
    return np.take(vals[0], vals[1], axis=attributes.get("axis", 0)) if _need(vals, 2) else None


def _fold_concat(shape_of, node, vals, attributes):
    if not vals or any(v is None for v in vals):
        return None
    return np.concatenate([np.atleast_1d(v) for v in vals], axis=attributes.get("axis", 0))


def _fold_reshape(shape_of, node, vals, attributes):
    if not _need(vals, 2):
        return None
    return vals[0].reshape([d if d else vals[0].shape[i] for i, d in enumerate(vals[1].tolist())])


def _fold_transpose(shape_of, node, vals, attributes):
    # torchvision Swin's padding: pads = Transpose(Slice(Reshape(Concat(...), (-1, 2)), step -1)) -> Reshape(-1)
    return None if vals[0] is None else np.transpose(vals[0], attributes.get("perm"))


def _fold_mod(shape_of, node, vals, attributes):
    return (np.fmod if attributes.get("fmod") else np.mod)(*vals[:2]) if _need(vals, 2) else None


def _fold_range(shape_of, node, vals, attributes):
    return np.arange(vals[0], vals[1], vals[2]) if _need(vals, 3) else None


FOLDERS = {
    "Shape": _fold_shape, "Size": _fold_size, "Identity": _elementwise(lambda a: a, 1), "Gather": _fold_gather,
    "Unsqueeze": _fold_unsqueeze, "Squeeze": _fold_squeeze, "Slice": _fold_slice, "Concat": _fold_concat,
    "Reshape": _fold_reshape, "Transpose": _fold_transpose, "Cast": _fold_cast, "ConstantOfShape": _fold_constant_of_shape,
    "Add": _elementwise(np.add), "Sub": _elementwise(np.subtract), "Mul": _elementwise(np.multiply),
    "Div": _fold_div, "Mod": _fold_mod,
    "Equal": _elementwise(np.equal), "Where": _elementwise(np.where, 3),
    "Floor": _elementwise(np.floor, 1), "Ceil": _elementwise(np.ceil, 1), "Neg": _elementwise(np.negative, 1),
    "Abs": _elementwise(np.abs, 1), "Not": _elementwise(np.logical_not, 1),
    "Min": _variadic(lambda v: np.minimum.reduce(np.broadcast_arrays(*v))),
    "Max": _variadic(lambda v: np.maximum.reduce(np.broadcast_arrays(*v))),
    "Range": _fold_range,
}
