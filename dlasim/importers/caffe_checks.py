"""Validation of a parsed Caffe NetParameter before it becomes a Graph (a step of its own, run first).

Caffe's own checks (caffe/src/caffe/net.cpp Net::Init, layers/base_conv_layer.cpp LayerSetUp,
layers/pooling_layer.cpp, caffe.proto field types) that a prototxt must pass before Caffe or TensorRT's
Caffe parser would accept it: at least one layer; every layer has a type; a blob is produced once unless a
layer works in place (top == bottom: "Top blob ... produced by multiple sources"); kernel sizes, strides and
dilations are positive integers, pads non-negative integers (uint32 fields), num_output and group positive.
Types that are not Caffe's are kept as plugin layers (TensorRT's Caffe parser takes plugin factories),
except near-misses of a Caffe type, which are typos.
"""
from __future__ import annotations

import difflib
import math

from ..errors import ModelError
from .caffe_layers import V1_TYPES

# BVLC Caffe layer types (caffe/src/caffe/layers/*, REGISTER_LAYER_CLASS) and the common extensions
# TensorRT's Caffe parser and SSD/YOLO forks add (ReLU6, Upsample, Permute, Normalize, PriorBox, ...).
CAFFE_TYPES = frozenset("""
AbsVal Accuracy ArgMax BNLL BatchNorm BatchReindex Bias Clip Concat ContrastiveLoss Convolution Crop Data
Deconvolution DetectionOutput Dropout DummyData ELU Eltwise Embed EuclideanLoss Exp Filter Flatten HDF5Data
HDF5Output HingeLoss Im2col ImageData InfogainLoss InnerProduct Input Interp LRN LSTM Log MVN MemoryData
MultinomialLogisticLoss Normalize PReLU Parameter Permute Pooling Power PriorBox Python RNN ReLU ReLU6
Reduction Reorg Reshape SPP Scale Sigmoid SigmoidCrossEntropyLoss Silence Slice Softmax SoftmaxWithLoss
Split Swish TanH Threshold Tile Upsample WindowData
""".split())

MAX_CHANNELS = 1 << 24   # num_output beyond 16.7 M channels is no real layer (weights alone would not fit)
MAX_KERNEL = 1 << 16

# param block -> {field: minimum}; every value must be an integer (caffe.proto: uint32 fields)
_INT_FIELDS = {
    "convolution_param": {"num_output": 1, "kernel_size": 1, "kernel_h": 1, "kernel_w": 1, "stride": 1,
                          "stride_h": 1, "stride_w": 1, "pad": 0, "pad_h": 0, "pad_w": 0, "dilation": 1,
                          "group": 1},
    "pooling_param": {"kernel_size": 1, "kernel_h": 1, "kernel_w": 1, "stride": 1, "stride_h": 1,
                      "stride_w": 1, "pad": 0, "pad_h": 0, "pad_w": 0},
    "inner_product_param": {"num_output": 1},
    "lrn_param": {"local_size": 1},
}
# param block -> fields that must be finite numbers (caffe.proto: float fields)
_FLOAT_FIELDS = {
    "batch_norm_param": ("eps", "moving_average_fraction"), "relu_param": ("negative_slope",),
    "elu_param": ("alpha",), "lrn_param": ("alpha", "beta", "k"), "dropout_param": ("dropout_ratio",),
    "eltwise_param": ("coeff",), "upsample_param": ("scale", "scale_h", "scale_w"),
    "power_param": ("power", "scale", "shift"), "clip_param": ("min", "max"),
}
_MAXIMA = {"num_output": MAX_CHANNELS, "group": MAX_CHANNELS}


def _type_name(msg: dict, path: str, name: str) -> str:
    kinds = msg.get("type") or []
    kind = kinds[-1] if kinds else None
    if not isinstance(kind, str) or not kind.strip():
        raise ModelError(f"{path}: layer {name!r} has no type (expected type: \"Convolution\" or another Caffe "
                         f"layer type)")
    kind = V1_TYPES.get(kind, kind)
    if kind not in CAFFE_TYPES:
        near = difflib.get_close_matches(kind, CAFFE_TYPES, n=1, cutoff=0.75)
        folded = {t.lower(): t for t in CAFFE_TYPES}.get(kind.lower())
        guess = folded or (near[0] if near else None)
        if guess:
            raise ModelError(f"{path}: layer {name!r}: unknown Caffe layer type {kind!r}; did you mean {guess!r}?")
    return kind


