"""Fit hardware-spec parameters to measurements with bounded, robust least squares.

- Parameters are dotted spec paths ("dla.mac_efficiency", "gpu.kernel_floor_s", "gpu.memory_kernel_floor_s",
  "copies.reformat_floor_s", ...). Bounds come from the pydantic field constraints, narrowed to sensible
  ranges: efficiencies (0.02, 1], times (0, 1 ms]. A parameter vector is applied with
  `model_copy(update=...)` on the sub-block, so nothing is read or written in the loop.
- Observations are (predicted as a function of the platform, measured): whole-network totals, groups of
  a measured profile joined to predicted steps (dlasim.explainer.join.join), or any function of the platform
  (e.g. a sparse/dense time ratio). Graphs are loaded and plans built once; only costing is repeated
  (`dataclasses.replace(plan, platform=...)`).
- Residuals are log(predicted / measured); the loss is soft_l1; the fit runs in log-parameter space
  (scipy.optimize.least_squares with bounds).
- Identifiability: more parameters than observations is refused. After a fit, a parameter whose Jacobian
  column is ~0, that is collinear with others, or whose 1-sigma band exceeds a factor e is reported as
  unconstrained, reset to its prior value, and the rest is fitted again.
- `write_spec` copies the source TOML text and patches `key = value` in the right [table] and the
  field's line in the matching [table.sources], so comments and formatting survive; written atomically
  and checked by loading it.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .errors import DlasimError, SpecError
from .hardware import Copies, Dla, Gpu, Memory, Platform, hardware

BLOCKS = {"dla": Dla, "gpu": Gpu, "copies": Copies, "memory": Memory}
# Optional fields whose unset value falls back to another field in the cost model (hardware.py, cost/)
FALLBACK_PRIOR = {"dla.mac_efficiency_fp16": "dla.mac_efficiency",
                  "copies.dla_copy_efficiency": "copies.reformat_efficiency",
                  "gpu.conv1x1_efficiency": "gpu.memory_efficiency", "gpu.conv1x1_floor_s": "gpu.kernel_floor_s",
                  "gpu.gemm_floor_s": "gpu.kernel_floor_s",
                  "gpu.gemv_efficiency": "gpu.memory_efficiency", "gpu.gemv_floor_s": "gpu.kernel_floor_s",
                  "gpu.depthwise_efficiency": "gpu.memory_efficiency",
                  "gpu.depthwise_floor_s": "gpu.memory_kernel_floor_s",
                  "gpu.reduce_efficiency": "gpu.memory_efficiency", "gpu.reduce_floor_s": "gpu.memory_kernel_floor_s"}
EFF_BOUNDS = (0.02, 1.0)
TIME_BOUNDS = (1e-8, 1e-3)          # 0 is not reachable in log space; 10 ns is zero for every step
SIGMA_MAX = 1.0                     # 1-sigma band beyond a factor e (log space): not constrained
COLUMN_MIN = 1e-3                   # |d residuals / d log(parameter)| below this: not constrained
F_SCALE = 0.1                       # soft_l1 switches to linear beyond ~10% (log space)

DEFAULT_PARAMS = {
    "gpu": ["gpu.tensor_efficiency", "gpu.kernel_floor_s", "gpu.memory_kernel_floor_s", "gpu.memory_efficiency",
            "copies.reformat_floor_s"],
    "dla": ["dla.layer_overhead_s", "dla.subgraph_overhead_s", "copies.dla_copy_efficiency",
            "copies.transition_overhead_s"],
}


# --------------------------------------------------------------------------------------------------
# Parameters

def _split(name: str) -> tuple[str, str]:
    block, _, key = name.rpartition(".")
    if block not in BLOCKS or key not in BLOCKS[block].model_fields:
        known = ", ".join(f"{b}.<field>" for b in BLOCKS)
        raise DlasimError(f"calibrate: unknown parameter {name!r} (expected {known}, a numeric spec field)")
    return block, key


def get_param(plat: Platform, name: str) -> float | None:
    block, key = _split(name)
    obj = getattr(plat, block)
    if obj is None:
        raise DlasimError(f"calibrate: {plat.name} has no [{block}] block for parameter {name}")
    value = getattr(obj, key)
    if value is not None and not isinstance(value, (int, float)) or isinstance(value, bool):
        raise DlasimError(f"calibrate: {name} is not a number")
    return None if value is None else float(value)


def prior_value(plat: Platform, name: str) -> float:
    """The value the cost model uses now (an unset optional field falls back as the model does)."""
    v = get_param(plat, name)
    if v is None and name in FALLBACK_PRIOR:
        v = get_param(plat, FALLBACK_PRIOR[name])
    if v is None:
        raise DlasimError(f"calibrate: {name} is not set in {plat.name} and has no fallback")
    return v


def apply(plat: Platform, values: dict[str, float]) -> Platform:
    """A copy of `plat` with the dotted parameters replaced (no validation, no file I/O)."""
    per_block: dict[str, dict] = {}
    for name, v in values.items():
        block, key = _split(name)
        per_block.setdefault(block, {})[key] = None if v is None else float(v)
    upd = {}
    for block, kv in per_block.items():
        obj = getattr(plat, block)
        if obj is None:
            raise DlasimError(f"calibrate: {plat.name} has no [{block}] block")
        upd[block] = obj.model_copy(update=kv)
    return plat.model_copy(update=upd)


def bounds_of(name: str) -> tuple[float, float]:
    """Bounds of a parameter: its pydantic constraints intersected with a sensible range."""
    block, key = _split(name)
    info = BLOCKS[block].model_fields[key]
    lo, hi = -math.inf, math.inf
    for m in info.metadata:
        for attr, side in (("gt", "lo"), ("ge", "lo"), ("lt", "hi"), ("le", "hi")):
            v = getattr(m, attr, None)
            if v is not None:
                if side == "lo":
                    lo = max(lo, float(v))
                else:
                    hi = min(hi, float(v))
    if "efficiency" in key:
        dlo, dhi = EFF_BOUNDS
    elif key.endswith("_bytes_per_s"):          # a bandwidth, not a time
        dlo, dhi = 1e9, 1e14
    elif key.endswith("_s"):
        dlo, dhi = TIME_BOUNDS
    elif key == "sparse_k_half":
        dlo, dhi = 1.0, 1e5
    else:
        dlo, dhi = 1e-6, 1e12
    return max(lo, dlo), min(hi, dhi)


# --------------------------------------------------------------------------------------------------
# Observations

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

    def predict(self, plat: Platform, cache: "_CostCache") -> float:
        if self.fn is not None:
            return float(self.fn(plat))
        costs = cache.costs(self.plan, plat)
        if self.steps is None:
            return float(sum(costs))
        return float(sum(costs[i] for i in self.steps))


class _CostCache:
    """Step times (ms) of each plan for the platform being evaluated; each plan is costed once."""

    def __init__(self):
        self._plat = None
        self._costs: dict[int, list[float]] = {}

    def costs(self, plan, plat) -> list[float]:
        from .cost import cost_step
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
    """One observation per group of measured rows matched to predicted steps (dlasim.explainer.join.join).

    Groups with nothing measured or nothing predicted are left out; the groups are returned too.
    """
    from .explainer.join import join
    from .explainer.measured import load_profile, measured_rows
    prof = load_profile(profile)
    rows, _ = measured_rows(prof, gpu_compute_ms)
    groups = join(plan, rows, split_dla=split_dla, layer_map=layer_map)
    obs = []
    for g in groups:
        if g.rows and g.steps and g.measured_ms > 0:
            obs.append(Observation(g.name, g.measured_ms, plan=plan, steps=tuple(g.steps),
                                   dataset=dataset or Path(prof.source).name))
    return obs, groups


# --------------------------------------------------------------------------------------------------
# Fitting

def _predict_all(obs, plat) -> np.ndarray:
    cache = _CostCache()
    return np.array([o.predict(plat, cache) for o in obs], dtype=float)


def _table(obs, pred) -> dict:
    rows, errs = [], []
    for o, p in zip(obs, pred):
        err = 100.0 * (p / o.measured - 1.0) if o.measured > 0 else None
        if err is not None:
            errs.append(abs(err))
        rows.append({"label": o.label, "dataset": o.dataset, "unit": o.unit, "measured": o.measured,
                     "predicted": float(p), "error_pct": err})
    return {"median_abs_error_pct": float(np.median(errs)) if errs else None,
            "mean_abs_error_pct": float(np.mean(errs)) if errs else None, "n": len(rows), "rows": rows}


def _jacobian(fun, x, h=1e-2) -> np.ndarray:
    f0 = fun(x)
    J = np.zeros((f0.size, x.size))
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        J[:, j] = (fun(x + e) - fun(x - e)) / (2 * h)
    return J


def _least_squares():
    """scipy's bounded least squares: an optional dependency (the `fit` extra), needed by fitting alone."""
    try:
        from scipy.optimize import least_squares
    except ImportError:
        raise DlasimError("calibrate: fitting needs scipy, which is not installed "
                          "(pip install 'dlasim[fit]')") from None
    return least_squares


