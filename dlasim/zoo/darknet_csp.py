"""Scaled-YOLOv4 CSP networks in their Darknet .cfg form (AlexeyAB/darknet cfg/yolov4-csp.cfg and
cfg/yolov4x-mish.cfg; Wang, Bochkovskiy, Liao, "Scaled-YOLOv4: Scaling Cross Stage Partial Network", CVPR 2021,
whose PyTorch definitions are WongKinYiu/ScaledYOLOv4 models/yolov4-csp.yaml and yolov4-csp-x.yaml).

Backbone: CSPDarknet53 (stem 3x3, one plain residual stage, then four CSP stages of 2, 8, 8, 4 residual
blocks). Neck: SPPCSP (CSP around maxpool 5/9/13) and a PAN of CSP2 blocks (two plain 1x1/3x3 pairs, no
shortcut). Three heads (3x3 conv, then a 1x1 output conv of 255 channels with bias) at strides 8/16/32. Every
conv is Conv + BatchNormalization + Mish; the output convs have activation=logistic in these cfgs (the [yolo]
layers use new_coords=1, so the sigmoid is part of the network). yolov4x-mish is the same graph widened 1.25x
(32 -> 40 ... 1024 -> 1280) and deepened 1.33x (residual blocks 1, 3, 11, 11, 5; CSP2 blocks 3 pairs).
The [yolo] decode and NMS (TensorRT yolo_layer plugin, host) are not modelled. Layer names are cfg indices.
AlexeyAB/darknet README figures: yolov4-csp 512x512 77 BFLOPs (about 39 GMACs) with 202 MB of FP32 weights
(52.9M parameters); yolov4x-mish 640x640 221 BFLOPs (about 110 GMACs), 381 MB (about 99.9M parameters).
yolov4-csp here matches both (38.5 GMACs, 53.0M). yolov4x-mish here has 113.3 GMACs and 97.0M parameters, 2.5%
above and 3% below those figures: the 1.25x/1.33x scaling is read from yolov4-csp-x.yaml, and the cfg itself
was not at hand to find the difference.
"""
from __future__ import annotations

from typing import Callable

from ..ir import GraphBuilder
from .blocks import ZooModel
from .darknet import _Cfg


def _csp_stage(d: _Cfg, x: str, c: int, n: int) -> str:
    """3x3 s2 downsample (c), 1x1 part (c/2), [route -2], 1x1 (c/2), n residual (1x1, 3x3, shortcut), 1x1,
    [route -1,-k] with the part, 1x1 transition (c)."""
    x = d.conv(x, c, 3, 2)
    part = d.conv(x, c // 2, 1)
    d.route([x])
    y = d.conv(x, c // 2, 1)
    for _ in range(n):
        y = d.shortcut(y, d.conv(d.conv(y, c // 2, 1), c // 2, 3))
    y = d.route([d.conv(y, c // 2, 1), part])
    return d.conv(y, c, 1)


def _spp_csp(d: _Cfg, x: str, c: int) -> str:
    """SPPCSP: 1x1 part, [route -2], 1x1, 3x3, 1x1, maxpool 5/9/13 (stride 1) routed with their input, 1x1, 3x3,
    [route] with the part, 1x1."""
    part = d.conv(x, c, 1)
    d.route([x])
    y = d.conv(d.conv(d.conv(x, c, 1), c, 3), c, 1)
    p5 = d.maxpool(y, 5, 1)
    d.route([y])
    p9 = d.maxpool(y, 9, 1)
    d.route([y])
    p13 = d.maxpool(y, 13, 1)
    y = d.conv(d.conv(d.route([p13, p9, p5, y]), c, 1), c, 3)
    return d.conv(d.route([y, part]), c, 1)


def _csp2(d: _Cfg, x: str, c: int, n: int) -> str:
    """CSP2 (no shortcut): 1x1 (c), 1x1 part, [route -2], n plain pairs (1x1, 3x3), [route] with the part, 1x1."""
    x1 = d.conv(x, c, 1)
    part = d.conv(x1, c, 1)
    y = d.route([x1])
    for _ in range(n):
        y = d.conv(d.conv(y, c, 1), c, 3)
    return d.conv(d.route([y, part]), c, 1)


def _yolov4_csp(width: tuple[int, ...], blocks: tuple[int, ...], pairs: int) -> Callable[[GraphBuilder, str],
                                                                                          list[str]]:
    """width: the stem and the five stage widths (yolov4-csp 32, 64, 128, 256, 512, 1024); blocks: residual blocks
    per stage; pairs: plain 1x1/3x3 pairs in each CSP2 block of the neck."""
    w0, w1, w2, w3, w4, w5 = width

    def build(b: GraphBuilder, x: str) -> list[str]:
        d = _Cfg(b, "mish")
        x = d.conv(d.conv(x, w0, 3), w1, 3, 2)
        for _ in range(blocks[0]):
            x = d.shortcut(x, d.conv(d.conv(x, w1 // 2, 1), w1, 3))
        c3 = _csp_stage(d, _csp_stage(d, x, w2, blocks[1]), w3, blocks[2])
        c4 = _csp_stage(d, c3, w4, blocks[3])
        p5 = _spp_csp(d, _csp_stage(d, c4, w5, blocks[4]), w4)
        up = d.upsample(d.conv(p5, w3, 1))
        d.route([c4])
        p4 = _csp2(d, d.route([d.conv(c4, w3, 1), up]), w3, pairs)
        up = d.upsample(d.conv(p4, w2, 1))
        d.route([c3])
        p3 = _csp2(d, d.route([d.conv(c3, w2, 1), up]), w2, pairs)
        outs = [d.out(d.conv(p3, w3, 3), logistic=True)]
        d.yolo()
        for lateral, c in ((p4, w3), (p5, w4)):
            d.route([p3])
            p3 = _csp2(d, d.route([d.conv(p3, c, 3, 2), lateral]), c, pairs)
            outs.append(d.out(d.conv(p3, 2 * c, 3), logistic=True))
            d.yolo()
        return outs
    return build


MODELS: dict[str, ZooModel] = {
    "yolov4_csp": ZooModel(_yolov4_csp((32, 64, 128, 256, 512, 1024), (1, 2, 8, 8, 4), 2), (3, 512, 512),
                           "YOLOv4-CSP (Darknet yolov4-csp.cfg, Scaled-YOLOv4): CSPDarknet53 + SPPCSP + CSP PAN, "
                           "Mish, logistic outputs, 512x512, ~39 GMACs (YOLO decode/NMS not modelled)"),
    "yolov4x_mish": ZooModel(_yolov4_csp((40, 80, 160, 320, 640, 1280), (1, 3, 11, 11, 5), 3), (3, 640, 640),
                             "YOLOv4x-Mish (Darknet yolov4x-mish.cfg): YOLOv4-CSP widened 1.25x and deepened "
                             "1.33x, Mish, 640x640, ~113 GMACs (YOLO decode/NMS not modelled)"),
}
