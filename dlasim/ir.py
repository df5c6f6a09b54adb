"""Graph IR: tensors with shapes and dtypes, layers with attributes, constant weights by shape.

A Graph keeps its layers in topological order (producers before consumers). Constant tensors
(weights, biases) carry a shape and no values: dlasim needs their sizes, not their contents.
"""
from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from typing import Iterable

from . import ops
from .dims import check_batch, output_shape
from .errors import ModelError

DTYPE_BYTES = {"float32": 4, "float16": 2, "int8": 1, "int32": 4, "int64": 8, "uint8": 1, "bool": 1, "float64": 8}


@dataclass(slots=True)
class Tensor:
    name: str
    shape: tuple[int, ...] | None
    dtype: str = "float32"
    const: bool = False

    @property
    def numel(self) -> int:
        return math.prod(self.shape) if self.shape is not None else 0

    @property
    def nbytes(self) -> int:
        return self.numel * DTYPE_BYTES.get(self.dtype, 4)


@dataclass(slots=True)
class Layer:
    name: str
    op: str
    inputs: list[str]
    outputs: list[str]
    attributes: dict = field(default_factory=dict)  # the op's attributes under their ONNX names
    flags: list[str] = field(default_factory=list)  # e.g. "unknown_op", "shape_assumed"