def fit(observations: list[Observation], platform: Platform, params: list[str], loss: str = "soft_l1",
        f_scale: float = F_SCALE, data: list[str] | None = None, max_nfev: int = 400) -> dict:
    """Fit `params` so that the observations' predictions match their measurements.

    Returns {"before", "after" (median_abs_error_pct and a per-observation table), "parameters"
    ({name: before, after, band (1 sigma, from the residual covariance), band_pct, constrained,
    at_bound, reason}), "residual_rms_log", "band_pct", "n", "data", "unconstrained", "excluded",
    "platform" (the fitted Platform object; not JSON)}.
    """
    least_squares = _least_squares()
    params = list(dict.fromkeys(params))
    if not params:
        raise DlasimError("calibrate: no parameters to fit")
    for p in params:
        _split(p)
    priors = {p: prior_value(platform, p) for p in params}
    bounds = {p: bounds_of(p) for p in params}
    pred0 = _predict_all(observations, platform)
    usable = [i for i, (o, p) in enumerate(zip(observations, pred0)) if o.measured > 0 and p > 0]
    excluded = [observations[i].label for i in range(len(observations)) if i not in usable]
    obs = [observations[i] for i in usable]
    if len(obs) < len(params):
        raise DlasimError(f"calibrate: {len(params)} parameters but only {len(obs)} usable observations; "
                          f"give more data or fewer --params")
    meas = np.array([o.measured for o in obs])

    def platform_for(values: dict) -> Platform:
        return apply(platform, values)

    active = list(params)
    reasons: dict[str, str] = {}
    result_x: dict[str, float] = {}
    sigma: dict[str, float] = {}
    one_sided: dict[str, float] = {}
    start = {p: min(max(priors[p], bounds[p][0]), bounds[p][1]) for p in params}

    def cost_of(vals: dict) -> float:
        pred = _predict_all(obs, platform_for(vals))
        z = (np.log(np.maximum(pred, 1e-12) / meas) / f_scale) ** 2
        return float(np.sum(2 * (np.sqrt(1 + z) - 1))) if loss == "soft_l1" else float(np.sum(z))

    while active:
        # x = log(value / start): the fit starts at 0 and a unit step is a factor e
        lo = np.array([math.log(bounds[p][0] / start[p]) for p in active])
        hi = np.array([math.log(bounds[p][1] / start[p]) for p in active])
        fixed = {p: (one_sided[p] if p in one_sided else priors[p]) for p in params if p not in active}

        def values(x, active=active, fixed=fixed):
            vals = dict(fixed)
            vals.update({p: start[p] * math.exp(v) for p, v in zip(active, x)})
            return vals

        def resid(x):
            pred = _predict_all(obs, platform_for(values(x)))
            return np.log(np.maximum(pred, 1e-12) / meas)

        # start strictly inside the bounds (a start on a bound stalls the trust-region steps), and from
        # a factor 2 below and above as well: the cost model has kinks (max of floor, compute, memory)
        margin = np.minimum(0.01, (hi - lo) / 4)
        sol = None
        for shift in (0.0, -0.7, 0.7):
            x0 = np.clip(np.full(len(active), shift), lo + margin, hi - margin)
            s_ = least_squares(resid, x0, bounds=(lo, hi), loss=loss, f_scale=f_scale, diff_step=1e-3,
                               max_nfev=max_nfev)
            if sol is None or s_.cost < sol.cost - 1e-12:
                sol = s_
        x = sol.x
        J = _jacobian(resid, x)
        r = resid(x)
        colnorm = np.linalg.norm(J, axis=0)
        flat = [j for j, c in enumerate(colnorm) if c < COLUMN_MIN]
        if flat:
            best = values(x)
            base_cost = cost_of(best)
            for j in flat:
                p = active[j]
                if cost_of({**best, p: priors[p]}) > base_cost * 1.01 + 1e-9:
                    # the data push it to where it stops mattering (e.g. an additive time to ~0):
                    # one-sided, keep that value rather than a prior the data contradict
                    one_sided[p] = best[p]
                    way = "down" if best[p] < priors[p] else "up"
                    reasons[p] = (f"one-sided: the data push it {way} to {best[p]:.3g}, beyond which it "
                                  f"no longer changes any prediction")
                else:
                    reasons[p] = "the data do not depend on it (Jacobian column ~0)"
            for j in sorted(flat, reverse=True):
                active.pop(j)
            continue
        u, s, vt = np.linalg.svd(J, full_matrices=False)
        if s[-1] < 1e-6 * s[0]:
            worst = active[int(np.argmax(np.abs(vt[-1])))]
            reasons[worst] = "collinear with other parameters (the data fix only a combination)"
            active.remove(worst)
            continue
        dof = max(len(obs) - len(active), 1)
        s2 = max(float(r @ r) / dof, 0.01 ** 2)
        cov = s2 * np.linalg.inv(J.T @ J)
        sig = np.sqrt(np.maximum(np.diag(cov), 0.0))
        if sig.max() > SIGMA_MAX:
            worst = active[int(np.argmax(sig))]
            reasons[worst] = f"posterior band too wide (1 sigma = factor {math.exp(sig.max()):.1f})"
            active.remove(worst)
            continue
        result_x = {p: v for p, v in values(x).items() if p in active}
        exact = len(obs) == len(active)       # no residual degrees of freedom: no band from residuals
        sigma = {p: (None if exact else float(v)) for p, v in zip(active, sig)}
        break

    final = {p: result_x.get(p, one_sided.get(p, priors[p])) for p in params}
    fitted_plat = platform_for(final)
    pred1 = _predict_all(obs, fitted_plat)
    r1 = np.log(np.maximum(pred1, 1e-12) / meas)
    rms = float(np.sqrt(np.mean(r1 ** 2)))
    parameters = {}
    for p in params:
        constrained = p in result_x or p in one_sided
        d = {"before": priors[p], "after": final[p], "constrained": constrained,
             "bounds": list(bounds[p])}
        if p in one_sided:
            d.update(band=None, band_pct=None, reason=reasons[p], one_sided=True)
            if final[p] <= bounds[p][0] * 1.001:
                d["at_bound"] = "lower"
            elif final[p] >= bounds[p][1] * 0.999:
                d["at_bound"] = "upper"
        elif constrained and sigma[p] is None:
            d.update(band=None, band_pct=None, exact=True,
                     reason="exactly determined (as many observations as parameters): no band")
        elif constrained:
            d["band"] = final[p] * sigma[p]
            d["band_pct"] = 100.0 * sigma[p]
        if constrained and p not in one_sided:
            lo_b, hi_b = bounds[p]
            if final[p] <= lo_b * 1.001:
                d["at_bound"] = "lower"
            elif final[p] >= hi_b * 0.999:
                d["at_bound"] = "upper"
        else:
            d["band"] = None
            d["band_pct"] = None
            d["reason"] = reasons.get(p, "not constrained")
        parameters[p] = d
    return {"before": _table(obs, _predict_all(obs, platform)), "after": _table(obs, pred1),
            "parameters": parameters, "residual_rms_log": rms, "band_pct": 100.0 * (math.exp(rms) - 1.0),
            "n": len(obs), "data": list(data or sorted({o.dataset for o in obs if o.dataset})),
            "unconstrained": [p for p in params if p not in result_x and p not in one_sided],
            "excluded": excluded,
            "platform": fitted_plat}


