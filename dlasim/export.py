"""Graph -> ONNX: write a network (e.g. a GraphBuilder candidate) as an ONNX model for trtexec.

The inverse of importers/onnx.py for the ops dlasim knows: layer attributes that ONNX (opset 13+) takes as
inputs (Reshape shape, Resize scales/sizes, Slice starts/ends/axes/steps, Split sizes, Pad pads/value, Clip
min/max, Squeeze/Unsqueeze axes, Expand shape, Tile repeats, ReduceSum axes, Dropout ratio;
onnx/docs/Changelog.md) become constant initializers again; the rest stay attributes. The opset is the
lowest that has every op used, 17 or 18 (Mish came in 18); `opset=` asks for another (13 or later). dlasim's
weights have shapes and no values, so the writer fills them: `weights="random"` (default) gives dense values
in [0.01, 0.1): all-zero weights have the 2:4 pattern, and `--sparsity=enable` would then pick sparse kernels
(gpu_tensorrt.md, sparsity table: "sparse tactics considered only if weights already have the pattern"), and
variances stay positive; `weights="zeros"` gives zeros (files compress well).
"""
from __future__ import annotations

import numpy as np

from .errors import ModelError

# dlasim dtype -> onnx.TensorProto.DataType (importers/onnx.py reads the same numbers)
_ONNX_DTYPES = {"float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "bool": 9,
                "float16": 10, "float64": 11, "uint32": 12, "uint64": 13}
# op -> [(input index, attribute, numpy dtype)]: attributes that are inputs from opset 13 on
_AS_INPUTS = {
    "Reshape": [(1, "shape", np.int64)],
    "Resize": [(1, "roi", np.float32), (2, "scales", np.float32), (3, "sizes", np.int64)],
    "Slice": [(1, "starts", np.int64), (2, "ends", np.int64), (3, "axes", np.int64), (4, "steps", np.int64)],
    "Split": [(1, "split", np.int64)],
    "Pad": [(1, "pads", np.int64), (2, "value", np.float32)],
    "Clip": [(1, "min", np.float32), (2, "max", np.float32)],
    "Squeeze": [(1, "axes", np.int64)],
    "Unsqueeze": [(1, "axes", np.int64)],
    "Expand": [(1, "shape", np.int64)],
    "Tile": [(1, "repeats", np.int64)],
    "ReduceSum": [(1, "axes", np.int64)],
    "Dropout": [(1, "ratio", np.float32), (2, "training_mode", np.bool_)],
}
_SCALARS = ("min", "max", "value", "ratio", "training_mode")
_OPSET_18 = frozenset({"Mish", "Col2Im", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "CenterCropPad",
                       "GroupNormalization"})
WEIGHTS = ("random", "zeros")


def to_onnx(graph, path=None, weights: str = "random", opset: int | None = None):
    """The Graph as an onnx.ModelProto (checked with onnx.checker); also saved to `path` when given.

    weights: "random" (dense values in [0.01, 0.1), seeded: the same file every time) or "zeros".
    opset: the ONNX opset to declare; default the lowest that has every op of the graph (17 or 18).
    Raises ModelError (a layer dlasim does not know, or an op the opset lacks, names the layer).
    """
    from .onnx_package import onnx_module

    onnx = onnx_module(path or graph.name, "writing")
    from onnx import helper, numpy_helper

    if weights not in WEIGHTS:
        raise ModelError(f"weights={weights!r}: expected one of {', '.join(WEIGHTS)}")
    unknown = next((l for l in graph.layers if "unknown_op" in l.flags), None)
    if unknown is not None:
        raise ModelError(f"{graph.name}: layer {unknown.name!r} ({unknown.op}): dlasim does not know this op, "
                         f"so it cannot write it as ONNX")
    need = 18 if any(l.op in _OPSET_18 for l in graph.layers) else 17
    opset = need if opset is None else int(opset)
    if opset < need:
        raise ModelError(f"opset={opset}: the graph uses ops of opset {need}")
    if opset < 13:
        raise ModelError(f"opset={opset}: expected 13 or later (attributes-as-inputs spelling)")
    rng = np.random.default_rng(0)
    inits, nodes, extra = [], [], []
    for t in graph.tensors.values():
        if t.const and t.shape is not None:
            inits.append(numpy_helper.from_array(_fill(t, weights, rng), t.name))
    for layer in graph.layers:
        attrs = {k: v for k, v in layer.attributes.items() if v is not None}
        domain = attrs.pop("domain", "")
        inputs = list(layer.inputs)
        for idx, key, dtype in _AS_INPUTS.get(layer.op, []):
            value = attrs.pop(key, None)
            if value is None:
                continue
            while len(inputs) < idx:
                inputs.append("")                          # an optional input left out
            name = f"{layer.name}.{key}"
            arr = np.asarray(value, dtype=dtype)
            extra.append(numpy_helper.from_array(arr.reshape(()) if key in _SCALARS else arr.reshape(-1), name))
            inputs[idx:idx + 1] = [name]
        nodes.append(helper.make_node(layer.op, inputs, list(layer.outputs), name=layer.name, domain=domain,
                                      **attrs))
    g = helper.make_graph(nodes, graph.name, [_value_info(graph, n) for n in graph.inputs],
                          [_value_info(graph, n) for n in graph.outputs], initializer=inits + extra)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="dlasim")
    model.ir_version = min(model.ir_version, 8 if opset <= 17 else 9)   # readers of that opset's era
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        raise ModelError(f"{graph.name}: the ONNX writer made an invalid model "
                         f"({' '.join(str(e).split())[:200]})") from None
    if path is not None:
        onnx.save(model, str(path))
    return model


def _fill(t, weights: str, rng) -> np.ndarray:
    dtype = np.dtype("float32" if t.dtype not in _ONNX_DTYPES else t.dtype)
    if weights == "zeros" or dtype.kind not in "f":
        return np.zeros(t.shape, dtype=dtype)                  # integer constants: valid indices
    return rng.uniform(0.01, 0.1, size=t.shape).astype(dtype)


def _value_info(graph, name: str):
    from onnx import helper
    t = graph.tensors[name]
    return helper.make_tensor_value_info(name, _ONNX_DTYPES.get(t.dtype, 1),
                                         list(t.shape) if t.shape is not None else None)
