"""Search spaces the way NAS code describes a supernet: stages of blocks, with per-stage depth and width and
per-block kernel size, expansion ratio and activation; candidates encoded as rows of integers.

A candidate is one row of `space.n_columns` choice indices (`space.columns` names them): for every stage its
depth index and width index, then for every block slot (stage s, block j < max depth) its kernel, expansion
and activation indices. Slots past a stage's chosen depth are absent (their indices are ignored).

Two spaces follow published supernets:
- `mobilenet_v3_space()`: the Once-for-All MobileNetV3 space (Cai et al., ICLR 2020, "Once-for-All", s3.1
  and Fig. 3: 5 searched stages, depth {2,3,4}, kernel {3,5,7}, expansion {3,4,6}), with a width choice per
  stage and an activation choice per block (ReLU or HardSwish, the two MobileNetV3 uses; Howard et al.,
  ICCV 2019, s5.2).
- `resnet_space()`: the OFA ResNet-50 space (OFA repository, `ofa/imagenet_classification/elastic_nn/
  networks/ofa_resnets.py`: depth 2-4 blocks per stage (base + {0,1,2}), expand ratio {0.2, 0.25, 0.35} of
  the block's output width, width multiplier {0.65, 0.8, 1.0}), with an activation choice per block.
Activations that the DLA does not run (HardSwish, reference/dla.md s4.1) open a GPU island when placed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, GraphBuilder
from ..zoo.blocks import act as act_layer, conv_bn_act


@dataclass(frozen=True)
class Stage:
    """One searched stage: its blocks share the output width; the first block has the stage's stride."""
    widths: tuple[int, ...]          # output channels choices
    depths: tuple[int, ...]          # number of blocks choices
    stride: int
    kernels: tuple[int, ...] = (3,)
    expands: tuple[float, ...] = (1,)    # MBConv: hidden = in * e; bottleneck: mid = out * e
    acts: tuple[str, ...] = ("relu",)

    @property
    def max_depth(self) -> int:
        return max(self.depths)


@dataclass(frozen=True)
class Slot:
    """A unit of the network the latency table prices: the stem, one block position, or the head."""
    index: int                       # unit index (names of its layers start with f"u{index}.")
    stage: int                       # -1 stem, len(stages) head
    block: int


@dataclass(frozen=True)
class SearchSpace:
    name: str
    block: str                       # "mbconv" | "bottleneck"
    resolution: int
    stem_width: int
    stages: tuple[Stage, ...]
    head_width: int
    classes: int = 1000

    # ---- encoding ----------------------------------------------------------------------------------
    @property
    def columns(self) -> tuple[str, ...]:
        cols = []
        for s in range(len(self.stages)):
            cols += [f"s{s}.depth", f"s{s}.width"]
        for s, st in enumerate(self.stages):
            for j in range(st.max_depth):
                cols += [f"s{s}.b{j}.kernel", f"s{s}.b{j}.expand", f"s{s}.b{j}.act"]
        return tuple(cols)

    @property
    def n_columns(self) -> int:
        return 2 * len(self.stages) + 3 * sum(st.max_depth for st in self.stages)

    def column(self, name: str) -> int:
        return self.columns.index(name)

    def cardinalities(self) -> np.ndarray:
        """Number of choices of every column."""
        out = []
        for st in self.stages:
            out += [len(st.depths), len(st.widths)]
        for st in self.stages:
            out += [len(st.kernels), len(st.expands), len(st.acts)] * st.max_depth
        return np.array(out, dtype=np.int64)

    def sample(self, n: int, seed: int = 0) -> np.ndarray:
        """n candidates drawn uniformly per column (int64 array of shape (n, n_columns))."""
        rng = np.random.default_rng(seed)
        card = self.cardinalities()
        return (rng.random((n, len(card))) * card).astype(np.int64)

    def check(self, row) -> np.ndarray:
        row = np.asarray(row, dtype=np.int64)
        card = self.cardinalities()
        if row.shape != card.shape or (row < 0).any() or (row >= card).any():
            raise ValueError(f"{self.name}: a candidate is {len(card)} choice indices below {card.tolist()}, "
                             f"got {row.tolist()}")
        return row

    def decode(self, row) -> dict:
        """{"stages": [{"depth", "width", "blocks": [{"kernel", "expand", "act"}]}]} of one encoded row."""
        row = self.check(row)
        out = []
        base = 2 * len(self.stages)
        for s, st in enumerate(self.stages):
            d = st.depths[row[2 * s]]
            blocks = []
            for j in range(st.max_depth):
                k, e, a = row[base:base + 3]
                base += 3
                if j < d:
                    blocks.append({"kernel": st.kernels[k], "expand": st.expands[e], "act": st.acts[a]})
            out.append({"depth": d, "width": st.widths[row[2 * s + 1]], "blocks": blocks})
        return {"stages": out}

    def slots(self) -> list[Slot]:
        out = [Slot(0, -1, 0)]
        for s, st in enumerate(self.stages):
            out += [Slot(len(out), s, j) for j in range(st.max_depth)]
        out.append(Slot(len(out), len(self.stages), 0))
        return out

    # ---- building ----------------------------------------------------------------------------------
    def build(self, row, batch: int = 1, name: str | None = None) -> Graph:
        """The network of one encoded candidate; layer names start with the unit prefix `u<i>.`."""
        arch = self.decode(row)
        b = GraphBuilder(name or self.name)
        x = b.input("input", (batch, 3, self.resolution, self.resolution))
        if self.block == "mbconv":
            x = _conv_bn_act(b, x, self.stem_width, 3, 2, "relu", "u0.stem")
        else:
            x = _conv_bn_act(b, x, self.stem_width, 7, 2, "relu", "u0.stem")
            x = b.maxpool(x, 3, 2, pad=1, name="u0.pool")
        u = 1
        for s, (st, a) in enumerate(zip(self.stages, arch["stages"])):
            for j in range(st.max_depth):
                if j < a["depth"]:
                    blk = a["blocks"][j]
                    fn = _mbconv if self.block == "mbconv" else _bottleneck
                    x = fn(b, x, a["width"], blk["kernel"], st.stride if j == 0 else 1, blk["expand"],
                           blk["act"], f"u{u}")
                u += 1
        p = f"u{u}"
        if self.block == "mbconv":
            x = _conv_bn_act(b, x, self.head_width, 1, 1, "relu", f"{p}.head")
            x = b.flatten(b.global_avgpool(x, name=f"{p}.pool"), name=f"{p}.flatten")
            x = b.relu(b.fc(x, 1280, name=f"{p}.fc1"), name=f"{p}.fc1.relu")
        else:
            x = b.flatten(b.global_avgpool(x, name=f"{p}.pool"), name=f"{p}.flatten")
        return b.build([b.fc(x, self.classes, name=f"{p}.fc")])

    def macs(self, row) -> int:
        return self.build(row).macs

    def params(self, row) -> int:
        return self.build(row).params


