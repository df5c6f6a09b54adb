"""Observations: a measured number and how to predict it from a platform (a plan's steps, a whole plan, a function).

Graphs are loaded and plans built once; only costing is repeated (`dataclasses.replace(plan, platform=...)`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..hardware import Platform

@dataclass
class Observation:
    """One measured number and how to predict it: steps of a plan, a whole plan, or a function."""
    label: str
    measured: float
    plan: object = None
    steps: tuple | None = None          # None with a plan: the plan's total
    fn: Callable | None = None          # fn(platform) -> predicted value
    unit: str = "ms"
    dataset: str = ""

    def predict(self, plat: Platform, cache: "CostCache") -> float:
        if self.fn is not None:
            return float(self.fn(plat))
        costs = cache.costs(self.plan, plat)
        if self.steps is None:
            return float(sum(costs))
        return float(sum(costs[i] for i in self.steps))


class CostCache:
    """Step times (ms) of each plan for the platform being evaluated; each plan is costed once."""

    def __init__(self):
        self._plat = None
        self._costs: dict[int, list[float]] = {}

    def costs(self, plan, plat) -> list[float]:
        from ..cost import cost_step
        if plat is not self._plat:
            self._plat, self._costs = plat, {}
        key = id(plan)
        if key not in self._costs:
            p = dataclasses.replace(plan, platform=plat)
            self._costs[key] = [cost_step(s, p).total_s * 1e3 for s in plan.steps]
        return self._costs[key]


def total_observation(plan, measured_ms: float, label: str, dataset: str = "") -> Observation:
    return Observation(label, float(measured_ms), plan=plan, steps=None, dataset=dataset)


def row_observations(plan, profile, split_dla: bool = True, layer_map: dict | None = None,
                     gpu_compute_ms: float | None = None, dataset: str = "") -> tuple[list[Observation], list]:
    """One observation per group of measured rows matched to predicted steps (dlasim.measured.join).

    Groups with nothing measured or nothing predicted are left out; the groups are returned too.
    """
    from ..measured import join, load_profile, measured_rows
    prof = load_profile(profile)
    rows, _ = measured_rows(prof, gpu_compute_ms)
    groups = join(plan, rows, split_dla=split_dla, layer_map=layer_map)
    obs = []
    for g in groups:
        if g.rows and g.steps and g.measured_ms > 0:
            obs.append(Observation(g.name, g.measured_ms, plan=plan, steps=tuple(g.steps),
                                   dataset=dataset or Path(prof.source).name))
    return obs, groups


def predict_all(obs, plat) -> np.ndarray:
    cache = CostCache()
    return np.array([o.predict(plat, cache) for o in obs], dtype=float)


def error_table(obs, pred) -> dict:
    rows, errs = [], []
    for o, p in zip(obs, pred):
        err = 100.0 * (p / o.measured - 1.0) if o.measured > 0 else None
        if err is not None:
            errs.append(abs(err))
        rows.append({"label": o.label, "dataset": o.dataset, "unit": o.unit, "measured": o.measured,
                     "predicted": float(p), "error_pct": err})
    return {"median_abs_error_pct": float(np.median(errs)) if errs else None,
            "mean_abs_error_pct": float(np.mean(errs)) if errs else None, "n": len(rows), "rows": rows}
