"""Bounded, robust least squares of spec parameters against observations.

Residuals are log(predicted / measured); the loss is soft_l1; the fit runs in log-parameter space
(scipy.optimize.least_squares with bounds). Identifiability: more parameters than observations is refused. After
a fit, a parameter whose Jacobian column is ~0, that is collinear with others, or whose 1-sigma band exceeds a
factor e is reported as unconstrained, reset to its prior value (or kept where the data push it, when it is
one-sided), and the rest is fitted again.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import DlasimError
from ..hardware import Platform
from .observations import Observation, error_table, predict_all
from .params import apply, bounds_of, check_names, prior_value

SIGMA_MAX = 1.0                     # 1-sigma band beyond a factor e (log space): not constrained
COLUMN_MIN = 1e-3                   # |d residuals / d log(parameter)| below this: not constrained
F_SCALE = 0.1                       # soft_l1 switches to linear beyond ~10% (log space)


@dataclass(frozen=True)
class _Problem:
    """What one fit works on: the usable observations, the parameters, their priors, bounds and start."""
    obs: list[Observation]
    measured: np.ndarray
    platform: Platform
    params: list[str]
    priors: dict[str, float]
    bounds: dict[str, tuple[float, float]]
    start: dict[str, float]
    loss: str
    f_scale: float
    max_nfev: int

    def log_ratio(self, values: dict) -> np.ndarray:
        pred = predict_all(self.obs, apply(self.platform, values))
        return np.log(np.maximum(pred, 1e-12) / self.measured)

    def cost(self, values: dict) -> float:
        z = (self.log_ratio(values) / self.f_scale) ** 2
        return float(np.sum(2 * (np.sqrt(1 + z) - 1))) if self.loss == "soft_l1" else float(np.sum(z))


@dataclass
class _Elimination:
    """State of the fit-and-drop loop: parameters still fitted, and what became of the others."""
    active: list[str]
    reasons: dict[str, str] = field(default_factory=dict)
    one_sided: dict[str, float] = field(default_factory=dict)
    result_x: dict[str, float] = field(default_factory=dict)
    sigma: dict[str, float | None] = field(default_factory=dict)


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


def _problem(observations, platform, params, loss, f_scale, max_nfev) -> tuple[_Problem, list[str]]:
    """The fit's problem over the usable observations (measured and predicted > 0), and the labels left out."""
    check_names(params)
    priors = {p: prior_value(platform, p) for p in params}
    bounds = {p: bounds_of(p) for p in params}
    pred0 = predict_all(observations, platform)
    usable = [i for i, (o, p) in enumerate(zip(observations, pred0)) if o.measured > 0 and p > 0]
    excluded = [observations[i].label for i in range(len(observations)) if i not in usable]
    obs = [observations[i] for i in usable]
    if len(obs) < len(params):
        raise DlasimError(f"calibrate: {len(params)} parameters but only {len(obs)} usable observations; "
                          f"give more data or fewer --params")
    start = {p: min(max(priors[p], bounds[p][0]), bounds[p][1]) for p in params}
    return _Problem(obs, np.array([o.measured for o in obs]), platform, params, priors, bounds, start, loss,
                    f_scale, max_nfev), excluded


def _solve(pb: _Problem, active: list[str], resid, least_squares) -> np.ndarray:
    """x = log(value / start) of the active parameters at the best of three starts.

    Each start is strictly inside the bounds (a start on a bound stalls the trust-region steps); the starts are
    the prior and a factor 2 below and above it, as the cost model has kinks (max of floor, compute, memory).
    """
    lo = np.array([math.log(pb.bounds[p][0] / pb.start[p]) for p in active])
    hi = np.array([math.log(pb.bounds[p][1] / pb.start[p]) for p in active])
    margin = np.minimum(0.01, (hi - lo) / 4)
    sol = None
    for shift in (0.0, -0.7, 0.7):
        x0 = np.clip(np.full(len(active), shift), lo + margin, hi - margin)
        s_ = least_squares(resid, x0, bounds=(lo, hi), loss=pb.loss, f_scale=pb.f_scale, diff_step=1e-3,
                           max_nfev=pb.max_nfev)
        if sol is None or s_.cost < sol.cost - 1e-12:
            sol = s_
    return sol.x


def _drop_flat(pb: _Problem, st: _Elimination, best: dict, flat: list[int]) -> None:
    """Take out the parameters whose Jacobian column is ~0, as one-sided or as not depending on the data."""
    base_cost = pb.cost(best)
    for j in flat:
        p = st.active[j]
        if pb.cost({**best, p: pb.priors[p]}) > base_cost * 1.01 + 1e-9:
            # the data push it to where it stops mattering (e.g. an additive time to ~0):
            # one-sided, keep that value rather than a prior the data contradict
            st.one_sided[p] = best[p]
            way = "down" if best[p] < pb.priors[p] else "up"
            st.reasons[p] = (f"one-sided: the data push it {way} to {best[p]:.3g}, beyond which it "
                             f"no longer changes any prediction")
        else:
            st.reasons[p] = "the data do not depend on it (Jacobian column ~0)"
    for j in sorted(flat, reverse=True):
        st.active.pop(j)