def public(result: dict) -> dict:
    """The JSON-safe part of a fit result (drops the Platform object)."""
    return {k: v for k, v in result.items() if k != "platform"}


def source_line(result: dict, tool: str = "dlasim calibrate", data: list[str] | None = None) -> str:
    files = ", ".join(data if data is not None else result["data"]) or "measurements"
    return f"fitted by {tool} from {files} (residual rms {result['band_pct']:.1f}%, n={result['n']})"


# --------------------------------------------------------------------------------------------------
# Writing the spec

def _toml_float(v: float) -> str:
    text = f"{float(v):.4g}"
    if not any(c in text for c in ".eE") and text not in ("inf", "-inf", "nan"):
        text += ".0"
    return text


def _section_range(lines: list[str], table: str) -> tuple[int, int] | None:
    """(first line after the header, end) of [table] in `lines`, or None."""
    head = re.compile(r"^\s*\[\s*" + re.escape(table) + r"\s*\]\s*(#.*)?$")
    any_head = re.compile(r"^\s*\[")
    start = next((i for i, ln in enumerate(lines) if head.match(ln)), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if any_head.match(lines[i])), len(lines))
    return start + 1, end


def _set_key(lines: list[str], table: str, key: str, value_text: str) -> list[str]:
    rng = _section_range(lines, table)
    if rng is None:
        # a new table at the end of the file
        return lines + ["", f"[{table}]", f"{key} = {value_text}"]
    a, b = rng
    pat = re.compile(r"^(\s*" + re.escape(key) + r"\s*=\s*)(\"(?:[^\"\\]|\\.)*\"|[^#]*?)(\s*(#.*)?)$")
    for i in range(a, b):
        m = pat.match(lines[i])
        if m:
            lines[i] = f"{m.group(1)}{value_text}{m.group(3)}"
            return lines
    last = a - 1
    for i in range(a, b):
        if lines[i].strip():
            last = i
    return lines[:last + 1] + [f"{key} = {value_text}"] + lines[last + 1:]


