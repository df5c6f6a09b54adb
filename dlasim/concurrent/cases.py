"""Validation cases of concurrent engines (rows of validation/cases.csv whose metric starts `concurrent:`).

Columns as for single engines, except:
    device   the engine set, `UNIT@BATCH` joined by `+`: e.g. `gpu@64+dla0@32+dla1@32` (one model, as
             MLPerf Offline and jetson_benchmarks run it)
    options  as for single engines (applied to every engine), plus `processes=one|each` (one application
             with a stream per engine, as the MLPerf harness, or one trtexec per engine, the default), and
             `anchor=UNIT:IMG_PER_S|...`: scale each
             engine's stand-alone step times so that it runs at that measured stand-alone throughput, which
             tests the contention model alone (the prediction then starts from measured single engines)
    metric   concurrent:aggregate       predicted = 1000 / aggregate img/s (ms per image; unit img_per_s,
                                        batch 1)
             concurrent:engine=N        predicted = engine N's time per inference together (ms; unit qps)
The naive baseline, the sum of the engines' stand-alone throughputs (predicted, or anchored), is reported
beside each aggregate prediction.
"""
from __future__ import annotations

from ..errors import DlasimError
from .engines import Engine


def engine_set(text: str, model: str, precision: str, opts: dict) -> list[Engine]:
    out = []
    for item in filter(None, (p.strip() for p in text.split("+"))):
        unit, at, batch = item.partition("@")
        unit = unit.strip().lower()
        if unit == "gpu":
            dev, core = "gpu", 0
        elif unit.startswith("dla") and unit[3:].isdigit():
            dev, core = "dla", int(unit[3:])
        else:
            raise DlasimError(f"engine set: expected gpu|dlaN[@BATCH], got {item!r}")
        b = int(batch) if at else None
        out.append(Engine(model, dev, core, precision, b, opts.get("input_formats"), opts.get("output_formats"),
                          opts.get("gpu_fallback", True)))
    if not out:
        raise DlasimError("engine set: empty (e.g. gpu@64+dla0@32+dla1@32)")
    return out


def _split_anchor(options: str) -> tuple[str, dict[str, float]]:
    rest, anchor = [], {}
    for item in filter(None, (p.strip() for p in (options or "").split(";"))):
        if item.startswith("processes="):
            continue
        if item.startswith("anchor="):
            for a in item[len("anchor="):].split("|"):
                unit, _, v = a.partition(":")
                anchor[unit.strip().lower()] = float(v)
        else:
            rest.append(item)
    return ";".join(rest), anchor


def case_result(case: dict, runner):
    """The ConcurrentResult of one concurrent case (anchored engines scaled to their measured throughput)."""
    from dataclasses import replace

    from ..validate import parse_options
    from .model import estimate_engines, run_concurrent
    options, anchor = _split_anchor(case.get("options", ""))
    opts = parse_options(options)
    plat = runner.platform(case["platform"])
    graph = runner.graph(case["model"])
    engines = engine_set(case.get("device", ""), graph, case.get("precision") or "int8", opts)
    cache = runner.__dict__.setdefault("concurrent_cache", {})
    if anchor:
        ests = estimate_engines(engines, plat, cache)
        scaled = []
        for e, est in zip(engines, ests):
            if e.unit not in anchor:
                raise DlasimError(f"anchor: no measured stand-alone throughput for {e.unit}")
            measured_ms = est.batch * 1e3 / anchor[e.unit]
            scaled.append(replace(e, time_scale=measured_ms / est.total_ms))
        engines = scaled
    return run_concurrent(engines, plat, "throughput", cache=cache, processes=_processes(case.get("options", "")))


def _processes(options: str) -> str:
    """`processes=one|each` of a case's options (default each: one trtexec per engine)."""
    for item in filter(None, (p.strip() for p in (options or "").split(";"))):
        if item.startswith("processes="):
            v = item.partition("=")[2].strip()
            if v not in ("one", "each"):
                raise DlasimError(f"options: processes must be one or each, got {v!r}")
            return v
    return "each"


def predict_case(case: dict, runner) -> tuple[float, list[str], float]:
    """(predicted ms, warnings, naive-baseline ms) of one concurrent case."""
    r = case_result(case, runner)
    metric = case.get("metric", "")
    kind = metric.partition(":")[2].strip()
    base = 1e3 / r.alone_sum_img_per_s if r.alone_sum_img_per_s else float("nan")
    if kind == "aggregate":
        return 1e3 / r.aggregate_img_per_s, list(r.warnings), base
    if kind.startswith("engine="):
        i = int(kind.split("=", 1)[1])
        if not 0 <= i < len(r.engines):
            raise DlasimError(f"metric {metric!r}: engine {i} not in the set ({len(r.engines)} engines)")
        return r.engines[i].together_ms, list(r.warnings), r.engines[i].alone_ms
    raise DlasimError(f"unknown metric {metric!r} (concurrent:aggregate or concurrent:engine=N)")
