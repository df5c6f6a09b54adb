"""Can this layer run on the DLA?  (ok, reason) per layer, from the rules in the spec's [dla.support].

Rules: reference/dla.md s3.1-3.3 (TensorRT "DLA Supported Layers and Restrictions", NvInfer.h, the TRT 8.4
guide), including the CBUF fit check of s3.3. Reasons are phrased like TensorRT's build log.
"""
from __future__ import annotations

import math

from .. import rules as rule_data
from ..hardware import Dla, DlaSupport
from ..ir import Graph, Layer
from ..ops import conv_params, rule_op
from ..plan import FallbackKind

def cbuf_banks_needed(c_in: int, kh: int, kw: int, w_in: int, dil_h: int, bpe: int, dla: Dla) -> tuple[int, int]:
    """(weight banks for one kernel, minimum data banks) per the TRT 8.x CBUF check (dla.md s3.3)."""
    bank_bytes = dla.cbuf_bytes // dla.cbuf_banks
    wt_banks = math.ceil(math.ceil(c_in * kh * kw * bpe / 128) * 128 / bank_bytes)
    entries_per_slice = math.ceil(math.ceil(c_in * bpe / 32) * w_in / 4)
    dilated_kh = (kh - 1) * dil_h + 1
    data_banks = math.ceil(entries_per_slice * dilated_kh / dla.cbuf_bank_entries)
    return wt_banks, data_banks


def oversized_tensors(g: Graph, dim_max: int) -> frozenset[str]:
    """The activations with a dimension past the batch larger than `dim_max` (check_layer's tensor rule), found
    once per graph: usually none, and then check_layer need not look at any layer's shapes."""
    return frozenset(name for name, t in g.tensors.items()
                     if not t.const and t.shape is not None and len(t.shape) > 1 and max(t.shape[1:]) > dim_max)


def check_layer(g: Graph, layer: Layer, dla: Dla, precision: str, batch: int,
                conv: tuple | None = None, supported: frozenset | None = None,
                oversized: frozenset | None = None) -> tuple[FallbackKind | None, str]:
    """(None, "") if TensorRT would place `layer` on the DLA, else (the kind of reason, the reason).

    `conv` (the layer's ops.conv_params, when the caller parsed them already), `supported` (the rules'
    ops as a set, built once per build by the caller) and `oversized` (oversized_tensors of the graph at the
    rules' tensor_dim_max) only save work; they never change the answer.
    """
    rules: DlaSupport = dla.support
    op = layer.op
    if "unknown_op" in layer.flags:
        return FallbackKind.UNKNOWN_OP, f"{op} is not a known operator (costed as a GPU layer, conservatively)"
    listed = rules.ops if supported is None else supported
    if op not in listed and rule_op(op) not in listed:
        return FallbackKind.UNSUPPORTED_OP, f"{op} is not supported on DLA {dla.version}"
    tensors = g.tensors
    out0 = tensors[layer.outputs[0]].shape if layer.outputs else None
    if oversized is None or oversized:       # some tensor is too large (or not known): this layer's own shapes
        dim_max = rules.tensor_dim_max
        shapes = []                                          # outputs, then g.data_inputs(layer)
        for t in layer.outputs:
            shapes.append(tensors[t].shape)
        for t in layer.inputs:
            if t and not (x := tensors[t]).const:
                shapes.append(x.shape)
        for s in shapes:
            # dimensions past the batch; max(s) first because it is cheaper and rarely over the limit
            if len(s) > 1 and max(s) > dim_max and max(s[1:]) > dim_max:
                return FallbackKind.UNSUPPORTED_PARAMS, f"tensor dimension {max(s[1:])} > {dim_max}"
    if out0 and out0[0] != batch:
        return (FallbackKind.UNSUPPORTED_PARAMS,
                f"batch size {out0[0]} differs from the network's {batch} (one batch size per loadable)")
    if batch > rules.batch_max:
        return FallbackKind.UNSUPPORTED_PARAMS, f"batch {batch} > {rules.batch_max}"
    check = _CHECKS.get(op)
    if check is None:
        return None, ""
    ok, why = check(g, layer, dla, precision, conv)     # the op's own rules: its parameters
    return (None, "") if ok else (FallbackKind.UNSUPPORTED_PARAMS, why)


