"""Networks for validation cases that are not files or zoo entries: `builder:NAME[:k=v,...]` specs.

Grammar (the `model` column of validation/cases.csv):

    builder:conv:n=32,c=64,h=56,w=56,k=64,r=3[,s=1][,bias=0]   one Conv, pad r//2 ("same" for odd r)
    builder:gemm:m=4096,n=1024,k=4096                           MatMul of an activation [m,k] by a constant [k,n]
    builder:toy_cnn_bn[:n=32]                                   jetson_dla_tutorial CIFAR-10 toy CNN, BatchNorm
    builder:toy_cnn_gn[:n=32,groups=8]                          the same with GroupNorm
    builder:resnet34_backbone[:n=1,h=768,w=1280]                torchvision ResNet-34 conv1..layer4, no head

`build(spec)` returns a dlasim Graph; a bad spec raises dlasim.ModelError with a one-line message.

Assumptions (say so in the case notes when a case depends on them):
- conv: the H200 micro-benchmark (validation/data/h200/h200_microbench.py, section F_conv) calls
  F.conv2d(x, w, padding=k // 2) without bias on channels_last fp16 tensors, C = K; so bias defaults to 0.
- gemm: section C_wave computes torch.matmul(a[M,K], b[K,N]); here b is a constant (weights), as a
  TensorRT engine would hold it.
- toy CNN (NVIDIA-AI-IOT/jetson_dla_tutorial, README "models"; reference/dla.md s5.3): the README describes
  4 conv layers on a 32x32 CIFAR-10 input with a norm and ReLU after each conv, then global average pool
  and a linear layer to 10 classes. The exact widths are not in our data; we assume channels 64, 128,
  256, 512, 3x3 kernels, stride 2, padding 1 (as in the tutorial's models.py as we remember it: unverified
  here), GroupNorm with 8 groups. GroupNorm is one "GroupNormalization" layer (PyTorch's ONNX export
  writes Reshape -> InstanceNormalization -> Reshape -> Mul -> Add, which TensorRT reports as GPU
  InstanceNorm/Shuffle/Scale layers; a single layer keeps the graph simple and still goes to the GPU).
- resnet34_backbone (NVIDIA/Deep-Learning-Accelerator-SW README, "ResNet-34 backbone, 1280x768"): the
  exact graph is not in our data; we assume torchvision ResNet-34 stem + layer1..layer4 with no average
  pool and no FC (a detection backbone), input 3x768x1280.
"""
from __future__ import annotations

from dlasim.zoo.blocks import conv_bn_act
from dlasim.zoo.classifiers import basic_block
from dlasim.errors import ModelError
from dlasim.ir import Graph, GraphBuilder

PREFIX = "builder:"


def parse_spec(spec: str) -> tuple[str, dict[str, int]]:
    """`builder:conv:n=1,c=64` -> ("conv", {"n": 1, "c": 64})."""
    text = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    name, _, rest = text.partition(":")
    params: dict[str, int] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        try:
            if not eq:
                raise ValueError
            params[key.strip()] = int(value)
        except ValueError:
            raise ModelError(f"{spec}: expected key=integer, got {item!r}") from None
    return name.strip(), params


def _take(spec: str, params: dict, required: tuple[str, ...], optional: dict[str, int]) -> dict[str, int]:
    missing = [k for k in required if k not in params]
    unknown = [k for k in params if k not in required and k not in optional]
    if missing or unknown:
        raise ModelError(f"{spec}: " + "; ".join(
            ([f"missing {', '.join(missing)}"] if missing else []) +
            ([f"unknown {', '.join(unknown)}"] if unknown else [])))
    return {**optional, **params}


def conv(n: int, c: int, h: int, w: int, k: int, r: int, s: int = 1, bias: int = 0) -> Graph:
    b = GraphBuilder(f"conv_n{n}_c{c}_{h}x{w}_k{k}_r{r}")
    x = b.input("input", (n, c, h, w))
    y = b.conv(x, k, kernel=r, stride=s, pad=r // 2, bias=bool(bias), name="conv")
    return b.build([y])


def gemm(m: int, n: int, k: int) -> Graph:
    b = GraphBuilder(f"gemm_m{m}_n{n}_k{k}")
    a = b.input("input", (m, k))
    y = b.matmul(a, b.const("weight", (k, n)), name="gemm")
    return b.build([y])


def toy_cnn(norm: str, n: int = 32, groups: int = 8) -> Graph:
    """jetson_dla_tutorial CIFAR-10 toy CNN; norm is "bn" or "gn" (see the module notes)."""
    b = GraphBuilder(f"toy_cnn_{norm}")
    x = b.input("input", (n, 3, 32, 32))
    for i, c in enumerate((64, 128, 256, 512)):
        x = b.conv(x, c, kernel=3, stride=2, pad=1, name=f"cnn.{3 * i}")
        if norm == "bn":
            x = b.bn(x, name=f"cnn.{3 * i + 1}")
        else:
            params = [b.const(f"cnn.{3 * i + 1}.{p}", (c,)) for p in ("scale", "bias")]
            x = b.op("GroupNormalization", [x] + params, {"num_groups": groups, "epsilon": 1e-5},
                     name=f"cnn.{3 * i + 1}")
        x = b.relu(x, name=f"cnn.{3 * i + 2}")
    x = b.flatten(b.global_avgpool(x, name="pool"), name="flatten")
    return b.build([b.fc(x, 10, name="linear")])


def resnet34_backbone(n: int = 1, h: int = 768, w: int = 1280) -> Graph:
    b = GraphBuilder("resnet34_backbone")
    x = b.input("input", (n, 3, h, w))
    x = conv_bn_act(b, x, 64, 7, 2, "relu", "conv1", "bn1", "relu")
    x = b.maxpool(x, 3, 2, pad=1, name="maxpool")
    for i, (c, depth) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3)), start=1):
        for j in range(depth):
            x = basic_block(b, x, c, 2 if (j == 0 and i > 1) else 1, f"layer{i}.{j}")
    return b.build([x])


_BUILDERS = {
    "conv": (lambda p: conv(**p), ("n", "c", "h", "w", "k", "r"), {"s": 1, "bias": 0}),
    "gemm": (lambda p: gemm(**p), ("m", "n", "k"), {}),
    "toy_cnn_bn": (lambda p: toy_cnn("bn", p["n"]), (), {"n": 32}),
    "toy_cnn_gn": (lambda p: toy_cnn("gn", p["n"], p["groups"]), (), {"n": 32, "groups": 8}),
    "resnet34_backbone": (lambda p: resnet34_backbone(**p), (), {"n": 1, "h": 768, "w": 1280}),
}


def build(spec: str) -> Graph:
    """The Graph for a `builder:` spec."""
    name, params = parse_spec(spec)
    if name not in _BUILDERS:
        raise ModelError(f"{spec}: unknown builder {name!r}; known: {', '.join(_BUILDERS)}")
    fn, required, optional = _BUILDERS[name]
    g = fn(_take(spec, params, required, optional))
    g.source = spec
    return g
