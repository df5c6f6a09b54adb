"""TensorRT's build rules as sourced data: hardware_specs/rules/*.toml, loaded once, immutable.

What is a property of one platform (its DLA's supported ops and limits, its fusable post-ops, whether it
has sparse tensor cores) lives in that platform's spec file; what TensorRT does on every platform lives
here: which GPU ops have INT8 kernels (precision.toml), the tensor formats (formats.toml), which layers
2:4 sparsity applies to (sparsity.toml) and the rewrites that keep a layer on the DLA (rewrites.toml).
Every entry names its source; an entry without one is a SpecError naming the file and the entry.
`RULES` is the shipped set; `load_rules(folder)` reads another (a test changes one entry).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from .errors import SpecError
from .resources import spec_dir
from .safeio import load_toml

RULES_DIR = spec_dir() / "rules"


@dataclass(frozen=True)
class Formats:
    channel_align: Mapping[str, int]            # format -> C rounded up to a multiple of this
    native: Mapping[tuple[str, str], str]       # (device, precision or "tf32") -> the format its convs use
    dla_inputs: Mapping[str, frozenset]         # precision -> the formats a DLA loadable reads
    dla_outputs: Mapping[str, frozenset]        # precision -> the formats a DLA loadable writes
    gpu_linear_only_ops: frozenset              # GPU kernels that read and write the linear format only
    gpu_image: Mapping[str, str]                # precision -> the format a GPU conv reads a <= 4-channel input in
    internal: frozenset                         # layouts TensorRT uses inside an engine that I/O formats cannot name


@dataclass(frozen=True)
class Sparsity:
    gpu_precisions: frozenset
    gpu_ops: frozenset                          # anchors whose constant weights may be 2:4
    gpu_channel_multiple: int                   # input channels per group must be a multiple of this
    gpu_groups_max: int
    dla_precisions: frozenset
    dla_ops: frozenset


@dataclass(frozen=True)
class Rules:
    gpu_int8_ops: frozenset                     # GPU ops with INT8 kernels; others run FP16 when INT8 is asked
    reformat_share_min: float                   # the GPU build times wider precisions above this reformat share
    formats: Formats
    sparsity: Sparsity
    dla_rewrites: Mapping[str, str]             # op -> the rewrite that keeps it on the DLA


def _read(folder: Path, name: str) -> tuple[str, dict]:
    path = str(folder / name)
    return path, load_toml(path, "rule file", error=SpecError)


def _table(path: str, data: dict, name: str) -> dict:
    t = data.get(name)
    if not isinstance(t, dict) or not t:
        raise SpecError(f"{path}: [{name}]: missing or empty table")
    return t


def _sourced(path: str, table: str, key: str, entry, field: str | None):
    """The entry's value (`field` of an inline table, None for `key = "source"` set members); refuses an
    entry without a non-empty source."""
    where = f"{path}: [{table}] {key}"
    if field is None:
        if not isinstance(entry, str) or not entry.strip():
            raise SpecError(f"{where}: expected a source string (ref/..., a data file or a fit script)")
        return None
    if not isinstance(entry, dict) or not str(entry.get("source", "")).strip():
        raise SpecError(f"{where}: expected {{ {field} = ..., source = \"...\" }} naming its source")
    if field not in entry or set(entry) != {field, "source"}:
        raise SpecError(f"{where}: expected exactly the keys {field} and source, got {', '.join(sorted(entry))}")
    return entry[field]


def _members(path: str, data: dict, table: str) -> frozenset:
    t = _table(path, data, table)
    for k, v in t.items():
        _sourced(path, table, k, v, None)
    return frozenset(t)


def _values(path: str, data: dict, table: str, field: str, kind) -> dict:
    out = {}
    for k, v in _table(path, data, table).items():
        value = _sourced(path, table, k, v, field)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise SpecError(f"{path}: [{table}] {k}.{field}: expected {getattr(kind, '__name__', kind)}, "
                            f"got {value!r}")
        out[k] = value
    return out


def _str_set(path: str, table: str, key: str, value) -> frozenset:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SpecError(f"{path}: [{table}] {key}: expected a list of names, got {value!r}")
    return frozenset(value)


def load_rules(folder: str | Path = RULES_DIR) -> Rules:
    """The rule files in `folder` as one immutable Rules record."""
    folder = Path(folder)
    path, prec = _read(folder, "precision.toml")
    share = _values(path, prec, "precision_timing", "value", (int, float))
    if set(share) != {"reformat_share_min"} or not 0 <= share["reformat_share_min"] <= 1:
        raise SpecError(f"{path}: [precision_timing]: expected reformat_share_min in [0, 1]")
    gpu_int8 = _members(path, prec, "gpu_int8_ops")

    path, fm = _read(folder, "formats.toml")
    align = _values(path, fm, "channel_align", "c", int)
    native = {}
    for key, fmt in _values(path, fm, "native_formats", "format", str).items():
        device, _, prec = key.partition("_")
        if device not in ("dla", "gpu") or fmt not in align:
            raise SpecError(f"{path}: [native_formats] {key}: expected dla_PRECISION or gpu_PRECISION and a format "
                            f"of [channel_align], got {fmt!r}")
        native[(device, prec)] = fmt
    io = {}
    for table in ("dla_input_formats", "dla_output_formats"):
        sets = {k: _str_set(path, table, k, v) for k, v in _values(path, fm, table, "formats", list).items()}
        for k, v in sets.items():
            if not v <= set(align):
                raise SpecError(f"{path}: [{table}] {k}: {', '.join(sorted(v - set(align)))} not in [channel_align]")
        io[table] = MappingProxyType(sets)
    image = _values(path, fm, "gpu_image_formats", "format", str)
    for k, fmt in image.items():
        if fmt not in align:
            raise SpecError(f"{path}: [gpu_image_formats] {k}: {fmt!r} not in [channel_align]")
    internal = _members(path, fm, "internal_formats")
    if not internal <= set(align):
        raise SpecError(f"{path}: [internal_formats]: {', '.join(sorted(internal - set(align)))} not in [channel_align]")
    formats = Formats(MappingProxyType(align), MappingProxyType(native), io["dla_input_formats"], io["dla_output_formats"],
                      _members(path, fm, "gpu_linear_only_ops"), MappingProxyType(image), internal)

    path, sp = _read(folder, "sparsity.toml")
    gpu = {k: _sourced(path, "gpu", k, v, "values" if k in ("precisions", "ops") else "value")
           for k, v in _table(path, sp, "gpu").items()}
    dla = {k: _sourced(path, "dla", k, v, "values") for k, v in _table(path, sp, "dla").items()}
    try:
        sparsity = Sparsity(_str_set(path, "gpu", "precisions", gpu.pop("precisions")),
                            _str_set(path, "gpu", "ops", gpu.pop("ops")),
                            int(gpu.pop("channel_multiple")), int(gpu.pop("groups_max")),
                            _str_set(path, "dla", "precisions", dla.pop("precisions")),
                            _str_set(path, "dla", "ops", dla.pop("ops")))
    except KeyError as e:
        raise SpecError(f"{path}: missing entry {e.args[0]}") from None
    if gpu or dla:
        raise SpecError(f"{path}: unknown entries {', '.join(sorted(gpu) + sorted(dla))}")

    path, rw = _read(folder, "rewrites.toml")
    rewrites = _values(path, rw, "dla", "hint", str)
    return Rules(gpu_int8, float(share["reformat_share_min"]), formats, sparsity, MappingProxyType(rewrites))


RULES = load_rules()
