"""Engines -> stand-alone estimates -> segments -> contention simulation -> per-engine results.

The stand-alone estimate of each engine (dlasim.estimate) gives every step's time, DRAM bytes and memory
time (dlasim/cost); dlasim/concurrent/contention.py runs the engines together on the platform's shared
DRAM and shared GPU. The DRAM bandwidth all engines draw together is the platform's
`memory.concurrent_efficiency` share of its peak (the spec file names its source; for the Jetson specs an
assumption, the peak itself, since every measured aggregate is a held-out row). With the engines in
separate processes (`processes="each"`, parallel trtexec runs) each DLA engine's process holds the
platform's `gpu.process_dla_wait_share` of the GPU while its DLA task runs (fitted by
validation/fit_concurrent.py); in one process (`"one"`, the MLPerf harness) it holds none.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..columns import Column, table
from ..errors import DlasimError
from .contention import Segment, SimResult, simulate, spread_phases
from .engines import Engine

DEFAULT_CONCURRENT_EFFICIENCY = 1.0     # used when a spec has no fitted value: the peak itself (warned)
PROCESSES = ("each", "one")


@dataclass(frozen=True, slots=True)
class Cause:
    code: str                 # "dram" | "gpu_share" | "dla_share" | "copies" | "pipeline_wait"
    ms: float                 # added time per inference of the engine's batch
    text: str


@dataclass(frozen=True, slots=True)
class EngineResult:
    name: str
    model: str
    unit: str
    device: str
    precision: str
    batch: int
    alone_ms: float
    together_ms: float        # throughput mode: time per inference under contention; pipeline: stage time
    alone_qps: float
    together_qps: float
    slowdown: float
    dram_ms: float
    unit_share_ms: float
    copies_ms: float
    wait_ms: float
    mean_dram_factor: float
    gpu_ms_alone: float       # GPU time of the engine alone (its kernels, fallback layers, reformats)
    dram_bytes: int
    causes: tuple[Cause, ...]
    warnings: tuple[str, ...] = ()

    @property
    def alone_img_per_s(self) -> float:
        return self.alone_qps * self.batch

    @property
    def together_img_per_s(self) -> float:
        return self.together_qps * self.batch


@dataclass
class ConcurrentResult:
    hardware: str
    mode: str
    engines: list[EngineResult]
    aggregate_img_per_s: float           # throughput: sum over engines; pipeline: frames/s x batch
    alone_sum_img_per_s: float           # the naive sum of stand-alone throughputs
    dram_cap_bytes_per_s: float
    dram_peak_bytes_per_s: float
    mean_dram_use: float
    saturated_share: float
    pipeline_latency_ms: float | None
    spans: list = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    processes: str = "each"              # "each": an engine per process; "one": one process, a stream each
    dla_wait_share: float = 0.0          # GPU share a DLA engine's process held while its DLA task ran

    def to_dict(self, spans: bool = True) -> dict:
        d = {"hardware": self.hardware, "mode": self.mode, "processes": self.processes,
             "dla_wait_gpu_share": self.dla_wait_share,
             "aggregate_img_per_s": self.aggregate_img_per_s, "alone_sum_img_per_s": self.alone_sum_img_per_s,
             "dram": {"peak_bytes_per_s": self.dram_peak_bytes_per_s, "cap_bytes_per_s": self.dram_cap_bytes_per_s,
                      "mean_use": self.mean_dram_use, "saturated_share": self.saturated_share},
             "pipeline_latency_ms": self.pipeline_latency_ms,
             "engines": [_engine_dict(e) for e in self.engines], "warnings": list(self.warnings)}
        if spans:
            d["timeline"] = [{"engine": s.engine, "name": s.name, "kind": s.kind, "unit": s.unit,
                              "start_ms": s.start_s * 1e3, "end_ms": s.end_s * 1e3, "iteration": s.iteration}
                             for s in self.spans]
        return d

    def render(self, width: int = 100) -> str:
        return render(self, width)


def _engine_dict(e: EngineResult) -> dict:
    return {"name": e.name, "model": e.model, "unit": e.unit, "device": e.device, "precision": e.precision,
            "batch": e.batch, "alone_ms": e.alone_ms, "together_ms": e.together_ms, "alone_qps": e.alone_qps,
            "together_qps": e.together_qps, "alone_img_per_s": e.alone_img_per_s,
            "together_img_per_s": e.together_img_per_s, "slowdown": e.slowdown,
            "added_ms": {"dram": e.dram_ms, "unit_share": e.unit_share_ms, "copies": e.copies_ms,
                         "pipeline_wait": e.wait_ms},
            "mean_dram_factor": e.mean_dram_factor, "gpu_ms_alone": e.gpu_ms_alone, "dram_bytes": e.dram_bytes,
            "causes": [{"code": c.code, "ms": c.ms, "text": c.text} for c in e.causes],
            "warnings": list(e.warnings)}


def segments(est, unit_of_dla: str, scale: float = 1.0) -> list[Segment]:
    """An estimate's steps as contention segments (GPU steps on the GPU, DLA steps on the engine's core);
    `scale` multiplies the times (an engine anchored to a measured stand-alone time)."""
    out = []
    k = scale * 1e-3
    for s in est.steps:
        unit = "gpu" if s.device == "gpu" else unit_of_dla
        out.append(Segment(s.name, s.kind, unit, s.time_ms * k, s.memory_ms * k, s.overhead_ms * k, int(s.bytes)))
    return out


def _check(engines: list[Engine], plat) -> None:
    if not engines:
        raise DlasimError("concurrent: give at least one engine")
    for e in engines:
        if e.device == "dla":
            if plat.dla is None:
                raise DlasimError(f"engine {e.name}: {plat.name} has no DLA")
            if not 0 <= e.dla_core < plat.dla.cores:
                raise DlasimError(f"engine {e.name}: DLA core {e.dla_core} does not exist on {plat.name} "
                                  f"({plat.dla.cores} core(s): 0..{plat.dla.cores - 1})")
        elif plat.gpu is None:
            raise DlasimError(f"engine {e.name}: {plat.name} has no GPU")


def estimate_engines(engines: list[Engine], plat, cache: dict | None = None) -> list:
    """Each engine's stand-alone estimate (graphs loaded once per model). A cache shared between calls keys
    the estimates by platform too (the platform objects stay alive with their caller, as the graphs do)."""
    from ..api import estimate, load
    from ..importers import parse_shapes
    cache = {} if cache is None else cache
    out = []
    for e in engines:
        key = (id(plat), e.model if isinstance(e.model, str) else id(e.model), e.device, e.dla_core, e.precision,
               e.batch, e.input_formats, e.output_formats, e.gpu_fallback, e.shapes)
        if key not in cache:
            gkey = ("graph", key[1], e.batch, e.shapes)
            if gkey not in cache:
                cache[gkey] = load(e.model, batch=e.batch, shapes=parse_shapes(e.shapes) if e.shapes else None)
            cache[key] = estimate(cache[gkey], plat, device=e.device, precision=e.precision, batch=e.batch,
                                         gpu_fallback=e.gpu_fallback, dla_core=e.dla_core,
                                         input_formats=e.input_formats, output_formats=e.output_formats)
        out.append(cache[key])
    return out


def run_concurrent(engines: list[Engine], hw="xavier-agx", mode: str = "throughput", iterations: int = 4,
                   cache: dict | None = None, buffers: int = 1, processes: str | None = None,
                   wait_share: float | None = None) -> ConcurrentResult:
    """Predict the engines running together (see the package notes). `processes`: "each" (every engine in
    its own process, as parallel trtexec runs; default in throughput mode) or "one" (one application with
    a stream per engine, as the MLPerf harness; default in pipeline mode). `wait_share` replaces the spec's
    gpu.process_dla_wait_share (validation/concurrent_breakdown.py: the share a measurement implies)."""
    from ..hardware import hardware
    if mode not in ("throughput", "pipeline"):
        raise DlasimError(f"concurrent: mode must be throughput or pipeline, got {mode!r}")
    processes = processes or ("each" if mode == "throughput" else "one")
    if processes not in PROCESSES:
        raise DlasimError(f"concurrent: processes must be {' or '.join(PROCESSES)}, got {processes!r}")
    plat = hardware(hw) if isinstance(hw, str) else hw
    _check(engines, plat)
    ests = estimate_engines(engines, plat, cache)
    warnings: list[str] = []
    eff = plat.memory.concurrent_efficiency
    if eff is None:
        eff = DEFAULT_CONCURRENT_EFFICIENCY
        warnings.append(f"{plat.name} has no memory.concurrent_efficiency: the engines together may draw "
                        f"the full DRAM peak (an optimistic bound on the DRAM contention)")
    peak = plat.memory.dram_bandwidth_bytes_per_s
    cap = peak * eff
    segs = [segments(est, e.unit, e.time_scale) for e, est in zip(engines, ests)]
    if mode == "pipeline":
        batches = {est.batch for est in ests}
        if len(batches) > 1:
            raise DlasimError(f"concurrent --mode pipeline: every stage needs the same batch, got {sorted(batches)}")
    units = [e.unit for e in engines]
    if mode == "throughput":
        for u in sorted({u for u in units if units.count(u) > 1}):
            warnings.append(f"{units.count(u)} engines share {u}: they take turns on it")
    holds = None
    if processes == "each" and plat.gpu is not None and any(e.device == "dla" for e in engines):
        share = plat.gpu.process_dla_wait_share if wait_share is None else wait_share
        if share is None:
            warnings.append(f"{plat.name} has no gpu.process_dla_wait_share: the DLA engines' processes are "
                            f"taken to hold no GPU time while their DLA tasks run (optimistic for the GPU engine)")
        else:
            holds = [share if e.device == "dla" else 0.0 for e in engines]
    try:
        sim = simulate(segs, cap, mode=mode, iterations=iterations, buffers=buffers, holds=holds,
                       phases=spread_phases(segs) if mode == "throughput" else None)
    except (RuntimeError, ValueError) as err:
        raise DlasimError(f"concurrent: {err}") from None
    held = [o.name for o, h in zip(engines, holds or [0.0] * len(engines)) if h > 0]
    results = [_engine_result(e, est, run, sim, mode, engines, held, max(holds) if holds else 0.0)
               for e, est, run in zip(engines, ests, sim.runs)]
    alone_sum = sum(r.alone_img_per_s for r in results)
    pipe_lat = None
    if mode == "pipeline":
        period = sim.runs[-1].period_s
        agg = ests[-1].batch / period if period > 0 else 0.0
        pipe_lat = sim.runs[-1].latency_s * 1e3
        alone_sum = min(r.alone_img_per_s for r in results)     # the slowest stage alone
    else:
        agg = sum(r.together_img_per_s for r in results)
    for e, est in zip(engines, ests):
        warnings += [f"{e.name}: {w}" for w in est.warnings]
    return ConcurrentResult(plat.label, mode, results, agg, alone_sum, cap, peak, sim.mean_dram_use,
                            sim.saturated_share, pipe_lat, list(sim.spans), warnings,
                            processes, max(holds) if holds else 0.0)


def _engine_result(e: Engine, est, run, sim: SimResult, mode: str, engines: list[Engine], held: list[str],
                   hold: float) -> EngineResult:
    alone = est.total_ms * e.time_scale
    sh = run.share
    together = run.period_s * 1e3
    dram, unit, copies, wait = (sh.dram_s - sh.copies_dram_s) * 1e3, (sh.unit_s - sh.copies_unit_s) * 1e3, \
        (sh.copies_dram_s + sh.copies_unit_s) * 1e3, sh.wait_s * 1e3
    gpu_alone = sum(s.time_ms for s in est.steps if s.device == "gpu") * e.time_scale
    nbytes = sum(int(s.bytes) for s in est.steps)
    others = [o.name for o in engines if o is not e]
    causes = []
    if dram > 1e-9:
        causes.append(Cause("dram", dram, f"DRAM shared: +{dram:.3f} ms; its memory streams ran at "
                                          f"{run.mean_dram_factor:.0%} of their stand-alone rate on average "
                                          f"(the engines together asked for more than "
                                          f"{sim.dram_bytes_per_s / 1e9:.1f} GB/s during "
                                          f"{sim.saturated_share:.0%} of the time); "
                                          f"{nbytes / 1e6:.1f} MB of DRAM traffic per inference"))
    if unit > 1e-9:
        code = "gpu_share" if e.unit == "gpu" or gpu_alone > 0 else "dla_share"
        causes.append(Cause(code, unit, f"{'GPU' if code == 'gpu_share' else e.unit.upper()} shared: "
                                        f"+{unit:.3f} ms waiting for {'GPU time' if code == 'gpu_share' else e.unit} "
                                        f"used by {', '.join(others) or 'other engines'} "
                                        f"(this engine alone needs {gpu_alone:.3f} ms of GPU per inference)"
                                        + _held_text(e.name, held, hold, code)))
    if copies > 1e-9:
        causes.append(Cause("copies", copies, f"copies at hand-overs: +{copies:.3f} ms in reformat/transition "
                                              f"copies (DRAM {sh.copies_dram_s * 1e3:.3f} ms, GPU share "
                                              f"{sh.copies_unit_s * 1e3:.3f} ms)"))
    if wait > 1e-9:
        causes.append(Cause("pipeline_wait", wait, f"pipeline: {wait:.3f} ms idle waiting for the previous "
                                                   f"stage or a free buffer"))
    causes.sort(key=lambda c: -c.ms)
    qps_alone = 1e3 / alone if alone > 0 else 0.0
    qps_together = 1e3 / together if together > 0 else 0.0
    busy = (sh.alone_s + sh.dram_s + sh.unit_s) * 1e3
    return EngineResult(e.name, est.model, e.unit, e.device, est.precision, est.batch, alone,
                        together if mode == "throughput" else busy, qps_alone, qps_together,
                        together / alone if alone > 0 else 1.0, dram, unit, copies, wait, run.mean_dram_factor,
                        gpu_alone, nbytes, tuple(causes))


def _held_text(name: str, held: list[str], hold: float, code: str) -> str:
    others = [n for n in held if n != name]
    if code != "gpu_share" or not others:
        return ""
    return (f"; in separate processes the GPU time-slices between their contexts, and {', '.join(others)} "
            f"held {hold:.2f} of a GPU share{' each' if len(others) > 1 else ''} while waiting for "
            f"{'their' if len(others) > 1 else 'its'} DLA task")


def render(r: ConcurrentResult, width: int = 100) -> str:
    """The engine table (in column blocks when it is wider than `width`: dlasim/columns.py), the aggregate and
    the causes of each slowdown (one line each: the CLI wraps them)."""
    lines = [f"{len(r.engines)} engine(s) on {r.hardware}, mode {r.mode}; "
             f"DRAM {r.dram_peak_bytes_per_s / 1e9:.1f} GB/s "
             f"peak, {r.dram_cap_bytes_per_s / 1e9:.1f} GB/s drawn together at most"]
    columns = [Column("unit", 4, left=True), Column("batch", 5), Column("alone ms", 8), Column("together ms", 11),
               Column("alone qps", 9), Column("together qps", 12), Column("slowdown", 8), Column("+DRAM", 7),
               Column("+share", 7), Column("+copies", 7)]
    # the engine's name in full when the first block still holds unit, batch and both latencies beside it
    room = width - sum(c.width + 2 for c in columns[:4])
    name_w = min(max([6] + [len(e.name) for e in r.engines]), max(24, room))
    columns.insert(0, Column("engine", name_w, left=True))
    rows = [[e.name if len(e.name) <= name_w else e.name[: name_w - 3] + "...", e.unit, str(e.batch),
             f"{e.alone_ms:.3f}", f"{e.together_ms:.3f}", f"{e.alone_qps:.1f}", f"{e.together_qps:.1f}",
             f"{e.slowdown:.2f}x", f"{e.dram_ms:.3f}", f"{e.unit_share_ms:.3f}", f"{e.copies_ms:.3f}"]
            for e in r.engines]
    lines += table(columns, rows, width)
    if r.mode == "pipeline":
        lines.append(f"pipeline: {r.aggregate_img_per_s:.1f} img/s, frame latency {r.pipeline_latency_ms:.3f} ms "
                     f"(slowest stage alone: {r.alone_sum_img_per_s:.1f} img/s)")
    else:
        lines.append(f"aggregate {r.aggregate_img_per_s:.1f} img/s together; sum of stand-alone "
                     f"{r.alone_sum_img_per_s:.1f} img/s")
    lines.append(f"DRAM: {r.mean_dram_use:.0%} of the {r.dram_cap_bytes_per_s / 1e9:.1f} GB/s drawn on average, "
                 f"saturated {r.saturated_share:.0%} of the time")
    for e in r.engines:
        for c in e.causes:
            lines.append(f"  {e.name}: {c.text}")
    for w in r.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)
