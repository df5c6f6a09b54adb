"""Inception-v4 (Szegedy, Ioffe, Vanhoucke, Alemi, "Inception-v4, Inception-ResNet and the Impact of Residual
Connections on Learning", AAAI 2017, figures 3-9), in the layout of tensorflow/models research/slim/nets/
inception_v4.py, which the public Caffe deploy files of Inception-v4 follow: stem (3x3 convs, Mixed_3a/4a/5a),
4 x Inception-A (35x35), Reduction-A, 7 x Inception-B (17x17, 1x7/7x1 factorised convs), Reduction-B,
3 x Inception-C (8x8, 1x3/3x1 splits), global average pool and a 1000-class FC (Caffe; slim has 1001). Every
conv is Conv (no bias) + BatchNormalization + ReLU; 'VALID' convs and pools have no padding, the others 'same'.
149 convs; about 12.3 GMACs and 42.7M parameters at 299x299 (the paper's and slim's figures). Layer names are
slim's scopes ("Mixed_6b/Branch_2/Conv2d_0c_1x7").
"""
from __future__ import annotations

from ..ir import GraphBuilder
from .blocks import ZooModel
from .classifiers import classifier


def _conv(b: GraphBuilder, x: str, c: int, k, s: int = 1, valid: bool = False, name: str = "conv") -> str:
    """slim.conv2d: Conv (no bias) + BatchNorm + ReLU; k an int or (kh, kw)."""
    kh, kw = (k, k) if isinstance(k, int) else k
    y = b.conv(x, c, kernel=(kh, kw), stride=s, pad=0 if valid else None, bias=False, name=name)
    return b.relu(b.bn(y, name=f"{name}/BatchNorm"), name=f"{name}/Relu")


def _maxpool(b: GraphBuilder, x: str, name: str) -> str:
    return b.maxpool(x, 3, 2, name=name)   # 3x3 stride 2 VALID


def _avgpool(b: GraphBuilder, x: str, name: str) -> str:
    return b.avgpool(x, 3, 1, pad=1, name=name)   # 3x3 stride 1 SAME


def _stem(b: GraphBuilder, x: str) -> str:
    x = _conv(b, x, 32, 3, 2, True, "Conv2d_1a_3x3")
    x = _conv(b, x, 32, 3, 1, True, "Conv2d_2a_3x3")
    x = _conv(b, x, 64, 3, 1, False, "Conv2d_2b_3x3")
    x = b.concat([_maxpool(b, x, "Mixed_3a/Branch_0/MaxPool_0a_3x3"),
                  _conv(b, x, 96, 3, 2, True, "Mixed_3a/Branch_1/Conv2d_0a_3x3")], name="Mixed_3a/concat")
    p = "Mixed_4a"
    b0 = _conv(b, _conv(b, x, 64, 1, name=f"{p}/Branch_0/Conv2d_0a_1x1"), 96, 3, 1, True,
               f"{p}/Branch_0/Conv2d_1a_3x3")
    b1 = _conv(b, x, 64, 1, name=f"{p}/Branch_1/Conv2d_0a_1x1")
    b1 = _conv(b, b1, 64, (1, 7), name=f"{p}/Branch_1/Conv2d_0b_1x7")
    b1 = _conv(b, b1, 64, (7, 1), name=f"{p}/Branch_1/Conv2d_0c_7x1")
    b1 = _conv(b, b1, 96, 3, 1, True, f"{p}/Branch_1/Conv2d_1a_3x3")
    x = b.concat([b0, b1], name=f"{p}/concat")
    return b.concat([_conv(b, x, 192, 3, 2, True, "Mixed_5a/Branch_0/Conv2d_1a_3x3"),
                     _maxpool(b, x, "Mixed_5a/Branch_1/MaxPool_1a_3x3")], name="Mixed_5a/concat")


def _chain(b: GraphBuilder, x: str, p: str, steps: list[tuple[int, object, str]]) -> str:
    """Convs one after another: (channels, kernel, scope suffix)."""
    for c, k, s in steps:
        x = _conv(b, x, c, k, name=f"{p}/{s}")
    return x


def _inception_a(b: GraphBuilder, x: str, p: str) -> str:
    return b.concat([
        _conv(b, x, 96, 1, name=f"{p}/Branch_0/Conv2d_0a_1x1"),
        _chain(b, x, f"{p}/Branch_1", [(64, 1, "Conv2d_0a_1x1"), (96, 3, "Conv2d_0b_3x3")]),
        _chain(b, x, f"{p}/Branch_2", [(64, 1, "Conv2d_0a_1x1"), (96, 3, "Conv2d_0b_3x3"), (96, 3, "Conv2d_0c_3x3")]),
        _conv(b, _avgpool(b, x, f"{p}/Branch_3/AvgPool_0a_3x3"), 96, 1, name=f"{p}/Branch_3/Conv2d_0b_1x1"),
    ], name=f"{p}/concat")


