"""Contention of concurrent engines: a fluid (event) simulation over the engines' steps.

Each engine runs its steps in order, back to back (throughput mode, as trtexec --duration in parallel
processes), or as a stage of a pipeline (it may start frame n only after the previous stage finished it).
Between two events (a step finishing) the set of running steps is fixed, and so are their rates:

- Units (the GPU, each DLA core) are shared by the steps running on them at once, each getting an equal
  share (processor sharing): the GPU engine's kernels and a DLA engine's GPU-fallback layers and reformat
  copies compete for GPU time (reference/dla.md s0.1 fact 14 and s5.1: the copies into and out of DLA memory
  and the reformats run on the GPU; the forum measurement in ../shared/data/public2 FOR-01..05 shows a GPU
  engine slowing when DLA engines with GPU reformats run beside it).
- Engines in separate processes (trtexec per engine, as jetson_benchmarks and the forum thread run them)
  have their own GPU contexts, which the GPU time-slices. A DLA engine's context waits for its DLA task on
  the GPU (in trtexec profiles the GPU-side step after a DLA subgraph carries the DLA's time:
  ../shared/data/README.md), so while its DLA steps run it holds a share of the GPU's time slices that does
  no work: weight `hold` (an engine's entry in `holds`, 0 for an engine in the harness's one process). The
  GPU steps running then share the GPU as if sum(hold) more steps were on it. The weight is fitted by
  validation/fit_concurrent.py (rows FOR-01..03 of ../shared/data/public2) and kept in the platform spec.
- DRAM is shared by all running steps (reference/dla.md s0.1 fact 6: "DRAM bandwidth is shared with
  GPU/CPU", s4 FAQ: DLA and GPU contend for DRAM). A step alone needs `memory_s` to move its bytes at its
  own engine's DRAM rate. When the running steps together would draw more than the bandwidth the whole
  system sustains, every memory stream is slowed by one common factor f (bandwidth shared in proportion
  to each stream's demand); a step's time becomes overhead + max(non-memory time, memory_s / f), so a
  compute-bound step absorbs the slower stream until its memory part becomes the longer one.

Engines with the same steps (one network on DLA0 and DLA1) start spread over their iteration (`phases`,
spread_phases): started at one instant they would stay in a lockstep that independent processes do not keep
(their GPU reformats would always coincide).

Everything here is a pure function of typed records; the spec numbers come in as arguments.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Segment:
    """One step of an engine, as the stand-alone estimate costed it."""
    name: str
    kind: str                 # "layer" | "reformat" | "transition" | "overhead"
    unit: str                 # the unit it occupies: "gpu", "dla0", "dla1"
    time_s: float             # stand-alone time
    memory_s: float           # stand-alone time to move its DRAM bytes
    overhead_s: float         # fixed part (launch, synchronisation)
    dram_bytes: int

    def time_at(self, f: float) -> float:
        """Its time when its memory stream runs at f times its stand-alone rate (f <= 1)."""
        if self.memory_s <= 0.0 or f >= 1.0:
            return self.time_s
        body = max(self.time_s - self.overhead_s, 0.0)
        other = body if self.memory_s < body else 0.0
        return self.overhead_s + max(other, self.memory_s / f)

    def shared_time(self, f: float, n: float) -> float:
        """Its time with n steps on its unit at once (n may count held shares, see `holds`): the body takes
        turns on the unit, the fixed part (launch, synchronisation wait) does not occupy it."""
        t = self.time_at(f)
        return t if n <= 1 else self.overhead_s + n * (t - self.overhead_s)


@dataclass(frozen=True, slots=True)
class Span:
    """A step occurrence on the simulated timeline."""
    engine: int
    name: str
    kind: str
    unit: str
    start_s: float
    end_s: float
    iteration: int


@dataclass(frozen=True, slots=True)
class StepShare:
    """Where one engine's time went, summed over its measured iterations (per iteration)."""
    alone_s: float            # stand-alone time of the steps
    dram_s: float             # added because DRAM streams ran slower (shared bandwidth)
    unit_s: float             # added because the unit (GPU, DLA core) was shared with other engines
    copies_dram_s: float      # of dram_s, in reformat / transition steps
    copies_unit_s: float      # of unit_s, in reformat / transition steps
    wait_s: float             # pipeline: idle waiting for the previous stage or a free buffer


@dataclass(frozen=True, slots=True)
class EngineRun:
    iterations: int
    period_s: float           # mean time between the starts of consecutive measured iterations
    latency_s: float          # mean time of one iteration (throughput mode) or frame (pipeline, end to end)
    share: StepShare
    mean_dram_factor: float   # time-weighted mean of f while the engine ran


@dataclass(frozen=True, slots=True)
class SimResult:
    runs: tuple[EngineRun, ...]
    spans: tuple[Span, ...]
    dram_bytes_per_s: float   # bandwidth the system sustains (the cap)
    mean_dram_use: float      # time-weighted mean share of the cap drawn
    saturated_share: float    # share of the time the cap was reached


