"""Concurrent engines: the GPU and the DLA cores running at once, sharing DRAM and GPU time.

    from dlasim.concurrent import Engine, concurrent
    r = concurrent([Engine("zoo:resnet50", "gpu"), Engine("zoo:resnet50", "dla", 0),
                    Engine("zoo:resnet50", "dla", 1)], "orin-agx")
    r.aggregate_img_per_s, r.engines[0].together_qps, r.to_dict()

Modes: "throughput" (every engine back to back, as trtexec --duration in parallel processes) and
"pipeline" (the engines are the stages of one network, in order, frames overlapping). Engines in separate
processes (processes="each") time-slice the GPU between their contexts (dlasim/concurrent/contention.py).
"""
from __future__ import annotations

from .engines import Engine, load_engines, make_engine, parse_engine

__all__ = ["Engine", "concurrent", "advise", "parse_engine", "load_engines", "make_engine"]


def concurrent(engines, hw="xavier-agx", mode: str = "throughput", iterations: int = 4,
               processes: str | None = None):
    """Per-engine latency and qps alone and together, the causes of each slowdown, aggregate img/s.
    `processes`: "each" (an engine per process, as parallel trtexec runs; the throughput default) or "one"
    (one application, a CUDA stream per engine, as the MLPerf harness; the pipeline default)."""
    from .model import run_concurrent
    return run_concurrent(list(engines), hw, mode, iterations, processes=processes)


def advise(models, hw="xavier-agx", latency_ms: float | None = None, batches=(1, 2, 4, 8, 16, 32),
           precision: str = "int8", processes: str | None = None):
    """Best assignment of the models to the GPU and DLA cores, and batch per engine, for aggregate img/s
    under a per-engine latency bound; each candidate re-estimated together."""
    from .advice import advise as _advise
    return _advise(list(models), hw, latency_ms, tuple(batches), precision, processes=processes)
