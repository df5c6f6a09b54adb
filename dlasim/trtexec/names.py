"""Profile row names -> roles, covered layer names and kinds (TensorRT's naming conventions).

Fused `a + b`, horizontal `a || b`, `PWN(...)`, `Reformatting CopyNode ...` (gpu_tensorrt.md s3.2, s5.2), DLA
subgraphs `{a,b,...}` with the TRT 7 Xavier "to nvm" / "from nvm" / "reformatter" / "finish" rows and
`{ForeignNode[first...last]}` (dla.md s3.4).
"""
from __future__ import annotations

import re

_PROFILE_SUFFIX = re.compile(r"\s*\[profile (\d+)\]$")        # multi-profile engines (gpu_tensorrt.md s4.3)
_COPYNODE = re.compile(r"^Reformatting CopyNode for (Input|Output) Tensor (\d+) to (.*)$")
_FOREIGN = re.compile(r"^\{ForeignNode\[(.*)\]\}$")
_BRACES = re.compile(r"^\{(.*)\}$")
_PWN = re.compile(r"^(?:PWN|fusedPointwiseNode)\((.*)\)$")

# Suffixes of the TRT 5/7 DLA and reformat rows (dla.md s3.4), longest first.
_ROLE_SUFFIXES = (
    ("output_finish", re.compile(r"\s+output to be reformatted (\d+) finish$")),
    ("input_finish", re.compile(r"\s+reformatted input (\d+) finish$")),
    ("input_reformatter", re.compile(r"\s+input reformatter (\d+)$")),
    ("output_reformatter", re.compile(r"\s+output reformatter (\d+)$")),
    ("copy_finish", re.compile(r"\s+copy finish$")),
    ("from_nvm", re.compile(r"\s+from nvm$")),
    ("to_nvm", re.compile(r"\s+to nvm$")),
    ("finish", re.compile(r"\s+finish$")),
    ("copy", re.compile(r"\s+copy$")),                              # concat copies (gpu_tensorrt.md s3.2)
)
_REFORMAT_ROLES = {"copynode", "output_finish", "input_finish", "input_reformatter", "output_reformatter",
                   "copy_finish", "from_nvm", "to_nvm", "finish"}


def _split_role(name: str) -> tuple[str | None, str, dict]:
    """Peel a row name into (role, body, info): role names the reformat/DLA suffix, body the layers."""
    info: dict = {}
    m = _PROFILE_SUFFIX.search(name)
    if m:
        info["profile"] = int(m.group(1))
        name = name[:m.start()]
    m = _COPYNODE.match(name)
    if m:
        info.update(direction=m.group(1).lower(), tensor_index=int(m.group(2)))
        return "copynode", m.group(3), info
    for role, pattern in _ROLE_SUFFIXES:
        m = pattern.search(name)
        if m and m.start() > 0:
            if m.groups():
                info["tensor_index"] = int(m.group(1))
            return role, name[:m.start()], info
    return None, name, info


