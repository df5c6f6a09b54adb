"""Darknet YOLO networks from their public .cfg files (AlexeyAB/darknet cfg/): YOLOv3, YOLOv3-SPP, YOLOv3-tiny,
YOLOv4-tiny. Every [convolutional] layer is Conv + BatchNormalization + LeakyReLU(0.1) except the linear 1x1
output convs that feed a [yolo] layer (255 = 3 anchors x (80 classes + 5), with bias). The [yolo] decode and NMS
run outside the network (TensorRT yolo_layer plugin / host) and are not modelled. Layer names are the cfg's
layer indices ("conv_12", "maxpool_9"), as Darknet-to-ONNX converters name them.
"""
from __future__ import annotations

from ..ir import GraphBuilder
from .blocks import ZooModel, conv_bn_act

YOLO_OUT = 255  # 3 anchors x (80 COCO classes + 4 box + 1 objectness)


class _Cfg:
    """Numbers the layers as a .cfg does, so names follow the cfg index."""

    def __init__(self, b: GraphBuilder, kind: str = "leaky"):
        self.b, self.i, self.kind = b, -1, kind

    def _next(self) -> int:
        self.i += 1
        return self.i

    def conv(self, x: str, c: int, k: int, s: int = 1) -> str:
        i = self._next()
        return conv_bn_act(self.b, x, c, k, s, self.kind, f"conv_{i}", f"bn_{i}", f"{self.kind}_{i}")

    def out(self, x: str, logistic: bool = False) -> str:
        """The 1x1 output conv (bias, no BN) before a [yolo] layer; logistic=True: activation=logistic."""
        i = self._next()
        y = self.b.conv(x, YOLO_OUT, kernel=1, bias=True, name=f"conv_{i}")
        return self.b.sigmoid(y, name=f"logistic_{i}") if logistic else y

    def yolo(self) -> None:
        self._next()  # the [yolo] layer: decode on the plugin/host, nothing in the graph

    def maxpool(self, x: str, size: int, stride: int) -> str:
        i = self._next()
        if size == 2 and stride == 1:  # darknet pads right/bottom so the map keeps its size
            return self.b.op("MaxPool", [x], {"kernel_shape": [2, 2], "strides": [1, 1], "pads": [0, 0, 1, 1],
                                              "ceil_mode": 0}, f"maxpool_{i}")
        return self.b.maxpool(x, size, stride, pad=(size - 1) // 2 if stride == 1 else 0, name=f"maxpool_{i}")

    def route(self, xs: list[str]) -> str:
        i = self._next()
        return xs[0] if len(xs) == 1 else self.b.concat(xs, name=f"route_{i}")

    def half(self, x: str) -> str:
        """[route] groups=2 group_id=1: the second half of the channels."""
        i = self._next()
        c = self.b.shape(x)[1]
        return self.b.split(x, [c // 2, c // 2], name=f"route_{i}")[1]

    def shortcut(self, x: str, y: str) -> str:
        i = self._next()
        return self.b.add(x, y, name=f"shortcut_{i}")

    def upsample(self, x: str) -> str:
        i = self._next()
        return self.b.resize(x, 2, name=f"upsample_{i}")


def _darknet53(d: _Cfg, x: str) -> tuple[str, str, str]:
    """Darknet-53 (yolov3.cfg layers 0-74): returns the 256-, 512- and 1024-channel maps (layers 36, 61, 74)."""
    x = d.conv(x, 32, 3)
    feats = []
    for c, n in ((64, 1), (128, 2), (256, 8), (512, 8), (1024, 4)):
        x = d.conv(x, c, 3, 2)
        for _ in range(n):
            x = d.shortcut(x, d.conv(d.conv(x, c // 2, 1), c, 3))
        feats.append(x)
    return feats[2], feats[3], feats[4]


def _yolov3(spp: bool):
    def build(b: GraphBuilder, x: str) -> list[str]:
        d = _Cfg(b)
        c3, c4, x = _darknet53(d, x)
        x = d.conv(d.conv(d.conv(x, 512, 1), 1024, 3), 512, 1)
        if spp:  # yolov3-spp.cfg: maxpool 5/9/13 (stride 1) and a route of the four maps
            p5 = d.maxpool(x, 5, 1)
            d.route([x])
            p9 = d.maxpool(x, 9, 1)
            d.route([x])
            p13 = d.maxpool(x, 13, 1)
            x = d.route([p13, p9, p5, x])
            x = d.conv(d.conv(d.conv(x, 512, 1), 1024, 3), 512, 1)
        else:
            x = d.conv(d.conv(x, 1024, 3), 512, 1)
        branch = x
        outs = [d.out(d.conv(x, 1024, 3))]
        d.yolo()
        for c, lateral in ((256, c4), (128, c3)):
            d.route([branch])
            x = d.route([d.upsample(d.conv(branch, c, 1)), lateral])
            x = d.conv(d.conv(d.conv(d.conv(d.conv(x, c, 1), 2 * c, 3), c, 1), 2 * c, 3), c, 1)
            branch = x
            outs.append(d.out(d.conv(x, 2 * c, 3)))
            d.yolo()
        return outs
    return build


def _tiny_heads(d: _Cfg, branch: str, lateral: str) -> list[str]:
    """The two heads of the tiny cfgs: 3x3 (512) + 1x1 head + yolo on `branch`; route back to it, 1x1 (128),
    upsample, route with `lateral`, 3x3 (256) + 1x1 head + yolo."""
    outs = [d.out(d.conv(branch, 512, 3))]
    d.yolo()
    d.route([branch])
    x = d.route([d.upsample(d.conv(branch, 128, 1)), lateral])
    outs.append(d.out(d.conv(x, 256, 3)))
    d.yolo()
    return outs


def _yolov3_tiny(b: GraphBuilder, x: str) -> list[str]:
    d = _Cfg(b)
    for c in (16, 32, 64, 128):
        x = d.maxpool(d.conv(x, c, 3), 2, 2)
    c8 = d.conv(x, 256, 3)                                  # layer 8
    x = d.maxpool(d.conv(d.maxpool(c8, 2, 2), 512, 3), 2, 1)
    branch = d.conv(d.conv(x, 1024, 3), 256, 1)             # layer 13
    return _tiny_heads(d, branch, c8)


def _csp_tiny(d: _Cfg, x: str, c: int) -> tuple[str, str]:
    """yolov4-tiny CSP block: 3x3 conv (c), its second channel half -> two 3x3 (c/2), concat, 1x1 (c), concat
    with the first conv, 2x2 maxpool. Returns (pooled, the 1x1 output)."""
    full = d.conv(x, c, 3)
    a = d.conv(d.half(full), c // 2, 3)
    y = d.conv(d.route([d.conv(a, c // 2, 3), a]), c, 1)
    return d.maxpool(d.route([full, y]), 2, 2), y


def _yolov4_tiny(b: GraphBuilder, x: str) -> list[str]:
    d = _Cfg(b)
    x = d.conv(d.conv(x, 32, 3, 2), 64, 3, 2)
    x, _ = _csp_tiny(d, x, 64)
    x, _ = _csp_tiny(d, x, 128)
    x, lateral = _csp_tiny(d, x, 256)                       # lateral = layer 23
    branch = d.conv(d.conv(x, 512, 3), 256, 1)              # layer 27
    return _tiny_heads(d, branch, lateral)


MODELS: dict[str, ZooModel] = {
    "yolov3": ZooModel(_yolov3(False), (3, 416, 416),
                       "YOLOv3 (Darknet yolov3.cfg): Darknet-53 + FPN, 3 heads, LeakyReLU, 416x416, "
                       "~33 GMACs (YOLO decode/NMS not modelled)"),
    "yolov3_spp": ZooModel(_yolov3(True), (3, 608, 608),
                           "YOLOv3-SPP (Darknet yolov3-spp.cfg): YOLOv3 with SPP (maxpool 5/9/13) before the "
                           "first head, LeakyReLU, 608x608, ~71 GMACs"),
    "yolov3_tiny": ZooModel(_yolov3_tiny, (3, 416, 416),
                            "YOLOv3-tiny (Darknet yolov3-tiny.cfg): 7 conv + 6 maxpool backbone, 2 heads, "
                            "LeakyReLU, 416x416, ~2.8 GMACs"),
    "yolov4_tiny": ZooModel(_yolov4_tiny, (3, 416, 416),
                            "YOLOv4-tiny (Darknet yolov4-tiny.cfg): CSP tiny blocks (channel-half route), "
                            "2 heads, LeakyReLU, 416x416, ~3.5 GMACs"),
}
