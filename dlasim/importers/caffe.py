"""Caffe deploy prototxt importer, with no Caffe dependency.

`load_prototxt` reads the file as protobuf text format (importers/prototxt.py), checks it
(importers/caffe_checks.py) and turns the NetParameter into a Graph: the `input:`/`input_dim:`/`input_shape` header
forms, `Input` layers, V2 `layer {}` and V1 `layers { type: CONVOLUTION }` entries. Each Caffe layer type maps onto
ONNX op names (dlasim/ops.py) through the handler table of importers/caffe_layers.py; in-place layers
(top == bottom) get fresh tensor names so the graph stays SSA. Layer order in the file is the topological
order, as in Caffe's Net::Init.
"""
from __future__ import annotations

from pathlib import Path

from .. import ops
from ..errors import ModelError
from ..ir import Graph, Layer, Tensor
from .caffe_layers import HANDLERS, V1_TYPES, Entry, unknown
from .prototxt import Message, enum_name, parse_prototxt, repeated, single

__all__ = ["load_prototxt", "parse_prototxt"]


def load_prototxt(path: str, shapes: dict[str, tuple] | None = None, batch: int | None = None) -> Graph:
    """Import a Caffe deploy prototxt as a validated, shaped Graph; `shapes`/`batch` set input shapes."""
    from ..safeio import read_text
    text = read_text(path, "model", encoding="utf-8-sig")
    net = parse_prototxt(text, path)
    from .caffe_checks import check_net
    check_net(net, path)
    return _Net(path, dict(shapes or {}), batch).build(net)


