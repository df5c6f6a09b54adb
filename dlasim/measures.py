"""The columns of a validation case read into values: its `options` as estimate keywords (parse_options, shared
by dlasim/validate.py and dlasim/concurrent/cases.py), and its measured side, the `measured` expression read
from its data file, in ms.

measured (a number, or read from the data file the source names):
    median(PATH:COLUMN)               median of a CSV column ('#' lines are comments)
    csvsum(PATH:COLUMN:KEY=V1|V2)     sum of COLUMN over the rows whose KEY is one of the values
    json(PATH:a.b[k=v,k2=v2].c)       a JSON value; [k=v,...] picks the one list item with those fields
    trex_gpu_median(PATH)             'GPU Compute Time' median of a trex *.profile.metadata.json
    profile_total(PATH)               the sum of a trtexec --exportProfile file's rows (averageMs), one frame
    fps_gap_ms(PATH:COLUMN:KEY=A|B)    1000/value(A) - 1000/value(B) of two FPS rows (ms): work both runs
                                      share, such as an app's host pre/post-processing, cancels
    t2t_sync_gap_ms(PATH:KEY=A|B|...)  median over the named rows of a torch2trt benchmark table of its Latency
                                      (the value column, ms, one synchronisation per call) minus 1000 / its
                                      Throughput (the quote's 'Throughput (TensorRT) X', back-to-back calls):
                                      the per-call host and synchronisation time the engine does not see
    dla_gap_ms(PROFILE_A|PROFILE_B)   the DLA-carrying row of trtexec profile A minus that of B (ms): the DLA
                                      time of the layers A's DLA part runs and B's does not; (PROFILE_A) alone:
                                      that row
unit (to milliseconds): ms; us; qps (latency of one inference = engines / qps); img_per_s (latency of one
inference of the batch = batch * engines / img_per_s). `engines` (default 1) is the number of engines that
share the throughput, e.g. 2 for Orin's two DLAs.
"""
from __future__ import annotations

import csv
import json
import re
import statistics
from pathlib import Path

from .errors import DlasimError
from .resources import data_root


def data_path(text: str, root: Path) -> Path:
    p = Path(text.strip())
    return p if p.is_absolute() else root / p


def _csv_rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.lstrip().startswith("#")))