class Graph:
    """A network: layers in topological order over named tensors."""

    def __init__(self, name: str, layers: list[Layer], tensors: dict[str, Tensor],
                 inputs: list[str], outputs: list[str], source: str = ""):
        self.name = name
        self.layers = layers
        self.tensors = tensors
        self.inputs = inputs
        self.outputs = outputs
        self.source = source
        self._producer: dict[str, Layer] | None = None
        self._consumers: dict[str, list[Layer]] | None = None
        self._macs: int | None = None      # cached; shapes change only through infer_shapes

    # ---- structure -------------------------------------------------------------------------------
    def _index(self) -> None:
        prod: dict[str, Layer] = {}
        cons: dict[str, list[Layer]] = {}
        for layer in self.layers:
            for t in layer.outputs:
                prod[t] = layer
            for t in layer.inputs:
                cons.setdefault(t, []).append(layer)
        self._producer, self._consumers = prod, cons

    def producer(self, tensor: str) -> Layer | None:
        if self._producer is None:
            self._index()
        return self._producer.get(tensor)

    def consumers(self, tensor: str) -> list[Layer]:
        if self._consumers is None:
            self._index()
        return self._consumers.get(tensor, [])

    def layer(self, name: str) -> Layer:
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise KeyError(name)

    def data_inputs(self, layer: Layer) -> list[Tensor]:
        """Non-constant input tensors of a layer (activations)."""
        return [self.tensors[t] for t in layer.inputs if t and not self.tensors[t].const]

    def const_inputs(self, layer: Layer) -> list[Tensor]:
        return [self.tensors[t] for t in layer.inputs if t and self.tensors[t].const]

    # ---- checks and shape inference --------------------------------------------------------------
    def validate(self) -> "Graph":
        """Check names, order and references; sort layers topologically. Raises ModelError."""
        seen_layers: set[str] = set()
        produced: dict[str, str] = {}
        for layer in self.layers:
            if layer.name in seen_layers:
                raise ModelError(f"{self.source or self.name}: duplicate layer name {layer.name!r}")
            seen_layers.add(layer.name)
            for t in layer.outputs:
                if t in produced:
                    raise ModelError(f"{self.source or self.name}: tensor {t!r} is produced by both "
                                     f"{produced[t]!r} and {layer.name!r}")
                produced[t] = layer.name
                if t not in self.tensors:
                    self.tensors[t] = Tensor(t, None)
        tensors = self.tensors
        ready = set(self.inputs)      # tensors available before this layer, for the order check
        ready.add("")                 # an absent optional input
        in_order = True
        for layer in self.layers:
            for t in layer.inputs:
                if t in ready:                     # "", a network input or an earlier layer's output
                    if not t or t in produced or t in tensors:
                        continue
                else:
                    x = tensors.get(t)
                    if x is not None and x.const:  # a weight
                        continue
                    if t in produced:              # a later layer's output: the layers need sorting
                        in_order = False
                        continue
                raise ModelError(f"{self.source or self.name}: layer {layer.name!r} reads tensor {t!r}, "
                                 f"which no layer or input produces")
            ready.update(layer.outputs)
        for t in self.inputs:
            if t not in self.tensors:
                raise ModelError(f"{self.source or self.name}: input {t!r} has no shape")
        for t in self.outputs:
            if t not in produced and t not in self.inputs:
                raise ModelError(f"{self.source or self.name}: output {t!r} is not produced by any layer")
        if not in_order:              # a builder's graph is in order already: no sort needed
            self._toposort()
        self._producer = self._consumers = None
        return self

    def _toposort(self) -> None:
        """Stable topological sort (Kahn, in passes): a layer whose inputs are ready keeps its place."""
        ready = {t for t, v in self.tensors.items() if v.const} | set(self.inputs) | {""}
        pending = list(self.layers)
        order: list[Layer] = []
        while pending:
            rest = []
            for layer in pending:
                if all(t in ready for t in layer.inputs):
                    order.append(layer)
                    ready.update(layer.outputs)
                else:
                    rest.append(layer)
            if len(rest) == len(pending):
                raise ModelError(f"{self.source or self.name}: the graph has a cycle through "
                                 f"{rest[0].name!r}")
            pending = rest
        self.layers = order

    def infer_shapes(self) -> "Graph":
        """Compute every activation shape from the inputs; unknown ops keep a known shape or copy input 0."""
        self._macs = None
        tensors = self.tensors
        for layer in self.layers:
            in_shapes = [tensors[t].shape for t in layer.inputs if t]
            if None in in_shapes:
                t = next(t for t in layer.inputs if t and tensors[t].shape is None)
                raise ModelError(f"{self.source or self.name}: tensor {t!r} (input of {layer.name!r}) "
                                 f"has no shape; give one with --shapes")
            try:
                outs = ops.infer(layer, in_shapes)
            except KeyError:
                if "unknown_op" not in layer.flags:
                    layer.flags.append("unknown_op")
                outs = []
                for t in layer.outputs:
                    known = self.tensors[t].shape
                    if known is None or "shape_assumed" in layer.flags:
                        known = in_shapes[0] if in_shapes else ()
                        if "shape_assumed" not in layer.flags:
                            layer.flags.append("shape_assumed")
                    elif in_shapes and known and len(in_shapes[0]) == len(known):
                        known = (in_shapes[0][0],) + tuple(known[1:])   # follow a batch override
                    outs.append(known)
            except (IndexError, TypeError, ValueError, ZeroDivisionError, OverflowError) as e:
                raise ModelError(f"{self.source or self.name}: layer {layer.name!r} ({layer.op}): "
                                 f"bad attributes or inputs ({e})") from None
            except ModelError as e:     # ops.infer names the layer; the file is named here
                where = self.source or self.name
                raise (e if str(e).startswith(f"{where}: ") else ModelError(f"{where}: {e}")) from None
            for t, s in zip(layer.outputs, outs):
                self.tensors[t].shape = output_shape(self.source or self.name, layer, s)
        return self

    # ---- derived copies --------------------------------------------------------------------------
    def with_shapes(self, shapes: dict[str, tuple[int, ...]]) -> "Graph":
        """A copy with some input shapes replaced (trtexec --shapes), shapes re-inferred."""
        g = self.copy()
        for name, shape in shapes.items():
            if name not in g.inputs:
                raise ModelError(f"shapes (--shapes): {name!r} is not an input of {g.name} "
                                 f"(inputs: {', '.join(g.inputs)})")
            g.tensors[name].shape = tuple(shape)
        return g.infer_shapes()

    def with_batch(self, batch: int) -> "Graph":
        """A copy whose inputs have batch size `batch` (dimension 0)."""
        check_batch(batch)
        if all(self.tensors[t].shape and self.tensors[t].shape[0] == batch for t in self.inputs):
            return self
        return self.with_shapes({t: (batch,) + tuple(self.tensors[t].shape[1:]) for t in self.inputs})

    def fingerprint(self, identity: bool = False) -> bytes:
        """The graph's whole content (name, inputs, outputs, every layer and tensor) as bytes: equal bytes,
        equal graph. Computed afresh on each call (the graph is mutable), so a cache keyed on it is never
        stale; pickle is the fastest complete serialisation of these plain values (about 0.1 ms for
        ResNet-50). `identity` adds which Graph, Layer and Tensor objects hold it: equal bytes then also
        mean the same objects, for a cache whose results refer to them."""
        import pickle
        content = pickle.dumps((self.name, self.inputs, self.outputs,
                                [(l.name, l.op, l.inputs, l.outputs, l.attributes, l.flags) for l in self.layers],
                                [(t.name, t.shape, t.dtype, t.const) for t in self.tensors.values()]), 5)
        if not identity:
            return content
        from array import array     # the objects' ids, in the order above, after the (self-delimiting) pickle
        ids = array("Q", (id(self),))
        ids.extend(map(id, self.layers))
        ids.extend(map(id, self.tensors.values()))
        return content + ids.tobytes()

    @property
    def batch(self) -> int:
        s = self.tensors[self.inputs[0]].shape if self.inputs else None
        return s[0] if s else 1

    def copy(self) -> "Graph":
        tensors = {k: Tensor(v.name, v.shape, v.dtype, v.const) for k, v in self.tensors.items()}
        layers = [Layer(l.name, l.op, list(l.inputs), list(l.outputs), copy.deepcopy(l.attributes), list(l.flags))
                  for l in self.layers]
        return Graph(self.name, layers, tensors, list(self.inputs), list(self.outputs), self.source)

    # ---- per-layer figures -----------------------------------------------------------------------
    def layer_macs(self, layer: Layer) -> int:
        ins = [self.tensors[t].shape for t in layer.inputs if t]
        outs = [self.tensors[t].shape for t in layer.outputs]
        return ops.macs(layer.op, layer.attributes, ins, outs)

    def layer_params(self, layer: Layer) -> int:
        return sum(t.numel for t in self.const_inputs(layer))

    @property
    def macs(self) -> int:
        if self._macs is None:
            ts = self.tensors       # layer_macs of each, inline: every new graph's estimate reads this
            self._macs = sum(ops.macs(l.op, l.attributes, [ts[t].shape for t in l.inputs if t],
                                      [ts[t].shape for t in l.outputs]) for l in self.layers if l.op in ops.MAC_OPS)
        return self._macs

    @property
    def params(self) -> int:
        return sum(self.layer_params(l) for l in self.layers)

    # ---- serialisation ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "tensors": [{"name": t.name, "shape": list(t.shape) if t.shape is not None else None,
                         "dtype": t.dtype, "const": t.const} for t in self.tensors.values()],
            "layers": [{"name": l.name, "op": l.op, "inputs": l.inputs, "outputs": l.outputs,
                        "attrs": l.attributes, "flags": l.flags} for l in self.layers],
        }

    @classmethod
    def from_dict(cls, d: dict, source: str = "") -> "Graph":
        try:
            tensors = {t["name"]: Tensor(t["name"], tuple(t["shape"]) if t["shape"] is not None else None,
                                         t.get("dtype", "float32"), bool(t.get("const", False)))
                       for t in d["tensors"]}
            layers = [Layer(l["name"], l["op"], list(l["inputs"]), list(l["outputs"]), dict(l.get("attrs", {})),
                            list(l.get("flags", []))) for l in d["layers"]]
            g = cls(d["name"], layers, tensors, list(d["inputs"]), list(d["outputs"]), source)
        except (KeyError, TypeError) as e:
            raise ModelError(f"{source or 'graph JSON'}: missing or bad field {e}") from None
        return g.validate()

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str, source: str = "") -> "Graph":
        try:
            return cls.from_dict(json.loads(text), source)
        except json.JSONDecodeError as e:
            raise ModelError(f"{source or 'graph JSON'}: not valid JSON ({e.msg} at line {e.lineno})") from None

    def to_onnx(self, path=None, weights: str = "random", opset: int | None = None):
        """This graph as an onnx.ModelProto (e.g. to hand to trtexec); also saved to `path` when given.

        weights: "random" (dense, seeded) or "zeros" fill the weights, which dlasim keeps as shapes only.
        opset: default the lowest that has every op (17, or 18 for Mish). See dlasim/export.py.
        """
        from .export import to_onnx
        return to_onnx(self, path, weights=weights, opset=opset)

    def __repr__(self) -> str:
        return f"Graph({self.name!r}, {len(self.layers)} layers, inputs={self.inputs})"


