"""Hypothesis strategies for random valid networks built with GraphBuilder (shared with benchmarks/fuzz.py).

A network is a plan: an input shape and a list of blocks (conv, pool, elementwise, concat of two conv
branches); `build(plan)` turns it into a Graph, skipping blocks that the current spatial size cannot take,
so every drawn plan is a valid network.
"""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from dlasim import GraphBuilder

PLATFORMS = ("xavier-agx", "orin-agx", "orin-agx:15w", "a100", "h200")
PRECISIONS = ("fp32", "fp16", "int8", "best")
DEVICES = ("dla", "gpu")


@dataclass(frozen=True)
class Block:
    kind: str                 # conv | dwconv | maxpool | avgpool | relu | add | concat | gap
    channels: int = 8
    kernel: int = 1
    stride: int = 1


@dataclass(frozen=True)
class NetPlan:
    batch: int
    channels: int
    size: int
    blocks: tuple[Block, ...]


channels = st.integers(1, 96)
blocks = st.one_of(
    st.builds(Block, st.sampled_from(["conv"]), channels, st.sampled_from([1, 3, 5, 7]), st.sampled_from([1, 2])),
    st.builds(Block, st.just("dwconv"), st.just(0), st.sampled_from([3, 5]), st.sampled_from([1, 2])),
    st.builds(Block, st.sampled_from(["maxpool", "avgpool"]), st.just(0), st.sampled_from([2, 3]),
              st.sampled_from([1, 2])),
    st.builds(Block, st.sampled_from(["relu", "add", "gap"])),
    st.builds(Block, st.just("concat"), channels),
)
plans = st.builds(NetPlan, st.integers(1, 4), channels, st.sampled_from([4, 7, 8, 14, 16, 28, 32]),
                  st.lists(blocks, min_size=1, max_size=7).map(tuple))


def build(plan: NetPlan, batch: int | None = None):
    """The Graph of `plan` (at `batch` when given)."""
    b = GraphBuilder("random")
    x = b.input("x", (batch or plan.batch, plan.channels, plan.size, plan.size))
    for i, blk in enumerate(plan.blocks):
        _, c, h, _ = b.shape(x)
        if blk.kind in ("conv", "dwconv"):
            if blk.kind == "conv":
                x = b.conv(x, blk.channels, kernel=blk.kernel, stride=blk.stride, name=f"conv{i}")
            else:
                x = b.conv(x, c, kernel=blk.kernel, stride=blk.stride, groups=c, name=f"dw{i}")
        elif blk.kind in ("maxpool", "avgpool") and h >= blk.kernel:
            pool = b.maxpool if blk.kind == "maxpool" else b.avgpool
            x = pool(x, kernel=blk.kernel, stride=blk.stride, name=f"pool{i}")
        elif blk.kind == "relu":
            x = b.relu(x, name=f"relu{i}")
        elif blk.kind == "add":
            y = b.conv(x, c, kernel=3, name=f"branch{i}")
            x = b.add(x, y, name=f"add{i}")
        elif blk.kind == "concat":
            y = b.conv(x, blk.channels, kernel=1, name=f"left{i}")
            z = b.conv(x, max(1, blk.channels // 2), kernel=3, name=f"right{i}")
            x = b.concat([y, z], name=f"cat{i}")
        elif blk.kind == "gap" and i == len(plan.blocks) - 1:
            x = b.global_avgpool(x, name=f"gap{i}")
    return b.build([x])


configs = st.fixed_dictionaries({"hw": st.sampled_from(PLATFORMS), "device": st.sampled_from(DEVICES),
                                 "precision": st.sampled_from(PRECISIONS), "gpu_fallback": st.booleans(),
                                 "sparsity": st.sampled_from(["disable", "enable", "force"])})
