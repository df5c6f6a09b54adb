"""ONNX node attributes -> dlasim's attribute convention (dlasim/ops.py).

Opsets 10-18 turned attributes into inputs (onnx/docs/Changelog.md): PARAMETER_INPUTS names them, and the
importer stores their constant values as attributes. `from_inferred` rebuilds a value from ONNX's inferred
shapes when it is computed at run time; `normalise` fills defaults and respells what differs (axes-limited
Resize/Pad, Split num_outputs, auto_pad, a batch written into a Reshape target).
"""
from __future__ import annotations

import math

from ..errors import ModelError

REDUCE = ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
# op -> {input index: attribute name}: inputs that are parameters, turned into attributes.
PARAMETER_INPUTS: dict[str, dict[int, str]] = {
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
    **{op: {1: "axes"} for op in REDUCE},
}
SCALAR_PARAMETERS = ("min", "max", "value", "ratio", "training_mode")
_AUTO_PAD_OPS = ("Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool")


def parameter_inputs(op: str, opset: int) -> dict[int, str]:
    """The inputs of `op` that are parameters ({index: attribute}); Resize before opset 11 takes scales only."""
    if op == "Resize" and opset < 11:
        return {1: "scales"}
    return PARAMETER_INPUTS.get(op, {})


def read_attributes(node) -> dict:
    """A node's int/float/string attributes (and lists of them) as Python values; its domain when not ONNX's."""
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


def from_inferred(op: str, attributes: dict, x, outs) -> bool:
    """Rebuild a run-time parameter from ONNX's inferred shapes; True when the input can be dropped."""
    y = outs[0] if outs else None
    if op == "Split" and x and outs and sum(o is None for o in outs) <= 1 \
            and all(o is None or len(o) == len(x) for o in outs):
        axis = int(attributes.get("axis", 0)) % len(x)
        sizes = [None if o is None else o[axis] for o in outs]
        if None in sizes:  # the output whose shape inference gave none takes the rest of the axis
            sizes[sizes.index(None)] = x[axis] - sum(d for d in sizes if d is not None)
        attributes["split"] = sizes
        return True
    if op in ("Expand", "Tile", "Dropout"):
        return True  # shapes of these come from ONNX inference or the input
    if op == "Clip":
        return True  # bounds do not change shapes
    if y is None or x is None:
        return False
    if op == "Reshape":
        attributes["shape"] = list(y)
    elif op in ("Resize", "Upsample") and len(x) == len(y):
        attributes["sizes"] = list(y)  # normalise turns exact ratios into scales
        attributes.pop("scales", None)
        attributes.pop("axes", None)
    elif op == "Slice" and len(x) == len(y):
        axes = [i for i, (a, b) in enumerate(zip(x, y)) if a != b] or [0]
        attributes.update(starts=[0] * len(axes), ends=[y[a] for a in axes], axes=axes, steps=[1] * len(axes))
    elif op == "Pad" and len(x) == len(y):
        attributes["pads"] = [0] * len(x) + [o - i for i, o in zip(x, y)]
        attributes.pop("axes", None)
    elif op in ("Squeeze", "Unsqueeze") or (op in REDUCE and len(y) != len(x)):
        axes = _align(x, y) if len(x) >= len(y) else _align(y, x)
        if axes is None:
            return False
        attributes["axes"] = axes
    elif op in REDUCE:
        attributes["axes"] = [i for i, (a, b) in enumerate(zip(x, y)) if a != b]
    else:
        return False
    return True


def normalise(op: str, attributes: dict, x, *, opset: int, batch: int | None, weight_shape, where: str) -> None:
    """Attribute defaults and spellings that differ between ONNX and dlasim/ops.py (in place).

    `x` is the shape of input 0, `batch` dimension 0 of the graph's inputs, `weight_shape` the shape of input 1
    (Conv/ConvTranspose weights, for a missing kernel_shape), `where` the "file: layer 'name' (op)" of messages.
    """
    if op in ("Softmax", "LogSoftmax", "Hardmax") and "axis" not in attributes:
        attributes["axis"] = 1 if opset < 13 else -1
    elif op == "LeakyRelu":
        attributes.setdefault("alpha", 0.01)
    elif op == "Reshape" and "shape" in attributes and x:
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
        _explicit_pads(op, attributes, x, weight_shape, where)


def _explicit_pads(op: str, attributes: dict, x, weight_shape, where: str) -> None:
    """auto_pad SAME_UPPER/SAME_LOWER/VALID and ConvTranspose output_shape -> explicit pads [t,l,b,r]."""
    if "kernel_shape" not in attributes and op in ("Conv", "ConvTranspose") and weight_shape:
        attributes["kernel_shape"] = list(weight_shape[2:])
    auto = attributes.pop("auto_pad", "NOTSET")
    out_shape = attributes.pop("output_shape", None) if op == "ConvTranspose" else None
    if auto in ("NOTSET", "") and not out_shape:
        return
    n = len(attributes.get("kernel_shape", [])) or (len(x) - 2 if x else 0)
    if auto == "VALID" and not out_shape:
        attributes["pads"] = [0] * (2 * n)
        return
    if not x or "kernel_shape" not in attributes:
        raise ModelError(f"{where}: auto_pad={auto} needs the input shape and kernel_shape, which ONNX shape "
                         f"inference could not give")
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