def _as_pair(v) -> list[int]:
    return [v, v] if isinstance(v, int) else list(v)


class GraphBuilder:
    """Build a network in Python, in the spirit of onnx.helper; shapes are inferred as you go.

    >>> b = GraphBuilder("tiny")
    >>> x = b.input("x", (1, 3, 32, 32))
    >>> y = b.relu(b.conv(x, 16, kernel=3, pad=1))
    >>> g = b.build([y])
    """

    def __init__(self, name: str = "net"):
        self.name = name
        self._layers: list[Layer] = []
        self._tensors: dict[str, Tensor] = {}
        self._inputs: list[str] = []
        self._count: dict[str, int] = {}

    def _unique(self, base: str) -> str:
        n = self._count.get(base, 0)
        self._count[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def shape(self, tensor: str) -> tuple[int, ...]:
        return self._tensor(tensor).shape

    def _tensor(self, name: str, layer: str = "") -> Tensor:
        t = self._tensors.get(name) if isinstance(name, str) else None
        if t is None:
            where = f" (input of layer {layer!r})" if layer else ""
            known = ", ".join(list(self._tensors)[-5:])
            raise ModelError(f"{self.name}: unknown tensor {name!r}{where}: not an input, constant or layer output "
                             f"of this builder" + (f" (latest: {known})" if known else ""))
        return t

    def input(self, name: str, shape: Iterable[int], dtype: str = "float32") -> str:
        self._tensors[name] = Tensor(name, tuple(shape), dtype)
        self._inputs.append(name)
        return name

    def const(self, name: str, shape: Iterable[int], dtype: str = "float32") -> str:
        name = self._unique(name)
        self._tensors[name] = Tensor(name, tuple(shape), dtype, True)    # const
        return name

    def op(self, op_type: str, inputs: list[str], attributes: dict | None = None, name: str | None = None,
           n_outputs: int = 1) -> str | list[str]:
        """Add any layer; returns its output tensor name (a list when n_outputs > 1)."""
        out = self._add(op_type, list(inputs), dict(attributes or {}), name, n_outputs)
        for t in [out] if n_outputs == 1 else out:      # any attributes: shapes checked as an importer's
            self._tensors[t].shape = output_shape(self.name, self._layers[-1], self._tensors[t].shape)
        return out

    def _add(self, op_type: str, inputs: list[str], attributes: dict, name: str | None = None,
             n_outputs: int = 1) -> str | list[str]:
        """op() without copying `inputs` and `attributes`: the layer keeps them (the helpers below make new ones)."""
        label = name or op_type.lower()
        tensors = self._tensors         # looked up inline (every layer of a search); _tensor names a missing one
        shapes = [((tensors.get(t) if type(t) is str else None) or self._tensor(t, label)).shape for t in inputs if t]
        name = self._unique(label)
        outs = [name] if n_outputs == 1 else [f"{name}:{i}" for i in range(n_outputs)]
        layer = Layer(name, op_type, inputs, outs if n_outputs == 1 else list(outs), attributes)  # never the caller's
        try:
            out_shapes = ops.infer(layer, shapes, as_tuples=False)     # the builder's shapes are tuples
        except KeyError:
            layer.flags += ["unknown_op", "shape_assumed"]
            out_shapes = [shapes[0]] * n_outputs
        for t, s in zip(outs, out_shapes):
            if s and min(s) <= 0:       # some dimension d <= 0: the importers' message (raises)
                output_shape(self.name, layer, s)
            tensors[t] = Tensor(t, tuple(s))
        self._layers.append(layer)
        return outs[0] if n_outputs == 1 else outs

    # convolutions and matrix products ---------------------------------------------------------------
    def conv(self, x: str, out_channels: int, kernel=1, stride=1, pad=None, dilation=1, groups: int = 1,
             bias: bool = True, name: str | None = None) -> str:
        """2-D convolution; pad=None means 'same' padding for odd kernels."""
        k, s, d = _as_pair(kernel), _as_pair(stride), _as_pair(dilation)
        if pad is None:
            p = [(d[0] * (k[0] - 1)) // 2, (d[1] * (k[1] - 1)) // 2] * 2
        else:
            p = _as_pair(pad)
            p = p * 2 if len(p) == 2 else p
        c = self._tensor(x).shape[1]
        name = name or "conv"
        ins = [x, self.const(f"{name}.weight", (out_channels, c // groups, k[0], k[1]))]
        if bias:
            ins.append(self.const(f"{name}.bias", (out_channels,)))
        return self._add("Conv", ins, {"kernel_shape": k, "strides": s, "pads": p, "dilations": d,
                                       "group": groups}, name)

    def deconv(self, x: str, out_channels: int, kernel=2, stride=2, pad=0, name: str | None = None) -> str:
        k, s, p = _as_pair(kernel), _as_pair(stride), _as_pair(pad)
        name = name or "deconv"
        w = self.const(f"{name}.weight", (self.shape(x)[1], out_channels, k[0], k[1]))
        return self._add("ConvTranspose", [x, w], {"kernel_shape": k, "strides": s, "pads": p * 2}, name)

    def fc(self, x: str, out_features: int, bias: bool = True, name: str | None = None) -> str:
        """Fully connected (Gemm with constant weights); a 4-D input is flattened."""
        xs = self.shape(x)
        k = math.prod(xs[1:])
        name = name or "fc"
        w = self.const(f"{name}.weight", (out_features, k))
        ins = [x, w] + ([self.const(f"{name}.bias", (out_features,))] if bias else [])
        return self._add("Gemm", ins, {"transB": 1}, name)

    def matmul(self, a: str, b: str, name: str | None = None) -> str:
        return self._add("MatMul", [a, b], {}, name)

    # normalisation and activations ------------------------------------------------------------------
    def bn(self, x: str, name: str | None = None) -> str:
        c = self.shape(x)[1]
        name = name or "bn"
        ins = [x, self.const(f"{name}.scale", (c,)), self.const(f"{name}.bias", (c,)),
               self.const(f"{name}.mean", (c,)), self.const(f"{name}.var", (c,))]
        return self._add("BatchNormalization", ins, {"epsilon": 1e-5}, name)

    def relu(self, x: str, name: str | None = None) -> str:
        return self._add("Relu", [x], {}, name)

    def leaky_relu(self, x: str, alpha: float = 0.1, name: str | None = None) -> str:
        return self._add("LeakyRelu", [x], {"alpha": alpha}, name)

    def relu6(self, x: str, name: str | None = None) -> str:
        return self._add("Clip", [x], {"min": 0.0, "max": 6.0}, name)

    def sigmoid(self, x: str, name: str | None = None) -> str:
        return self._add("Sigmoid", [x], {}, name)

    def mish(self, x: str, name: str | None = None) -> str:
        return self._add("Mish", [x], {}, name)

    def silu(self, x: str, name: str | None = None) -> str:
        """SiLU as exporters write it: Sigmoid then Mul."""
        base = name or "silu"
        return self.mul(x, self.sigmoid(x, name=f"{base}.sigmoid"), name=f"{base}.mul")

    def softmax(self, x: str, axis: int = 1, name: str | None = None) -> str:
        return self._add("Softmax", [x], {"axis": axis}, name)

    # elementwise, pooling, shape ------------------------------------------------------------------
    def add(self, a: str, b: str, name: str | None = None) -> str:
        return self._add("Add", [a, b], {}, name)

    def mul(self, a: str, b: str, name: str | None = None) -> str:
        return self._add("Mul", [a, b], {}, name)

    def concat(self, xs: list[str], axis: int = 1, name: str | None = None) -> str:
        return self.op("Concat", xs, {"axis": axis}, name)

    def maxpool(self, x: str, kernel=2, stride=None, pad=0, ceil: bool = False, name: str | None = None) -> str:
        k = _as_pair(kernel)
        s = _as_pair(stride if stride is not None else kernel)
        p = _as_pair(pad)
        return self._add("MaxPool", [x], {"kernel_shape": k, "strides": s, "pads": p * 2,
                                          "ceil_mode": int(ceil)}, name)

    def avgpool(self, x: str, kernel=2, stride=None, pad=0, ceil: bool = False, name: str | None = None) -> str:
        k = _as_pair(kernel)
        s = _as_pair(stride if stride is not None else kernel)
        p = _as_pair(pad)
        return self._add("AveragePool", [x], {"kernel_shape": k, "strides": s, "pads": p * 2,
                                              "ceil_mode": int(ceil)}, name)

    def global_avgpool(self, x: str, name: str | None = None) -> str:
        return self._add("GlobalAveragePool", [x], {}, name)

    def resize(self, x: str, scale: int = 2, mode: str = "nearest", name: str | None = None) -> str:
        return self._add("Resize", [x], {"scales": [1.0, 1.0, float(scale), float(scale)], "mode": mode}, name)

    def flatten(self, x: str, name: str | None = None) -> str:
        return self._add("Flatten", [x], {"axis": 1}, name)

    def reshape(self, x: str, shape: list[int], name: str | None = None) -> str:
        return self._add("Reshape", [x], {"shape": list(shape)}, name)

    def split(self, x: str, sizes: list[int], axis: int = 1, name: str | None = None) -> list[str]:
        return self._add("Split", [x], {"axis": axis, "split": list(sizes)}, name, n_outputs=len(sizes))

    def build(self, outputs: list[str] | None = None) -> Graph:
        if outputs is None:
            used = {t for l in self._layers for t in l.inputs}
            outputs = [t for l in self._layers for t in l.outputs if t not in used]
        g = Graph(self.name, list(self._layers), dict(self._tensors), list(self._inputs), list(outputs))
        return g.validate()