# _conv verdicts by everything the rules read: the DLA record (matched by identity, kept by the entry: frozen),
# the parsed (kernel, stride, pads, dilation), the input and weight shapes, the group attribute (with its type:
# the reason prints it) and the precision; a network's repeated convs, and a search's candidates, share them.
# Bounded: emptied when full (passes.clear_caches empties it too).
_CONV: dict = {}
CONV_CACHE_SIZE = 8192
_ABSENT = object()          # no group attribute (not the same as one set to 1: the reason prints it)


def clear_caches() -> None:
    _CONV.clear()


def _conv(g: Graph, layer: Layer, dla: Dla, precision: str, conv: tuple | None = None) -> tuple[bool, str]:
    params = conv or conv_params(layer.attributes)
    x = g.tensors[layer.inputs[0]].shape
    w = g.tensors[layer.inputs[1]].shape
    group = layer.attributes.get("group", _ABSENT)
    key = (id(dla), params, x, w, type(group), group, precision)
    try:
        hit = _CONV.get(key)
    except TypeError:                  # an unhashable shape or group value (a list): no reuse
        return _conv_verdict(layer, dla, precision, params, x, w)
    if hit is None or hit[0] is not dla:
        if len(_CONV) >= CONV_CACHE_SIZE:
            _CONV.clear()
        hit = _CONV[key] = (dla, _conv_verdict(layer, dla, precision, params, x, w))
    return hit[1]


def _conv_verdict(layer: Layer, dla: Dla, precision: str, params: tuple, x: tuple, w: tuple) -> tuple[bool, str]:
    """_conv's answer from the facts it is keyed by (layer: its group attribute only)."""
    r = dla.support
    k, s, p, d = params
    if len(x) != 4:
        return False, f"{len(x)}-D convolution (DLA supports 2-D only)"
    if max(k) > r.conv_kernel_max:
        return False, f"kernel {max(k)} > {r.conv_kernel_max}"
    if max(s) > r.conv_stride_max:
        return False, f"stride {max(s)} > {r.conv_stride_max}"
    if max(p) > r.conv_pad_max:
        return False, f"padding {max(p)} > {r.conv_pad_max}"
    if p[0] >= k[0] or p[2] >= k[0] or p[1] >= k[1] or p[3] >= k[1]:
        return False, f"padding {max(p)} >= kernel {min(k)}"
    if max(d) > r.conv_dilation_max:
        return False, f"dilation {max(d)} > {r.conv_dilation_max}"
    if w[0] > r.conv_out_channels_max:
        return False, f"output channels {w[0]} > {r.conv_out_channels_max}"
    if int(layer.attributes.get("group", 1)) > r.conv_groups_max:
        return False, f"groups {layer.attributes.get('group')} > {r.conv_groups_max}"
    if r.cbuf_check:
        bpe = 1 if precision == "int8" else 2
        wt, data = cbuf_banks_needed(w[1], k[0], k[1], x[3], d[0], bpe, dla)
        if wt + data > dla.cbuf_banks:
            return False, (f"CBUF check failed: {wt} weight banks + {data} data banks > {dla.cbuf_banks} "
                           f"(reduce the input width or weights)")
    return True, ""


def _deconv(g: Graph, layer: Layer, dla: Dla, precision: str, conv: tuple | None = None) -> tuple[bool, str]:
    r = dla.support
    k, s, p, d = conv or conv_params(layer.attributes)
    for v, what in ((k, "kernel"), (s, "stride")):
        if max(v) > r.deconv_kernel_max and not (min(v) == 1 and max(v) in r.deconv_wide_kernels):
            return False, f"deconvolution {what} {v[0]}x{v[1]} not in [1,{r.deconv_kernel_max}] or 1x{{64,96,128}}"
    if max(p) > r.deconv_pad_max:
        return False, f"deconvolution padding {max(p)} > {r.deconv_pad_max}"
    if int(layer.attributes.get("group", 1)) > r.deconv_groups_max:
        return False, f"deconvolution groups {layer.attributes.get('group')} > {r.deconv_groups_max}"
    if max(d) > 1:
        return False, "dilated deconvolution"
    return True, ""


