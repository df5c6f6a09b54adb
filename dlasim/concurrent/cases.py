"""Validation cases of concurrent engines (rows of validation/cases.csv whose metric starts `concurrent:`).

Columns as for single engines, except:
    device   the engine set, `UNIT@BATCH` joined by `+`: e.g. `gpu@64+dla0@32+dla1@32` (one model, as
             MLPerf Offline and jetson_benchmarks run it); for a pipeline, the units of its stages in order
             (`gpu+dla0`)
    options  as for single engines (applied to every engine), plus
             `processes=one|each`  one application with a stream per engine, as the MLPerf harness, or one
                                   trtexec per engine (the default)
             `anchor=UNIT:IMG_PER_S|...`  scale each engine's stand-alone step times so that it runs at that
                                   measured stand-alone throughput, which tests the contention model alone
             `cut=LAYER[,LAYER]`, `buffers=N`  (concurrent:frame_ms) cut the model after these layers into
                                   the pipeline's stages; N finished frames may wait between two stages
                                   (0: one frame in flight, the stages one after another; default 1)
    metric   concurrent:aggregate       predicted = 1000 / aggregate img/s (ms per image; unit img_per_s,
                                        batch 1)
             concurrent:engine=N        predicted = engine N's time per inference together (ms; unit qps)
             concurrent:frame_ms        pipeline mode: predicted = a frame's latency through the stages (ms)
The naive baseline, the sum of the engines' stand-alone throughputs (predicted, or anchored), is reported
beside each aggregate prediction; for a pipeline, the sum of the stages' stand-alone times.
"""
from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass(frozen=True, slots=True)
class CaseOptions:
    """A concurrent case's own options, split from those every engine takes (`rest`)."""
    rest: str
    anchor: dict[str, float] = field(default_factory=dict)
    processes: str = "each"
    cuts: tuple[str, ...] = ()
    buffers: int = 1


def case_options(options: str) -> CaseOptions:
    rest, anchor, kw = [], {}, {}
    for item in filter(None, (p.strip() for p in (options or "").split(";"))):
        key, _, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if key == "anchor":
            for a in value.split("|"):
                unit, _, v = a.partition(":")
                anchor[unit.strip().lower()] = float(v)
        elif key == "processes":
            if value not in ("one", "each"):
                raise DlasimError(f"options: processes must be one or each, got {value!r}")
            kw["processes"] = value
        elif key == "cut":
            kw["cuts"] = tuple(c.strip() for c in value.split(",") if c.strip())
        elif key == "buffers":
            if not value.isdigit():
                raise DlasimError(f"options: buffers must be an integer >= 0, got {value!r}")
            kw["buffers"] = int(value)
        else:
            rest.append(item)
    return CaseOptions(";".join(rest), anchor, **kw)


def case_result(case: dict, runner, wait_share: float | None = None):
    """The ConcurrentResult of one concurrent case (anchored engines scaled to their measured throughput;
    a concurrent:frame_ms case is the model cut into pipeline stages). `wait_share`: run_concurrent's."""
    from dataclasses import replace

    from ..measures import parse_options
    from .model import estimate_engines, run_concurrent
    co = case_options(case.get("options", ""))
    opts = parse_options(co.rest)
    plat = runner.platform(case["platform"])
    graph = runner.graph(case["model"])
    engines = engine_set(case.get("device", ""), graph, case.get("precision") or "int8", opts)
    cache = runner.__dict__.setdefault("concurrent_cache", {})
    if case.get("metric", "").strip() == "concurrent:frame_ms":
        from .split import split_graph
        if not co.cuts:
            raise DlasimError("concurrent:frame_ms: options need cut=LAYER (where the stages meet)")
        stages = runner.__dict__.setdefault("concurrent_stages", {})
        key = (case["model"], co.cuts)
        if key not in stages:
            stages[key] = split_graph(graph, list(co.cuts))
        if len(stages[key]) != len(engines):
            raise DlasimError(f"concurrent:frame_ms: {len(stages[key])} stages from the cuts, "
                              f"{len(engines)} units in device {case.get('device')!r}")
        engines = [replace(e, model=g, label=f"stage {i + 1}@{e.unit}") for i, (e, g) in
                   enumerate(zip(engines, stages[key]))]
        return run_concurrent(engines, plat, "pipeline", cache=cache, buffers=co.buffers, processes=co.processes)
    if co.anchor:
        ests = estimate_engines(engines, plat, cache)
        scaled = []
        for e, est in zip(engines, ests):
            if e.unit not in co.anchor:
                raise DlasimError(f"anchor: no measured stand-alone throughput for {e.unit}")
            measured_ms = est.batch * 1e3 / co.anchor[e.unit]
            scaled.append(replace(e, time_scale=measured_ms / est.total_ms))
        engines = scaled
    return run_concurrent(engines, plat, "throughput", cache=cache, processes=co.processes, wait_share=wait_share)


def predict_case(case: dict, runner) -> tuple[float, list[str], float]:
    """(predicted ms, warnings, naive-baseline ms) of one concurrent case."""
    r = case_result(case, runner)
    metric = case.get("metric", "")
    kind = metric.partition(":")[2].strip()
    base = 1e3 / r.alone_sum_img_per_s if r.alone_sum_img_per_s else float("nan")
    if kind == "aggregate":
        return 1e3 / r.aggregate_img_per_s, list(r.warnings), base
    if kind == "frame_ms":
        return r.pipeline_latency_ms, list(r.warnings), sum(e.alone_ms for e in r.engines)
    if kind.startswith("engine="):
        i = int(kind.split("=", 1)[1])
        if not 0 <= i < len(r.engines):
            raise DlasimError(f"metric {metric!r}: engine {i} not in the set ({len(r.engines)} engines)")
        return r.engines[i].together_ms, list(r.warnings), r.engines[i].alone_ms
    raise DlasimError(f"unknown metric {metric!r} (concurrent:aggregate, concurrent:engine=N or "
                      f"concurrent:frame_ms)")
