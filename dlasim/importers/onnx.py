"""ONNX importer (opsets 11+; older attribute forms are read where they share our names).

Reads a ModelProto with the `onnx` package (imported here only, so the CLI starts fast) without loading
external weight files: weights become constant tensors with a shape and no values. The small constants
that decide shapes (Reshape target, Resize scales/sizes, Slice starts/ends/axes/steps, Split sizes, Pad
pads, Clip min/max, Squeeze/Unsqueeze axes, Reduce* axes: the opset 10-18 "attribute became an input"
changes, onnx/docs/Changelog.md) are read with onnx.numpy_helper and stored as attributes in dlasim's
convention (dlasim/ops.py). When such an input is computed (a Shape -> Gather -> Concat chain, as
torch.onnx writes for `x.view(x.size(0), -1)`), the chain is evaluated on the static input shapes and
dropped, as TensorRT folds it at build time; failing that, the value is rebuilt from the output shape that
onnx.shape_inference gives. Ops dlasim does not know keep ONNX's inferred output shapes.

Here: reading, input shapes, shape inference and assembly. The folding of shape arithmetic is in
importers/onnx_fold.py, attribute normalisation in importers/onnx_attributes.py, the model checks in
importers/onnx_checks.py.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .. import ops
from ..errors import ModelError
from ..ir import Graph, Layer, Tensor
from ..onnx_package import one_line, onnx_module
from .onnx_attributes import SCALAR_PARAMETERS, from_inferred, normalise, parameter_inputs, read_attributes
from .onnx_fold import FOLDERS, SMALL, node_attributes

# Rounds of ONNX shape inference and folding: each round resolves the shapes that the values folded in the
# last one decide. torchvision Swin-T needs 16 (every block pads its input by amounts computed from the
# previous block's output shape); the loop stops as soon as a round folds nothing.
ROUNDS = 64
# onnx.TensorProto.DataType -> dlasim dtype names (ir.DTYPE_BYTES)
_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
           9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 16: "bfloat16"}




def load_onnx(path: str, shapes: dict[str, tuple] | None = None, batch: int | None = None) -> Graph:
    """Import an ONNX file as a validated, shaped Graph; `shapes`/`batch` fix input shapes first.

    The file is read with dlasim.safeio (a regular file under protobuf's 2 GiB limit) and checked by
    importers/onnx_checks.py before conversion; external weight files are never opened."""
    model = read_onnx(path)
    from .onnx_checks import check_model
    weights = check_model(model, path)
    g = _Importer(model, path).run(dict(shapes or {}), batch)
    g.external_weights = weights
    return g


def read_onnx(path: str):
    """The ModelProto of an ONNX file, without external data; a one-line ModelError when unreadable."""
    from ..safeio import ONNX_LIMIT, read_bytes

    data = read_bytes(path, "model", limit=ONNX_LIMIT)       # a missing or unreadable file is named first
    model = onnx_module(path, "reading").ModelProto()
    try:
        model.ParseFromString(data)  # a bytearray is parsed in place (onnx.load_model_from_string wants bytes)
        del data
    except RecursionError:
        raise ModelError(f"{path}: not a valid ONNX model (messages nest too deeply)") from None
    except Exception as e:  # protobuf DecodeError and friends
        raise ModelError(f"{path}: not a valid ONNX model ({one_line(e)})") from None
    if not model.HasField("graph") or not (model.graph.node or model.graph.input):
        raise ModelError(f"{path}: not a valid ONNX model (no graph)")
    return model


def load_onnx_model(model, shapes: dict[str, tuple] | None = None, batch: int | None = None) -> Graph:
    """Import an in-memory onnx.ModelProto (`dlasim.load(proto)`); messages name it by its graph name."""
    source = f"ModelProto {model.graph.name!r}" if model.HasField("graph") and model.graph.name else "ModelProto"
    if not model.HasField("graph") or not (model.graph.node or model.graph.input):
        raise ModelError(f"{source}: not a valid ONNX model (no graph)")
    return _Importer(model, source).run(dict(shapes or {}), batch)


def _dims(value_info) -> list[int | None] | None:
    """Static dims of a ValueInfoProto (None for a symbolic/unknown dim), or None when rank is unknown."""
    tt = value_info.type.tensor_type
    if not tt.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in tt.shape.dim]


class _Importer:
    def __init__(self, model, path: str):
        self.model = model
        self.graph = model.graph
        self.path = path
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 11)
        self.inits = {t.name: t for t in self.graph.initializer}
        self.const_nodes = {n.output[0]: n for n in self.graph.node if n.op_type == "Constant" and n.output}
        self.known: dict[str, tuple[int, ...]] = {}  # shapes from ONNX shape inference
        self.folded: dict = {}  # tensor -> numpy value of folded shape arithmetic
        self.const_shapes: dict[str, tuple[int, ...]] = {}  # larger constants computed from constants
        self.dtypes: dict[str, str] = {}
        self.tensors: dict[str, Tensor] = {}
        self.overridden = False  # input shapes differ from the file's: its value_info may be stale

    # ---- inputs and ONNX shape inference ---------------------------------------------------------
    def _fix_inputs(self, shapes: dict[str, tuple], batch: int | None) -> tuple[list[str], bool]:
        """Give every input a static shape; returns (input names, whether overrides must wait).

        A model whose inputs are all static is imported as written and `shapes`/`batch` are applied to the
        Graph afterwards (Graph.with_shapes), so that Reshape targets written for the file's batch are seen
        at that batch. Dynamic dimensions are filled here, before ONNX shape inference.
        """
        inputs = [i for i in self.graph.input if i.name not in self.inits]
        names = [i.name for i in inputs]
        for name in shapes:
            if name not in names:
                raise ModelError(f"shapes (--shapes): {name!r} is not an input of {self.path} "
                                 f"(inputs: {', '.join(names)})")
        static = all((d := _dims(i)) is not None and None not in d for i in inputs)
        for inp in inputs:
            if static:
                dims = _dims(inp)
                if inp.name in shapes and len(shapes[inp.name]) != len(dims):
                    raise ModelError(f"shapes (--shapes): input {inp.name!r} has {len(dims)} dimensions in "
                                     f"{self.path}, got {'x'.join(map(str, shapes[inp.name]))}")
                self.tensors[inp.name] = Tensor(inp.name, tuple(dims),
                                                _DTYPES.get(inp.type.tensor_type.elem_type, "float32"))
                continue
            dims = _dims(inp)
            if inp.name in shapes:
                given = [int(d) for d in shapes[inp.name]]
                if dims is not None and len(dims) != len(given):
                    raise ModelError(f"shapes (--shapes): input {inp.name!r} has {len(dims)} dimensions in "
                                     f"{self.path}, got {'x'.join(map(str, given))}")
                dims = given
            if dims and batch is not None:
                axis = _batch_axis(inp)
                if axis:
                    sym = inp.type.tensor_type.shape.dim[axis].dim_param
                    example = "x".join(str(d) if d else str(batch) if i == axis else "N"
                                       for i, d in enumerate(dims))
                    raise ModelError(f"{self.path}: input {inp.name!r} has its batch dimension ({sym}) at axis {axis}, "
                                     f"but --batch sets dimension 0; give the shape with --shapes {inp.name}:{example}")
                dims[0] = int(batch)
            self.overridden |= dims != _dims(inp)
            if dims is None or any(d is None for d in dims):
                # a dynamic batch is filled with 1; another dynamic dimension has no safe default (1 would
                # make a 1x1 image of a dynamic-axes detector export): it is named, to be chosen
                sym = [d.dim_param or f"dim{i}" for i, d in enumerate(inp.type.tensor_type.shape.dim)]
                example = ("x".join(str(d) if d else ("1" if i == 0 else sym[i].upper())
                                    for i, d in enumerate(dims)) if dims else "1x3x224x224")
                what = "has a dynamic dimension" if dims else "has no shape"
                if dims and any(d is None for d in dims[1:]):
                    what = f"has dynamic dimensions ({', '.join(sym[i] for i, d in enumerate(dims) if d is None)})"
                as_tuple = "(" + ", ".join(example.split("x")) + ("," if "x" not in example else "") + ")"
                raise ModelError(f"{self.path}: input {inp.name!r} {what}; give its shape with "
                                 f"shapes={{{inp.name!r}: {as_tuple}}} (--shapes {inp.name}:{example})")
            shape = inp.type.tensor_type.shape
            shape.ClearField("dim")
            for d in dims:
                shape.dim.add().dim_value = d
            dtype = _DTYPES.get(inp.type.tensor_type.elem_type, "float32")
            self.tensors[inp.name] = Tensor(inp.name, tuple(dims), dtype)
        return names, static and bool(shapes or batch is not None)

    def _onnx_shapes(self) -> None:
        """Run onnx.shape_inference with data propagation; failures leave our own inference in charge."""
        import onnx

        for keep_value_info in ((False,) if self.overridden else (True, False)):
            for data_prop in (True, False):
                try:
                    inferred = onnx.shape_inference.infer_shapes(self._shape_model(keep_value_info),
                                                                 strict_mode=False, data_prop=data_prop)
                except Exception:
                    continue
                for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
                    dims = _dims(vi)
                    if dims is not None and all(d is not None for d in dims):
                        self.known[vi.name] = tuple(dims)
                    if vi.type.tensor_type.elem_type:
                        self.dtypes[vi.name] = _DTYPES.get(vi.type.tensor_type.elem_type, "float32")
                return

    def _shape_model(self, keep_value_info: bool):
        """A weightless copy of the model for shape inference.

        Large initializers become typed graph inputs (no data copied); small integer ones become Constant
        nodes, because ONNX data propagation (Shape -> Gather -> Concat -> Reshape) reads Constant nodes
        but not initializers.
        """
        import onnx
        from onnx import helper, numpy_helper

        src = self.graph
        m = onnx.ModelProto()
        m.ir_version = max(self.model.ir_version, 4)
        m.opset_import.extend(self.model.opset_import)
        declared = {o.domain for o in m.opset_import}
        for domain in sorted({n.domain for n in self.graph.node} - declared - {"ai.onnx"}):
            m.opset_import.append(helper.make_opsetid(domain, 1))  # unknown domains stop inference otherwise
        m.functions.extend(self.model.functions)
        g = m.graph
        g.name = src.name
        g.input.extend(i for i in src.input if i.name not in self.inits)
        g.output.extend(src.output)
        if keep_value_info:
            g.value_info.extend(src.value_info)
        for t in src.initializer:
            if t.name in self.folded or t.data_type in (6, 7) and math.prod(t.dims) <= SMALL \
                    and t.data_location != 1:
                g.node.append(helper.make_node("Constant", [], [t.name], value=t))
            else:
                g.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        for name, v in self.folded.items():
            if name not in self.inits:
                g.node.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(v, name)))
        g.node.extend(n for n in src.node if not self._is_folded(n, values_only=True))
        return m

    def _is_folded(self, node, values_only: bool = False) -> bool:
        outs = [o for o in node.output if o]
        return bool(outs) and all(o in self.folded or (not values_only and o in self.const_shapes) for o in outs)

    def _is_const(self, name: str) -> bool:
        return name in self.inits or name in self.const_nodes or name in self.folded or name in self.const_shapes

    def _fold(self) -> int:
        """Constant folding as TensorRT does at build time: shape arithmetic on small constants and known
        shapes is evaluated; other nodes that read only constants (ConstantOfShape, a Transpose or
        DequantizeLinear of weights, ...) become constants of the shape ONNX inference gives them."""
        count = 0
        for node in self.graph.node:
            if node.domain not in ("", "ai.onnx") or node.op_type == "Constant" or self._is_folded(node):
                continue
            outs = [o for o in node.output if o]
            fn = FOLDERS.get(node.op_type)
            vals = None
            if fn is not None:
                try:
                    vals = fn(self._shape_of, node, [self._value(t) if t else None for t in node.input],
                               node_attributes(node))
                except Exception:  # not foldable after all (unknown values, odd attributes)
                    vals = None
            if vals is not None:
                vals = [np.asarray(v) for v in (vals if isinstance(vals, list) else [vals])]
                if all(v.size <= SMALL for v in vals):
                    self.folded.update(zip(outs, vals))
                    count += len(outs)
                    continue
            ins = [t for t in node.input if t]
            if ins and all(self._is_const(t) for t in ins) and all(o in self.known for o in outs):
                self.const_shapes.update((o, self.known[o]) for o in outs)
                count += len(outs)
        return count

    def _resolved(self) -> bool:
        """Every tensor a node writes has a shape (ONNX inference) or a value (folding): no round is left to
        help. (The graph outputs alone can be known while inner shapes still wait on folded values: Swin-T's
        (1, 1000) logits are inferred in the first round, its attention blocks' shapes in the 16th.)"""
        return all(o in self.known or o in self.folded or o in self.const_shapes or o in self.const_nodes
                   for n in self.graph.node for o in n.output if o)

    def _shape_of(self, name: str):
        if name in self.tensors and not self.tensors[name].const:
            return self.tensors[name].shape
        if name in self.folded:             # folded earlier in this pass: before ONNX inference has its shape
            return tuple(self.folded[name].shape)
        return self.known.get(name)

    # ---- constants -------------------------------------------------------------------------------
    def _value(self, name: str):
        """Value of a small constant (initializer, Constant node or folded result), else None."""
        from onnx import numpy_helper

        if name in self.folded:
            return self.folded[name]
        try:
            if name in self.inits:
                t = self.inits[name]
                return numpy_helper.to_array(t) if math.prod(t.dims) <= SMALL and t.data_location != 1 else None
            node = self.const_nodes.get(name)
            for a in node.attribute if node is not None else ():
                if a.name == "value":
                    return numpy_helper.to_array(a.t) if math.prod(a.t.dims) <= SMALL else None
                if a.name in ("value_float", "value_int"):
                    return np.array(a.f if a.name == "value_float" else a.i)
                if a.name in ("value_floats", "value_ints"):
                    return np.array(list(a.floats if a.name == "value_floats" else a.ints))
        except Exception:  # sparse or string constants
            return None
        return None

    def _const_shape(self, name: str) -> tuple[int, ...] | None:
        if name in self.folded:
            return tuple(self.folded[name].shape)
        if name in self.const_shapes:
            return self.const_shapes[name]
        if name in self.inits:
            return tuple(int(d) for d in self.inits[name].dims)
        node = self.const_nodes.get(name)
        if node is None:
            return None
        for a in node.attribute:
            if a.name == "value":
                return tuple(int(d) for d in a.t.dims)
            if a.name == "sparse_value":
                return tuple(int(d) for d in a.sparse_tensor.dims)
            if a.name in ("value_floats", "value_ints", "value_strings"):
                return (len(a.floats) or len(a.ints) or len(a.strings),)
        return ()

    # ---- layers ----------------------------------------------------------------------------------
    def _layer(self, node, name: str) -> Layer:
        op = node.op_type
        attributes = read_attributes(node)
        inputs = list(node.input)
        dropped: set[int] = set()
        unresolved: list[int] = []
        for idx, key in parameter_inputs(op, self.opset).items():
            if idx >= len(inputs):
                continue
            if not inputs[idx]:
                dropped.add(idx)
                continue
            value = self._value(inputs[idx])
            if value is None:
                unresolved.append(idx)
                continue
            dropped.add(idx)
            if value.size == 0 or key == "roi":
                continue
            flat = value.reshape(-1).tolist()
            attributes[key] = flat[0] if key in SCALAR_PARAMETERS else flat
        x = self._shape_of(inputs[0]) if inputs and inputs[0] else None
        outs = [self.known.get(t) for t in node.output if t]
        if unresolved and from_inferred(op, attributes, x, outs):
            dropped.update(unresolved)
        inputs = [t for i, t in enumerate(inputs) if i not in dropped]
        weights = node.input[1] if op in ("Conv", "ConvTranspose") and len(node.input) > 1 else None
        normalise(op, attributes, x, opset=self.opset, batch=self._batch(),
                  weight_shape=(self._const_shape(weights) or self.known.get(weights)) if weights else None,
                  where=f"{self.path}: layer {name!r} ({op})")
        if op in ops.QDQ:
            self._qdq_attrs(node, attributes, name)
        return Layer(name, op, inputs, [t for t in node.output if t], attributes)

    # ---- explicit quantization (QuantizeLinear / DequantizeLinear) ---------------------------------
    def _qdq_attrs(self, node, attributes: dict, name: str) -> None:
        """Record what the Q/DQ passes need: per-tensor or per-channel scale (and its axis), the integer type.

        ONNX QuantizeLinear/DequantizeLinear: opset 10 has per-tensor scales only; opset 13 adds per-axis
        scales with `axis` (default 1). TensorRT takes INT8 (signed) quantization with zero point 0
        (gpu_tensorrt.md s5.2 "Q/DQ fusion"); a uint8 zero point is recorded, not rejected."""
        scale = node.input[1] if len(node.input) > 1 else ""
        shape = (self._const_shape(scale) or self.known.get(scale)) if scale else None
        n = math.prod(shape) if shape else 1
        if n > 1 and self.opset < 13:
            raise ModelError(f"{self.path}: layer {name!r} ({node.op_type}): a per-channel scale ({n} values) "
                             f"needs opset 13 or later; the model declares opset {self.opset}")
        attributes["per_channel"] = n > 1
        if n > 1:
            attributes["axis"] = int(attributes.get("axis", 1))
        else:
            attributes.pop("axis", None)
        zp = node.input[2] if len(node.input) > 2 else ""
        zt = self.inits.get(zp) if zp else None
        attributes["qtype"] = _DTYPES.get(zt.data_type, "int8") if zt is not None else ("int8" if zp else "uint8")

    def _quantized_weights(self) -> set[str]:
        """Outputs of DequantizeLinear nodes folded into constants: weights stored as INT8 in the engine
        (TensorRT quantizes constant weights at build time, gpu_tensorrt.md s5.2 "Q/DQ fusion")."""
        return {o for n in self.graph.node if n.op_type == "DequantizeLinear" and self._is_folded(n)
                for o in n.output if o}

    def _batch(self) -> int | None:
        for t in self.tensors.values():
            if not t.const and t.shape:
                return t.shape[0]
        return None

    # ---- assembly ---------------------------------------------------------------------------------
    def run(self, shapes: dict[str, tuple], batch: int | None) -> Graph:
        inputs, deferred = self._fix_inputs(shapes, batch)
        for _ in range(ROUNDS):  # inference and folding feed each other (Shape of a Reshape output, ...)
            self._onnx_shapes()
            if not self._fold() or self._resolved():
                break
        layers: list[Layer] = []
        seen: set[str] = set()
        for i, node in enumerate(self.graph.node):
            if node.op_type == "Constant" or self._is_folded(node):
                continue
            name = node.name or f"{node.op_type}_{i}"
            base, k = name, 1
            while name in seen:
                name, k = f"{base}_{k}", k + 1
            seen.add(name)
            layers.append(self._layer(node, name))
        outputs = [o.name for o in self.graph.output]
        layers = _drop_dead(layers, set(outputs))
        int8_weights = self._quantized_weights()
        for layer in layers:
            for t in layer.inputs:
                if t and t not in self.tensors:
                    shape = self._const_shape(t)
                    if shape is not None:
                        dtype = (_DTYPES.get(self.inits[t].data_type, "float32") if t in self.inits
                                 else str(self.folded[t].dtype) if t in self.folded
                                 else self.dtypes.get(t, "float32"))
                        if t in int8_weights:
                            dtype = "int8"
                        self.tensors[t] = Tensor(t, shape, dtype, const=True)
            for t in layer.outputs:
                self.tensors[t] = Tensor(t, self.known.get(t), self.dtypes.get(t, "float32"))
        produced = {t for l in layers for t in l.outputs} | set(inputs)
        outputs = [o for o in outputs if o in produced]
        g = Graph(self.graph.name or Path(self.path).stem, layers, self.tensors, inputs, outputs, self.path)
        g = g.validate().infer_shapes()
        if deferred and shapes:
            g = g.with_shapes(shapes)
        if deferred and batch is not None:
            g = g.with_batch(int(batch))
        return g


def _batch_axis(inp) -> int:
    """The axis of a dynamic input's batch: its symbolic dimension named for the batch ("batch", "batch_size";
    a sequence-first transformer export, [seq, batch, dim], has it at 1), else 0, where --batch puts it."""
    for i, d in enumerate(inp.type.tensor_type.shape.dim):
        if not d.HasField("dim_value") and "batch" in d.dim_param.lower():
            return i
    return 0


def _drop_dead(layers: list[Layer], keep: set[str]) -> list[Layer]:
    """Remove layers none of whose outputs is read (shape arithmetic whose result became an attribute)."""
    while True:
        used = set(keep)
        for layer in layers:
            used.update(layer.inputs)
        alive = [l for l in layers if any(t in used for t in l.outputs)]
        if len(alive) == len(layers):
            return layers
        layers = alive