def _check_ints(msg: dict, path: str, name: str, kind: str) -> None:
    for block, fields in _INT_FIELDS.items():
        for p in msg.get(block) or []:
            if not isinstance(p, dict):
                raise ModelError(f"{path}: layer {name!r} ({kind}): {block} must be a {{ ... }} block")
            for key, low in fields.items():
                for v in p.get(key) or []:
                    high = _MAXIMA.get(key, MAX_KERNEL if key.startswith(("kernel", "stride", "pad", "dilation"))
                                       else MAX_CHANNELS)
                    if isinstance(v, bool) or not isinstance(v, int):
                        raise ModelError(f"{path}: layer {name!r} ({kind}): {block}.{key} must be an integer, "
                                         f"got {v!r}")
                    if not low <= v <= high:
                        raise ModelError(f"{path}: layer {name!r} ({kind}): {block}.{key} must be in "
                                         f"{low}..{high}, got {v}")


def _check_floats(msg: dict, path: str, name: str, kind: str) -> None:
    for block, fields in _FLOAT_FIELDS.items():
        for p in msg.get(block) or []:
            if not isinstance(p, dict):
                raise ModelError(f"{path}: layer {name!r} ({kind}): {block} must be a {{ ... }} block")
            for key in fields:
                for v in p.get(key) or []:
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                        raise ModelError(f"{path}: layer {name!r} ({kind}): {block}.{key} must be a finite "
                                         f"number, got {v!r}")


def _check_dims(values, path: str, where: str) -> None:
    for d in values:
        if isinstance(d, bool) or not isinstance(d, int) or d < 1:
            raise ModelError(f"{path}: {where}: dimensions must be positive integers, got {d!r}")


def check_net(net: dict, path: str) -> None:
    """Raise ModelError (one line naming the layer and field) for a NetParameter Caffe would refuse."""
    _check_dims(net.get("input_dim") or [], path, "input_dim")
    for s in net.get("input_shape") or []:
        if isinstance(s, dict):
            _check_dims(s.get("dim") or [], path, "input_shape")
    entries = (net.get("layer") or []) + (net.get("layers") or [])
    if not entries:
        raise ModelError(f"{path}: no layers (expected layer {{ name: ... type: ... }} blocks in a Caffe "
                         f"deploy prototxt)")
    producer: dict[str, str] = {str(n): "the input: header" for n in net.get("input") or []}
    for i, msg in enumerate(entries):
        if not isinstance(msg, dict):
            raise ModelError(f"{path}: 'layer' entry {i} is not a block")
        names = msg.get("name") or [f"layer_{i}"]
        name = str(names[-1])
        kind = _type_name(msg, path, name)
        phases = [r.get("phase", [""])[-1] for r in msg.get("include") or [] if isinstance(r, dict)]
        if "TRAIN" in phases or 0 in phases:
            continue
        _check_ints(msg, path, name, kind)
        _check_floats(msg, path, name, kind)
        for p in msg.get("input_param") or []:
            for s in (p.get("shape") or []) if isinstance(p, dict) else []:
                if isinstance(s, dict):
                    _check_dims(s.get("dim") or [], path, f"layer {name!r} input_param.shape")
        bottoms = {str(b) for b in msg.get("bottom") or []}
        if not msg.get("top") and kind not in ("Silence", "Accuracy", "SoftmaxWithLoss"):
            raise ModelError(f"{path}: layer {name!r} ({kind}) has no top (expected top: \"BLOB\")")
        for top in msg.get("top") or []:
            top = str(top)
            if top in producer and top not in bottoms:
                raise ModelError(f"{path}: layer {name!r} writes blob {top!r}, which {producer[top]} already "
                                 f"produces; only an in-place layer (top == bottom) may reuse a blob")
            producer.setdefault(top, f"layer {name!r}")
