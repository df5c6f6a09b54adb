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
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .. import ops
from ..errors import ModelError
from ..ir import Graph, Layer, Tensor

# onnx.TensorProto.DataType -> dlasim dtype names (ir.DTYPE_BYTES)
_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
           9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 16: "bfloat16"}

_REDUCE = ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
# op -> {input index: attribute name}: inputs that are parameters, turned into attributes.
_PARAMS: dict[str, dict[int, str]] = {
    "Reshape": {1: "shape"},
    "Resize": {1: "roi", 2: "scales", 3: "sizes"},
    "Upsample": {1: "scales"},
    "Slice": {1: "starts", 2: "ends", 3: "axes", 4: "steps"},
    "Split": {1: "split"},
    "Pad": {1: "pads", 2: "value", 3: "axes"},
    "Clip": {1: "min", 2: "max"},
    "Squeeze": {1: "axes"},
    "Unsqueeze": {1: "axes"},
    "Dropout": {1: "ratio", 2: "training_mode"},
    "Expand": {1: "shape"},
    "Tile": {1: "repeats"},
    **{op: {1: "axes"} for op in _REDUCE},
}
_AUTO_PAD_OPS = ("Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool")
_SMALL = 64  # integer initializers up to this many elements are shape arithmetic, not weights


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
    import onnx

    from ..safeio import ONNX_LIMIT, read_bytes

    data = read_bytes(path, "model", limit=ONNX_LIMIT)
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)  # a bytearray is parsed in place (onnx.load_model_from_string wants bytes)
        del data
    except RecursionError:
        raise ModelError(f"{path}: not a valid ONNX model (messages nest too deeply)") from None
    except Exception as e:  # protobuf DecodeError and friends
        raise ModelError(f"{path}: not a valid ONNX model ({_one_line(e)})") from None
    if not model.HasField("graph") or not (model.graph.node or model.graph.input):
        raise ModelError(f"{path}: not a valid ONNX model (no graph)")
    return model


def load_onnx_model(model, shapes: dict[str, tuple] | None = None, batch: int | None = None) -> Graph:
    """Import an in-memory onnx.ModelProto (`dlasim.load(proto)`); messages name it by its graph name."""
    source = f"ModelProto {model.graph.name!r}" if model.HasField("graph") and model.graph.name else "ModelProto"
    if not model.HasField("graph") or not (model.graph.node or model.graph.input):
        raise ModelError(f"{source}: not a valid ONNX model (no graph)")
    return _Importer(model, source).run(dict(shapes or {}), batch)


