"""Detectors: YOLOv8-L backbone, YOLOv4, SSD-MobileNetV1, SSD-ResNet34 (MLPerf)."""
from __future__ import annotations

from typing import Callable

from ..ir import GraphBuilder
from .blocks import ZooModel, conv_bn_act
from .classifiers import basic_block, mobilenet_v1_features

# ---- YOLOv8-L backbone (ultralytics yolov8l.yaml, width 1.0, depth 1.0, max channels 512) ---------


def yconv(b: GraphBuilder, x: str, c: int, k: int, s: int, p: str) -> str:
    """ultralytics Conv: Conv2d(bias=False) + BatchNorm2d + SiLU."""
    return conv_bn_act(b, x, c, k, s, "silu", f"{p}.conv", f"{p}.bn", f"{p}.act")


def c2f(b: GraphBuilder, x: str, c2: int, n: int, p: str, shortcut: bool = True) -> str:
    """C2f: cv1 1x1 -> Split in two -> n bottlenecks (3x3, 3x3) on the last chunk -> Concat -> cv2 1x1."""
    c = c2 // 2
    ys = list(b.split(yconv(b, x, 2 * c, 1, 1, f"{p}.cv1"), [c, c], name=f"{p}.split"))  # copy: we append
    for i in range(n):
        y = yconv(b, yconv(b, ys[-1], c, 3, 1, f"{p}.m.{i}.cv1"), c, 3, 1, f"{p}.m.{i}.cv2")
        ys.append(b.add(ys[-1], y, name=f"{p}.m.{i}.add") if shortcut else y)
    return yconv(b, b.concat(ys, name=f"{p}.concat"), c2, 1, 1, f"{p}.cv2")


