"""`--exportProfile` JSON -> MeasuredProfile (gpu_tensorrt.md s4.2), and the profiling-overhead correction.

A list, optionally led by `{"count": N}`, then one record per engine layer with `name, timeMs, averageMs,
percentage` (TRT 7.0-8.2) plus `medianMs` (TRT >= 8.4). The HaX-CoNN `*_filtered.json` variant
(`name, average_time_ms, layer_count`) is read too, with a warning.
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from ..errors import ModelError
from .metadata import parse_metadata
from .names import classify, split_layer_names
from .records import DEFAULT_PER_LAYER_OVERHEAD_MS, MeasuredLayer, MeasuredProfile, load_json

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
    data = load_json(p)
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
# Profiling-overhead correction

def _number(value) -> float | None:
    """A finite float, or None for anything else (bools, strings, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def gpu_compute_median(summary: dict | None) -> float | None:
    """The un-profiled GPU compute median (ms) of a run's performance summary, when it has one."""
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
        gpu_compute_ms = gpu_compute_median(profile.summary)
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
