"""Advice for a set of networks: which network on which unit (GPU, DLA0, DLA1) and which batch per engine
give the best aggregate img/s with every engine's latency under a bound.

Every unit runs one of the networks or nothing, and every network runs somewhere. For each assignment the
batch of each engine starts at the largest one whose stand-alone latency meets the bound; the engines are
then simulated together (dlasim/concurrent/contention.py) and, while an engine misses the bound together,
its batch steps down and the set is simulated again. Candidates are ranked by the aggregate img/s of that
simulation: re-estimated together, never a sum of stand-alone numbers.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..errors import DlasimError
from .engines import Engine
from .model import ConcurrentResult, estimate_engines, run_concurrent


@dataclass(frozen=True, slots=True)
class Candidate:
    engines: tuple[tuple[str, str, int], ...]      # (unit, model, batch)
    aggregate_img_per_s: float
    worst_latency_ms: float
    feasible: bool
    note: str = ""

    def describe(self) -> str:
        return ", ".join(f"{m}@{u} batch {b}" for u, m, b in self.engines)


@dataclass
class AdviceResult:
    hardware: str
    latency_ms: float | None
    candidates: list[Candidate]
    best_result: ConcurrentResult | None = None
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if not self.candidates or not self.candidates[0].feasible:
            bound = f" under {self.latency_ms} ms" if self.latency_ms else ""
            return f"no assignment meets the latency bound{bound}"
        c = self.candidates[0]
        return (f"best: {c.describe()}: {c.aggregate_img_per_s:.1f} img/s together, worst engine latency "
                f"{c.worst_latency_ms:.3f} ms" + (f" (bound {self.latency_ms} ms)" if self.latency_ms else ""))

    def to_dict(self) -> dict:
        return {"hardware": self.hardware, "latency_ms": self.latency_ms, "summary": self.summary(),
                "candidates": [{"engines": [{"unit": u, "model": m, "batch": b} for u, m, b in c.engines],
                                "aggregate_img_per_s": c.aggregate_img_per_s,
                                "worst_latency_ms": c.worst_latency_ms, "feasible": c.feasible, "note": c.note}
                               for c in self.candidates],
                "best": self.best_result.to_dict(spans=False) if self.best_result else None,
                "warnings": self.warnings}

    def render(self, top: int = 10, width: int = 100) -> str:
        lines = [f"assignments on {self.hardware}" + (f", every engine under {self.latency_ms} ms"
                                                      if self.latency_ms else "") + " (simulated together)"]
        for i, c in enumerate(self.candidates[:top]):
            flag = "" if c.feasible else "  (misses the bound)"
            lines.append(f"{i + 1:>3}. {c.aggregate_img_per_s:>9.1f} img/s  worst {c.worst_latency_ms:>9.3f} ms  "
                         f"{c.describe()}{flag}{'  ' + c.note if c.note else ''}")
        lines.append(self.summary())
        if self.best_result is not None:
            lines += ["", self.best_result.render(width)]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _units(plat) -> list[str]:
    units = ["gpu"] if plat.gpu is not None else []
    if plat.dla is not None:
        units += [f"dla{c}" for c in range(plat.dla.cores)]
    return units


def _assignments(models: list[str], units: list[str]):
    """Each unit gets a model index or None; every model is used at least once. The DLA cores are alike, so
    assignments that only swap the networks of two cores are given once."""
    seen = set()
    for combo in itertools.product([None, *range(len(models))], repeat=len(units)):
        if not set(range(len(models))) <= {c for c in combo if c is not None}:
            continue
        key = tuple(c if u == "gpu" else None for u, c in zip(units, combo)), \
            tuple(sorted((-1 if c is None else c) for u, c in zip(units, combo) if u != "gpu"))
        if key in seen:
            continue
        seen.add(key)
        yield [(u, models[i]) for u, i in zip(units, combo) if i is not None]


def _engine(unit: str, model: str, batch: int, precision: str) -> Engine:
    if unit == "gpu":
        return Engine(model, "gpu", 0, precision, batch)
    return Engine(model, "dla", int(unit[3:]), precision, batch)


def advise(models: list[str], hw="xavier-agx", latency_ms: float | None = None,
           batches: tuple[int, ...] = (1, 2, 4, 8, 16, 32), precision: str = "int8",
           max_steps: int = 12, processes: str | None = None) -> AdviceResult:
    from ..hardware import hardware
    plat = hardware(hw) if isinstance(hw, str) else hw
    units = _units(plat)
    if not models:
        raise DlasimError("advise: give at least one model")
    if len(models) > len(units):
        raise DlasimError(f"advise: {len(models)} models but {plat.name} has {len(units)} units ({', '.join(units)})")
    if latency_ms is not None and latency_ms <= 0:
        raise DlasimError("--latency-ms must be > 0")
    batches = tuple(sorted(set(batches)))
    cache: dict = {}
    alone: dict = {}

    def alone_ms(unit, model, b):
        key = (unit[:3], model, b)
        if key not in alone:
            alone[key] = estimate_engines([_engine(unit, model, b, precision)], plat, cache)[0].total_ms
        return alone[key]

    candidates, results = [], {}
    for assign in _assignments(list(models), units):
        chosen = []
        for u, m in assign:
            ok = [b for b in batches if latency_ms is None or alone_ms(u, m, b) <= latency_ms]
            chosen.append(ok[-1] if ok else batches[0])
        note = ""
        for _ in range(max_steps):
            engines = [_engine(u, m, b, precision) for (u, m), b in zip(assign, chosen)]
            r = run_concurrent(engines, plat, cache=cache, processes=processes)
            late = [i for i, e in enumerate(r.engines) if latency_ms is not None and e.together_ms > latency_ms]
            if not late:
                break
            i = max(late, key=lambda j: r.engines[j].together_ms)
            smaller = [b for b in batches if b < chosen[i]]
            if not smaller:
                note = f"{assign[i][1]}@{assign[i][0]} misses the bound even at batch {chosen[i]}"
                break
            chosen[i] = smaller[-1]
        worst = max(e.together_ms for e in r.engines)
        feasible = latency_ms is None or worst <= latency_ms
        c = Candidate(tuple((u, m, b) for (u, m), b in zip(assign, chosen)), r.aggregate_img_per_s, worst,
                      feasible, note)
        candidates.append(c)
        results[c] = r
    candidates.sort(key=lambda c: (not c.feasible, -c.aggregate_img_per_s))
    best = results[candidates[0]] if candidates else None
    return AdviceResult(plat.label, latency_ms, candidates, best, list(best.warnings) if best else [])