def _fit_active(pb: _Problem, st: _Elimination, least_squares) -> bool:
    """Fit the active parameters; True when they are all constrained, else one or more are dropped."""
    active = list(st.active)
    fixed = {p: st.one_sided.get(p, pb.priors[p]) for p in pb.params if p not in active}

    def values(x) -> dict:
        vals = dict(fixed)
        vals.update({p: pb.start[p] * math.exp(v) for p, v in zip(active, x)})
        return vals

    def resid(x):
        return pb.log_ratio(values(x))

    x = _solve(pb, active, resid, least_squares)
    J = _jacobian(resid, x)
    r = resid(x)
    flat = [j for j, c in enumerate(np.linalg.norm(J, axis=0)) if c < COLUMN_MIN]
    if flat:
        _drop_flat(pb, st, values(x), flat)
        return False
    u, s, vt = np.linalg.svd(J, full_matrices=False)
    if s[-1] < 1e-6 * s[0]:
        worst = active[int(np.argmax(np.abs(vt[-1])))]
        st.reasons[worst] = "collinear with other parameters (the data fix only a combination)"
        st.active.remove(worst)
        return False
    dof = max(len(pb.obs) - len(active), 1)
    s2 = max(float(r @ r) / dof, 0.01 ** 2)
    sig = np.sqrt(np.maximum(np.diag(s2 * np.linalg.inv(J.T @ J)), 0.0))
    if sig.max() > SIGMA_MAX:
        worst = active[int(np.argmax(sig))]
        st.reasons[worst] = f"posterior band too wide (1 sigma = factor {math.exp(sig.max()):.1f})"
        st.active.remove(worst)
        return False
    st.result_x = {p: v for p, v in values(x).items() if p in active}
    exact = len(pb.obs) == len(active)       # no residual degrees of freedom: no band from residuals
    st.sigma = {p: (None if exact else float(v)) for p, v in zip(active, sig)}
    return True


def _at_bound(value: float, bounds: tuple[float, float]) -> str | None:
    if value <= bounds[0] * 1.001:
        return "lower"
    if value >= bounds[1] * 0.999:
        return "upper"
    return None


def _parameter_report(p: str, pb: _Problem, st: _Elimination, after: float) -> dict:
    """{before, after, constrained, bounds, band, band_pct, reason, one_sided / exact, at_bound} of one parameter."""
    constrained = p in st.result_x or p in st.one_sided
    d = {"before": pb.priors[p], "after": after, "constrained": constrained, "bounds": list(pb.bounds[p])}
    if p in st.one_sided:
        d.update(band=None, band_pct=None, reason=st.reasons[p], one_sided=True)
    elif not constrained:
        d.update(band=None, band_pct=None, reason=st.reasons.get(p, "not constrained"))
        return d
    elif st.sigma[p] is None:
        d.update(band=None, band_pct=None, exact=True,
                 reason="exactly determined (as many observations as parameters): no band")
    else:
        d.update(band=after * st.sigma[p], band_pct=100.0 * st.sigma[p])
    side = _at_bound(after, pb.bounds[p])
    if side:
        d["at_bound"] = side
    return d


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
    pb, excluded = _problem(observations, platform, params, loss, f_scale, max_nfev)
    st = _Elimination(active=list(params))
    while st.active and not _fit_active(pb, st, least_squares):
        pass
    final = {p: st.result_x.get(p, st.one_sided.get(p, pb.priors[p])) for p in params}
    fitted_plat = apply(platform, final)
    pred1 = predict_all(pb.obs, fitted_plat)
    rms = float(np.sqrt(np.mean(np.log(np.maximum(pred1, 1e-12) / pb.measured) ** 2)))
    return {"before": error_table(pb.obs, predict_all(pb.obs, platform)), "after": error_table(pb.obs, pred1),
            "parameters": {p: _parameter_report(p, pb, st, final[p]) for p in params},
            "residual_rms_log": rms, "band_pct": 100.0 * (math.exp(rms) - 1.0),
            "n": len(pb.obs), "data": list(data or sorted({o.dataset for o in pb.obs if o.dataset})),
            "unconstrained": [p for p in params if p not in st.result_x and p not in st.one_sided],
            "excluded": excluded,
            "platform": fitted_plat}


def public(result: dict) -> dict:
    """The JSON-safe part of a fit result (drops the Platform object)."""
    return {k: v for k, v in result.items() if k != "platform"}


def source_line(result: dict, tool: str = "dlasim calibrate", data: list[str] | None = None) -> str:
    files = ", ".join(data if data is not None else result["data"]) or "measurements"
    return f"fitted by {tool} from {files} (residual rms {result['band_pct']:.1f}%, n={result['n']})"


def fitted_values(result: dict) -> dict[str, float]:
    """The constrained parameters' fitted values (what a spec file should receive)."""
    return {p: d["after"] for p, d in result["parameters"].items() if d["constrained"]}
