"""torchvision classifiers the torch2trt Jetson benchmarks time (AlexNet, VGG, SqueezeNet 1.1, deeper ResNets,
DenseNet-121, MNASNet 1.0), built layer by layer from the torchvision model definitions
(torchvision/models/{alexnet,vgg,squeezenet,resnet,densenet,mnasnet}.py): same channels, kernels, strides and
paddings, every Conv, BatchNormalization and activation a separate layer as an unfolded ONNX export has them.
Dropout is left out (an inference no-op that TensorRT removes); adaptive average pools that are identities at
224x224 (AlexNet 6x6, VGG 7x7) are left out too."""
from __future__ import annotations

from ..ir import GraphBuilder
from .blocks import ZooModel, conv_bn, conv_bn_act
from .classifiers import _resnet, bottleneck, classifier


def _conv_relu(b: GraphBuilder, x: str, c: int, k: int, name: str, stride: int = 1, pad: int | None = None) -> str:
    return b.relu(b.conv(x, c, kernel=k, stride=stride, pad=pad, name=name), name=f"{name}.relu")


def _fc_head(b: GraphBuilder, x: str, hidden: int, classes: int = 1000) -> str:
    """AlexNet/VGG classifier: flatten, FC-ReLU, FC-ReLU, FC (indices as torchvision's nn.Sequential)."""
    x = b.flatten(x, name="flatten")
    x = b.relu(b.fc(x, hidden, name="classifier.1"), name="classifier.2")
    x = b.relu(b.fc(x, hidden, name="classifier.4"), name="classifier.5")
    return b.fc(x, classes, name="classifier.6")


def _alexnet(b: GraphBuilder, x: str) -> list[str]:
    x = _conv_relu(b, x, 64, 11, "features.0", stride=4, pad=2)
    x = b.maxpool(x, 3, 2, name="features.2")
    x = _conv_relu(b, x, 192, 5, "features.3", pad=2)
    x = b.maxpool(x, 3, 2, name="features.5")
    x = _conv_relu(b, x, 384, 3, "features.6")
    x = _conv_relu(b, x, 256, 3, "features.8")
    x = _conv_relu(b, x, 256, 3, "features.10")
    x = b.maxpool(x, 3, 2, name="features.12")
    return [_fc_head(b, x, 4096)]


