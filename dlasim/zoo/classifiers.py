"""Classifiers: ResNet, MobileNet V1/V2, GoogLeNet, and torchvision AlexNet, VGG-16/19, SqueezeNet 1.1,
DenseNet-121, MnasNet 1.0."""
from __future__ import annotations

from typing import Callable

from ..ir import GraphBuilder
from .blocks import ZooModel, conv_bn, conv_bn_act

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


# ---- torchvision AlexNet, VGG, SqueezeNet 1.1 (torchvision.models definitions, 224x224) -----------------


MODELS: dict[str, ZooModel] = {
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
}
