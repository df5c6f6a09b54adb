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

from typing import Callable

from ..errors import ModelError, did_you_mean
from ..ir import Graph, GraphBuilder
from . import classifiers, darknet, darknet_csp, dense_nets, detectors, inception, quantized, retinanet, torchvision_nets
from .blocks import ZooModel

# ---- seed 000: one convolution, 528 -> 256 channels at 14x14 ----------------------------------------


def _single_conv(k: int) -> Callable[[GraphBuilder, str], list[str]]:
    def build(b: GraphBuilder, x: str) -> list[str]:
        return [b.conv(x, 256, kernel=k, pad=k // 2, bias=False, name="conv1")]
    return build


_REGISTRY: dict[str, ZooModel] = {
    **classifiers.MODELS,
    **detectors.MODELS,
    **darknet.MODELS,
    **darknet_csp.MODELS,
    **dense_nets.MODELS,
    **inception.MODELS,
    **quantized.MODELS,
    **retinanet.MODELS,
    **torchvision_nets.MODELS,
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
        hint = did_you_mean(name, list(_REGISTRY)) if isinstance(name, str) else ""
        raise ModelError(f"unknown zoo model {name!r}{hint}; known models: {', '.join(_REGISTRY)}") from None


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