class _Net:
    def __init__(self, source: str, shapes: dict, batch: int | None):
        self.source, self.shapes, self.batch = source, shapes, batch
        self.layers: list[Layer] = []
        self.tensors: dict[str, Tensor] = {}
        self.inputs: list[str] = []
        self.blob: dict[str, str] = {}  # Caffe blob name -> current tensor name
        self.names: set[str] = set()
        self.file_batch: int | None = None  # dimension 0 as the file declares it

    def error(self, what: str) -> ModelError:
        return ModelError(f"{self.source}: {what}")

    # inputs ---------------------------------------------------------------------------------------
    def _input(self, name: str, dims) -> None:
        if dims and self.file_batch is None:
            self.file_batch = int(dims[0])
        shape = list(self.shapes.get(name, dims or []))
        if shape and self.batch is not None:
            shape[0] = int(self.batch)
        if not shape or any(int(d) < 1 for d in shape):
            raise self.error(f"input {name!r} has no shape; give its shape with shapes={{{name!r}: (1, 3, 224, 224)}} "
                             f"(--shapes {name}:1x3x224x224)")
        self.tensors[name] = Tensor(name, tuple(int(d) for d in shape))
        self.blob[name] = name
        self.inputs.append(name)

    def _header_inputs(self, net: Message) -> None:
        names = [str(n) for n in repeated(net, "input")]
        dims = repeated(net, "input_dim")
        shapes = [[int(d) for d in repeated(s, "dim")] for s in repeated(net, "input_shape")]
        if dims and len(dims) != 4 * len(names):
            raise self.error(f"{len(dims)} input_dim values for {len(names)} inputs; expected 4 per input")
        for i, name in enumerate(names):
            given = dims[4 * i: 4 * i + 4] if dims else (shapes[i] if i < len(shapes) else None)
            self._input(name, given)

    # layers ---------------------------------------------------------------------------------------
    def _fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.tensors:
            name, k = f"{base}_{k}", k + 1
        return name

    def const(self, layer: str, what: str, shape) -> str:
        name = self._fresh(f"{layer}.{what}")
        self.tensors[name] = Tensor(name, tuple(int(d) for d in shape), const=True)
        return name

    def shape(self, tensor: str) -> tuple[int, ...]:
        return self.tensors[tensor].shape

    def add(self, name: str, op: str, inputs: list[str], tops: list[str], attributes: dict | None = None) -> Layer:
        """Append a layer, infer its output shapes, and point each top blob at a fresh SSA tensor."""
        base, k = name, 1
        while name in self.names:
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        outs = []
        for top in tops:
            t = top if top not in self.tensors else next(
                (c for c in (name, f"{top}/{name}") if c not in self.tensors), None) or self._fresh(f"{top}/{name}")
            self.tensors[t] = Tensor(t, None)  # reserve the name
            outs.append(t)
        layer = Layer(name, op, list(inputs), outs, dict(attributes or {}))
        in_shapes = [self.shape(t) for t in inputs]
        try:
            shapes = ops.infer(layer, in_shapes)
        except KeyError:
            layer.flags += ["unknown_op", "shape_assumed"]
            shapes = [in_shapes[0]] * len(outs)
        except ModelError as e:
            raise self.error(str(e)) from None
        except (IndexError, TypeError, ValueError, ZeroDivisionError) as e:
            raise self.error(f"layer {name!r} ({op}): bad parameters ({e})") from None
        if len(shapes) != len(outs):
            raise self.error(f"layer {name!r} ({op}) has {len(outs)} top(s); it produces {len(shapes)}")
        for t, top, s in zip(outs, tops, shapes):
            if any(d <= 0 for d in s):
                raise self.error(f"layer {name!r} ({op}) gives an empty output shape {tuple(s)}")
            self.tensors[t].shape = tuple(int(d) for d in s)
            self.blob[top] = t
        self.layers.append(layer)
        return layer

    def build(self, net: Message) -> Graph:
        self._header_inputs(net)
        for i, msg in enumerate(repeated(net, "layer") + repeated(net, "layers")):
            self._entry(i, msg)
        not_inputs = [n for n in self.shapes if n not in self.inputs]
        if not_inputs:
            raise ModelError(f"shapes (--shapes): {not_inputs[0]!r} is not an input of {self.source} "
                             f"(inputs: {', '.join(self.inputs)})")
        used = {t for l in self.layers for t in l.inputs}
        outputs = [t for l in self.layers for t in l.outputs if t not in used]
        g = Graph(str(single(net, "name", Path(self.source).stem)), self.layers, self.tensors, self.inputs,
                  outputs, self.source)
        return g.validate().infer_shapes()

    def _entry(self, i: int, msg) -> None:
        """One `layer {}` entry: an input, a layer skipped (TRAIN phase, loss, accuracy) or converted by its handler."""
        if not isinstance(msg, dict):
            raise self.error(f"'layer' entry {i} is not a block")
        kind = str(single(msg, "type", ""))
        kind = V1_TYPES.get(kind, kind)
        name = str(single(msg, "name", f"{kind or 'layer'}_{i}"))
        phases = [enum_name(single(r, "phase"), ["TRAIN", "TEST"], "") for r in repeated(msg, "include")]
        if "TRAIN" in phases or kind in ("Silence", "Accuracy", "SoftmaxWithLoss"):
            return
        if kind == "Input":
            p = single(msg, "input_param", {})
            dims = [[int(d) for d in repeated(s, "dim")] for s in repeated(p, "shape")]
            for j, top in enumerate(repeated(msg, "top")):
                self._input(str(top), dims[min(j, len(dims) - 1)] if dims else None)
            return
        ins = []
        for b in repeated(msg, "bottom"):
            if str(b) not in self.blob:
                raise self.error(f"layer {name!r} reads blob {str(b)!r}, which no earlier layer or input produces")
            ins.append(self.blob[str(b)])
        tops = [str(t) for t in repeated(msg, "top")]
        if not ins:
            raise self.error(f"layer {name!r} ({kind or 'no type'}) has no bottom; only Input layers and the "
                             f"input: header may start the network")
        try:
            HANDLERS.get(kind, unknown)(self, Entry(name, kind, msg, ins, tops, self.shape(ins[0])))
        except (ValueError, TypeError, IndexError, KeyError, AttributeError, ZeroDivisionError) as e:
            raise self.error(f"layer {name!r} ({kind}): bad parameters ({e})") from None

    def graph_batch(self) -> int | None:
        """Dimension 0 of the first input, as imported (after shapes/batch overrides)."""
        return self.tensors[self.inputs[0]].shape[0] if self.inputs else None