def _json_select(data, path: str):
    for part in filter(None, re.findall(r"[^.\[\]]+|\[[^\]]*\]", path)):
        if part.startswith("["):
            want = dict(kv.split("=", 1) for kv in part[1:-1].split(","))
            hits = [item for item in data if isinstance(item, dict)
                    and all(str(item.get(k)) == v for k, v in want.items())]
            if len(hits) != 1:
                raise DlasimError(f"json selector {part} matches {len(hits)} items (need exactly 1)")
            data = hits[0]
        else:
            data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def measured_value(expr: str, root: Path | None = None) -> float:
    """The measured number of a case, in the case's unit (see the module notes). An expression that does
    not parse, or names a missing file, column or row, is a one-line DlasimError naming the expression."""
    root = data_root() if root is None else root
    expr = expr.strip()
    try:
        return _value(expr, root)
    except OSError as e:
        raise DlasimError(f"measured {expr!r}: cannot read {e.filename or 'the data file'} ({e.strerror or e})") from None
    except KeyError as e:
        raise DlasimError(f"measured {expr!r}: no column or key {e.args[0]!r} in the data file") from None
    except (ValueError, IndexError, TypeError, ZeroDivisionError, statistics.StatisticsError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise DlasimError(f"measured {expr!r}: expected a number or one of median, csvsum, json, fps_gap_ms, "
                          f"t2t_sync_gap_ms, dla_gap_ms, profile_total, trex_gpu_median with its arguments ({msg})") from None


def _value(expr: str, root: Path) -> float:
    m = re.fullmatch(r"(\w+)\((.*)\)", expr, flags=re.S)
    if not m:
        return float(expr)
    fn, arg = m.group(1), m.group(2)
    if fn == "median":
        path, _, col = arg.rpartition(":")
        return statistics.median(float(r[col]) for r in _csv_rows(data_path(path, root)))
    if fn == "csvsum":
        path, col, sel = arg.split(":", 2)
        key, _, values = sel.partition("=")
        wanted = values.split("|")
        rows = {r[key]: r for r in _csv_rows(data_path(path, root))}
        missing = [v for v in wanted if v not in rows]
        if missing:
            raise DlasimError(f"csvsum: no row with {key}={missing[0]!r} in {path}")
        return sum(float(rows[v][col]) for v in wanted)
    if fn == "json":
        path, _, sel = arg.partition(":")
        data = json.loads(data_path(path, root).read_text(encoding="utf-8"))
        return float(_json_select(data, sel))
    if fn == "fps_gap_ms":
        path, col, sel = arg.split(":", 2)
        key, _, values = sel.partition("=")
        a, sep, b = values.partition("|")
        if not sep:
            raise DlasimError(f"fps_gap_ms: expected {key}=A|B, got {sel!r}")
        rows = {r[key]: r for r in _csv_rows(data_path(path, root))}
        for v in (a, b):
            if v not in rows:
                raise DlasimError(f"fps_gap_ms: no row with {key}={v!r} in {path}")
        return 1e3 / float(rows[a][col]) - 1e3 / float(rows[b][col])
    if fn == "t2t_sync_gap_ms":
        path, _, sel = arg.partition(":")
        key, _, values = sel.partition("=")
        rows = {r[key]: r for r in _csv_rows(data_path(path, root))}
        return statistics.median(_t2t_sync_gap(rows, v, path) for v in values.split("|"))
    if fn == "dla_gap_ms":
        a, sep, b = arg.partition("|")
        return _dla_row_ms(data_path(a, root)) - (_dla_row_ms(data_path(b, root)) if sep else 0.0)
    if fn in ("profile_total", "trex_gpu_median"):
        from .trtexec import parse_metadata, parse_profile
        path = data_path(arg, root)
        return float(parse_profile(path).total_ms if fn == "profile_total"
                     else parse_metadata(path)["gpu_compute_ms"]["median"])
    raise DlasimError(f"measured: unknown function {fn!r}")


_T2T_THROUGHPUT = re.compile(r"Throughput \(TensorRT\) ([0-9.]+(?:e[+-]?[0-9]+)?)")


def _t2t_sync_gap(rows: dict, case_id: str, path: str) -> float:
    """A torch2trt row's Latency (ms) minus 1000 / its Throughput (NVIDIA-AI-IOT/torch2trt benchmark: latency
    synchronises after every call, throughput once after the loop, so their difference is what one call spends
    outside the GPU's work when the GPU is the bottleneck)."""
    if case_id not in rows:
        raise DlasimError(f"t2t_sync_gap_ms: no row {case_id!r} in {path}")
    m = _T2T_THROUGHPUT.search(rows[case_id].get("quote") or "")
    if not m:
        raise DlasimError(f"t2t_sync_gap_ms: row {case_id!r} quotes no 'Throughput (TensorRT)'")
    return float(rows[case_id]["value"]) - 1e3 / float(m.group(1))


def _dla_row_ms(path: Path) -> float:
    """The time of the row that carries a Xavier trtexec profile's DLA execution (dlasim.trtexec marks it
    `carries_dla_time`; validation/data/README.md "How DLA time is attributed")."""
    from .trtexec import parse_profile
    rows = [r for r in parse_profile(path).rows if r.extra.get("carries_dla_time")]
    if len(rows) != 1:
        raise DlasimError(f"dla_gap_ms: {path.name}: expected one row carrying the DLA time, found {len(rows)}")
    return rows[0].time_ms


def to_ms(value: float, unit: str, batch: int | None, engines: int) -> float:
    unit = (unit or "ms").lower()
    if unit == "ms":
        return value
    if unit == "us":
        return value / 1e3
    if unit in ("qps", "img_per_s") and not value > 0:
        raise DlasimError(f"measured {value!r} {unit}: a rate must be positive")
    if unit == "qps":
        return 1e3 * engines / value
    if unit == "img_per_s":
        if not batch:
            raise DlasimError("unit img_per_s needs a batch")
        return 1e3 * batch * engines / value
    raise DlasimError(f"unknown unit {unit!r}")


def parse_options(text: str) -> dict:
    """`input_formats=int8:dla_hwc4;shapes=input:1x3x768x1280` -> keyword arguments of dlasim.estimate."""
    from .build_options import parse_flag
    from .importers import parse_shapes
    out: dict = {}
    for item in filter(None, (p.strip() for p in (text or "").split(";"))):
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq:
            raise DlasimError(f"options: expected key=value, got {item!r}")
        if key in ("input_formats", "output_formats", "sparsity"):
            out[key] = value
        elif key == "shapes":
            out[key] = parse_shapes(value)
        elif key == "gpu_fallback":
            out[key] = parse_flag(value, "options: gpu_fallback")
        elif key == "dla_core":
            if not value.isdigit():
                raise DlasimError(f"options: dla_core must be an integer >= 0, got {value!r}")
            out[key] = int(value)
        else:
            raise DlasimError(f"options: unknown key {key!r}")
    return out