def _set_source(lines: list[str], table: str, key: str, text: str) -> list[str]:
    src = f"{table}.sources"
    quoted = json.dumps(text, ensure_ascii=False)
    if _section_range(lines, src) is None:
        rng = _section_range(lines, table)
        if rng is None:
            return lines + ["", f"[{src}]", f"{key} = {quoted}"]
        a, b = rng
        last = a - 1
        for i in range(a, b):
            if lines[i].strip():
                last = i
        return lines[:last + 1] + ["", f"[{src}]", f"{key} = {quoted}"] + lines[last + 1:]
    return _set_key(lines, src, key, quoted)


def patch_spec_text(text: str, values: dict[str, float], source_text: dict[str, str]) -> str:
    """The spec text with each dotted parameter's value and source line replaced (or added)."""
    lines = text.split("\n")
    for name, v in values.items():
        table, _, key = name.rpartition(".")
        lines = _set_key(lines, table, key, _toml_float(v))
        if name in source_text:
            lines = _set_source(lines, table, key, source_text[name])
    return "\n".join(lines)


def write_spec(src_path, dst_path, values: dict[str, float], source_text: dict[str, str]) -> Path:
    """Copy the spec at `src_path` to `dst_path` with `values` patched in and their sources replaced.

    Only the named `key = value` lines and their [table.sources] lines change; comments and layout
    survive. The file is written atomically and must load with hardware(), else SpecError.
    """
    src, dst = Path(src_path), Path(dst_path)
    try:
        text = src.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{src}: cannot read spec file ({e.strerror})") from None
    new = patch_spec_text(text, values, source_text)
    d = dst.resolve().parent
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".dlasim-", suffix=".toml")
    except OSError as e:
        raise DlasimError(f"{dst}: cannot write ({e.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(new)
        try:
            hardware(tmp)
        except SpecError as e:
            raise SpecError(f"{dst}: the patched spec does not load: {str(e).replace(tmp, str(dst))}") from None
        os.replace(tmp, dst)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return dst


def fitted_values(result: dict) -> dict[str, float]:
    """The constrained parameters' fitted values (what a spec file should receive)."""
    return {p: d["after"] for p, d in result["parameters"].items() if d["constrained"]}


# --------------------------------------------------------------------------------------------------
# CLI

def calibrate_cli(args) -> dict:
    """`dlasim calibrate --hw H --model M --profile P [...] -o OUT.toml`: fit, write OUT, return the result."""
    from .api import build
    from .trtexec import join_layer_info, parse_layer_info
    from .explainer.measured import load_profile, require_match
    plat = hardware(args.hw)
    warnings: list[str] = []
    models, profiles = list(args.model), list(args.profile)
    if len(models) == 1:
        models = models * len(profiles)
    if len(models) != len(profiles):
        raise DlasimError(f"calibrate: give one --model, or one per --profile ({len(models)} models, "
                          f"{len(profiles)} profiles)")
    obs, files, devices, reformat_rows = [], [], set(), False
    for model, prof_path in zip(models, profiles):
        prof = load_profile(prof_path)
        if getattr(args, "layer_info", None):
            prof = join_layer_info(prof, parse_layer_info(args.layer_info))
        device = args.device or ("dla" if any(r.kind == "dla_subgraph" for r in prof.rows) else "gpu")
        devices.add(device)
        plan = build(model, plat, device=device, precision=args.precision or "fp16", batch=args.batch)
        o, groups = row_observations(plan, prof, split_dla=True, dataset=str(prof_path))
        partial = require_match(groups, len(prof.rows), prof.source, plan.graph.name)
        if partial:
            warnings.append(f"{prof_path}: {partial}")
        obs += o
        files.append(str(prof_path))
        reformat_rows |= any(g.kind == "reformat" and g.rows and g.steps and g.measured_ms > 0 for g in groups)
    if args.params:
        params = [p.strip() for p in args.params.split(",") if p.strip()]
    else:
        params = []
        for device in sorted(devices):
            if device == "dla":
                prec = args.precision or "fp16"
                params += ["dla.mac_efficiency" if prec == "int8" else "dla.mac_efficiency_fp16"]
                params += DEFAULT_PARAMS["dla"]
            else:
                params += DEFAULT_PARAMS["gpu"]
                if reformat_rows:
                    params.append("copies.reformat_efficiency")
    result = fit(obs, plat, params, data=files)
    src = source_line(result, "dlasim calibrate", files)
    values = fitted_values(result)
    write_spec(plat.path, args.output, values, {p: src for p in values})
    out = public(result)
    out.update(hardware=plat.label, spec=plat.path, output=str(args.output), source_line=src)
    if warnings:
        out["warnings"] = list(out.get("warnings", [])) + warnings
    return out


def render(result: dict) -> str:
    """Terminal view: before/after errors, the parameter table with bands, what was not constrained."""
    b, a = result["before"], result["after"]
    lines = [f"calibrate {result.get('hardware', '')}: {result['n']} observations from "
             f"{', '.join(result.get('data', []))}"]
    lines.append(f"median |error|: before {b['median_abs_error_pct']:.1f}%  after {a['median_abs_error_pct']:.1f}%"
                 f"   (mean {b['mean_abs_error_pct']:.1f}% -> {a['mean_abs_error_pct']:.1f}%)")
    lines.append(f"residual rms (log) {result['residual_rms_log']:.3f}: predictions carry about "
                 f"+/-{result['band_pct']:.0f}%")
    lines += ["", f"{'parameter':<30} {'before':>11} {'after':>11} {'+/- 1 sigma':>13}  note"]
    for name, d in result["parameters"].items():
        band = f"{d['band']:.3g} ({d['band_pct']:.0f}%)" if d.get("band") is not None else "-"
        note = "" if d["constrained"] else f"not constrained: {d.get('reason', '')}; kept at prior"
        if d.get("one_sided") or d.get("exact"):
            note = d["reason"]
        elif d.get("at_bound"):
            note = f"at the {d['at_bound']} bound {d['bounds'][0 if d['at_bound'] == 'lower' else 1]:.3g}"
        lines.append(f"{name:<30} {d['before']:>11.4g} {d['after']:>11.4g} {band:>13}  {note}")
    if result.get("unconstrained"):
        lines.append(f"not constrained by the data (kept at their prior values): {', '.join(result['unconstrained'])}")
    if result.get("excluded"):
        lines.append(f"left out (nothing predicted or measured): {len(result['excluded'])} group(s)")
    rows_b = {(r["label"], r["dataset"]): r for r in b["rows"]}
    lines += ["", f"{'observation':<60} {'measured':>10} {'before':>10} {'after':>10}"]
    for r in a["rows"]:
        rb = rows_b.get((r["label"], r["dataset"]))
        name = r["label"] if len(r["label"]) <= 60 else r["label"][:57] + "..."
        lines.append(f"{name:<60} {r['measured']:>10.4f} {rb['predicted'] if rb else float('nan'):>10.4f} "
                     f"{r['predicted']:>10.4f}")
    if result.get("output"):
        lines += ["", f"wrote {result['output']}"]
    return "\n".join(lines)