def _one_line(e: Exception) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) < 200 else text[:197] + "..."


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
                dims[0] = int(batch)
            self.overridden |= dims != _dims(inp)
            if dims is None or any(d is None for d in dims):
                example = "x".join(str(d or 1) for d in dims) if dims else "1x3x224x224"
                what = "has a dynamic dimension" if dims else "has no shape"
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
            if t.name in self.folded or t.data_type in (6, 7) and math.prod(t.dims) <= _SMALL \
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
            fn = _FOLD.get(node.op_type)
            vals = None
            if fn is not None:
                try:
                    vals = fn(self, node, [self._value(t) if t else None for t in node.input], _node_attrs(node))
                except Exception:  # not foldable after all (unknown values, odd attributes)
                    vals = None
            if vals is not None:
                vals = [np.asarray(v) for v in (vals if isinstance(vals, list) else [vals])]
                if all(v.size <= _SMALL for v in vals):
                    self.folded.update(zip(outs, vals))
                    count += len(outs)
                    continue
            ins = [t for t in node.input if t]
            if ins and all(self._is_const(t) for t in ins) and all(o in self.known for o in outs):
                self.const_shapes.update((o, self.known[o]) for o in outs)
                count += len(outs)
        return count

    def _shape_of(self, name: str):
        if name in self.tensors and not self.tensors[name].const:
            return self.tensors[name].shape
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
                return numpy_helper.to_array(t) if math.prod(t.dims) <= _SMALL and t.data_location != 1 else None
            node = self.const_nodes.get(name)
            for a in node.attribute if node is not None else ():
                if a.name == "value":
                    return numpy_helper.to_array(a.t) if math.prod(a.t.dims) <= _SMALL else None
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
    def _attrs(self, node) -> dict:
        from onnx import helper

        out = {}
        for a in node.attribute:
            v = helper.get_attribute_value(a)
            if isinstance(v, bytes):
                v = v.decode("utf-8", "replace")
            elif isinstance(v, float):
                v = float(f"{v:.7g}")  # float32 attribute, printed as written (0.1, not 0.10000000149)
            elif isinstance(v, list) and all(isinstance(x, (int, float, bytes)) for x in v):
                v = [x.decode("utf-8", "replace") if isinstance(x, bytes) else
                     float(f"{x:.7g}") if isinstance(x, float) else x for x in v]
            elif not isinstance(v, (int, str)):
                continue  # tensor / graph / type attributes carry no shape facts we use
            out[a.name] = v
        if node.domain not in ("", "ai.onnx"):
            out["domain"] = node.domain
        return out

    def _layer(self, node, name: str) -> Layer:
        op = node.op_type
        attributes = self._attrs(node)
        inputs = list(node.input)
        params = _PARAMS.get(op, {})
        if op == "Resize" and self.opset < 11:
            params = {1: "scales"}
        dropped: set[int] = set()
        unresolved: list[int] = []
        for idx, key in params.items():
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
            attributes[key] = flat[0] if key in ("min", "max", "value", "ratio", "training_mode") else flat
        x = self._shape_of(inputs[0]) if inputs and inputs[0] else None
        outs = [self.known.get(t) for t in node.output if t]
        if unresolved and _from_inferred(op, attributes, x, outs):
            dropped.update(unresolved)
        inputs = [t for i, t in enumerate(inputs) if i not in dropped]
        self._normalise(op, attributes, x, node, name, outs)
        if op in ops.QDQ:
            self._qdq_attrs(node, attributes, name)
        return Layer(name, op, inputs, [t for t in node.output if t], attributes)

    def _normalise(self, op: str, attributes: dict, x, node, name: str, outs) -> None:
        """Attribute defaults and spellings that differ between ONNX and dlasim/ops.py."""
        if op in ("Softmax", "LogSoftmax", "Hardmax") and "axis" not in attributes:
            attributes["axis"] = 1 if self.opset < 13 else -1
        elif op == "LeakyRelu":
            attributes.setdefault("alpha", 0.01)
        elif op == "Reshape" and "shape" in attributes and x:
            batch = self._batch()
            if attributes["shape"] and attributes["shape"][0] == x[0] == batch and not attributes.get("allowzero"):
                attributes["shape"] = [0] + list(attributes["shape"][1:])  # keep following --batch
        elif op == "Resize" and attributes.get("axes") and x:
            full_s = [1.0] * len(x)
            full_z = list(x)
            for i, a in enumerate(attributes.pop("axes")):
                if "scales" in attributes:
                    full_s[a % len(x)] = attributes["scales"][i]
                if "sizes" in attributes:
                    full_z[a % len(x)] = attributes["sizes"][i]
            attributes.update({"scales": full_s} if "scales" in attributes else {"sizes": full_z})
        elif op == "Pad" and attributes.get("axes") and "pads" in attributes and x:
            r, axes, p = len(x), attributes.pop("axes"), attributes["pads"]
            full = [0] * (2 * r)
            for i, a in enumerate(axes):
                full[a % r], full[a % r + r] = p[i], p[i + len(axes)]
            attributes["pads"] = full
        elif op == "Split" and "num_outputs" in attributes and "split" not in attributes and x:
            d, n = x[int(attributes.get("axis", 0)) % len(x)], int(attributes.pop("num_outputs"))
            chunk = -(-d // n)
            attributes["split"] = [chunk] * (n - 1) + [d - chunk * (n - 1)]
        if op in ("Resize", "Upsample") and attributes.get("sizes") and x and len(attributes["sizes"]) == len(x):
            scales = [o / i for o, i in zip(attributes["sizes"], x)]
            if all(math.floor(i * f) == o for i, f, o in zip(x, scales, attributes["sizes"])):
                attributes["scales"] = scales  # batch-free spelling of the same output
                del attributes["sizes"]
        if op in _AUTO_PAD_OPS:
            self._explicit_pads(op, attributes, x, node, name, outs)

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

    def _explicit_pads(self, op: str, attributes: dict, x, node, name: str, outs) -> None:
        """auto_pad SAME_UPPER/SAME_LOWER/VALID and ConvTranspose output_shape -> explicit pads [t,l,b,r]."""
        if "kernel_shape" not in attributes and op in ("Conv", "ConvTranspose") and len(node.input) > 1:
            w = self._const_shape(node.input[1]) or self.known.get(node.input[1])
            if w:
                attributes["kernel_shape"] = list(w[2:])
        auto = attributes.pop("auto_pad", "NOTSET")
        out_shape = attributes.pop("output_shape", None) if op == "ConvTranspose" else None
        if auto in ("NOTSET", "") and not out_shape:
            return
        n = len(attributes.get("kernel_shape", [])) or (len(x) - 2 if x else 0)
        if auto == "VALID" and not out_shape:
            attributes["pads"] = [0] * (2 * n)
            return
        if not x or "kernel_shape" not in attributes:
            raise ModelError(f"{self.path}: layer {name!r} ({op}): auto_pad={auto} needs the input shape and "
                             f"kernel_shape, which ONNX shape inference could not give")
        k, sp = attributes["kernel_shape"], list(x[2:])
        s = attributes.get("strides") or [1] * n
        d = attributes.get("dilations") or [1] * n
        begin, end = [], []
        for i in range(n):
            span = (k[i] - 1) * d[i] + 1
            if op == "ConvTranspose":
                o_pad = (attributes.get("output_padding") or [0] * n)[i]
                target = out_shape[-n + i] if out_shape else sp[i] * s[i]
                total = s[i] * (sp[i] - 1) + o_pad + span - target
                lo, hi = total // 2, total - total // 2  # ONNX ConvTranspose: SAME_UPPER puts less in front
                begin.append(hi if auto == "SAME_LOWER" else lo)
                end.append(lo if auto == "SAME_LOWER" else hi)
            else:
                total = max(0, (-(-sp[i] // s[i]) - 1) * s[i] + span - sp[i])
                small, big = total // 2, total - total // 2
                begin.append(big if auto == "SAME_LOWER" else small)
                end.append(small if auto == "SAME_LOWER" else big)
        attributes["pads"] = begin + end

    def _batch(self) -> int | None:
        for t in self.tensors.values():
            if not t.const and t.shape:
                return t.shape[0]
        return None

    # ---- assembly ---------------------------------------------------------------------------------
    def run(self, shapes: dict[str, tuple], batch: int | None) -> Graph:
        inputs, deferred = self._fix_inputs(shapes, batch)
        for _ in range(8):  # inference and folding feed each other (Shape of a Reshape output, ...)
            self._onnx_shapes()
            if not self._fold() or all(o.name in self.known for o in self.graph.output):
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


def _align(long: tuple, short: tuple) -> list[int] | None:
    """Axes of `long` that are size-1 extras relative to `short` (Squeeze/Unsqueeze), or None."""
    axes, j = [], 0
    for i, d in enumerate(long):
        if j < len(short) and d == short[j]:
            j += 1
        elif d == 1:
            axes.append(i)
        else:
            return None
    return axes if j == len(short) else None


def _from_inferred(op: str, attributes: dict, x, outs) -> bool:
    """Rebuild a run-time parameter from ONNX's inferred shapes; True when the input can be dropped."""
    y = outs[0] if outs else None
    if op in ("Expand", "Tile", "Dropout"):
        return True  # shapes of these come from ONNX inference or the input
    if op == "Clip":
        return True  # bounds do not change shapes
    if y is None or x is None:
        return False
    if op == "Reshape":
        attributes["shape"] = list(y)
    elif op in ("Resize", "Upsample") and len(x) == len(y):
        attributes["sizes"] = list(y)  # _normalise turns exact ratios into scales
        attributes.pop("scales", None)
        attributes.pop("axes", None)
    elif op == "Slice" and len(x) == len(y):
        axes = [i for i, (a, b) in enumerate(zip(x, y)) if a != b] or [0]
        attributes.update(starts=[0] * len(axes), ends=[y[a] for a in axes], axes=axes, steps=[1] * len(axes))
    elif op == "Split" and all(o is not None and len(o) == len(x) for o in outs):
        axis = int(attributes.get("axis", 0)) % len(x)
        attributes["split"] = [o[axis] for o in outs]
    elif op == "Pad" and len(x) == len(y):
        attributes["pads"] = [0] * len(x) + [o - i for i, o in zip(x, y)]
        attributes.pop("axes", None)
    elif op in ("Squeeze", "Unsqueeze") or (op in _REDUCE and len(y) != len(x)):
        axes = _align(x, y) if len(x) >= len(y) else _align(y, x)
        if axes is None:
            return False
        attributes["axes"] = axes
    elif op in _REDUCE:
        attributes["axes"] = [i for i, (a, b) in enumerate(zip(x, y)) if a != b]
    else:
        return False
    return True


# ---- folding of shape arithmetic ---------------------------------------------------------------------
def _node_attrs(node) -> dict:
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _need(vals: list, n: int) -> bool:
    return len(vals) >= n and all(v is not None for v in vals[:n])


def _fold_shape(imp, node, vals, attributes):
    s = imp._shape_of(node.input[0])
    if s is None:
        return None
    start, end = attributes.get("start", 0), attributes.get("end")
    return np.array(s[start:end] if end is not None else s[start:], dtype=np.int64)


def _fold_unsqueeze(imp, node, vals, attributes):
    axes = attributes.get("axes") if "axes" in attributes else (vals[1].tolist() if _need(vals, 2) else None)
    if vals[0] is None or axes is None:
        return None
    out = vals[0]
    rank = out.ndim + len(axes)
    for a in sorted(a % rank for a in axes):
        out = np.expand_dims(out, a)
    return out


def _fold_squeeze(imp, node, vals, attributes):
    axes = attributes.get("axes") if "axes" in attributes else (vals[1].tolist() if _need(vals, 2) else None)
    if vals[0] is None:
        return None
    return np.squeeze(vals[0], axis=None if axes is None else tuple(a % vals[0].ndim for a in axes))


def _fold_slice(imp, node, vals, attributes):
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


def _fold_div(imp, node, vals, attributes):
    if not _need(vals, 2):
        return None
    a, b = vals
    if np.issubdtype(a.dtype, np.integer):
        return np.trunc(a / b).astype(a.dtype)
    return a / b


def _fold_cast(imp, node, vals, attributes):
    from onnx import helper
    if vals[0] is None:
        return None
    return vals[0].astype(helper.tensor_dtype_to_np_dtype(attributes["to"]))


def _fold_constant_of_shape(imp, node, vals, attributes):
    from onnx import numpy_helper
    if vals[0] is None or math.prod(vals[0].tolist()) > _SMALL:
        return None
    fill = numpy_helper.to_array(attributes["value"]).reshape(-1) if "value" in attributes else np.zeros(1, np.float32)
    return np.full(tuple(vals[0].tolist()), fill[0], dtype=fill.dtype)


def _elementwise(fn, n: int = 2):
    def fold(imp, node, vals, attributes):
        return fn(*vals[:n]) if _need(vals, n) and len(vals) == n else None
    return fold


def _variadic(fn):
    def fold(imp, node, vals, attributes):
        return fn(vals) if vals and all(v is not None for v in vals) else None
    return fold


_FOLD = {
    "Shape": _fold_shape,
    "Size": lambda imp, node, vals, attributes: (None if imp._shape_of(node.input[0]) is None
                                            else np.array(math.prod(imp._shape_of(node.input[0])), np.int64)),
    "Identity": _elementwise(lambda a: a, 1),
    "Gather": lambda imp, node, vals, attributes: (np.take(vals[0], vals[1], axis=attributes.get("axis", 0))
                                              if _need(vals, 2) else None),
    "Unsqueeze": _fold_unsqueeze, "Squeeze": _fold_squeeze, "Slice": _fold_slice,
    "Concat": lambda imp, node, vals, attributes: (np.concatenate([np.atleast_1d(v) for v in vals],
                                                             axis=attributes.get("axis", 0))
                                              if vals and all(v is not None for v in vals) else None),
    "Reshape": lambda imp, node, vals, attributes: (vals[0].reshape([d if d else vals[0].shape[i]
                                                                for i, d in enumerate(vals[1].tolist())])
                                               if _need(vals, 2) else None),
    "Cast": _fold_cast, "ConstantOfShape": _fold_constant_of_shape,
    "Add": _elementwise(np.add), "Sub": _elementwise(np.subtract), "Mul": _elementwise(np.multiply),
    "Div": _fold_div, "Mod": lambda imp, node, vals, attributes: ((np.fmod if attributes.get("fmod") else np.mod)(*vals[:2])
                                                             if _need(vals, 2) else None),
    "Equal": _elementwise(np.equal), "Where": _elementwise(np.where, 3),
    "Floor": _elementwise(np.floor, 1), "Ceil": _elementwise(np.ceil, 1), "Neg": _elementwise(np.negative, 1),
    "Abs": _elementwise(np.abs, 1), "Not": _elementwise(np.logical_not, 1),
    "Min": _variadic(lambda v: np.minimum.reduce(np.broadcast_arrays(*v))),
    "Max": _variadic(lambda v: np.maximum.reduce(np.broadcast_arrays(*v))),
    "Range": lambda imp, node, vals, attributes: (np.arange(vals[0], vals[1], vals[2]) if _need(vals, 3) else None),
}
