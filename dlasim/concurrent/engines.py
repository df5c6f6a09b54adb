"""Engine set descriptions: what runs where, parsed from the command line or a TOML file.

An engine is a model with its own device (gpu, or dla with a core), precision, batch and I/O formats, as
one trtexec process would build it. `--engine` text: `MODEL[,key=value...]`, keys device (gpu|dla0|dla1|dla),
precision, batch, input_formats, output_formats, gpu_fallback, label, shapes (trtexec's --shapes spelling,
`images:1x3x640x640`: the input shapes of a model with dynamic dimensions; in `--engine` text one input, as
the text's commas separate keys). A file holds `[[engine]]` tables with the same keys plus `model`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..build_options import parse_flag
from ..errors import DlasimError
from ..dims import DIM_MAX
from ..safeio import load_toml

_KEYS = ("device", "precision", "batch", "input_formats", "output_formats", "gpu_fallback", "label",
         "dla_core", "model", "shapes")
_PRECISIONS = ("fp32", "fp16", "int8", "best")


@dataclass(frozen=True, slots=True)
class Engine:
    model: object             # a path, zoo:NAME, or a Graph
    device: str = "gpu"       # "gpu" | "dla"
    dla_core: int = 0
    precision: str = "int8"
    batch: int | None = None
    input_formats: str | None = None
    output_formats: str | None = None
    gpu_fallback: bool = True
    label: str = ""
    time_scale: float = 1.0   # anchoring: stand-alone step times scaled by this (validation only; 1 = as predicted)
    shapes: str | None = None  # trtexec --shapes text for the model's inputs (dynamic dimensions)

    @property
    def unit(self) -> str:
        return "gpu" if self.device == "gpu" else f"dla{self.dla_core}"

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        m = self.model if isinstance(self.model, str) else getattr(self.model, "name", "graph")
        return f"{m}@{self.unit}"


def _device(value: str, where: str) -> tuple[str, int | None]:
    v = value.strip().lower()
    if v == "gpu":
        return "gpu", None
    if v == "dla":
        return "dla", None
    if v.startswith("dla") and v[3:].isdigit():
        return "dla", int(v[3:])
    raise DlasimError(f"{where}: device must be gpu, dla, dla0 or dla1, got {value!r}")


def make_engine(fields: dict, where: str) -> Engine:
    """An Engine from key/value pairs (strings from the CLI, or TOML values)."""
    unknown = [k for k in fields if k not in _KEYS]
    if unknown:
        raise DlasimError(f"{where}: unknown key {unknown[0]!r} (expected {', '.join(_KEYS)})")
    if not fields.get("model"):
        raise DlasimError(f"{where}: no model (a path or zoo:NAME)")
    kw: dict = {"model": str(fields["model"])}
    dev, core = _device(str(fields.get("device", "gpu")), where)
    kw["device"] = dev
    if "dla_core" in fields:
        core = _int(fields["dla_core"], where, "dla_core")
    kw["dla_core"] = core or 0
    if "precision" in fields:
        p = str(fields["precision"]).lower()
        if p not in _PRECISIONS:
            raise DlasimError(f"{where}: precision must be one of {', '.join(_PRECISIONS)}, got {p!r}")
        kw["precision"] = p
    if "batch" in fields:
        kw["batch"] = _int(fields["batch"], where, "batch")
        if not 1 <= kw["batch"] <= DIM_MAX:
            raise DlasimError(f"{where}: batch must be from 1 to {DIM_MAX}")
    for k in ("input_formats", "output_formats", "label"):
        if k in fields:
            kw[k] = str(fields[k])
    if "shapes" in fields:
        from ..importers import parse_shapes
        try:
            parse_shapes(str(fields["shapes"]))         # checked here: the error names the engine
        except DlasimError as e:
            raise DlasimError(f"{where}: shapes: {e}") from None
        kw["shapes"] = str(fields["shapes"])
    if "gpu_fallback" in fields:
        kw["gpu_fallback"] = parse_flag(fields["gpu_fallback"], f"{where}: gpu_fallback")
    return Engine(**kw)


def _int(v, where: str, key: str) -> int:
    """An integer from a TOML integer or CLI text; a float, bool or other value is refused (not truncated)."""
    if type(v) is int:
        return v
    if isinstance(v, str) and v.strip().lstrip("+-").isdigit():
        return int(v)
    raise DlasimError(f"{where}: {key} must be an integer, got {v!r}")


def parse_engine(text: str, defaults: dict | None = None) -> Engine:
    """`zoo:resnet50,device=dla1,batch=8` -> Engine (defaults fill keys the text leaves out)."""
    model, *pairs = [p.strip() for p in text.split(",") if p.strip()] or [""]
    if not model:
        raise DlasimError("--engine: empty")
    fields = dict(defaults or {}, model=model)
    for p in pairs:
        k, eq, v = p.partition("=")
        if not eq:
            raise DlasimError(f"--engine {text!r}: expected key=value, got {p!r}")
        fields[k.strip()] = v.strip()
    return make_engine(fields, f"--engine {text!r}")


def load_engines(path: str, defaults: dict | None = None) -> tuple[list[Engine], dict]:
    """Engines from a TOML file: optional top-level `hw`, `mode`, `processes`, and `[[engine]]` tables."""
    data = load_toml(path, "engines file", error=DlasimError)    # a regular file, capped (a FIFO is refused)
    tables = data.get("engine")
    if not isinstance(tables, list) or not tables:
        raise DlasimError(f"{path}: expected [[engine]] tables (model, device, precision, batch, ...)")
    top = {k: v for k, v in data.items() if k != "engine"}
    bad = [k for k in top if k not in ("hw", "mode", "processes")]
    if bad:
        raise DlasimError(f"{path}: unknown top-level key {bad[0]!r} (expected hw, mode, processes, [[engine]])")
    if "processes" in top and top["processes"] not in ("each", "one"):
        raise DlasimError(f"{path}: processes must be each or one, got {top['processes']!r}")
    engines = [make_engine({**(defaults or {}), **t}, f"{path}: engine {i + 1}") for i, t in enumerate(tables)]
    return engines, top


def with_batch(e: Engine, batch: int) -> Engine:
    return replace(e, batch=batch)