def _reduction_a(b: GraphBuilder, x: str, p: str = "Mixed_6a") -> str:
    b1 = _chain(b, x, f"{p}/Branch_1", [(192, 1, "Conv2d_0a_1x1"), (224, 3, "Conv2d_0b_3x3")])
    return b.concat([_conv(b, x, 384, 3, 2, True, f"{p}/Branch_0/Conv2d_1a_3x3"),
                     _conv(b, b1, 256, 3, 2, True, f"{p}/Branch_1/Conv2d_1a_3x3"),
                     _maxpool(b, x, f"{p}/Branch_2/MaxPool_1a_3x3")], name=f"{p}/concat")


def _inception_b(b: GraphBuilder, x: str, p: str) -> str:
    return b.concat([
        _conv(b, x, 384, 1, name=f"{p}/Branch_0/Conv2d_0a_1x1"),
        _chain(b, x, f"{p}/Branch_1", [(192, 1, "Conv2d_0a_1x1"), (224, (1, 7), "Conv2d_0b_1x7"),
                                        (256, (7, 1), "Conv2d_0c_7x1")]),
        _chain(b, x, f"{p}/Branch_2", [(192, 1, "Conv2d_0a_1x1"), (192, (7, 1), "Conv2d_0b_7x1"),
                                        (224, (1, 7), "Conv2d_0c_1x7"), (224, (7, 1), "Conv2d_0d_7x1"),
                                        (256, (1, 7), "Conv2d_0e_1x7")]),
        _conv(b, _avgpool(b, x, f"{p}/Branch_3/AvgPool_0a_3x3"), 128, 1, name=f"{p}/Branch_3/Conv2d_0b_1x1"),
    ], name=f"{p}/concat")


def _reduction_b(b: GraphBuilder, x: str, p: str = "Mixed_7a") -> str:
    b0 = _conv(b, x, 192, 1, name=f"{p}/Branch_0/Conv2d_0a_1x1")
    b1 = _chain(b, x, f"{p}/Branch_1", [(256, 1, "Conv2d_0a_1x1"), (256, (1, 7), "Conv2d_0b_1x7"),
                                         (320, (7, 1), "Conv2d_0c_7x1")])
    return b.concat([_conv(b, b0, 192, 3, 2, True, f"{p}/Branch_0/Conv2d_1a_3x3"),
                     _conv(b, b1, 320, 3, 2, True, f"{p}/Branch_1/Conv2d_1a_3x3"),
                     _maxpool(b, x, f"{p}/Branch_2/MaxPool_1a_3x3")], name=f"{p}/concat")


def _split_1x3_3x1(b: GraphBuilder, x: str, p: str, a: str, c: str) -> list[str]:
    return [_conv(b, x, 256, (1, 3), name=f"{p}/{a}_1x3"), _conv(b, x, 256, (3, 1), name=f"{p}/{c}_3x1")]


def _inception_c(b: GraphBuilder, x: str, p: str) -> str:
    b1 = _conv(b, x, 384, 1, name=f"{p}/Branch_1/Conv2d_0a_1x1")
    b2 = _chain(b, x, f"{p}/Branch_2", [(384, 1, "Conv2d_0a_1x1"), (448, (3, 1), "Conv2d_0b_3x1"),
                                         (512, (1, 3), "Conv2d_0c_1x3")])
    return b.concat([
        _conv(b, x, 256, 1, name=f"{p}/Branch_0/Conv2d_0a_1x1"),
        *_split_1x3_3x1(b, b1, f"{p}/Branch_1", "Conv2d_0b", "Conv2d_0c"),
        *_split_1x3_3x1(b, b2, f"{p}/Branch_2", "Conv2d_0d", "Conv2d_0e"),
        _conv(b, _avgpool(b, x, f"{p}/Branch_3/AvgPool_0a_3x3"), 256, 1, name=f"{p}/Branch_3/Conv2d_0b_1x1"),
    ], name=f"{p}/concat")


def _inception_v4(b: GraphBuilder, x: str) -> list[str]:
    x = _stem(b, x)
    for i in "bcde":
        x = _inception_a(b, x, f"Mixed_5{i}")
    x = _reduction_a(b, x)
    for i in "bcdefgh":
        x = _inception_b(b, x, f"Mixed_6{i}")
    x = _reduction_b(b, x)
    for i in "bcd":
        x = _inception_c(b, x, f"Mixed_7{i}")
    return [classifier(b, x)]


MODELS: dict[str, ZooModel] = {
    "inception_v4": ZooModel(_inception_v4, (3, 299, 299),
                             "Inception-v4 (Szegedy et al. 2017, slim/Caffe layout): stem, 4 A + 7 B + 3 C blocks, "
                             "149 convs, 299x299, ~12.3 GMACs"),
}
