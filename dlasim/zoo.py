"""Built-in model zoo: well-known networks built in Python with GraphBuilder (nothing is downloaded).

Networks look like an unfolded exporter output (PyTorch -> ONNX without constant folding, Darknet or
Caffe deploy files): Convolution, BatchNormalization and the activation are separate layers, so the
fusion passes have something to fuse. Layer names follow the source framework where one exists
("layer1.0.conv1", "model.2.m.0.cv1.conv", "inception_3a/1x1"). The input tensor is "input", NCHW.

    >>> from dlasim import zoo
    >>> g = zoo.build("resnet50", batch=1)
    >>> round(g.macs / 1e9, 2)
    4.09
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import ModelError
from .ir import Graph, GraphBuilder

# ---- shared blocks ---------------------------------------------------------------------------------


def act(b: GraphBuilder, x: str, kind: str, name: str) -> str:
    """One activation by short name: relu, relu6 (Clip), leaky (0.1), mish, silu (Sigmoid+Mul), linear."""
    if kind == "relu":
        return b.relu(x, name=name)
    if kind == "relu6":
        return b.relu6(x, name=name)
    if kind == "leaky":
        return b.leaky_relu(x, 0.1, name=name)
    if kind == "mish":
        return b.mish(x, name=name)
    if kind == "silu":
        return b.silu(x, name=name)
    if kind == "linear":
        return x
    raise ValueError(f"unknown activation {kind!r}")


def conv_bn(b: GraphBuilder, x: str, c: int, k: int = 1, s: int = 1, name: str = "conv",
            bn_name: str | None = None, groups: int = 1) -> str:
    """bias-free Conv ('same' padding) followed by BatchNormalization."""
    y = b.conv(x, c, kernel=k, stride=s, groups=groups, bias=False, name=name)
    return b.bn(y, name=bn_name or f"{name}.bn")


def conv_bn_act(b: GraphBuilder, x: str, c: int, k: int = 1, s: int = 1, kind: str = "relu",
                name: str = "conv", bn_name: str | None = None, act_name: str | None = None,
                groups: int = 1) -> str:
    """Conv + BatchNormalization + activation, three layers."""
    y = conv_bn(b, x, c, k, s, name, bn_name, groups)
    return act(b, y, kind, act_name or f"{name}.{kind}")


# ---- ResNet (torchvision layout, v1.5: stride on the 3x3) -------------------------------------------


def basic_block(b: GraphBuilder, x: str, c: int, s: int, p: str) -> str:
    y = conv_bn_act(b, x, c, 3, s, "relu", f"{p}.conv1", f"{p}.bn1", f"{p}.relu1")
    y = conv_bn(b, y, c, 3, 1, f"{p}.conv2", f"{p}.bn2")
    if s != 1 or b.shape(x)[1] != c:
        x = conv_bn(b, x, c, 1, s, f"{p}.downsample.0", f"{p}.downsample.1")
    return b.relu(b.add(y, x, name=f"{p}.add"), name=f"{p}.relu")


def bottleneck(b: GraphBuilder, x: str, c: int, s: int, p: str) -> str:
    y = conv_bn_act(b, x, c, 1, 1, "relu", f"{p}.conv1", f"{p}.bn1", f"{p}.relu1")
    y = conv_bn_act(b, y, c, 3, s, "relu", f"{p}.conv2", f"{p}.bn2", f"{p}.relu2")
    y = conv_bn(b, y, 4 * c, 1, 1, f"{p}.conv3", f"{p}.bn3")
    if s != 1 or b.shape(x)[1] != 4 * c:
        x = conv_bn(b, x, 4 * c, 1, s, f"{p}.downsample.0", f"{p}.downsample.1")
    return b.relu(b.add(y, x, name=f"{p}.add"), name=f"{p}.relu")


def classifier(b: GraphBuilder, x: str, classes: int = 1000) -> str:
    x = b.flatten(b.global_avgpool(x, name="avgpool"), name="flatten")
    return b.fc(x, classes, name="fc")


def _resnet(block: Callable, depths: tuple[int, ...]) -> Callable[[GraphBuilder, str], list[str]]:
    def build(b: GraphBuilder, x: str) -> list[str]:
        x = conv_bn_act(b, x, 64, 7, 2, "relu", "conv1", "bn1", "relu")
        x = b.maxpool(x, 3, 2, pad=1, name="maxpool")
        for i, (c, n) in enumerate(zip((64, 128, 256, 512), depths), start=1):
            for j in range(n):
                x = block(b, x, c, 2 if (j == 0 and i > 1) else 1, f"layer{i}.{j}")
        return [classifier(b, x)]
    return build


# ---- MobileNets ----------------------------------------------------------------------------------

MOBILENET_V1 = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
                (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]


def mobilenet_v1_features(b: GraphBuilder, x: str, kind: str = "relu") -> list[str]:
    """MobileNetV1 (width 1.0) trunk; returns the output of Conv2d_0 and of every pointwise conv."""
    outs = [conv_bn_act(b, x, 32, 3, 2, kind, "Conv2d_0")]
    for i, (c, s) in enumerate(MOBILENET_V1, start=1):
        cin = b.shape(outs[-1])[1]
        y = conv_bn_act(b, outs[-1], cin, 3, s, kind, f"Conv2d_{i}_depthwise", groups=cin)
        outs.append(conv_bn_act(b, y, c, 1, 1, kind, f"Conv2d_{i}_pointwise"))
    return outs


def _mobilenet_v1(b: GraphBuilder, x: str) -> list[str]:
    return [classifier(b, mobilenet_v1_features(b, x, "relu")[-1])]


def inverted_residual(b: GraphBuilder, x: str, c: int, s: int, t: int, p: str) -> str:
    cin = b.shape(x)[1]
    h = cin * t
    y = conv_bn_act(b, x, h, 1, 1, "relu6", f"{p}.expand") if t != 1 else x
    y = conv_bn_act(b, y, h, 3, s, "relu6", f"{p}.depthwise", groups=h)
    y = conv_bn(b, y, c, 1, 1, f"{p}.project")
    return b.add(x, y, name=f"{p}.add") if s == 1 and cin == c else y


MOBILENET_V2 = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]  # t, c, n, s (torchvision)


def _mobilenet_v2(b: GraphBuilder, x: str) -> list[str]:
    x = conv_bn_act(b, x, 32, 3, 2, "relu6", "features.0")
    i = 1
    for t, c, n, s in MOBILENET_V2:
        for j in range(n):
            x = inverted_residual(b, x, c, s if j == 0 else 1, t, f"features.{i}")
            i += 1
    x = conv_bn_act(b, x, 1280, 1, 1, "relu6", f"features.{i}")
    return [classifier(b, x)]


# ---- GoogLeNet (BVLC Caffe deploy prototxt) ------------------------------------------------------

INCEPTION = {  # 1x1, 3x3_reduce, 3x3, 5x5_reduce, 5x5, pool_proj
    "3a": (64, 96, 128, 16, 32, 32), "3b": (128, 128, 192, 32, 96, 64),
    "4a": (192, 96, 208, 16, 48, 64), "4b": (160, 112, 224, 24, 64, 64), "4c": (128, 128, 256, 24, 64, 64),
    "4d": (112, 144, 288, 32, 64, 64), "4e": (256, 160, 320, 32, 128, 128),
    "5a": (256, 160, 320, 32, 128, 128), "5b": (384, 192, 384, 48, 128, 128),
}


def _caffe_conv_relu(b: GraphBuilder, x: str, c: int, k: int, s: int, scope: str, conv: str) -> str:
    """Caffe Convolution (with bias) + ReLU named like the prototxt: scope/conv and scope/relu_conv."""
    return b.relu(b.conv(x, c, kernel=k, stride=s, name=f"{scope}/{conv}"), name=f"{scope}/relu_{conv}")


def _lrn(b: GraphBuilder, x: str, name: str) -> str:
    return b.op("LRN", [x], {"size": 5, "alpha": 1e-4, "beta": 0.75, "bias": 1.0}, name)


def inception(b: GraphBuilder, x: str, tag: str) -> str:
    c1, c3r, c3, c5r, c5, cp = INCEPTION[tag]
    p = f"inception_{tag}"
    y1 = _caffe_conv_relu(b, x, c1, 1, 1, p, "1x1")
    y3 = _caffe_conv_relu(b, _caffe_conv_relu(b, x, c3r, 1, 1, p, "3x3_reduce"), c3, 3, 1, p, "3x3")
    y5 = _caffe_conv_relu(b, _caffe_conv_relu(b, x, c5r, 1, 1, p, "5x5_reduce"), c5, 5, 1, p, "5x5")
    yp = _caffe_conv_relu(b, b.maxpool(x, 3, 1, pad=1, ceil=True, name=f"{p}/pool"), cp, 1, 1, p, "pool_proj")
    return b.concat([y1, y3, y5, yp], name=f"{p}/output")


def _googlenet(b: GraphBuilder, x: str) -> list[str]:
    x = _caffe_conv_relu(b, x, 64, 7, 2, "conv1", "7x7_s2")
    x = _lrn(b, b.maxpool(x, 3, 2, ceil=True, name="pool1/3x3_s2"), "pool1/norm1")
    x = _caffe_conv_relu(b, x, 64, 1, 1, "conv2", "3x3_reduce")
    x = _lrn(b, _caffe_conv_relu(b, x, 192, 3, 1, "conv2", "3x3"), "conv2/norm2")
    x = b.maxpool(x, 3, 2, ceil=True, name="pool2/3x3_s2")
    for tag in ("3a", "3b", "pool3", "4a", "4b", "4c", "4d", "4e", "pool4", "5a", "5b"):
        x = b.maxpool(x, 3, 2, ceil=True, name=f"{tag}/3x3_s2") if tag.startswith("pool") else inception(b, x, tag)
    x = b.avgpool(x, 7, 1, ceil=True, name="pool5/7x7_s1")
    x = b.op("Dropout", [x], {"ratio": 0.4}, "pool5/drop_7x7_s1")
    return [b.softmax(b.fc(x, 1000, name="loss3/classifier"), name="prob")]


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


# ---- seed 000: one convolution, 528 -> 256 channels at 14x14 ----------------------------------------


def _single_conv(k: int) -> Callable[[GraphBuilder, str], list[str]]:
    def build(b: GraphBuilder, x: str) -> list[str]:
        return [b.conv(x, 256, kernel=k, pad=k // 2, bias=False, name="conv1")]
    return build


# ---- registry ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ZooModel:
    fn: Callable[[GraphBuilder, str], list[str]]
    chw: tuple[int, int, int]  # default input channels, height, width
    description: str


_REGISTRY: dict[str, ZooModel] = {
    "resnet18": ZooModel(_resnet(basic_block, (2, 2, 2, 2)), (3, 224, 224),
                         "ResNet-18 (torchvision), basic blocks, 224x224, ~1.8 GMACs"),
    "resnet34": ZooModel(_resnet(basic_block, (3, 4, 6, 3)), (3, 224, 224),
                         "ResNet-34 (torchvision), basic blocks, 224x224, ~3.7 GMACs"),
    "resnet50": ZooModel(_resnet(bottleneck, (3, 4, 6, 3)), (3, 224, 224),
                         "ResNet-50 v1.5 (torchvision, stride on the 3x3), 224x224, ~4.1 GMACs"),
    "mobilenet_v1": ZooModel(_mobilenet_v1, (3, 224, 224),
                             "MobileNetV1 1.0, depthwise separable convs with ReLU, 224x224, ~0.57 GMACs"),
    "mobilenet_v2": ZooModel(_mobilenet_v2, (3, 224, 224),
                             "MobileNetV2 1.0 (torchvision), inverted residuals with ReLU6 as Clip, 224x224, "
                             "~0.30 GMACs"),
    "googlenet": ZooModel(_googlenet, (3, 224, 224),
                          "GoogLeNet / Inception v1 (BVLC Caffe deploy: LRN, ceil-mode pooling, Softmax), "
                          "224x224, ~1.6 GMACs"),
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
    "seed000_conv1x1": ZooModel(_single_conv(1), (528, 14, 14),
                                "seed 000: one 1x1 Convolution 528->256 channels at 14x14, no bias"),
    "seed000_conv3x3": ZooModel(_single_conv(3), (528, 14, 14),
                                "seed 000: one 3x3 Convolution (pad 1) 528->256 channels at 14x14, no bias"),
}


def names() -> list[str]:
    return list(_REGISTRY)


def _lookup(name: str) -> ZooModel:
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ModelError(f"unknown zoo model {name!r}; known models: {', '.join(_REGISTRY)}") from None


def describe(name: str) -> str:
    return _lookup(name).description


def build(name: str, batch: int = 1, input_hw: tuple[int, int] | None = None) -> Graph:
    """Build a zoo network with input "input" of shape (batch, C, H, W); input_hw overrides (H, W)."""
    model = _lookup(name)
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        raise ModelError(f"zoo model {name}: batch must be an integer >= 1, got {batch!r}")
    c, h, w = model.chw
    if input_hw is not None:
        try:
            h, w = (int(v) for v in input_hw)
        except (TypeError, ValueError):
            raise ModelError(f"zoo model {name}: input_hw must be two integers (H, W), got {input_hw!r}") from None
        if h < 1 or w < 1:
            raise ModelError(f"zoo model {name}: input_hw must be positive, got {input_hw!r}")
    b = GraphBuilder(name)
    x = b.input("input", (batch, c, h, w))
    try:
        outputs = model.fn(b, x)
        g = b.build(outputs)
        g.source = f"zoo:{name}"
        return g  # GraphBuilder inferred every shape and rejects empty ones (a too-small input_hw)
    except (ModelError, ValueError, IndexError, ZeroDivisionError) as e:
        msg = str(e).removeprefix(f"zoo:{name}: ")
        raise ModelError(f"zoo model {name} cannot be built at input {h}x{w}: {msg}") from None