def _split_top(text: str, separators: tuple[str, ...]) -> list[str]:
    """Split on separators that are outside (), [] and {}."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0:
            sep = next((s for s in separators if text.startswith(s, i)), None)
            if sep:
                parts.append(text[start:i])
                i += len(sep)
                start = i
                continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _unwrap_pwn(part: str) -> list[str]:
    """`PWN(PWN(a), b)` -> [a, b] (pointwise fusion names, gpu_tensorrt.md s5.2)."""
    m = _PWN.match(part)
    if not m:
        return [part]
    return [name for inner in _split_top(m.group(1), (",",)) for name in _unwrap_pwn(inner)]


def split_layer_names(name: str) -> tuple[list[str], dict]:
    """Original layer names a profile row covers, and flags (`range`, `brace_group`, ...).

    `a + b || c` -> [a, b, c]; `{a,b,c}` -> [a, b, c]; `{ForeignNode[a...z]}` -> [a, z] with range=True;
    reformat/DLA suffixes such as " output reformatter 0" or " from nvm" are stripped first.
    """
    role, body, info = _split_role(name)
    if role:
        info["role"] = role
    m = _FOREIGN.match(body)
    if m:
        first, sep, last = m.group(1).partition("...")
        info.update(range=True, foreign_node=True)
        return ([first, last] if sep else [first]), info
    m = _BRACES.match(body)
    if m:
        info["brace_group"] = True
        return [n.strip() for n in m.group(1).split(",") if n.strip()], info
    names = [n for part in _split_top(body, (" + ", " || ")) for n in _unwrap_pwn(part)]
    return names, info


_POINTWISE_TOKENS = ("relu", "sigmoid", "tanh", "clip", "gelu", "elu", "swish", "silu", "mish", "mul",
                     "add", "sub", "div", "pow", "sqrt", "exp", "eltwise", "sum", "scale", "batchnorm",
                     "bn", "activation", "pwn", "pointwise", "hardswish", "leaky", "prelu", "neg", "abs")


def _component_kind(component: str) -> str:
    """Kind of one original layer name, by the naming habits of Caffe and ONNX exporters."""
    s = component.lower()
    segments = [seg for seg in s.split("/") if seg] or [s]
    last = segments[-1]
    tokens = [t for t in re.split(r"[^a-z0-9]+", last) if t]
    if re.search(r"reshape|shuffle|transpose|flatten|squeeze|permute|slice|gather|resize|constant|weight",
                 last):
        return "other"
    if re.search(r"quantizelinear|reformat|copynode", last):
        return "reformat"
    if "softmax" in last or last == "prob":
        return "softmax"
    if "concat" in last or (last == "output" and len(segments) > 1):
        return "concat"
    if "pool" in last and "proj" not in last:
        return "pool"
    if re.match(r"\d+x\d+", last):                          # Caffe: conv1/7x7_s2, but pool1/3x3_s2
        return "pool" if segments[0].startswith("pool") else "conv"
    if "batchnorm" in last or any(t.startswith(p) for t in tokens for p in _POINTWISE_TOKENS):
        return "pointwise"
    if "norm" in last or "lrn" in last:
        return "other"
    if re.search(r"conv|fprop|proj|depthwise", last):
        return "conv"
    if re.search(r"gemm|matmul|innerproduct|fullyconnected|classifier|linear|dense", last) or \
            any(re.fullmatch(r"(fc|ip)\d*", t) for t in tokens):
        return "fc"
    return "other"


_KIND_PRIORITY = ("conv", "fc", "pool", "softmax", "concat", "pointwise", "reformat", "other")

# TensorRT engine layer types (trex example graphs, gpu_tensorrt.md s4.3) -> kind.
_LAYER_TYPE_KINDS = {
    "CaskConvolution": "conv", "CublasConvolution": "conv", "CudaDepthwiseConvolution": "conv",
    "FusedConvActConvolution": "conv", "ConvActPool": "conv", "CaskDeconvolution": "conv",
    "CudnnConvolution": "conv", "CudnnDeconvolution": "conv", "Convolution": "conv", "Deconvolution": "conv",
    "CaskPooling": "pool", "CudaPooling": "pool", "TiledPooling": "pool", "CudnnPooling": "pool",
    "Pooling": "pool",
    "PointWise": "pointwise", "PointWiseV2": "pointwise", "ElementWise": "pointwise", "Activation": "pointwise",
    "Scale": "pointwise", "Unary": "pointwise",
    "SoftMax": "softmax", "CaskSoftMax": "softmax", "CudaSoftMax": "softmax",
    "Concatenation": "concat",
    "FullyConnected": "fc", "MatrixMultiply": "fc", "Gemm": "fc", "CaskGemm": "fc", "CublasGemm": "fc",
    "Reformat": "reformat", "NoOp": "noop",
    "Shuffle": "other", "Constant": "other", "Slice": "other", "Padding": "other", "Reduce": "other",
    "Resize": "other", "Gather": "other", "TopK": "other", "LRN": "other", "CudaLRN": "other",
    "Myelin": "other", "Identity": "other", "Cast": "other", "PluginV2": "other", "Plugin": "other",
}
KNOWN_LAYER_TYPES = frozenset(_LAYER_TYPE_KINDS)


def _name_kind(name: str, time_ms: float | None) -> str:
    role, body, _ = _split_role(name)
    if role in _REFORMAT_ROLES:
        return "noop" if time_ms == 0 else "reformat"
    if role == "copy":
        return "concat"
    if _FOREIGN.match(body) or _BRACES.match(body):
        return "dla_subgraph"
    names, _ = split_layer_names(body)
    kinds = {_component_kind(n) for n in names} or {"other"}
    kind = next(k for k in _KIND_PRIORITY if k in kinds)
    return "noop" if kind == "reformat" and time_ms == 0 else kind


def classify(name: str, layer_type: str | None = None, time_ms: float | None = None) -> str:
    """Kind of a profile row from its name, refined by the engine layer type when known.

    Reformat rows of zero time, and NoOp layers, are "noop" (gpu_tensorrt.md s3.2: most Reformatting
    CopyNodes are NoOps). FullyConnected is built as a convolution (s5.2) but keeps the kind "fc".
    """
    by_name = _name_kind(name, time_ms)
    by_type = _LAYER_TYPE_KINDS.get(layer_type) if layer_type else None
    if by_type is None:
        return by_name
    if by_type == "reformat" and time_ms == 0:
        return "noop"
    if by_type == "conv" and by_name == "fc":
        return "fc"
    return by_type


def strip_profile_suffix(name: str) -> str:
    """`name [profile 1]` -> `name` (multi-profile engines, gpu_tensorrt.md s4.3)."""
    return _PROFILE_SUFFIX.sub("", name)


def abbreviate_name(name: str, width: int = 70) -> str:
    """`{a,b,...,z} suffix` -> `{a ... z} suffix (N layers)`; then cut the middle to `width` chars."""
    tail = ""
    m = re.match(r"^\{([^\[\]{}]*)\}(.*)$", name)
    if m and "," in m.group(1):
        names = [n.strip() for n in m.group(1).split(",") if n.strip()]
        name, tail = f"{{{names[0]} ... {names[-1]}}}{m.group(2)}", f" ({len(names)} layers)"
    if len(name) <= width:
        return name + tail
    keep = width - 5
    head = keep - keep // 3
    return name[:head] + " ... " + name[len(name) - (keep - head):] + tail