def unit_of(layer_name: str) -> int:
    """The unit index of a layer built by SearchSpace.build (`u12.expand` -> 12)."""
    return int(layer_name[1:layer_name.index(".")])


def _conv_bn_act(b, x, c, k, s, act, name, groups=1):
    return conv_bn_act(b, x, c, k, s, act, name, f"{name}.bn", f"{name}.act", groups)


def _mbconv(b, x, c, k, s, e, act, p):
    """MobileNetV2/V3 inverted residual: 1x1 expand, kxk depthwise, 1x1 linear project, skip when it fits."""
    cin = b.shape(x)[1]
    h = int(round(cin * e))
    y = _conv_bn_act(b, x, h, 1, 1, act, f"{p}.expand") if h != cin else x
    y = _conv_bn_act(b, y, h, k, s, act, f"{p}.dw", groups=h)
    y = b.bn(b.conv(y, c, kernel=1, bias=False, name=f"{p}.project"), name=f"{p}.project.bn")
    return b.add(x, y, name=f"{p}.add") if s == 1 and cin == c else y


def _bottleneck(b, x, c, k, s, e, act, p):
    """ResNet v1.5 bottleneck with mid width round(c * e) (multiple of 8) and the activation after the add."""
    mid = max(8, int(round(c * e / 8)) * 8)
    y = _conv_bn_act(b, x, mid, 1, 1, act, f"{p}.conv1")
    y = _conv_bn_act(b, y, mid, k, s, act, f"{p}.conv2")
    y = b.bn(b.conv(y, c, kernel=1, bias=False, name=f"{p}.conv3"), name=f"{p}.conv3.bn")
    if s != 1 or b.shape(x)[1] != c:
        x = b.bn(b.conv(x, c, kernel=1, stride=s, bias=False, name=f"{p}.down"), name=f"{p}.down.bn")
    return act_layer(b, b.add(y, x, name=f"{p}.add"), act, f"{p}.act")


def mobilenet_v3_space(resolution: int = 224) -> SearchSpace:
    """OFA MobileNetV3 space (Cai et al. 2020): depth {2,3,4}, kernel {3,5,7}, expand {3,4,6} per block,
    stage widths around OFA's 24/40/80/112/160 (two choices each), activation ReLU or HardSwish per block."""
    ks, es, acts = (3, 5, 7), (3, 4, 6), ("relu", "hswish")
    widths = ((16, 24), (32, 40), (64, 80), (96, 112), (128, 160))
    strides = (2, 2, 2, 1, 2)
    return SearchSpace("mbv3_space", "mbconv", resolution, 16,
                       tuple(Stage(w, (2, 3, 4), s, ks, es, acts) for w, s in zip(widths, strides)), 960)


def resnet_space(resolution: int = 224) -> SearchSpace:
    """OFA ResNet-50 space: depth {2,3,4} per stage, expand {0.2,0.25,0.35}, width multiplier
    {0.65,0.8,1.0} of 256/512/1024/2048, activation ReLU or HardSwish per block."""
    mults = (0.65, 0.8, 1.0)
    stages = tuple(Stage(tuple(int(round(base * m / 8)) * 8 for m in mults), (2, 3, 4), 1 if i == 0 else 2,
                         (3,), (0.2, 0.25, 0.35), ("relu", "hswish"))
                   for i, base in enumerate((256, 512, 1024, 2048)))
    return SearchSpace("resnet_space", "bottleneck", resolution, 64, stages, 0)


def tiny_space(resolution: int = 64) -> SearchSpace:
    """A small MBConv space (two stages) for tests and quick experiments."""
    return SearchSpace("tiny_space", "mbconv", resolution, 16,
                       (Stage((16, 24), (1, 2), 2, (3, 5), (3, 6), ("relu", "hswish")),
                        Stage((32, 40), (1, 2), 2, (3, 5), (3, 6), ("relu", "hswish"))), 128, 10)