def dram_factor(running: list[tuple[Segment, float]], capacity: float) -> float:
    """The common factor f (0 < f <= 1) of the memory streams so that their draw fits `capacity`.

    `running`: (segment, number of steps sharing its unit). A step sharing its unit with n-1 others takes
    shared_time(f, n), so it draws bytes / shared_time(f, n).
    """
    def draw(f: float) -> float:
        return sum(s.dram_bytes / s.shared_time(f, n) for s, n in running if s.dram_bytes and s.time_s > 0)

    if capacity <= 0 or draw(1.0) <= capacity:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(40):                                  # draw(f) grows with f: bisection
        mid = 0.5 * (lo + hi)
        if mid > 0 and draw(mid) > capacity:
            hi = mid
        else:
            lo = mid
    return max(lo, 1e-9)


def simulate(engines: list[list[Segment]], capacity_bytes_per_s: float, mode: str = "throughput",
             iterations: int = 4, warmup: int = 1, keep_spans: int = 3, max_events: int = 200_000,
             buffers: int = 1, holds: list[float] | None = None,
             phases: list[float] | None = None) -> SimResult:
    """Run the engines together until each finished `warmup + iterations` iterations (pipeline: frames).

    Throughput mode: each engine loops over its steps independently. Pipeline mode: engine k is stage k; it
    starts frame n once stage k-1 finished frame n and at most `buffers` finished frames wait for stage k+1.
    `holds`: per engine, the GPU share its process holds while one of its DLA steps runs (default: none).
    `phases` (throughput mode): per engine, the share of its stand-alone iteration already done at t=0: it
    starts at the step where that share falls, and its first, partial iteration is the warm-up (default: 0).
    """
    ne = len(engines)
    if ne == 0 or any(not e for e in engines):
        raise ValueError("every engine needs at least one step")
    if holds is not None and (len(holds) != ne or min(holds) < 0):
        raise ValueError("holds: one share >= 0 per engine")
    pipeline = mode == "pipeline"
    engines = [split_overheads(e, k) for k, e in enumerate(engines)]
    warmup = max(warmup, 1)
    need = warmup + iterations
    if phases is not None and (len(phases) != ne or not all(0 <= p < 1 for p in phases)):
        raise ValueError("phases: one share in [0, 1) per engine")
    pos = [0 if pipeline or not phases else start_step(e, p) for e, p in zip(engines, phases or [0.0] * ne)]
    left = [1.0] * ne                      # fraction of the current step still to run
    it = [0] * ne                          # iterations (frames) finished
    busy = [not pipeline or k == 0 for k in range(ne)]    # pipeline: stage k has a frame to work on
    starts: list[list[float]] = [[0.0] if busy[k] else [] for k in range(ne)]
    step_start = [0.0] * ne
    acc = [[0.0] * 6 for _ in range(ne)]   # alone, dram, unit, copies_dram, copies_unit, wait (measured only)
    done = [[0.0] * 6 for _ in range(ne)]  # acc as it stood when the last measured iteration finished
    fsum = [0.0] * ne
    fbusy = [0.0] * ne
    spans: list[Span] = []
    t = use_int = sat_t = 0.0
    frame_end: list[float] = []
    memo: dict = {}                        # the running set recurs as the engines loop: f once per set
    ends: list[list[float]] = [[] for _ in range(ne)]
    for _ in range(max_events):
        if min(it) >= need:
            break
        if pipeline:
            for k in range(ne):
                if not busy[k] and _can_start(k, it, ne, buffers):
                    busy[k] = True
                    step_start[k] = t
                    starts[k].append(t)
        active = [k for k in range(ne) if busy[k]]
        if not active:
            raise RuntimeError("pipeline deadlock")
        per_unit: dict[str, float] = {}
        for k in active:
            u = engines[k][pos[k]].unit
            per_unit[u] = per_unit.get(u, 0) + 1
            if holds and holds[k] and u.startswith("dla"):   # its context waits on the GPU for this DLA step
                per_unit["gpu"] = per_unit.get("gpu", 0) + holds[k]
        running = [(engines[k][pos[k]], per_unit[engines[k][pos[k]].unit]) for k in active]
        key = tuple((k, pos[k], n) for k, (_, n) in zip(active, running))
        f = memo.get(key)
        if f is None:
            f = memo[key] = dram_factor(running, capacity_bytes_per_s)
        dur = {k: s.shared_time(f, n) for k, (s, n) in zip(active, running)}
        dt = min(left[k] * dur[k] for k in active)
        if capacity_bytes_per_s > 0:
            draw = sum(s.dram_bytes / dur[k] for k, (s, _) in zip(active, running) if dur[k] > 0)
            use_int += dt * min(draw / capacity_bytes_per_s, 1.0)
            if f < 1.0:
                sat_t += dt
        for k in range(ne):
            measured = warmup <= it[k] < need
            if not busy[k]:
                if measured:
                    acc[k][5] += dt
                continue
            s, n = engines[k][pos[k]], per_unit[engines[k][pos[k]].unit]
            if dur[k] <= 0:
                left[k] = 0.0
                continue
            frac = dt / dur[k]
            if measured:
                stretched = s.time_at(f)
                dram, unit = (stretched - s.time_s) * frac, (n - 1) * (stretched - s.overhead_s) * frac
                acc[k][0] += s.time_s * frac
                acc[k][1] += dram
                acc[k][2] += unit
                if s.kind in ("reformat", "transition"):
                    acc[k][3] += dram
                    acc[k][4] += unit
                fsum[k] += f * dt
                fbusy[k] += dt
            left[k] -= frac
        t += dt
        for k in active:
            if left[k] * dur[k] > 1e-15:
                continue
            s = engines[k][pos[k]]
            if it[k] < keep_spans:
                spans.append(Span(k, s.name, s.kind, "host" if s.unit.startswith("host") else s.unit,
                                  step_start[k], t, it[k]))
            pos[k] += 1
            left[k] = 1.0
            step_start[k] = t
            if pos[k] == len(engines[k]):
                pos[k] = 0
                it[k] += 1
                ends[k].append(t)
                if it[k] <= need:
                    done[k] = list(acc[k])
                if pipeline:
                    busy[k] = False
                    if k == ne - 1:
                        frame_end.append(t)
                else:
                    starts[k].append(t)
    else:
        # event budget spent (engines of very different periods): measure what finished, if enough did
        if any(n < warmup + 1 for n in it):
            raise RuntimeError(f"simulation did not finish one measured iteration of every engine in {max_events} "
                               f"events (engine periods too far apart)")
    runs = []
    for k in range(ne):
        n = min(it[k], need) - warmup
        period = (ends[k][warmup - 1 + n] - ends[k][warmup - 1]) / n
        lat = period
        if pipeline and k == ne - 1:
            lat = sum(frame_end[i] - starts[0][i] for i in range(warmup, warmup + n)) / n
        elif pipeline:
            lat = sum(done[k][:3]) / n
        runs.append(EngineRun(n, period, lat, StepShare(*[v / n for v in done[k]]),
                              fsum[k] / fbusy[k] if fbusy[k] else 1.0))
    return SimResult(tuple(runs), tuple(spans), capacity_bytes_per_s, use_int / t if t else 0.0,
                     sat_t / t if t else 0.0)


