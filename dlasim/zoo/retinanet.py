"""ResNeXt-50 (32x4d) and the MLPerf Inference RetinaNet built on it.

ResNeXt-50 32x4d: Xie et al., "Aggregated Residual Transformations for Deep Neural Networks", CVPR 2017, in the
torchvision layout (torchvision/models/resnet.py resnext50_32x4d: bottleneck width planes x 4/64 x 32 = 2 x planes,
grouped 3x3 conv with 32 groups carrying the stride, v1.5). torchvision lists 4.23 GFLOPS (multiply-adds) at
224x224.

RetinaNet: Lin et al., "Focal Loss for Dense Object Detection", ICCV 2017, as the MLPerf Inference v3.0
reference builds it (mlcommons/training single_stage_detector/ssd/model/retinanet.py, a copy of torchvision's
retinanet_resnet50_fpn with backbone resnext50_32x4d): FPN over layer2..layer4 (1x1 lateral and 3x3 output convs,
256 channels, nearest top-down upsampling), P6 = 3x3 stride-2 conv on P5 and P7 = 3x3 stride-2 conv on ReLU(P6)
(LastLevelP6P7(256, 256)); on each of P3..P7 a classification head (four 3x3 conv + ReLU, 256 channels, then a 3x3
conv to 9 anchors x 264 OpenImages classes) and a box head (four 3x3 conv + ReLU, then 3x3 to 9 x 4), no
normalisation in the heads (v1). The heads share weights across levels; an exported graph repeats them per level,
as here. Input 800x800. The network ends at the ten head convs: anchor decode, Top-K and NMS run in NVIDIA's
harness plugin on the GPU and are not modelled.
"""
from __future__ import annotations

from ..ir import GraphBuilder
from .blocks import ZooModel, conv_bn, conv_bn_act
from .classifiers import classifier

GROUPS = 32
RETINANET_CLASSES = 264   # MLPerf OpenImages subset
ANCHORS = 9               # 3 scales x 3 aspect ratios per location
FPN_CHANNELS = 256


def resnext_block(b: GraphBuilder, x: str, planes: int, s: int, p: str) -> str:
    """ResNeXt bottleneck: 1x1 (2 x planes), 3x3 grouped (32 groups, stride s), 1x1 (4 x planes), residual."""
    width = planes * 2
    y = conv_bn_act(b, x, width, 1, 1, "relu", f"{p}.conv1", f"{p}.bn1", f"{p}.relu1")
    y = conv_bn_act(b, y, width, 3, s, "relu", f"{p}.conv2", f"{p}.bn2", f"{p}.relu2", groups=GROUPS)
    y = conv_bn(b, y, 4 * planes, 1, 1, f"{p}.conv3", f"{p}.bn3")
    if s != 1 or b.shape(x)[1] != 4 * planes:
        x = conv_bn(b, x, 4 * planes, 1, s, f"{p}.downsample.0", f"{p}.downsample.1")
    return b.relu(b.add(y, x, name=f"{p}.add"), name=f"{p}.relu")


def resnext50_trunk(b: GraphBuilder, x: str, prefix: str = "") -> list[str]:
    """conv1..layer4 of ResNeXt-50 32x4d; returns the outputs of layer1..layer4 (256, 512, 1024, 2048 channels)."""
    x = conv_bn_act(b, x, 64, 7, 2, "relu", f"{prefix}conv1", f"{prefix}bn1", f"{prefix}relu")
    x = b.maxpool(x, 3, 2, pad=1, name=f"{prefix}maxpool")
    feats = []
    for i, (planes, n) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3)), start=1):
        for j in range(n):
            x = resnext_block(b, x, planes, 2 if (j == 0 and i > 1) else 1, f"{prefix}layer{i}.{j}")
        feats.append(x)
    return feats


def _resnext50(b: GraphBuilder, x: str) -> list[str]:
    return [classifier(b, resnext50_trunk(b, x)[-1])]


def _fpn(b: GraphBuilder, c3: str, c4: str, c5: str) -> list[str]:
    """torchvision FeaturePyramidNetwork + LastLevelP6P7: P3..P7, 256 channels each."""
    p = "backbone.fpn"
    inner = b.conv(c5, FPN_CHANNELS, 1, name=f"{p}.inner_blocks.2")
    outs = [b.conv(inner, FPN_CHANNELS, 3, name=f"{p}.layer_blocks.2")]
    for i, c in ((1, c4), (0, c3)):
        lateral = b.conv(c, FPN_CHANNELS, 1, name=f"{p}.inner_blocks.{i}")
        up = b.op("Resize", [inner], {"sizes": list(b.shape(lateral)), "mode": "nearest"}, f"{p}.upsample.{i}")
        inner = b.add(lateral, up, name=f"{p}.add.{i}")
        outs.insert(0, b.conv(inner, FPN_CHANNELS, 3, name=f"{p}.layer_blocks.{i}"))
    p6 = b.conv(outs[-1], FPN_CHANNELS, 3, stride=2, name=f"{p}.extra_blocks.p6")
    p7 = b.conv(b.relu(p6, name=f"{p}.extra_blocks.relu"), FPN_CHANNELS, 3, stride=2, name=f"{p}.extra_blocks.p7")
    return outs + [p6, p7]


def _head(b: GraphBuilder, x: str, out_channels: int, p: str) -> str:
    for i in range(4):
        x = b.relu(b.conv(x, FPN_CHANNELS, 3, name=f"{p}.conv.{2 * i}"), name=f"{p}.conv.{2 * i + 1}")
    return b.conv(x, out_channels, 3, name=f"{p}.out")


def _retinanet(b: GraphBuilder, x: str) -> list[str]:
    _, c3, c4, c5 = resnext50_trunk(b, x, "backbone.body.")
    outs = []
    for level, f in enumerate(_fpn(b, c3, c4, c5), start=3):
        outs.append(_head(b, f, ANCHORS * RETINANET_CLASSES, f"head.classification_head.p{level}"))
        outs.append(_head(b, f, ANCHORS * 4, f"head.regression_head.p{level}"))
    return outs


MODELS: dict[str, ZooModel] = {
    "resnext50_32x4d": ZooModel(_resnext50, (3, 224, 224),
                                "ResNeXt-50 32x4d (torchvision), grouped 3x3 bottlenecks, 224x224, ~4.23 GMACs"),
    "retinanet_resnext50_fpn": ZooModel(_retinanet, (3, 800, 800),
                                        "RetinaNet ResNeXt50-32x4d FPN (MLPerf Inference, OpenImages 264 classes, "
                                        "9 anchors, P3-P7), 800x800, ~201 GMACs; decode/Top-K/NMS not modelled"),
}
