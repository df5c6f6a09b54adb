"""Explicitly quantized (Q/DQ) networks as the TensorRT trex A100 QAT engines hold them: ResNet-18 in three
Q/DQ placements (A100 engines), MobileNetV2 in two (TITAN RTX engines).

The engines (validation/data/trex/a100-resnet50/{qat,qat-residual,qat-residual-qgap}/*.graph.json, built
from NVIDIA/TensorRT examples/pytorch/resnet with pytorch-quantization) hold a torchvision ResNet-18 with
BatchNorm folded into the convolutions (no BatchNormalization layers in the engines) and:
- `qat`: a QuantizeLinear/DequantizeLinear pair at the input of every convolution and of the FC, weights
  quantized (a DQ of INT8 weights); the residual Add's skip input and the global average pool are not
  quantized (the engine runs `... + Add_36 + Relu_37` with an FP16 second input and FP16 output, then
  `QuantizeLinear_15/40/...` as FP16 -> Int8 Reformat layers);
- `qat-residual`: also a Q/DQ pair on the skip input of every residual Add (the identity or the
  downsample convolution's output): the engine's conv + add + relu layers read two Int8 inputs;
- `qat-residual-qgap`: also a Q/DQ pair before the global average pool (`GlobalAveragePool_300` Int8).
Weights are INT8 constants, as the ONNX importer leaves a DequantizeLinear of constant weights.

The MobileNetV2 engines (validation/data/trex/a100-mobilenet-qat/{mobilenet,mobilenet_v2_residuals}.qat.onnx
.engine.graph.json, trex's test inputs): torchvision MobileNetV2 with BatchNorm folded, ReLU6 as Clip, and
- `qat`: a Q/DQ pair at the input of every convolution and of the classifier's Gemm; the residual Add's
  other input and the global average pool are not quantized (the engine runs `Conv_142 + Add_144` on two
  inputs, then `QuantizeLinear_147` as a Reformat, and `GlobalAveragePool_843` in FP16 before
  `QuantizeLinear_854`);
- `qat-residual`: also a Q/DQ pair on the skip input of every residual Add (no Reformat between the blocks).
The classifier's Dropout is an inference no-op and left out.
"""
from __future__ import annotations

from ..ir import GraphBuilder
from .blocks import ZooModel

PLACEMENTS = ("qat", "qat-residual", "qat-residual-qgap")


def qdq(b: GraphBuilder, x: str, name: str) -> str:
    """A per-tensor QuantizeLinear -> DequantizeLinear pair (INT8, zero point 0)."""
    s = b.const(f"{name}.scale", ())
    z = b.const(f"{name}.zero_point", (), dtype="int8")
    q = b.op("QuantizeLinear", [x, s, z], name=f"{name}.quantize")
    return b.op("DequantizeLinear", [q, s, z], name=f"{name}.dequantize")