def split_overheads(steps: list[Segment], k: int) -> list[Segment]:
    """A GPU step's fixed part (launch, synchronisation wait) does not use the GPU: it becomes a step of
    its own on the engine's host thread (unit `hostK`, never shared), followed by the kernel, so that
    another engine's kernel has the whole GPU meanwhile."""
    out = []
    for s in steps:
        if s.unit == "gpu" and 0.0 < s.overhead_s < s.time_s:
            out.append(Segment(s.name, "overhead", f"host{k}", s.overhead_s, 0.0, s.overhead_s, 0))
            out.append(Segment(s.name, s.kind, s.unit, s.time_s - s.overhead_s, s.memory_s, 0.0, s.dram_bytes))
        else:
            out.append(s)
    return out


def start_step(steps: list[Segment], phase: float) -> int:
    """The step at which `phase` of the stand-alone iteration time has passed."""
    total = sum(s.time_s for s in steps)
    done = 0.0
    for i, s in enumerate(steps):
        if done >= phase * total - 1e-15:
            return i
        done += s.time_s
    return len(steps) - 1


def spread_phases(engines: list[list[Segment]]) -> list[float]:
    """Engines with the same steps (the same network on DLA0 and DLA1) started at one instant would run in
    a lockstep no two independent processes keep: the j-th of m alike engines starts j/m of an iteration in
    (an even spread standing for the random phases of real runs); every other engine starts at 0."""
    groups: dict[tuple, list[int]] = {}
    for k, e in enumerate(engines):
        groups.setdefault(tuple((s.kind, s.unit[:3], s.time_s, s.dram_bytes) for s in e), []).append(k)
    phases = [0.0] * len(engines)
    for ks in groups.values():
        for j, k in enumerate(ks):
            phases[k] = j / len(ks)
    return phases


def _can_start(k: int, it: list[int], ne: int, buffers: int = 1) -> bool:
    """Pipeline: stage k may start its next frame (it[k]) once stage k-1 finished it and stage k+1 is at
    most `buffers` frames behind."""
    if k > 0 and it[k - 1] <= it[k]:
        return False
    if k < ne - 1 and it[k] - it[k + 1] >= buffers + 1:
        return False
    return True