def sppf(b: GraphBuilder, x: str, c2: int, p: str, k: int = 5) -> str:
    ys = [yconv(b, x, b.shape(x)[1] // 2, 1, 1, f"{p}.cv1")]
    for i in range(3):
        ys.append(b.maxpool(ys[-1], k, 1, pad=k // 2, name=f"{p}.m.{i}"))
    return yconv(b, b.concat(ys, name=f"{p}.concat"), c2, 1, 1, f"{p}.cv2")


def _yolov8l_backbone(b: GraphBuilder, x: str) -> list[str]:
    x = yconv(b, x, 64, 3, 2, "model.0")                               # P1/2
    x = c2f(b, yconv(b, x, 128, 3, 2, "model.1"), 128, 3, "model.2")  # P2/4
    p3 = c2f(b, yconv(b, x, 256, 3, 2, "model.3"), 256, 6, "model.4")  # P3/8
    p4 = c2f(b, yconv(b, p3, 512, 3, 2, "model.5"), 512, 6, "model.6")  # P4/16
    x = c2f(b, yconv(b, p4, 512, 3, 2, "model.7"), 512, 3, "model.8")  # P5/32
    return [p3, p4, sppf(b, x, 512, "model.9")]


# ---- YOLOv4 (yolov4.cfg: CSPDarknet53 + SPP + PANet + 3 YOLO heads) -----------------------------


def csp_stage(b: GraphBuilder, x: str, c: int, n: int, kind: str, p: str, first: bool = False) -> str:
    """CSPDarknet53 stage: 3x3 s2 downsample, two 1x1 branches, n residual blocks, concat, 1x1 transition."""
    x = conv_bn_act(b, x, c, 3, 2, kind, f"{p}.downsample")
    h = c if first else c // 2  # the first stage keeps full width in both branches
    part = conv_bn_act(b, x, h, 1, 1, kind, f"{p}.split0")
    y = conv_bn_act(b, x, h, 1, 1, kind, f"{p}.split1")
    for i in range(n):
        r = conv_bn_act(b, y, c // 2 if first else h, 1, 1, kind, f"{p}.res{i}.conv1")
        r = conv_bn_act(b, r, h, 3, 1, kind, f"{p}.res{i}.conv2")
        y = b.add(y, r, name=f"{p}.res{i}.shortcut")
    y = conv_bn_act(b, y, h, 1, 1, kind, f"{p}.post")
    return conv_bn_act(b, b.concat([y, part], name=f"{p}.concat"), c, 1, 1, kind, f"{p}.transition")


def conv_stack(b: GraphBuilder, x: str, c: int, n: int, kind: str, p: str) -> str:
    """n alternating 1x1 (c) / 3x3 (2c) conv layers, starting and ending with 1x1."""
    for i in range(n):
        x = conv_bn_act(b, x, c if i % 2 == 0 else 2 * c, 1 if i % 2 == 0 else 3, 1, kind, f"{p}.conv{i}")
    return x


def spp(b: GraphBuilder, x: str, p: str) -> str:
    pools = [b.maxpool(x, k, 1, pad=k // 2, name=f"{p}.maxpool{k}") for k in (5, 9, 13)]
    return b.concat(pools[::-1] + [x], name=f"{p}.concat")


def yolo_head(b: GraphBuilder, x: str, c: int, kind: str, p: str) -> str:
    """3x3 conv + BN + activation, then the linear 1x1 output conv (with bias) that feeds a [yolo] layer."""
    x = conv_bn_act(b, x, c, 3, 1, kind, f"{p}.conv")
    return b.conv(x, 255, kernel=1, bias=True, name=f"{p}.output")  # 3 anchors x (80 classes + 5)


def _yolov4(backbone_act: str, neck_act: str) -> Callable[[GraphBuilder, str], list[str]]:
    def build(b: GraphBuilder, x: str) -> list[str]:
        x = conv_bn_act(b, x, 32, 3, 1, backbone_act, "stem")
        feats = []
        for i, (c, n) in enumerate([(64, 1), (128, 2), (256, 8), (512, 8), (1024, 4)], start=1):
            x = csp_stage(b, x, c, n, backbone_act, f"down{i}", first=(i == 1))
            feats.append(x)
        c3, c4, c5 = feats[2:]
        a = neck_act
        x = spp(b, conv_stack(b, c5, 512, 3, a, "neck.pre_spp"), "neck.spp")
        n5 = conv_stack(b, x, 512, 3, a, "neck.post_spp")
        up = b.resize(conv_bn_act(b, n5, 256, 1, 1, a, "neck.up5.conv"), 2, name="neck.up5.resize")
        lat = conv_bn_act(b, c4, 256, 1, 1, a, "neck.lat4")
        n4 = conv_stack(b, b.concat([lat, up], name="neck.concat4"), 256, 5, a, "neck.p4")
        up = b.resize(conv_bn_act(b, n4, 128, 1, 1, a, "neck.up4.conv"), 2, name="neck.up4.resize")
        lat = conv_bn_act(b, c3, 128, 1, 1, a, "neck.lat3")
        n3 = conv_stack(b, b.concat([lat, up], name="neck.concat3"), 128, 5, a, "neck.p3")
        out3 = yolo_head(b, n3, 256, a, "head3")
        d = conv_bn_act(b, n3, 256, 3, 2, a, "head.down3")
        h4 = conv_stack(b, b.concat([d, n4], name="head.concat4"), 256, 5, a, "head.p4")
        out4 = yolo_head(b, h4, 512, a, "head4")
        d = conv_bn_act(b, h4, 512, 3, 2, a, "head.down4")
        h5 = conv_stack(b, b.concat([d, n5], name="head.concat5"), 512, 5, a, "head.p5")
        return [out3, out4, yolo_head(b, h5, 1024, a, "head5")]
    return build


# ---- SSD-MobileNetV1 (TF object detection API ssd_mobilenet_v1_coco, 300x300) --------------------

SSD_EXTRAS = [(256, 512), (128, 256), (128, 256), (64, 128)]  # 1x1 depth, 3x3 s2 depth
SSD_CLASSES = 91  # 90 COCO classes + background


def _ssd_mobilenet_v1(b: GraphBuilder, x: str) -> list[str]:
    feats = mobilenet_v1_features(b, x, "relu6")
    maps = [feats[11], feats[13]]  # Conv2d_11_pointwise (19x19), Conv2d_13_pointwise (10x10)
    for i, (c1, c3) in enumerate(SSD_EXTRAS, start=2):
        y = conv_bn_act(b, maps[-1], c1, 1, 1, "relu6", f"Conv2d_13_pointwise_1_Conv2d_{i}_1x1_{c1}")
        maps.append(conv_bn_act(b, y, c3, 3, 2, "relu6", f"Conv2d_13_pointwise_2_Conv2d_{i}_3x3_s2_{c3}"))
    boxes, scores = [], []
    for i, m in enumerate(maps):
        anchors = 3 if i == 0 else 6
        for kind, per, out in (("BoxEncodingPredictor", 4, boxes), ("ClassPredictor", SSD_CLASSES, scores)):
            p = f"BoxPredictor_{i}/{kind}"
            y = b.op("Transpose", [b.conv(m, anchors * per, kernel=1, name=p)], {"perm": [0, 2, 3, 1]},
                     f"{p}/transpose")
            out.append(b.reshape(y, [0, -1, per], name=f"{p}/reshape"))
    box = b.concat(boxes, axis=1, name="concat_box_encodings")
    cls = b.sigmoid(b.concat(scores, axis=1, name="concat_class_predictions"), name="class_scores")
    return [box, cls]


# ---- SSD-ResNet34 (MLPerf Inference 'SSD-Large', mlcommons/inference ssd_r34.py, 1200x1200, COCO 81) -----
# Backbone: torchvision ResNet-34 conv1..layer3 with layer3's first block at stride 1 (150x150x256 at 1200).
# Six extra blocks (1x1 reduce + ReLU, 3x3 + ReLU, with bias) make the six detection maps 50, 25, 13, 7, 3, 3;
# each map has a 3x3 box head (4 per default box) and a 3x3 class head (81 per default box), with 4, 6, 6, 6,
# 4, 4 default boxes: 15130 boxes. ~216 GMACs (MLPerf quotes 433 GOPs per 1200x1200 image). The strides and
# paddings of the extra blocks are reconstructed from those totals; decode and NMS run outside the network.

SSD_R34_EXTRAS = [(256, 512, 3, 1), (256, 512, 2, 1), (128, 256, 2, 1), (128, 256, 2, 1), (128, 256, 2, 0),
                  (128, 256, 1, 1)]  # 1x1 width, 3x3 width, 3x3 stride, 3x3 padding
SSD_R34_DEFAULTS = [4, 6, 6, 6, 4, 4]
SSD_R34_CLASSES = 81


def _ssd_resnet34(b: GraphBuilder, x: str) -> list[str]:
    x = conv_bn_act(b, x, 64, 7, 2, "relu", "backbone.conv1", "backbone.bn1", "backbone.relu")
    x = b.maxpool(x, 3, 2, pad=1, name="backbone.maxpool")
    for i, (c, n, s) in enumerate(((64, 3, 1), (128, 4, 2), (256, 6, 1)), start=1):
        for j in range(n):
            x = basic_block(b, x, c, s if j == 0 else 1, f"backbone.layer{i}.{j}")
    maps = []
    for i, (c1, c3, s, p) in enumerate(SSD_R34_EXTRAS):
        y = b.relu(b.conv(x, c1, kernel=1, name=f"additional_blocks.{i}.0"), name=f"additional_blocks.{i}.1")
        x = b.relu(b.conv(y, c3, kernel=3, stride=s, pad=p, name=f"additional_blocks.{i}.2"),
                   name=f"additional_blocks.{i}.3")
        maps.append(x)
    locs, confs = [], []
    for i, (m, nd) in enumerate(zip(maps, SSD_R34_DEFAULTS)):
        for kind, per, out in (("loc", 4, locs), ("conf", SSD_R34_CLASSES, confs)):
            y = b.conv(m, nd * per, kernel=3, name=f"{kind}.{i}")
            out.append(b.reshape(y, [0, per, -1], name=f"{kind}.{i}.reshape"))
    return [b.concat(locs, axis=2, name="locs"), b.concat(confs, axis=2, name="confs")]


MODELS: dict[str, ZooModel] = {
    "yolov8l_backbone": ZooModel(_yolov8l_backbone, (3, 640, 640),
                                 "YOLOv8-L backbone (ultralytics, C2f + SPPF, SiLU as Sigmoid+Mul), 640x640"),
    "yolov4": ZooModel(_yolov4("mish", "leaky"), (3, 416, 416),
                       "YOLOv4 (Darknet yolov4.cfg): CSPDarknet53 with Mish, SPP, PANet and 3 heads with "
                       "LeakyReLU, 416x416, ~30 GMACs (YOLO decode/NMS not modelled)"),
    "yolov4_relu": ZooModel(_yolov4("relu", "relu"), (3, 416, 416),
                            "YOLOv4 with every Mish/LeakyReLU replaced by ReLU (TAO force_relu), 416x416"),
    "ssd_mobilenet_v1": ZooModel(_ssd_mobilenet_v1, (3, 300, 300),
                                 "SSD-MobileNetV1 (TF ssd_mobilenet_v1_coco, 91 classes, 1917 anchors), "
                                 "300x300; NMS runs on the GPU in the reference and is not modelled"),
    "ssd_resnet34": ZooModel(_ssd_resnet34, (3, 1200, 1200),
                             "SSD-ResNet34 (MLPerf Inference SSD-Large, COCO 81 classes, 15130 boxes), "
                             "1200x1200, ~216 GMACs; decode/NMS not modelled"),
}
