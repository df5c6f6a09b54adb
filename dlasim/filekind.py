"""What a file looks like (a model, a trtexec profile, layer info, a log, an engine), so that a file passed to
the wrong option gets one line saying what it is and which option takes it.

Only the shape of the file is read (JSON top-level keys, the first bytes), never its meaning.
"""
from __future__ import annotations

from pathlib import Path

from .errors import DlasimError
from .safeio import load_json

WHAT = {
    "onnx": ("an ONNX model", "MODEL (or --onnx=FILE)"),
    "prototxt": ("a Caffe prototxt model", "MODEL (or --deploy=FILE)"),
    "graph": ("a dlasim graph JSON (a model, Graph.to_json)", "MODEL"),
    "profile": ("a trtexec --exportProfile JSON (per-layer times)", "explain --measured, profile or calibrate --profile"),
    "layer_info": ("a trtexec --exportLayerInfo JSON (engine layers)", "--layer-info"),
    "times": ("a trtexec --exportTimes JSON (per-inference timestamps)", "no dlasim option"),
    "metadata": ("trtexec/TREx metadata JSON", "no dlasim option (it is read beside a profile)"),
    "log": ("a trtexec log", "no dlasim option"),
    "engine": ("a serialized TensorRT engine (dlasim cannot read engines)", "no dlasim option; pass the model it was built from"),
    "caffemodel": ("Caffe weights (.caffemodel)", "--model as trtexec (weights do not change latency)"),
}


def _json_kind(path: Path) -> str | None:
    try:
        d = load_json(path)
    except DlasimError:          # unreadable, malformed or too deep: the reader it goes to says what is wrong
        return None
    if isinstance(d, dict):
        if "Layers" in d:
            return "layer_info"
        if "layers" in d and "tensors" in d:
            return "graph"
        if {"performance_summary", "model_options", "build_options", "inference_options"} & set(d):
            return "metadata"
        return None
    if isinstance(d, list) and d and all(isinstance(x, dict) for x in d[:3]):
        keys = set().union(*(x.keys() for x in d[:3]))
        if "averageMs" in keys or "timeMs" in keys or keys == {"count"}:
            return "profile"
        if "startEnqMs" in keys or "latencyMs" in keys:
            return "times"
        if "ComputeCapability" in keys or "Name" in keys:
            return "metadata"
    return None


def kind(path) -> str | None:
    """'onnx', 'prototxt', 'graph', 'profile', 'layer_info', 'times', 'metadata', 'log', 'engine', 'caffemodel',
    or None when the file is missing or unrecognised (the reader it goes to then says what is wrong)."""
    p = Path(str(path))
    if str(path).startswith("zoo:") or not p.is_file():
        return None
    suffix = p.suffix.lower()
    if suffix == ".onnx":
        return "onnx"
    if suffix == ".prototxt":
        return "prototxt"
    if suffix in (".plan", ".engine", ".trt"):
        return "engine"
    if suffix == ".caffemodel":
        return "caffemodel"
    if suffix == ".json":
        return _json_kind(p)
    try:
        with open(p, "rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    if b"&&&& RUNNING TensorRT" in head or b"[TRT]" in head:
        return "log"
    if head.lstrip()[:1] in (b"[", b"{"):           # a profile saved as .profile, .txt, ...
        return _json_kind(p)
    return None


def _refuse(path, k: str, option: str) -> None:
    what, belongs = WHAT[k]
    raise DlasimError(f"{path}: looks like {what}, not what {option} takes; it belongs to {belongs}")


def check_model(path, option: str = "MODEL") -> None:
    """Raise a one-line DlasimError when `path` is clearly not a model (a profile, layer info, a log...)."""
    k = kind(path)
    if k is not None and k not in ("onnx", "prototxt", "graph"):
        _refuse(path, k, option)


def check_profile(path, option: str, layer_info: bool = False) -> None:
    """Raise when `path` is clearly not a trtexec --exportProfile JSON (or --exportLayerInfo with layer_info)."""
    k = kind(path)
    want = "layer_info" if layer_info else "profile"
    if k is not None and k != want:
        _refuse(path, k, option)
