"""Measured trtexec files -> MeasuredProfile: tolerant parsers for calibration and validation.

Formats read (all cited in ../reference, paths relative to the shared folder):
- `--exportProfile` JSON: a list, optionally led by `{"count": N}`, then one record per engine layer with
  `name, timeMs, averageMs, percentage` (TRT 7.0-8.2) plus `medianMs` (TRT >= 8.4)
  (gpu_tensorrt.md s4.2). The HaX-CoNN `*_filtered.json` variant (`name, average_time_ms, layer_count`)
  is read too, with a warning.
- `--exportLayerInfo` JSON: `{"Layers": [...], "Bindings": [...]}` with detailed dicts, or names only
  (the default `layer_names_only` verbosity); older files lack `Bindings` (gpu_tensorrt.md s4.3).
- the console "Performance summary" of TRT 7.x / 8.0 / 8.4 / 8.5+ and trex `*.profile.metadata.json`
  (gpu_tensorrt.md s4.5).
Row names follow TensorRT's conventions: fused `a + b`, horizontal `a || b`, `PWN(...)`,
`Reformatting CopyNode ...` (gpu_tensorrt.md s3.2, s5.2), DLA subgraphs `{a,b,...}` with the TRT 7 Xavier
"to nvm" / "from nvm" / "reformatter" / "finish" rows and `{ForeignNode[first...last]}` (dla.md s3.4).

Nothing here prints; unreadable or malformed files raise ModelError with one line naming the file.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import ModelError

KINDS = ("reformat", "dla_subgraph", "conv", "pool", "pointwise", "fc", "softmax", "concat", "noop",
         "other")

# Per executed layer, the profiled sum exceeds the un-profiled GPU compute time by 1.7 us (TITAN RTX,
# 6610 iterations) to 5.5-7.5 us (A100, one iteration): gpu_tensorrt.md s4.2 and s7 item 13.
DEFAULT_PER_LAYER_OVERHEAD_MS = 0.002

DLA_TIME_NOTE = (
    "On TensorRT 7 (Xavier) the DLA subgraph row '{...}' holds only the enqueue (~0.16 ms); the DLA "
    "execution time is carried by the GPU-side row that waits for the result (the subgraph's 'output "
    "reformatter', 'X from nvm', or the next layer's 'input reformatter'), see dla.md s3.4 and "
    "data/README.md. On TensorRT >= 8.5 (Orin) the time sits in the {ForeignNode[...]} row itself "
    "(on discrete GPUs a ForeignNode is a Myelin graph, not DLA)."
)


@dataclass
class MeasuredLayer:
    """One row of a measured profile (times per inference, in ms)."""
    name: str
    time_ms: float                      # averageMs: total over the profiled runs / runs
    kind: str                           # one of KINDS
    median_ms: float | None = None      # medianMs (TRT >= 8.4)
    percentage: float | None = None
    layers: list[str] = field(default_factory=list)   # original layer names the row covers
    extra: dict = field(default_factory=dict)


@dataclass
class MeasuredProfile:
    """A parsed `--exportProfile` file; `total_ms` is the sum of the rows' averageMs."""
    rows: list[MeasuredLayer]
    count: int | None
    total_ms: float
    source: str
    warnings: list[str] = field(default_factory=list)
    summary: dict | None = None         # performance summary of the same run, when found next to it


# --------------------------------------------------------------------------------------------------
# Reading files

def _load_json(path) -> object:
    """Parse a JSON file (a regular file, size-capped) or raise a one-line ModelError naming it."""
    from .safeio import load_json
    return load_json(path, "trtexec JSON file")


