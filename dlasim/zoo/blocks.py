"""Blocks shared by the zoo networks and the record a zoo entry is."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..ir import GraphBuilder


@dataclass(frozen=True)
class ZooModel:
    fn: Callable[[GraphBuilder, str], list[str]]
    chw: tuple[int, int, int]  # default input channels, height, width
    description: str

# ---- shared blocks ---------------------------------------------------------------------------------


def act(b: GraphBuilder, x: str, kind: str, name: str) -> str:
    """One activation by short name: relu, relu6 (Clip), leaky (0.1), mish, silu (Sigmoid+Mul), hswish
    (HardSwish), linear."""
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
    if kind == "hswish":
        return b.op("HardSwish", [x], name=name)
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
