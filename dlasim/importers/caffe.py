"""Caffe deploy prototxt importer, with no Caffe dependency.

`parse_prototxt` reads protobuf text format (caffe/src/caffe/proto/caffe.proto messages written as text):
`key: value`, `key { ... }` with or without a colon, `key: [a, b]` lists, repeated fields, `#` comments,
and quoted strings, including the curly quotes that forum copies carry. `load_prototxt` turns a NetParameter
into a Graph: the `input:`/`input_dim:`/`input_shape` header forms, `Input` layers, V2 `layer {}` and V1
`layers { type: CONVOLUTION }` entries. Caffe layers map onto ONNX op names (dlasim/ops.py); in-place layers
(top == bottom) get fresh tensor names so the graph stays SSA. Layer order in the file is the topological
order, as in Caffe's Net::Init.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

from .. import ops
from ..errors import ModelError
from ..ir import Graph, Layer, Tensor

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\f\v]+)
  | (?P<newline>\n)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[“”„][^“”"\n]*[“”"]|[‘’][^‘’'\n]*[‘’'])
  | (?P<word>[A-Za-z0-9_.+\-]+)
  | (?P<punct>[{}:\[\],;<>])
""", re.X)
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?f?")
_CLOSE = {"{": "}", "<": ">"}

Message = dict  # field name -> list of values (str, int, float or Message)