def _number(value) -> float | None:
    """A finite float, or None for anything else (bools, strings, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


# --------------------------------------------------------------------------------------------------
# Row names -> roles, covered layer names, kinds

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


# --------------------------------------------------------------------------------------------------
# --exportProfile

_KNOWN_FIELDS = {"name", "timeMs", "averageMs", "medianMs", "percentage"}
_FIELD_ALIASES = {"average_time_ms": "averageMs"}        # HaX-CoNN *_filtered.json


def _sibling_metadata(path: Path) -> Path | None:
    """trex keeps `X.profile.json` next to `X.profile.metadata.json` (gpu_tensorrt.md s4.5)."""
    if path.name.endswith(".profile.json"):
        candidate = path.with_name(path.name[: -len(".json")] + ".metadata.json")
        return candidate if candidate.is_file() else None
    return None


def _record_model():
    """The pydantic model of one --exportProfile record: strict types, finite, non-negative times.

    Built on first use so that importing this module stays fast (pydantic is imported lazily)."""
    global _RECORD
    if _RECORD is None:
        from typing import Optional

        from pydantic import BaseModel, ConfigDict, Field

        class ProfileRecord(BaseModel):
            model_config = ConfigDict(extra="allow", strict=True, allow_inf_nan=False, frozen=True)
            name: str = Field(min_length=1)
            timeMs: Optional[float] = Field(default=None, ge=0)
            averageMs: Optional[float] = Field(default=None, ge=0)
            medianMs: Optional[float] = Field(default=None, ge=0)
            percentage: Optional[float] = Field(default=None, ge=0)

        _RECORD = ProfileRecord
    return _RECORD


_RECORD = None


def _record_error(path, index: int, rec: dict, err) -> ModelError:
    e = err.errors()[0]
    field_name = ".".join(str(x) for x in e["loc"]) or "(record)"
    name = rec.get("name")
    label = f" ({name[:60]})" if isinstance(name, str) and name else ""
    got = repr(e.get("input"))
    got = got if len(got) <= 40 else got[:37] + "..."
    what = "required field is missing" if e["type"] == "missing" else f"{e['msg']}, got {got}"
    return ModelError(f"{path}: record {index}{label}: field {field_name}: {what}")


def _profile_record(path, rec: dict, count: int | None, index: int, unknown: dict[str, int]) -> MeasuredLayer:
    """One --exportProfile record -> MeasuredLayer; a record without a usable name or time is a ModelError."""
    from pydantic import ValidationError

    rec = {_FIELD_ALIASES.get(k, k): v for k, v in rec.items()}
    try:
        r = _record_model().model_validate(rec)
    except ValidationError as err:
        raise _record_error(path, index, rec, err) from None
    name, time_ms, total = r.name, r.averageMs, r.timeMs
    if time_ms is None and total is not None and count:
        time_ms = total / count
    if time_ms is None:
        why = "timeMs without a leading {\"count\": N} record" if total is not None else "no averageMs or timeMs"
        raise ModelError(f"{path}: record {index} ({name[:60]}): {why}; expected a time per inference")
    extra: dict = {}
    if total is not None:
        extra["total_ms"] = total
    others = {k: v for k, v in rec.items() if k not in _KNOWN_FIELDS}
    if others:
        extra["fields"] = others
        for key in others:
            unknown[key] = unknown.get(key, 0) + 1
    layers, flags = split_layer_names(name)
    extra.update(flags)
    return MeasuredLayer(name=name, time_ms=time_ms, kind=classify(name, None, time_ms),
                         median_ms=r.medianMs, percentage=r.percentage, layers=layers, extra=extra)


def parse_profile(path) -> MeasuredProfile:
    """Read a trtexec `--exportProfile` JSON file (gpu_tensorrt.md s4.2).

    Accepts a leading `{"count": N}` or none, records with or without `medianMs`, and unknown fields
    (kept in `extra["fields"]`, with a warning). A trex `X.profile.metadata.json` next to the file
    becomes `summary`. Malformed JSON or a top level that is not a list raises ModelError.
    """
    p = Path(path)
    data = _load_json(p)
    if not isinstance(data, list):
        raise ModelError(f"{p}: expected a JSON list of trtexec --exportProfile records, "
                         f"got {type(data).__name__}")
    warnings: list[str] = []
    count = None
    if data and isinstance(data[0], dict) and "count" in data[0] and "name" not in data[0]:
        c = data[0]["count"]
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise ModelError(f"{p}: record 0: field count: expected a positive integer, got {c!r:.40}")
        count = c
        data = data[1:]
    else:
        warnings.append("no leading {\"count\": N} record: number of profiled runs unknown")
    rows: list[MeasuredLayer] = []
    unknown: dict[str, int] = {}
    for index, rec in enumerate(data, start=1 if count else 0):
        if not isinstance(rec, dict):
            got = "null" if rec is None else type(rec).__name__
            raise ModelError(f"{p}: record {index} is {got}, expected an object with name and averageMs")
        if "count" in rec and "name" not in rec:
            warnings.append(f"record {index}: extra count record ignored")
            continue
        rows.append(_profile_record(p, rec, count, index, unknown))
    for key, n in unknown.items():
        warnings.append(f"unknown field '{key}' in {n} record(s), kept in extra")
    if not rows:
        warnings.append("no layer records")
    total = sum(r.time_ms for r in rows)
    if not math.isfinite(total):
        raise ModelError(f"{p}: the per-layer times sum to {total} ms (overflow); expected finite times")
    _attribute_dla_time(rows)
    meta = _sibling_metadata(p)
    summary = parse_metadata(meta) if meta else None
    return MeasuredProfile(rows=rows, count=count, total_ms=total, source=str(p),
                           warnings=warnings, summary=summary)


def _attribute_dla_time(rows: list[MeasuredLayer]) -> None:
    """Mark the row that carries each TRT 7 DLA subgraph's execution time (dla.md s3.4).

    After a `{a,b,...}` row, the largest of the following reformat rows (up to the next compute row) is
    the GPU-side wait for the DLA result: "output reformatter", "X from nvm" or the next layer's
    "input reformatter". `{ForeignNode[...]}` rows carry their own time.
    """
    for i, row in enumerate(rows):
        if row.kind != "dla_subgraph" or row.extra.get("foreign_node"):
            continue
        window = []
        for later in rows[i + 1:]:
            if later.kind not in ("reformat", "noop"):
                break
            window.append(later)
        if window:
            carrier = max(window, key=lambda r: r.time_ms)
            carrier.extra["carries_dla_time"] = True
            row.extra["dla_time_row"] = carrier.name


# --------------------------------------------------------------------------------------------------
# --exportLayerInfo

_TILE = re.compile(r"tilesize(\d+(?:x\d+)+)")
_CUDNN_TILE = re.compile(r"cudnn_(?:int8x4_|int8_)?(\d+x\d+)(?:_|$)")
_VECTOR_WIDTH = {"two": 2, "four": 4, "eight": 8, "sixteen": 16, "thirty-two": 32}
_DTYPES = ("fp32", "fp16", "bf16", "fp8", "fp4", "int8", "int32", "int64", "int4", "uint8", "bool")


def tile_from_tactic(tactic: str | None) -> list[int] | None:
    """CTA tile of a kernel name: `..._tilesize256x64x32_...` -> [256, 64, 32]; cuDNN `_128x64_` too."""
    if not tactic:
        return None
    m = _TILE.search(tactic) or _CUDNN_TILE.search(tactic)
    return [int(v) for v in m.group(1).split("x")] if m else None


def _layout(fmt: str) -> str | None:
    """Short layout of a TRT "Format/Datatype" string, after trex activations.py (gpu_tensorrt.md s3.4)."""
    f = fmt.lower()
    m = re.match(r"(two|four|eight|sixteen|thirty-two) wide channel vectorized", f)
    if m:
        k = _VECTOR_WIDTH[m.group(1)]
        return f"NC/{k}HW{k}"
    if f.startswith("channel major"):
        m = re.search(r"channel % (\d+) == 0", f)
        return "NHWC" + (m.group(1) if m else "")
    if f.startswith("row major"):
        return "NCHW"
    return None


def _tensor(t) -> dict:
    if not isinstance(t, dict):
        return {"name": str(t), "dims": None, "format": None, "dtype": None, "layout": None}
    fmt = t.get("Format/Datatype")
    dtype = None
    if isinstance(fmt, str):
        dtype = next((d for d in _DTYPES if re.search(rf"\b{d}\b", fmt.lower())), None)
    return {"name": t.get("Name"), "dims": t.get("Dimensions"), "format": fmt, "dtype": dtype,
            "layout": _layout(fmt) if isinstance(fmt, str) else None, "location": t.get("Location")}


_LAYER_KEYS = {"Name", "LayerType", "Inputs", "Outputs", "TacticName", "TacticValue", "Origin",
               "HasSparseWeights", "ConvHasSparseWeights"}


def _layer(entry, index: int, bindings: set) -> dict:
    """Normalize one exportLayerInfo entry (detailed dict, or a bare name)."""
    if isinstance(entry, str):
        return {"name": entry, "layer_type": None, "inputs": [], "outputs": [], "tactic": None,
                "tactic_value": None, "tile": None, "has_sparse_weights": None, "origin": None,
                "unknown_type": False, "detailed": False, "params": {}}
    if not isinstance(entry, dict):
        return _layer(str(entry), index, bindings)
    layer_type = entry.get("LayerType")
    sparse = entry.get("HasSparseWeights", entry.get("ConvHasSparseWeights"))
    tactic = entry.get("TacticName")
    inputs = [_tensor(t) for t in entry.get("Inputs") or []]
    outputs = [_tensor(t) for t in entry.get("Outputs") or []]
    for t in inputs + outputs:
        t["binding"] = t["name"] in bindings
    return {"name": entry.get("Name") or f"<layer {index}>", "layer_type": layer_type,
            "inputs": inputs, "outputs": outputs, "tactic": tactic, "tactic_value": entry.get("TacticValue"),
            "tile": tile_from_tactic(tactic), "has_sparse_weights": None if sparse is None else bool(sparse),
            "origin": entry.get("Origin"),
            "unknown_type": layer_type is not None and layer_type not in KNOWN_LAYER_TYPES,
            "detailed": True, "params": {k: v for k, v in entry.items() if k not in _LAYER_KEYS}}


def _check_layer_entry(path, index: int, entry) -> None:
    """A layer-info entry is a name or an object whose Name (when given) is a string."""
    if isinstance(entry, str) and entry:
        return
    if isinstance(entry, dict):
        name = entry.get("Name")
        if name is not None and not isinstance(name, str):
            raise ModelError(f"{path}: Layers[{index}]: field Name: expected a string, got {type(name).__name__}")
        for key in ("Inputs", "Outputs"):
            if entry.get(key) is not None and not isinstance(entry[key], list):
                raise ModelError(f"{path}: Layers[{index}]: field {key}: expected a list, "
                                 f"got {type(entry[key]).__name__}")
        return
    got = "null" if entry is None else "an empty name" if entry == "" else type(entry).__name__
    raise ModelError(f"{path}: Layers[{index}] is {got}, expected a layer name or an object")


def parse_layer_info(path) -> list[dict]:
    """Read a trtexec `--exportLayerInfo` JSON file (gpu_tensorrt.md s4.3) into normalized dicts.

    Each dict has name, layer_type (None for the names-only form), inputs/outputs ({name, dims, format,
    dtype, layout, binding}), tactic, tactic_value, tile, has_sparse_weights, origin, unknown_type
    (a layer type this module does not know; kept), detailed, and params (the remaining keys).
    """
    p = Path(path)
    data = _load_json(p)
    bindings: set = set()
    if isinstance(data, dict):
        if "Layers" not in data:
            raise ModelError(f"{p}: expected a 'Layers' list (trtexec --exportLayerInfo)")
        layers = data["Layers"]
        bindings = {b for b in data.get("Bindings") or [] if isinstance(b, str)}
    else:
        layers = data
    if not isinstance(layers, list):
        raise ModelError(f"{p}: 'Layers' must be a list, got {type(layers).__name__}")
    for i, entry in enumerate(layers):
        _check_layer_entry(p, i, entry)
    return [_layer(entry, i, bindings) for i, entry in enumerate(layers)]


def _strip_profile_suffix(name: str) -> str:
    return _PROFILE_SUFFIX.sub("", name)


def join_layer_info(profile: MeasuredProfile, layer_info: list[dict]) -> MeasuredProfile:
    """Attach layer types, tactics, tiles and sparse flags to the profile rows, matching by name."""
    by_name = {}
    for info in layer_info:
        by_name.setdefault(info["name"], info)
        by_name.setdefault(_strip_profile_suffix(info["name"]), info)
    rows, unmatched = [], 0
    for row in profile.rows:
        info = by_name.get(row.name) or by_name.get(_strip_profile_suffix(row.name))
        if info is None:
            unmatched += 1
            rows.append(row)
            continue
        extra = dict(row.extra, layer_type=info["layer_type"], tactic=info["tactic"], tile=info["tile"],
                     has_sparse_weights=info["has_sparse_weights"], origin=info["origin"])
        rows.append(replace(row, kind=classify(row.name, info["layer_type"], row.time_ms), extra=extra))
    warnings = list(profile.warnings)
    if rows and unmatched == len(rows):
        raise ModelError(f"{profile.source}: none of its {len(rows)} rows has an entry in the layer info: the "
                         f"names differ; give the --exportLayerInfo of the same engine")
    if unmatched:
        warnings.append(f"{unmatched} profile row(s) have no entry in the layer info "
                        f"({len(rows) - unmatched} of {len(rows)} matched)")
    unknown = sorted({i["layer_type"] for i in layer_info if i["unknown_type"]})
    if unknown:
        warnings.append("unknown layer type(s) kept: " + ", ".join(unknown))
    return replace(profile, rows=rows, warnings=warnings)


# --------------------------------------------------------------------------------------------------
# Performance summaries: console log (TRT 7.x / 8.x) and trex metadata

_LOG_PREFIX = re.compile(r"^\s*(?:\[\d{2}/\d{2}/\d{4}-\d{2}:\d{2}:\d{2}\]\s*)?(?:\[[A-Z]\]\s*)?(?:\[TRT\]\s*)?")
_NUM = r"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_METRICS_8X = {"Latency": "latency_ms", "End-to-End Host Latency": "end_to_end_ms",
               "Enqueue Time": "enqueue_ms", "H2D Latency": "h2d_ms", "GPU Compute Time": "gpu_compute_ms",
               "D2H Latency": "d2h_ms"}
_BLOCKS_7X = {"Host Latency": "latency_ms", "Enqueue Time": "enqueue_ms", "GPU Compute": "gpu_compute_ms"}
_STAT_8X = re.compile(rf"(min|max|mean|median|percentile\(([\d.]+)%\))\s*=\s*{_NUM}\s*ms")
_STAT_7X = re.compile(rf"^(min|max|mean|median):\s*{_NUM}\s*ms(?:\s*\(end to end {_NUM}\s*ms\))?")
_PCT_7X = re.compile(rf"^percentile:\s*{_NUM}\s*ms at ([\d.]+)%(?:\s*\(end to end {_NUM}\s*ms at [\d.]+%\))?")


def _pkey(pct: str) -> str:
    return "p" + (pct[:-2] if pct.endswith(".0") else pct)


def _is_file(text: str) -> bool:
    try:
        return "\n" not in text and Path(text).is_file()
    except (OSError, ValueError):                 # e.g. a one-line log longer than a file name may be
        return False


def _log_lines(text_or_path) -> tuple[list[str], str]:
    """Lines of a log given as text, or as a path (Path, or a str naming an existing file)."""
    if isinstance(text_or_path, Path) or _is_file(str(text_or_path)):
        from .safeio import read_bytes
        p = Path(text_or_path)
        return read_bytes(p, "trtexec log").decode("utf-8", errors="replace").splitlines(), str(p)
    return str(text_or_path).splitlines(), "<text>"


def _device_value(value: str):
    """Device value: "8.0" -> 8.0, "1.41 GHz" -> 1.41, "5120 bits (ECC enabled)" -> 5120.0 (as trex stores them)."""
    m = re.match(rf"^{_NUM}(?:\s*(?:GHz|bits)\b.*)?$", value)
    return float(m.group(1)) if m else value


def parse_trtexec_log(text_or_path) -> dict:
    """Performance summary (and device block) of a trtexec console log (gpu_tensorrt.md s4.5).

    TRT 8.0/8.4 (one percentile), 8.5+ (a percentile list): `GPU Compute Time: min = a ms, ...`;
    TRT 7.x: "Host Latency" / "Enqueue Time" / "GPU Compute" blocks of `min: a ms` lines and
    `percentile: x ms at 99%`. Lines may carry the `[MM/DD/YYYY-HH:MM:SS] [I] ` prefix. Returns the
    keys found among throughput_qps, latency_ms, end_to_end_ms, enqueue_ms, h2d_ms, gpu_compute_ms,
    d2h_ms (dicts of min/max/mean/median/pNN), total_host_walltime_s, total_gpu_compute_s, device,
    trt_version, format ("7.x" or "8.x"). A log with none of these raises ModelError.
    """
    lines, source = _log_lines(text_or_path)
    out: dict = {}
    block = None                      # current TRT 7 block key, or "device"
    for raw in lines:
        line = _LOG_PREFIX.sub("", raw).strip()
        if line.startswith("==="):
            block = "device" if "Device Information" in line else None
            continue
        m = re.match(r"TensorRT version:\s*([\w.+-]+)", line)
        if m:
            out["trt_version"] = m.group(1)
            continue
        key, _, rest = line.partition(": ")
        if key in _METRICS_8X and "=" in rest:
            out[_METRICS_8X[key]] = {(_pkey(m.group(2)) if m.group(2) else m.group(1)): float(m.group(3))
                                     for m in _STAT_8X.finditer(rest)}
            out["format"] = "8.x"
            continue
        m = re.match(rf"Throughput:\s*{_NUM}\s*qps", line)
        if m:
            out["throughput_qps"] = float(m.group(1))
            continue
        m = re.match(rf"Total (Host Walltime|GPU Compute Time):\s*{_NUM}\s*s", line)
        if m:
            out["total_host_walltime_s" if "Host" in m.group(1) else "total_gpu_compute_s"] = float(m.group(2))
            continue
        if line in _BLOCKS_7X:
            block = _BLOCKS_7X[line]
            out.setdefault(block, {})
            out["format"] = "7.x"
            continue
        if block == "device":
            if rest and re.fullmatch(r"[A-Z][A-Za-z0-9 /-]*", key) and key != "Note":
                out.setdefault("device", {})[key] = _device_value(rest.strip())
                continue
            block = None              # the device block ends at its first line of another shape
        if block:
            _parse_7x_line(line, block, out)
    if not any(k in out for k in ("throughput_qps", "latency_ms", "gpu_compute_ms", "device")):
        raise ModelError(f"{source}: no trtexec performance summary or device information found")
    return out


def _parse_7x_line(line: str, block: str, out: dict) -> None:
    """One line inside a TRT 7.x "Host Latency" / "Enqueue Time" / "GPU Compute" block."""
    m = _STAT_7X.match(line)
    if m:
        out[block][m.group(1)] = float(m.group(2))
        if m.group(3) is not None:
            out.setdefault("end_to_end_ms", {})[m.group(1)] = float(m.group(3))
        return
    m = _PCT_7X.match(line)
    if m:
        out[block][_pkey(m.group(2))] = float(m.group(1))
        if m.group(3) is not None:
            out.setdefault("end_to_end_ms", {})[_pkey(m.group(2))] = float(m.group(3))
        return
    m = re.match(rf"throughput:\s*{_NUM}\s*qps", line)
    if m:
        out["throughput_qps"] = float(m.group(1))
        return
    m = re.match(rf"(walltime|total compute time):\s*{_NUM}\s*s", line)
    if m:
        out["total_host_walltime_s" if m.group(1) == "walltime" else "total_gpu_compute_s"] = float(m.group(2))


_SUMMARY_STATS = {7: ("min", "max", "mean", "median", "p90", "p95", "p99"),
                  5: ("min", "max", "mean", "median", "p99")}
_METADATA_KEYS = {"Latency": "latency_ms", "Enqueue Time": "enqueue_ms", "H2D Latency": "h2d_ms",
                  "GPU Compute Time": "gpu_compute_ms", "D2H Latency": "d2h_ms",
                  "End-to-End Host Latency": "end_to_end_ms", "Throughput": "throughput_qps",
                  "Total Host Walltime": "total_host_walltime_s",
                  "Total GPU Compute Time": "total_gpu_compute_s"}


def _stat_list(values: list) -> dict:
    names = _SUMMARY_STATS.get(len(values))
    if names is None:
        return {"values": values}
    return dict(zip(names, (float(v) for v in values)))


def parse_metadata(path) -> dict:
    """Read a trex metadata file (gpu_tensorrt.md s4.5) into the parse_trtexec_log keys.

    `*.profile.metadata.json`: performance_summary lists [min,max,mean,median,p90,p95,p99] (older files
    5 values: min,max,mean,median,p99), inference_options, device_information (-> "device").
    `*.build.metadata.json` (model/build options) and `*.engine.metadata.json` (a list of device
    attribute dicts, -> "device_attributes") are returned as read.
    """
    p = Path(path)
    data = _load_json(p)
    if isinstance(data, list):
        return {"device_attributes": data}
    if not isinstance(data, dict):
        raise ModelError(f"{p}: expected a JSON object of trex metadata, got {type(data).__name__}")
    out: dict = {}
    summary = data.get("performance_summary")
    if isinstance(summary, dict):
        for key, value in summary.items():
            target = _METADATA_KEYS.get(key, key)
            out[target] = _stat_list(value) if isinstance(value, list) else value
    if "device_information" in data:
        out["device"] = data["device_information"]
    for key in ("inference_options", "model_options", "build_options"):
        if key in data:
            out[key] = data[key]
    return out


# --------------------------------------------------------------------------------------------------
# Profiling-overhead correction

def _gpu_median(summary: dict | None) -> float | None:
    stats = (summary or {}).get("gpu_compute_ms")
    return _number(stats.get("median")) if isinstance(stats, dict) else None


def corrected_rows(profile, gpu_compute_ms: float | None = None,
                   per_layer_overhead_ms: float | None = None) -> list[MeasuredLayer]:
    """Rows with the per-layer profiling overhead taken out (gpu_tensorrt.md s4.2, s7 item 13).

    The per-layer sum exceeds the un-profiled "GPU Compute Time" because trtexec puts CUDA events
    between layers. When the un-profiled GPU compute median is known (argument, else the profile's
    summary), the non-zero rows are scaled so that they sum to it (each keeps its share); otherwise
    `per_layer_overhead_ms` (default DEFAULT_PER_LAYER_OVERHEAD_MS) is subtracted from each non-zero
    row, floored at 0. Zero rows stay zero. The measured value is kept in extra["raw_ms"].
    """
    rows = profile.rows if isinstance(profile, MeasuredProfile) else list(profile)
    if gpu_compute_ms is None and per_layer_overhead_ms is None and isinstance(profile, MeasuredProfile):
        gpu_compute_ms = _gpu_median(profile.summary)
    if gpu_compute_ms is not None:
        if gpu_compute_ms < 0:
            raise ValueError("gpu_compute_ms must be >= 0")
        measured = sum(r.time_ms for r in rows if r.time_ms > 0)
        factor = gpu_compute_ms / measured if measured > 0 else 0.0
        adjust, how = (lambda t: t * factor), f"scaled x{factor:.4f} to GPU compute {gpu_compute_ms} ms"
    else:
        overhead = DEFAULT_PER_LAYER_OVERHEAD_MS if per_layer_overhead_ms is None else per_layer_overhead_ms
        adjust, how = (lambda t: max(0.0, t - overhead)), f"minus {overhead} ms per layer"
    out = []
    for r in rows:
        if r.time_ms <= 0:
            out.append(replace(r, extra=dict(r.extra, raw_ms=r.time_ms)))
            continue
        median = adjust(r.median_ms) if r.median_ms is not None else None
        out.append(replace(r, time_ms=adjust(r.time_ms), median_ms=median,
                           extra=dict(r.extra, raw_ms=r.time_ms, correction=how)))
    return out


# --------------------------------------------------------------------------------------------------
# Summary for `dlasim profile` and a terminal table

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


def _row_dict(row: MeasuredLayer, total: float) -> dict:
    d = {"name": row.name, "time_ms": row.time_ms, "kind": row.kind,
         "share": row.time_ms / total if total > 0 else 0.0, "layers": row.layers}
    if row.median_ms is not None:
        d["median_ms"] = row.median_ms
    for key in ("layer_type", "tactic", "tile", "has_sparse_weights", "origin", "carries_dla_time"):
        if key in row.extra:
            d[key] = row.extra[key]
    return d


def _by_kind(rows: list[MeasuredLayer], total: float) -> dict:
    acc: dict[str, dict] = {}
    for r in rows:
        k = acc.setdefault(r.kind, {"time_ms": 0.0, "share": 0.0, "count": 0})
        k["time_ms"] += r.time_ms
        k["count"] += 1
    for k in acc.values():
        k["share"] = k["time_ms"] / total if total > 0 else 0.0
    return dict(sorted(acc.items(), key=lambda kv: -kv[1]["time_ms"]))


def _dla_attribution(rows: list[MeasuredLayer]) -> dict | None:
    subgraphs = []
    for r in rows:
        if r.kind != "dla_subgraph":
            continue
        carrier = next((c for c in rows if c.name == r.extra.get("dla_time_row")), None)
        foreign = bool(r.extra.get("foreign_node"))
        subgraphs.append({
            "name": abbreviate_name(r.name), "layer_count": None if foreign else len(r.layers),
            "row_ms": r.time_ms, "carrier": carrier.name if carrier else r.name,
            "dla_ms": carrier.time_ms if carrier else r.time_ms})
    if not subgraphs:
        return None
    return {"note": DLA_TIME_NOTE, "subgraphs": subgraphs,
            "dla_ms": sum(s["dla_ms"] for s in subgraphs)}


def profile_summary(profile_path, layer_info_path=None, top: int = 10) -> dict:
    """JSON for `dlasim profile FILE [--layer-info FILE]` (docs/DESIGN.md "JSON contract").

    Keys: source, count, total_ms, layers (every row in order: name, time_ms, kind, share, layers, and
    layer_type/tactic/tile/has_sparse_weights when layer info is joined), by_kind ({kind: time_ms,
    share, count}), largest (top rows by time), dla_time_attribution (None without DLA subgraphs),
    warnings; plus gpu_compute_median_ms and profiling_overhead_ms_per_layer when a summary is known.
    """
    profile = profile_path if isinstance(profile_path, MeasuredProfile) else parse_profile(profile_path)
    if layer_info_path is not None:
        profile = join_layer_info(profile, parse_layer_info(layer_info_path))
    total = profile.total_ms
    layers = [_row_dict(r, total) for r in profile.rows]
    largest = sorted(layers, key=lambda d: -d["time_ms"])[:max(0, top)]
    out = {"source": profile.source, "count": profile.count, "total_ms": total, "layers": layers,
           "by_kind": _by_kind(profile.rows, total), "largest": largest,
           "dla_time_attribution": _dla_attribution(profile.rows), "warnings": list(profile.warnings)}
    median = _gpu_median(profile.summary)
    if median is not None:
        nonzero = sum(1 for r in profile.rows if r.time_ms > 0)
        out["gpu_compute_median_ms"] = median
        out["profiling_overhead_ms_per_layer"] = (total - median) / nonzero if nonzero else None
    return out


def render_profile_table(summary: dict) -> str:
    """A short terminal view of profile_summary(): header, time by kind, largest layers, notes."""
    count = summary.get("count")
    lines = [f"trtexec profile: {summary['source']}",
             f"runs: {count if count is not None else 'unknown'}   rows: {len(summary['layers'])}   "
             f"total (sum of per-layer averages): {summary['total_ms']:.4f} ms"]
    if summary.get("gpu_compute_median_ms") is not None:
        lines.append(f"GPU compute median without per-layer profiling: {summary['gpu_compute_median_ms']:.4f} ms")
    lines += ["", "time by kind:"]
    for kind, k in summary["by_kind"].items():
        lines.append(f"  {kind:<13}{k['time_ms']:>10.4f} ms {100 * k['share']:>6.1f}%  ({k['count']} rows)")
    lines += ["", f"largest {len(summary['largest'])} rows:",
              f"  {'time_ms':>9} {'share':>6}  {'kind':<13}name"]
    for d in summary["largest"]:
        mark = " *" if d.get("carries_dla_time") else ""
        lines.append(f"  {d['time_ms']:>9.4f} {100 * d['share']:>5.1f}%  {d['kind']:<13}"
                     f"{abbreviate_name(d['name'])}{mark}")
    dla = summary.get("dla_time_attribution")
    if dla:
        lines += ["", f"DLA time: {dla['dla_ms']:.4f} ms (* = row carrying a DLA subgraph's time)",
                  "  " + dla["note"]]
    for w in summary.get("warnings", []):
        lines.append(f"warning: {w}")
    return "\n".join(lines)