def _matmul(g: Graph, layer: Layer, dla: Dla, precision: str, conv: tuple | None = None) -> tuple[bool, str]:
    if dla.support.matmul_needs_constant_weights:
        b = g.tensors[layer.inputs[1]]
        if not b.const:
            return False, (f"{layer.op} of two activations is not supported on DLA "
                           f"({rule_data.RULES.dla_rewrites['MatMul']})")
    out = g.tensors[layer.outputs[0]].shape
    if out[-1] > dla.support.conv_out_channels_max:
        return False, f"output channels {out[-1]} > {dla.support.conv_out_channels_max}"
    return True, ""


def _pool(g: Graph, layer: Layer, dla: Dla, precision: str, conv: tuple | None = None) -> tuple[bool, str]:
    r = dla.support
    k, s, p, _ = conv or conv_params(layer.attributes)
    if max(k) > r.pool_window_max:
        return False, f"pooling window {max(k)} > {r.pool_window_max}"
    if max(s) > r.pool_stride_max:
        return False, f"pooling stride {max(s)} > {r.pool_stride_max}"
    if max(p) > r.pool_pad_max:
        return False, f"pooling padding {max(p)} > {r.pool_pad_max}"
    return True, ""


def _concat(g: Graph, layer: Layer, dla: Dla, precision: str, conv: tuple | None = None) -> tuple[bool, str]:
    rank = len(g.tensors[layer.outputs[0]].shape)
    axis = int(layer.attributes.get("axis", 1)) % rank
    if axis != dla.support.concat_axis:
        return False, "concat axis is not channels"
    return True, ""


def _lrn(g: Graph, layer: Layer, dla: Dla, precision: str, conv: tuple | None = None) -> tuple[bool, str]:
    size = int(layer.attributes.get("size", 5))
    if size not in dla.support.lrn_windows:
        return False, f"LRN window {size} not in {list(dla.support.lrn_windows)}"
    return True, ""


def _resize(g: Graph, layer: Layer, dla: Dla, precision: str, conv: tuple | None = None) -> tuple[bool, str]:
    x = g.tensors[layer.inputs[0]].shape
    y = g.tensors[layer.outputs[0]].shape
    if len(x) != 4 or x[:2] != y[:2]:
        return False, "resize must scale H and W only"
    scales = [y[2] / x[2], y[3] / x[3]]
    if any(s != int(s) for s in scales):
        return False, f"non-integer resize scale {scales[0]:g}x{scales[1]:g}"
    limit = (dla.support.resize_linear_scale_max if "linear" in str(layer.attributes.get("mode", "nearest"))
             else dla.support.resize_nearest_scale_max)
    if max(scales) > limit:
        return False, f"resize scale {max(scales):g} > {limit}"
    return True, ""


def _clip(g: Graph, layer: Layer, dla: Dla, precision: str, conv: tuple | None = None) -> tuple[bool, str]:
    lo, hi = layer.attributes.get("min", 0.0), layer.attributes.get("max", 6.0)
    if lo not in (0, 0.0, None) or hi is None or not (1 <= hi <= 127):
        return False, "Clip is supported on DLA only as a clipped ReLU with max in [1,127]"
    return True, ""


_CHECKS = {
    "Conv": _conv, "ConvTranspose": _deconv, "Gemm": _matmul, "MatMul": _matmul,
    "MaxPool": _pool, "AveragePool": _pool, "Concat": _concat, "LRN": _lrn,
    "Resize": _resize, "Upsample": _resize, "Clip": _clip,
}