VGG = {"vgg16": (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"),
       "vgg19": (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
                 512, 512, 512, 512, "M")}


def _vgg(cfg: tuple):
    def build(b: GraphBuilder, x: str) -> list[str]:
        i = 0
        for v in cfg:
            if v == "M":
                x = b.maxpool(x, 2, 2, name=f"features.{i}")
                i += 1
            else:
                x = _conv_relu(b, x, v, 3, f"features.{i}")
                i += 2
        return [_fc_head(b, x, 4096)]
    return build


def _fire(b: GraphBuilder, x: str, squeeze: int, expand: int, p: str) -> str:
    s = _conv_relu(b, x, squeeze, 1, f"{p}.squeeze")
    return b.concat([_conv_relu(b, s, expand, 1, f"{p}.expand1x1"), _conv_relu(b, s, expand, 3, f"{p}.expand3x3")],
                    name=f"{p}.cat")


def _squeezenet1_1(b: GraphBuilder, x: str) -> list[str]:
    x = _conv_relu(b, x, 64, 3, "features.0", stride=2, pad=0)
    fires = {3: (16, 64), 4: (16, 64), 6: (32, 128), 7: (32, 128), 9: (48, 192), 10: (48, 192), 11: (64, 256),
             12: (64, 256)}
    for i in range(2, 13):
        if i in (2, 5, 8):
            x = b.maxpool(x, 3, 2, ceil=True, name=f"features.{i}")
        else:
            x = _fire(b, x, *fires[i], f"features.{i}")
    x = _conv_relu(b, x, 1000, 1, "classifier.1")
    return [b.flatten(b.global_avgpool(x, name="classifier.3"), name="flatten")]


def _densenet121(b: GraphBuilder, x: str) -> list[str]:
    growth, bn_size = 32, 4
    x = conv_bn_act(b, x, 64, 7, 2, "relu", "features.conv0", "features.norm0", "features.relu0")
    x = b.maxpool(x, 3, 2, pad=1, name="features.pool0")
    for i, n in enumerate((6, 12, 24, 16), start=1):
        feats = [x]
        for j in range(1, n + 1):
            p = f"features.denseblock{i}.denselayer{j}"
            y = b.concat(feats, name=f"{p}.cat") if len(feats) > 1 else feats[0]
            y = b.relu(b.bn(y, name=f"{p}.norm1"), name=f"{p}.relu1")
            y = b.conv(y, bn_size * growth, 1, bias=False, name=f"{p}.conv1")
            y = b.relu(b.bn(y, name=f"{p}.norm2"), name=f"{p}.relu2")
            feats.append(b.conv(y, growth, 3, bias=False, name=f"{p}.conv2"))
        x = b.concat(feats, name=f"features.denseblock{i}.cat")
        if i < 4:
            p = f"features.transition{i}"
            x = b.relu(b.bn(x, name=f"{p}.norm"), name=f"{p}.relu")
            x = b.conv(x, b.shape(x)[1] // 2, 1, bias=False, name=f"{p}.conv")
            x = b.avgpool(x, 2, 2, name=f"{p}.pool")
    x = b.relu(b.bn(x, name="features.norm5"), name="features.relu5")
    return [classifier(b, x)]


# MNASNet 1.0 stacks: (out channels, kernel, stride, expansion, repeats) after the 16-channel stem
MNASNET = ((24, 3, 2, 3, 3), (40, 5, 2, 3, 3), (80, 5, 2, 6, 3), (96, 3, 1, 6, 2), (192, 5, 2, 6, 4),
           (320, 3, 1, 6, 1))


def _mnas_block(b: GraphBuilder, x: str, c: int, k: int, s: int, t: int, p: str) -> str:
    cin = b.shape(x)[1]
    y = conv_bn_act(b, x, cin * t, 1, 1, "relu", f"{p}.layers.0", f"{p}.layers.1", f"{p}.layers.2")
    y = conv_bn_act(b, y, cin * t, k, s, "relu", f"{p}.layers.3", f"{p}.layers.4", f"{p}.layers.5", groups=cin * t)
    y = conv_bn(b, y, c, 1, 1, f"{p}.layers.6", f"{p}.layers.7")
    return b.add(y, x, name=f"{p}.add") if s == 1 and cin == c else y


def _mnasnet1_0(b: GraphBuilder, x: str) -> list[str]:
    x = conv_bn_act(b, x, 32, 3, 2, "relu", "layers.0", "layers.1", "layers.2")
    x = conv_bn_act(b, x, 32, 3, 1, "relu", "layers.3", "layers.4", "layers.5", groups=32)
    x = conv_bn(b, x, 16, 1, 1, "layers.6", "layers.7")
    for i, (c, k, s, t, n) in enumerate(MNASNET, start=8):
        for j in range(n):
            x = _mnas_block(b, x, c, k, s if j == 0 else 1, t, f"layers.{i}.{j}")
    x = conv_bn_act(b, x, 1280, 1, 1, "relu", "layers.14", "layers.15", "layers.16")
    return [classifier(b, x)]


MODELS: dict[str, ZooModel] = {
    "alexnet": ZooModel(_alexnet, (3, 224, 224), "AlexNet (torchvision), 5 convs + 3 FC (58M FC weights), 224x224, "
                        "~0.71 GMACs"),
    "vgg16": ZooModel(_vgg(VGG["vgg16"]), (3, 224, 224),
                      "VGG-16 (torchvision, no BN), 13 convs + 3 FC (124M FC weights), 224x224, ~15.5 GMACs"),
    "vgg19": ZooModel(_vgg(VGG["vgg19"]), (3, 224, 224),
                      "VGG-19 (torchvision, no BN), 16 convs + 3 FC, 224x224, ~19.6 GMACs"),
    "squeezenet1_1": ZooModel(_squeezenet1_1, (3, 224, 224),
                              "SqueezeNet 1.1 (torchvision), Fire modules, conv classifier, 224x224, ~0.35 GMACs"),
    "resnet101": ZooModel(_resnet(bottleneck, (3, 4, 23, 3)), (3, 224, 224),
                          "ResNet-101 (torchvision v1.5), 224x224, ~7.8 GMACs"),
    "resnet152": ZooModel(_resnet(bottleneck, (3, 8, 36, 3)), (3, 224, 224),
                          "ResNet-152 (torchvision v1.5), 224x224, ~11.5 GMACs"),
    "densenet121": ZooModel(_densenet121, (3, 224, 224),
                            "DenseNet-121 (torchvision), growth 32, BN-ReLU-Conv layers, 224x224, ~2.9 GMACs"),
    "mnasnet1_0": ZooModel(_mnasnet1_0, (3, 224, 224),
                           "MNASNet 1.0 (torchvision), inverted residuals with 3x3/5x5 depthwise, 224x224, "
                           "~0.31 GMACs"),
}