def qconv(b: GraphBuilder, x: str, c: int, k: int, s: int, name: str, quantized: bool = False,
          groups: int = 1) -> str:
    """Conv (BatchNorm folded, bias) on a Q/DQ input (added unless `quantized`) with INT8 weights."""
    if not quantized:
        x = qdq(b, x, f"{name}.input")
    w = b.const(f"{name}.weight", (c, b.shape(x)[1] // groups, k, k), dtype="int8")
    bias = b.const(f"{name}.bias", (c,))
    return b.op("Conv", [x, w, bias], {"kernel_shape": [k, k], "strides": [s, s], "pads": [k // 2] * 4,
                                      "dilations": [1, 1], "group": groups}, name=name)


def _block(b: GraphBuilder, x: str, c: int, s: int, p: str, residual_q: bool) -> str:
    """A basic block; conv1 and the downsample conv read one Q/DQ of the block input (the engines have one
    `QuantizeLinear` per block input: QuantizeLinear_65 before layer2.0's conv1 and downsample)."""
    xq = qdq(b, x, f"{p}.input")
    y = b.relu(qconv(b, xq, c, 3, s, f"{p}.conv1", quantized=True), name=f"{p}.relu1")
    y = qconv(b, y, c, 3, 1, f"{p}.conv2")
    if s != 1 or b.shape(x)[1] != c:
        x = qconv(b, xq, c, 1, s, f"{p}.downsample.0", quantized=True)
    if residual_q:
        x = qdq(b, x, f"{p}.residual")
    return b.relu(b.add(y, x, name=f"{p}.add"), name=f"{p}.relu")


def _resnet18(placement: str):
    residual_q = placement != "qat"
    gap_q = placement == "qat-residual-qgap"

    def build(b: GraphBuilder, x: str) -> list[str]:
        x = b.relu(qconv(b, x, 64, 7, 2, "conv1"), name="relu")
        x = b.maxpool(x, 3, 2, pad=1, name="maxpool")
        for i, c in enumerate((64, 128, 256, 512), start=1):
            for j in range(2):
                x = _block(b, x, c, 2 if (j == 0 and i > 1) else 1, f"layer{i}.{j}", residual_q)
        if gap_q:
            x = qdq(b, x, "avgpool.input")
        x = b.flatten(b.global_avgpool(x, name="avgpool"), name="flatten")
        x = qdq(b, x, "fc.input")
        w = b.const("fc.weight", (1000, b.shape(x)[1]), dtype="int8")
        return [b.op("Gemm", [x, w, b.const("fc.bias", (1000,))], {"transB": 1}, name="fc")]
    return build


def _mobilenet_v2(placement: str):
    from .classifiers import MOBILENET_V2
    residual_q = placement != "qat"

    def block(b: GraphBuilder, x: str, c: int, s: int, t: int, p: str) -> str:
        cin = b.shape(x)[1]
        h = cin * t
        y = b.relu6(qconv(b, x, h, 1, 1, f"{p}.conv.0.0"), name=f"{p}.conv.0.2") if t != 1 else x
        q = f"{p}.conv.1.0" if t != 1 else f"{p}.conv.0.0"
        y = b.relu6(qconv(b, y, h, 3, s, q, groups=h), q[:-1] + "2")
        y = qconv(b, y, c, 1, 1, f"{p}.conv.{2 if t != 1 else 1}")
        if not (s == 1 and cin == c):
            return y
        skip = qdq(b, x, f"{p}.residual") if residual_q else x
        return b.add(y, skip, name=f"{p}.add")

    def build(b: GraphBuilder, x: str) -> list[str]:
        x = b.relu6(qconv(b, x, 32, 3, 2, "features.0.0"), "features.0.2")
        i = 1
        for t, c, n, s in MOBILENET_V2:
            for j in range(n):
                x = block(b, x, c, s if j == 0 else 1, t, f"features.{i}")
                i += 1
        x = b.relu6(qconv(b, x, 1280, 1, 1, f"features.{i}.0"), f"features.{i}.2")
        x = b.flatten(b.global_avgpool(x, name="avgpool"), name="flatten")
        x = qdq(b, x, "classifier.1.input")
        w = b.const("classifier.1.weight", (1000, b.shape(x)[1]), dtype="int8")
        return [b.op("Gemm", [x, w, b.const("classifier.1.bias", (1000,))], {"transB": 1}, name="classifier.1")]
    return build


MODELS = {
    **{f"resnet18-{p}": ZooModel(_resnet18(p), (3, 224, 224),
                                 f"ResNet-18 with Q/DQ as the trex A100 '{p}' engine (explicit quantization)")
       for p in PLACEMENTS},
    **{f"mobilenet_v2-{p}": ZooModel(_mobilenet_v2(p), (3, 224, 224),
                                     f"MobileNetV2 with Q/DQ as the trex TITAN RTX '{p}' MobileNetV2 engine "
                                     f"(explicit quantization)")
       for p in ("qat", "qat-residual")},
}