# ---- text format ---------------------------------------------------------------------------------
def _tokens(text: str, source: str) -> list[tuple[str, str, int]]:
    out, pos, line = [], 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            what = "unterminated string" if ch in "\"'“”‘’„" else f"unexpected character {ch!r}"
            raise ModelError(f"{source}:{line}: {what}")
        kind = m.lastgroup
        if kind == "newline":
            line += 1
        elif kind == "string":
            body = m.group()[1:-1]
            out.append(("string", body.replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\"), line))
        elif kind in ("word", "punct"):
            out.append((kind, m.group(), line))
        pos = m.end()
    return out


def _scalar(kind: str, text: str):
    if kind == "word" and _NUMBER.fullmatch(text):
        t = text.rstrip("f")
        try:
            return int(t)
        except ValueError:
            return float(t)
    return text


MAX_DEPTH = 64  # nested blocks; real prototxts nest 3 (layer { convolution_param { weight_filler {} } })


class _Parser:
    def __init__(self, tokens, source: str):
        self.toks, self.i, self.source = tokens, 0, source
        self.depth = 0

    def _err(self, line: int, what: str) -> ModelError:
        return ModelError(f"{self.source}:{line}: {what}")

    def _peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def message(self, closing: str | None = None, open_line: int = 0) -> Message:
        msg: Message = {}
        while True:
            tok = self._peek()
            if tok is None:
                if closing:
                    opener = "{" if closing == "}" else "<"
                    raise self._err(open_line, f"'{opener}' is never closed")
                return msg
            kind, text, line = tok
            self.i += 1
            if kind == "punct" and text in "}>":
                if closing is None:
                    raise self._err(line, f"unexpected '{text}' (no block is open)")
                if text != closing:
                    raise self._err(line, f"expected '{closing}', got '{text}'")
                return msg
            if kind == "punct" and text in ",;":
                continue
            if kind != "word" or _NUMBER.fullmatch(text):
                raise self._err(line, f"expected a field name, got {text!r}")
            msg.setdefault(text, []).extend(self._value(text, line))

    def _value(self, key: str, line: int) -> list:
        tok = self._peek()
        colon = tok is not None and tok[1] == ":"
        if colon:
            self.i += 1
            tok = self._peek()
        if tok is None:
            raise self._err(line, f"field {key!r} has no value")
        kind, text, vline = tok
        self.i += 1
        if text in _CLOSE and kind == "punct":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self._err(vline, f"blocks nest deeper than {MAX_DEPTH} levels")
            value = self.message(_CLOSE[text], vline)
            self.depth -= 1
            return [value]
        if not colon:
            raise self._err(vline, f"expected ':' or '{{' after {key!r}, got {text!r}")
        if text == "[" and kind == "punct":
            values = []
            while True:
                tok = self._peek()
                if tok is None:
                    raise self._err(vline, "'[' is never closed")
                self.i += 1
                if tok[1] == "]":
                    return values
                if tok[1] == ",":
                    continue
                if tok[0] == "punct":
                    raise self._err(tok[2], f"unexpected {tok[1]!r} in the list of {key!r}")
                values.append(_scalar(tok[0], tok[1]))
        if kind == "punct":
            raise self._err(vline, f"expected a value for {key!r}, got {text!r}")
        return [_scalar(kind, text)]


def parse_prototxt(text: str, source: str = "prototxt") -> Message:
    """Parse protobuf text format into nested dicts: every field maps to the list of its values."""
    return _Parser(_tokens(text, source), source).message()


# ---- field access --------------------------------------------------------------------------------
def _all(msg: Message, key: str) -> list:
    return msg.get(key, [])


def _one(msg: Message, key: str, default=None):
    v = msg.get(key)
    return v[-1] if v else default


def _bool(v) -> bool:
    return v is True or v == 1 or str(v).lower() == "true"


def _hw(p: Message, key: str, default: int | None) -> tuple[int, int] | None:
    """Caffe's `kernel_size`/`kernel_h`+`kernel_w` (also stride, pad) spellings -> (h, w)."""
    h, w = _one(p, f"{key}_h"), _one(p, f"{key}_w")
    if h is not None or w is not None:  # caffe.proto: pad_h/stride_h default 0/1; kernel_h needs kernel_w
        h, w = (h if h is not None else default), (w if w is not None else default)
        return None if h is None or w is None else (int(h), int(w))
    v = _all(p, "kernel_size" if key == "kernel" else key)
    if not v:
        return None if default is None else (default, default)
    return int(v[0]), int(v[-1])


def _enum(v, names: list[str], default: str) -> str:
    """An enum given by name or number (Caffe allows both)."""
    if v is None:
        return default
    if isinstance(v, int) and 0 <= v < len(names):
        return names[v]
    return str(v).upper()


# V1 LayerParameter.LayerType names (caffe.proto, V1LayerParameter) -> V2 type strings.
_V1 = {"ABSVAL": "AbsVal", "ACCURACY": "Accuracy", "BNLL": "BNLL", "CONCAT": "Concat", "CONVOLUTION": "Convolution",
       "DATA": "Data", "DECONVOLUTION": "Deconvolution", "DROPOUT": "Dropout", "DUMMY_DATA": "DummyData",
       "ELTWISE": "Eltwise", "EXP": "Exp", "FLATTEN": "Flatten", "IMAGE_DATA": "ImageData",
       "INNER_PRODUCT": "InnerProduct", "LRN": "LRN", "POOLING": "Pooling", "POWER": "Power", "RELU": "ReLU",
       "SIGMOID": "Sigmoid", "SOFTMAX": "Softmax", "SOFTMAX_LOSS": "SoftmaxWithLoss", "SPLIT": "Split",
       "SLICE": "Slice", "TANH": "TanH", "SILENCE": "Silence"}
_SIMPLE = {"Sigmoid": "Sigmoid", "TanH": "Tanh", "AbsVal": "Abs", "Exp": "Exp", "Log": "Log", "BNLL": "Softplus"}


# ---- network -------------------------------------------------------------------------------------
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

    def _err(self, what: str) -> ModelError:
        return ModelError(f"{self.source}: {what}")

    # inputs ---------------------------------------------------------------------------------------
    def _input(self, name: str, dims) -> None:
        if dims and self.file_batch is None:
            self.file_batch = int(dims[0])
        shape = list(self.shapes.get(name, dims or []))
        if shape and self.batch is not None:
            shape[0] = int(self.batch)
        if not shape or any(int(d) < 1 for d in shape):
            raise self._err(f"input {name!r} has no shape; give its shape with shapes={{{name!r}: (1, 3, 224, 224)}} "
                            f"(--shapes {name}:1x3x224x224)")
        self.tensors[name] = Tensor(name, tuple(int(d) for d in shape))
        self.blob[name] = name
        self.inputs.append(name)

    def _header_inputs(self, net: Message) -> None:
        names = [str(n) for n in _all(net, "input")]
        dims = _all(net, "input_dim")
        shapes = [[int(d) for d in _all(s, "dim")] for s in _all(net, "input_shape")]
        if dims and len(dims) != 4 * len(names):
            raise self._err(f"{len(dims)} input_dim values for {len(names)} inputs; expected 4 per input")
        for i, name in enumerate(names):
            given = dims[4 * i: 4 * i + 4] if dims else (shapes[i] if i < len(shapes) else None)
            self._input(name, given)

    # layers ---------------------------------------------------------------------------------------
    def _fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.tensors:
            name, k = f"{base}_{k}", k + 1
        return name

    def _const(self, layer: str, what: str, shape) -> str:
        name = self._fresh(f"{layer}.{what}")
        self.tensors[name] = Tensor(name, tuple(int(d) for d in shape), const=True)
        return name

    def _shape(self, tensor: str) -> tuple[int, ...]:
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
        in_shapes = [self._shape(t) for t in inputs]
        try:
            shapes = ops.infer(layer, in_shapes)
        except KeyError:
            layer.flags += ["unknown_op", "shape_assumed"]
            shapes = [in_shapes[0]] * len(outs)
        except ModelError as e:
            raise self._err(str(e)) from None
        except (IndexError, TypeError, ValueError, ZeroDivisionError) as e:
            raise self._err(f"layer {name!r} ({op}): bad parameters ({e})") from None
        if len(shapes) != len(outs):
            raise self._err(f"layer {name!r} ({op}) has {len(outs)} top(s); it produces {len(shapes)}")
        for t, top, s in zip(outs, tops, shapes):
            if any(d <= 0 for d in s):
                raise self._err(f"layer {name!r} ({op}) gives an empty output shape {tuple(s)}")
            self.tensors[t].shape = tuple(int(d) for d in s)
            self.blob[top] = t
        self.layers.append(layer)
        return layer

    def build(self, net: Message) -> Graph:
        self._header_inputs(net)
        entries = _all(net, "layer") + _all(net, "layers")
        for i, msg in enumerate(entries):
            if not isinstance(msg, dict):
                raise self._err(f"'layer' entry {i} is not a block")
            kind = str(_one(msg, "type", ""))
            kind = _V1.get(kind, kind)
            name = str(_one(msg, "name", f"{kind or 'layer'}_{i}"))
            phases = [_enum(_one(r, "phase"), ["TRAIN", "TEST"], "") for r in _all(msg, "include")]
            if "TRAIN" in phases or kind in ("Silence", "Accuracy", "SoftmaxWithLoss"):
                continue
            if kind == "Input":
                p = _one(msg, "input_param", {})
                dims = [[int(d) for d in _all(s, "dim")] for s in _all(p, "shape")]
                for j, top in enumerate(_all(msg, "top")):
                    self._input(str(top), dims[min(j, len(dims) - 1)] if dims else None)
                continue
            ins = []
            for b in _all(msg, "bottom"):
                if str(b) not in self.blob:
                    raise self._err(f"layer {name!r} reads blob {str(b)!r}, which no earlier layer or input produces")
                ins.append(self.blob[str(b)])
            tops = [str(t) for t in _all(msg, "top")]
            if not ins:
                raise self._err(f"layer {name!r} ({kind or 'no type'}) has no bottom; only Input layers and the "
                                f"input: header may start the network")
            try:
                self._layer(kind, name, msg, ins, tops)
            except (ValueError, TypeError, IndexError, KeyError, AttributeError, ZeroDivisionError) as e:
                raise self._err(f"layer {name!r} ({kind}): bad parameters ({e})") from None
        unknown = [n for n in self.shapes if n not in self.inputs]
        if unknown:
            raise ModelError(f"shapes (--shapes): {unknown[0]!r} is not an input of {self.source} "
                             f"(inputs: {', '.join(self.inputs)})")
        used = {t for l in self.layers for t in l.inputs}
        outputs = [t for l in self.layers for t in l.outputs if t not in used]
        g = Graph(str(_one(net, "name", Path(self.source).stem)), self.layers, self.tensors, self.inputs,
                  outputs, self.source)
        return g.validate().infer_shapes()

    def _layer(self, kind: str, name: str, msg: Message, ins: list[str], tops: list[str]) -> None:
        x = self._shape(ins[0])
        if kind in ("Convolution", "Deconvolution"):
            p = _one(msg, "convolution_param", {})
            k_out = _one(p, "num_output")
            k = _hw(p, "kernel", None)
            if k_out is None or k is None:
                raise self._err(f"layer {name!r} ({kind}): convolution_param needs num_output and kernel_size")
            s, pad = _hw(p, "stride", 1), _hw(p, "pad", 0)
            d = _all(p, "dilation") or [1]
            g = int(_one(p, "group", 1))
            if x[1] % g or int(k_out) % g:
                raise self._err(f"layer {name!r} ({kind}): group {g} does not divide {x[1]} input and "
                                f"{k_out} output channels")
            w = (k_out, x[1] // g, *k) if kind == "Convolution" else (x[1], int(k_out) // g, *k)
            inputs = [ins[0], self._const(name, "weight", w)]
            if _bool(_one(p, "bias_term", True)):
                inputs.append(self._const(name, "bias", (k_out,)))
            attributes = {"kernel_shape": list(k), "strides": list(s), "pads": [pad[0], pad[1], pad[0], pad[1]],
                     "dilations": [int(d[0]), int(d[-1])], "group": g}
            self.add(name, "Conv" if kind == "Convolution" else "ConvTranspose", inputs, tops, attributes)
        elif kind == "Pooling":
            p = _one(msg, "pooling_param", {})
            pool = _enum(_one(p, "pool"), ["MAX", "AVE", "STOCHASTIC"], "MAX")
            op = "MaxPool" if pool == "MAX" else "AveragePool"
            if _bool(_one(p, "global_pooling", False)):
                self.add(name, "Global" + op, ins[:1], tops)
                return
            k = _hw(p, "kernel", None)
            if k is None:
                raise self._err(f"layer {name!r} (Pooling): pooling_param needs kernel_size or global_pooling")
            s, pad = _hw(p, "stride", 1), _hw(p, "pad", 0)
            ceil = _enum(_one(p, "round_mode"), ["CEIL", "FLOOR"], "CEIL") == "CEIL"
            attributes = {"kernel_shape": list(k), "strides": list(s), "pads": [pad[0], pad[1], pad[0], pad[1]],
                     "ceil_mode": int(ceil)}
            if op == "AveragePool":
                attributes["count_include_pad"] = 1  # Caffe divides by the padded window
            self.add(name, op, ins[:1], tops, attributes)
        elif kind == "InnerProduct":
            p = _one(msg, "inner_product_param", {})
            n = _one(p, "num_output")
            if n is None:
                raise self._err(f"layer {name!r} (InnerProduct): inner_product_param needs num_output")
            k = math.prod(x[1:])
            trans = _bool(_one(p, "transpose", False))
            inputs = [ins[0], self._const(name, "weight", (k, n) if trans else (n, k))]
            if _bool(_one(p, "bias_term", True)):
                inputs.append(self._const(name, "bias", (n,)))
            self.add(name, "Gemm", inputs, tops, {"transB": 0 if trans else 1})
        elif kind == "ReLU":
            slope = float(_one(_one(msg, "relu_param", {}), "negative_slope", 0.0))
            self.add(name, "LeakyRelu" if slope else "Relu", ins, tops, {"alpha": slope} if slope else {})
        elif kind == "ReLU6":
            self.add(name, "Clip", ins, tops, {"min": 0.0, "max": 6.0})
        elif kind == "PReLU":
            shared = _bool(_one(_one(msg, "prelu_param", {}), "channel_shared", False))
            self.add(name, "PRelu", [ins[0], self._const(name, "slope", (1,) if shared else (x[1],))], tops)
        elif kind == "ELU":
            self.add(name, "Elu", ins, tops, {"alpha": float(_one(_one(msg, "elu_param", {}), "alpha", 1.0))})
        elif kind in _SIMPLE:
            self.add(name, _SIMPLE[kind], ins, tops)
        elif kind == "BatchNorm":
            eps = float(_one(_one(msg, "batch_norm_param", {}), "eps", 1e-5))
            params = [self._const(name, w, (x[1],)) for w in ("scale", "bias", "mean", "var")]
            self.add(name, "BatchNormalization", [ins[0]] + params, tops, {"epsilon": eps})
        elif kind == "Scale":
            bias = _bool(_one(_one(msg, "scale_param", {}), "bias_term", False))
            inputs = list(ins) if len(ins) > 1 else [ins[0], self._const(name, "scale", (x[1],))]
            if bias:
                inputs.append(self._const(name, "bias", (x[1],)))
            self.add(name, "Scale", inputs, tops)
        elif kind == "Eltwise":
            p = _one(msg, "eltwise_param", {})
            operation = _enum(_one(p, "operation"), ["PROD", "SUM", "MAX"], "SUM")
            coeff = [float(c) for c in _all(p, "coeff")]
            op = {"PROD": "Mul", "MAX": "Max"}.get(operation, "Add" if len(ins) == 2 else "Sum")
            if operation == "SUM" and len(ins) == 2 and coeff == [1.0, -1.0]:
                op, coeff = "Sub", []
            self.add(name, op, ins, tops, {"coeff": coeff} if coeff and any(c != 1.0 for c in coeff) else {})
        elif kind == "Concat":
            p = _one(msg, "concat_param", {})
            self.add(name, "Concat", ins, tops, {"axis": int(_one(p, "axis", _one(p, "concat_dim", 1)))})
        elif kind == "LRN":
            p = _one(msg, "lrn_param", {})
            attributes = {"size": int(_one(p, "local_size", 5)), "alpha": float(_one(p, "alpha", 1.0)),
                     "beta": float(_one(p, "beta", 0.75)), "bias": float(_one(p, "k", 1.0))}
            if _enum(_one(p, "norm_region"), ["ACROSS_CHANNELS", "WITHIN_CHANNEL"], "ACROSS_CHANNELS") != \
                    "ACROSS_CHANNELS":
                attributes["norm_region"] = "WITHIN_CHANNEL"
            self.add(name, "LRN", ins, tops, attributes)
        elif kind == "Softmax":
            self.add(name, "Softmax", ins, tops, {"axis": int(_one(_one(msg, "softmax_param", {}), "axis", 1))})
        elif kind == "Dropout":
            ratio = float(_one(_one(msg, "dropout_param", {}), "dropout_ratio", 0.5))
            self.add(name, "Dropout", ins[:1], tops, {"ratio": ratio})
        elif kind == "Split":
            for i, top in enumerate(tops):
                self.add(name if len(tops) == 1 else f"{name}_{i}", "Identity", ins[:1], [top])
        elif kind == "Flatten":
            p = _one(msg, "flatten_param", {})
            axis, end = int(_one(p, "axis", 1)) % len(x), int(_one(p, "end_axis", -1)) % len(x)
            if end == len(x) - 1:
                self.add(name, "Flatten", ins, tops, {"axis": axis})
            else:
                shape = [0] * axis + [math.prod(x[axis:end + 1])] + list(x[end + 1:])
                self.add(name, "Reshape", ins, tops, {"shape": shape})
        elif kind == "Reshape":
            p = _one(msg, "reshape_param", {})
            dims = [int(d) for d in _all(_one(p, "shape", {}), "dim")]
            axis, num = int(_one(p, "axis", 0)), int(_one(p, "num_axes", -1))
            axis = axis % (len(x) + 1)
            tail = list(x[axis + num:]) if num >= 0 else []
            shape = [0] * axis + dims + tail
            if axis == 0 and shape and shape[0] in (self.file_batch, self._batch()) and x[0] == self._batch():
                shape[0] = 0  # a batch written into the file: keep following --batch
            self.add(name, "Reshape", ins, tops, {"shape": shape})
        elif kind == "Upsample":
            p = _one(msg, "upsample_param", {})
            sh = float(_one(p, "scale_h", _one(p, "scale", 2)))
            sw = float(_one(p, "scale_w", _one(p, "scale", 2)))
            if _one(p, "upsample_h") is not None:
                sh, sw = int(_one(p, "upsample_h")) / x[2], int(_one(p, "upsample_w", x[3])) / x[3]
            self.add(name, "Resize", ins[:1], tops, {"scales": [1.0, 1.0, sh, sw], "mode": "nearest"})
        elif kind == "Slice":
            p = _one(msg, "slice_param", {})
            axis = int(_one(p, "axis", _one(p, "slice_dim", 1))) % len(x)
            points = [0] + [int(v) for v in _all(p, "slice_point")] + [x[axis]]
            sizes = [b - a for a, b in zip(points, points[1:])] if len(points) > 2 else []
            self.add(name, "Split", ins[:1], tops, {"axis": axis, **({"split": sizes} if sizes else {})})
        elif kind == "Permute":
            order = [int(v) for v in _all(_one(msg, "permute_param", {}), "order")]
            order += [i for i in range(len(x)) if i not in order]
            self.add(name, "Transpose", ins, tops, {"perm": order})
        elif kind == "Crop" and len(ins) == 2:
            p = _one(msg, "crop_param", {})
            ref = self._shape(ins[1])
            axis = int(_one(p, "axis", 2)) % len(x)
            offs = [int(v) for v in _all(p, "offset")] or [0]
            axes = list(range(axis, len(x)))
            starts = [offs[min(i, len(offs) - 1)] for i in range(len(axes))]
            self.add(name, "Slice", ins[:1], tops, {"starts": starts, "ends": [s + ref[a] for s, a in
                                                                               zip(starts, axes)], "axes": axes})
        else:
            self.add(name, kind or "Unknown", ins, tops)

    def _batch(self) -> int | None:
        return self.tensors[self.inputs[0]].shape[0] if self.inputs else None
