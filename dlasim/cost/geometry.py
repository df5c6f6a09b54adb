"""Convolution geometry of a step's anchor layer, shared by the DLA and GPU cost models.

Conv, deconvolution, fully connected (Gemm) and MatMul with constant weights are all described as a
convolution: N images of C x H x W in, K x P x Q out, an R x S kernel, `groups` groups. An FC layer is a
1x1 conv on a 1x1 map (TensorRT converts FC to conv, reference/gpu_tensorrt.md s5.2); a constant-weight
MatMul [.., M, C] x [C, K] is a 1x1 conv over M pixels (reference/dla.md s4.1); a MatMul of two activations
or a two-operand Einsum is a GEMM of (rows of its output) x (summed size) x (its last output dimension).
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass, fields

from ..ir import Graph, Layer
from ..ops import conv_params, einsum_terms
from ..plan import Step


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which makes building one about
# five times slower, and the cost model builds one per convolution step per estimate. Treat it as read-only
# (it stays hashable by value).
@dataclass(slots=True, unsafe_hash=True)
class ConvShape:
    n: int
    c: int
    h: int
    w: int
    k: int
    p: int
    q: int
    r: int = 1
    s: int = 1
    groups: int = 1
    stride: int = 1
    transposed: bool = False

    @property
    def depthwise(self) -> bool:
        """One input channel per group (a depthwise convolution)."""
        return self.groups > 1 and self.groups == self.c

    @property
    def macs(self) -> int:
        if self.transposed:
            return self.n * self.c * self.h * self.w * (self.k // self.groups) * self.r * self.s
        return self.n * self.k * self.p * self.q * (self.c // self.groups) * self.r * self.s


# A ConvShape's fields as one plain tuple (one C call): the cost models' cache keys hold this, not the record,
# since hashing and comparing the record go through its generated Python __hash__ and __eq__.
shape_key = operator.attrgetter(*[f.name for f in fields(ConvShape)])


def sparse_weight_bytes(n_weights: int, bpe: int) -> int:
    """Bytes of `n_weights` dense weights stored 2:4-compressed: the kept half at `bpe` bytes each plus 2 bits
    of metadata per kept value (its index in the group of 4), i.e. one bit per dense weight whatever the
    precision (reference/gpu_tensorrt.md s2.1: sparse tensor cores "read only the non-zeros + 2-bit
    metadata"). INT8, 4096 weights: 2048 + 512 = 2560 B; FP16: 4096 + 512 = 4608 B."""
    kept = -(-n_weights // 2)
    return kept * bpe + -(-kept * 2 // 8)


def conv_shape(layer: Layer, g: Graph, params: tuple | None = None) -> ConvShape | None:
    """The layer as a convolution, or None. `params`: its ops.conv_params when already parsed (Step.conv)."""
    op = layer.op
    tensors = g.tensors
    out = tensors[layer.outputs[0]].shape
    if op == "Conv":
        n, c, h, w = tensors[layer.inputs[0]].shape
        k, st, _, _ = params or conv_params(layer.attributes)
        return ConvShape(n, c, h, w, out[1], out[2], out[3], k[0], k[1], int(layer.attributes.get("group", 1)),
                         max(st))
    if op == "ConvTranspose":
        n, c, h, w = tensors[layer.inputs[0]].shape
        k, st, _, _ = params or conv_params(layer.attributes)
        return ConvShape(n, c, h, w, out[1], out[2], out[3], k[0], k[1], int(layer.attributes.get("group", 1)),
                         max(st), transposed=True)
    if op == "Gemm":
        a = tensors[layer.inputs[0]].shape
        n = a[0] if not layer.attributes.get("transA") else a[-1]
        return ConvShape(n, math.prod(a) // n, 1, 1, out[-1], 1, 1)
    if op == "MatMul":
        a = tensors[layer.inputs[0]].shape
        if not tensors[layer.inputs[1]].const:
            return ConvShape(math.prod(out[:-1]), a[-1], 1, 1, out[-1], 1, 1)
        return ConvShape(1, a[-1], 1, 1, out[-1], math.prod(a[:-1]), 1)
    if op == "Einsum":      # a batched GEMM of two activations: rows x (summed indices) x the last output index
        ins, o, sizes = einsum_terms(layer.attributes.get("equation"),
                                     [tensors[t].shape for t in layer.inputs], layer.name)
        summed = math.prod(sizes[c] for c in set("".join(ins)) - set(o))
        return ConvShape(math.prod(out[:-1]), summed, 1, 1, out[-1] if out else 1, 1, 1)
    return None


def step_conv_shape(step: Step, g: Graph) -> ConvShape | None:
    """conv_shape of the step's anchor, reusing the attributes the fold pass parsed for members[0]; a
    horizontally fused step (passes/fuse.py) is one convolution with the output channels of all its parts."""
    anchor = step.anchor
    if anchor is None:
        return None
    cs = conv_shape(anchor, g, step.conv if anchor is step.members[0] else None)
    if step.horizontal_k:
        cs.k = step.horizontal_k        # horizontally fused convs: one conv, their K added up
    return cs
