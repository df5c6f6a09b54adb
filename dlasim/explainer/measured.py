"""Measured vs predicted, row by row: `explain_measured(model, hw, profile)` (CLI: `dlasim explain MODEL
--measured PROFILE`) builds the plan, costs it, reads the profile and joins each measured row to the
predicted steps it covers (join.py).

When the un-profiled GPU compute median is known (the trex metadata next to the profile, or the
`gpu_compute_ms` option) the rows are first corrected for the per-layer profiling overhead
(gpu_tensorrt.md s4.2, trtexec.corrected_rows). The cause of a deviation comes from the predicted
step(s) (classify.group_cause), in the cause vocabulary of docs/DESIGN.md.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field, replace

from ..build_options import BuildOptions
from ..errors import DlasimError
from ..trtexec import MeasuredLayer, MeasuredProfile, abbreviate_name, corrected_rows, parse_profile
from .classify import group_cause, summary_code
from .join import MatchGroup, join
from .texts import deviation_text


@dataclass
class MeasuredExplain:
    model: str
    hardware: str
    device: str
    precision: str
    batch: int
    source: str
    total_predicted_ms: float
    total_measured_ms: float
    matched_share: float
    rows: list[dict]
    causes: list[dict]
    correction: str = ""
    warnings: list[str] = field(default_factory=list)
    groups: list[MatchGroup] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict:
        return {"model": self.model, "hardware": self.hardware, "device": self.device,
                "precision": self.precision, "batch": self.batch, "measured": self.source,
                "total_predicted_ms": self.total_predicted_ms, "total_measured_ms": self.total_measured_ms,
                "matched_share": self.matched_share, "correction": self.correction,
                "rows": self.rows, "causes": self.causes, "warnings": self.warnings}

    def render(self, width: int = 64) -> str:
        lines = [f"{self.model} on {self.hardware}  device={self.device} precision={self.precision} "
                 f"batch={self.batch}", f"measured: {self.source}"]
        if self.correction:
            lines.append(f"measured rows corrected for per-layer profiling overhead: {self.correction}")
        hdr = f"{'measured row':<{width}} {'pred ms':>9} {'meas ms':>9} {'pred/meas':>9}  cause"
        lines += [hdr, "-" * len(hdr)]
        for r in self.rows:
            p, m = r["predicted_ms"], r["measured_ms"]
            ratio = f"{p / m:>9.2f}" if p is not None and m else f"{'-':>9}"
            name = abbreviate_name(r["name"], width)
            if r.get("measured_rows", 1) > 1:
                name = abbreviate_name(r["name"], width - 6) + f" (+{r['measured_rows'] - 1})"
            lines.append(f"{name:<{width}} {_fmt(p):>9} {_fmt(m):>9} {ratio}  {r['cause']}")
        lines.append("-" * len(hdr))
        lines.append(f"total: predicted {self.total_predicted_ms:.4f} ms, measured {self.total_measured_ms:.4f} ms"
                     f" ({self.total_predicted_ms / self.total_measured_ms:.2f}x); "
                     f"{100 * self.matched_share:.1f}% of measured time matched to predicted steps"
                     if self.total_measured_ms else "total: nothing measured")
        if self.causes:
            lines += ["", "largest deviations (measured - predicted):"]
            for c in self.causes:
                lines.append(f"  {c['code']:<18}{c['ms']:>+9.4f} ms {100 * c['share']:>6.1f}%  {c['text']}")
        for w in self.warnings:
            lines.append(f"warning: {w}")
        return "\n".join(lines)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.4f}"


def measured_rows(profile, gpu_compute_ms: float | None = None) -> tuple[list[MeasuredLayer], str]:
    """Profile rows, corrected for the profiling overhead when the GPU compute median is known."""
    median = gpu_compute_ms
    if median is None and profile.summary:
        stats = profile.summary.get("gpu_compute_ms")
        median = stats.get("median") if isinstance(stats, dict) else None
    if median is None:
        return list(profile.rows), ""
    rows = corrected_rows(profile, gpu_compute_ms=median)
    how = next((r.extra.get("correction") for r in rows if r.extra.get("correction")), "")
    return rows, how


def load_profile(profile) -> MeasuredProfile:
    if isinstance(profile, MeasuredProfile):
        return profile
    return parse_profile(profile)


def profile_from_rows(rows: list[tuple[str, float]], source: str = "<rows>") -> MeasuredProfile:
    """A MeasuredProfile from (name, ms) pairs, parsed exactly like a trtexec --exportProfile file.

    For measurements published as tables (seed 000's per-step breakdown, the Orin GoogLeNet log).
    """
    data = [{"count": 1}] + [{"name": n, "timeMs": float(t), "averageMs": float(t), "percentage": 0.0}
                             for n, t in rows]
    fd, tmp = tempfile.mkstemp(suffix=".profile.json", prefix=".dlasim-rows-")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        prof = parse_profile(tmp)
    finally:
        os.unlink(tmp)
    return replace(prof, source=source)


def explain_measured(model, hw="xavier-agx", profile_path=None, gpu_compute_ms: float | None = None,
                     layer_map: dict | None = None, split_dla: bool = False, plan=None,
                     options: BuildOptions | None = None, **kw) -> MeasuredExplain:
    """Predicted vs measured per profile row, the share of measured time matched, and the causes.

    The build options are dlasim.estimate's (`options` and keyword arguments; an unknown one is an error);
    the Plan compared is the one dlasim.estimate keeps (builder.py: timed against wider precisions), or
    `plan`, when given, and then they are not used."""
    from ..simulate import estimate_plan
    opts = BuildOptions.of(options, **kw)
    if profile_path is None:
        raise DlasimError("explain --measured: give a trtexec --exportProfile JSON file")
    if plan is None:
        from ..api import kept_engine
        engine = kept_engine(model, hw, opts)
        plan, est = engine.plan, engine.estimate
    else:
        est = estimate_plan(plan)
    profile = load_profile(profile_path)
    rows, how = measured_rows(profile, gpu_compute_ms)
    groups = join(plan, rows, split_dla=split_dla, layer_map=layer_map)
    return _assemble(plan, est, profile, rows, groups, how)


def matched_rows(groups) -> int:
    """How many measured rows joined a predicted step."""
    return len({r for g in groups if g.rows and g.steps for r in g.rows})


def require_match(groups, n_rows: int, source: str, model: str) -> str | None:
    """Stop when no measured row matches the model (the profile is of another network or its names differ);
    else a warning line when only some do, None when all do."""
    k = matched_rows(groups)
    if n_rows and k == 0:
        raise DlasimError(f"{source}: none of its {n_rows} measured rows matches a layer of {model}: the layer "
                          f"names differ; use the model the engine was built from")
    return f"{k} of {n_rows} measured rows match a predicted step" if k < n_rows else None


def _assemble(plan, est, profile, rows, groups, how) -> MeasuredExplain:
    partial = require_match(groups, len(rows), profile.source, est.model)
    out_rows, by_code = [], {}
    total_meas = sum(r.time_ms for r in rows)
    matched = 0.0
    for g in groups:
        pred = sum(est.steps[i].time_ms for i in g.steps) if g.steps else None
        meas = g.measured_ms if g.rows else None
        code, note = group_cause(est.steps, g, pred or 0.0)
        if g.rows and g.steps:
            matched += g.measured_ms
        d = {"name": g.name, "predicted_ms": pred, "measured_ms": meas, "cause": code,
             "kind": g.kind, "steps": [plan.steps[i].name for i in g.steps]}
        if len(g.rows) > 1:
            d["measured_rows"] = len(g.rows)
            d["rows"] = [rows[k].name for k in g.rows]
        if note:
            d["note"] = note
        out_rows.append(d)
        if code == "ok":
            continue
        agg = summary_code(code, {rows[k].kind for k in g.rows}, [est.steps[i].kind for i in g.steps])
        c = by_code.setdefault(agg, {"ms": 0.0, "n": 0, "pred": 0.0, "meas": 0.0})
        c["ms"] += (meas or 0.0) - (pred or 0.0)
        c["n"] += 1
        c["pred"] += pred or 0.0
        c["meas"] += meas or 0.0
    causes = []
    for code, c in by_code.items():
        text = (f"{c['n']} row(s): measured {c['meas']:.4f} ms vs predicted {c['pred']:.4f} ms; "
                f"{deviation_text(code)}")
        if code == "reformat" and c["pred"] == 0:
            text += " (TensorRT layout changes dlasim does not predict)"
        causes.append({"code": code, "ms": c["ms"], "share": abs(c["ms"]) / total_meas if total_meas else 0.0,
                       "text": text})
    causes.sort(key=lambda c: -abs(c["ms"]))
    warnings = list(profile.warnings) + ([partial] if partial else [])
    unmatched_pred = [g for g in groups if not g.rows and est.steps[g.steps[0]].time_ms > 0]
    if unmatched_pred:
        warnings.append(f"{len(unmatched_pred)} predicted step(s) have no measured row "
                        f"({sum(est.steps[g.steps[0]].time_ms for g in unmatched_pred):.4f} ms)")
    share = matched / total_meas if total_meas > 0 else 0.0
    if total_meas > 0 and share < 0.10:
        warnings.append("almost no measured row matches a predicted step: the profile's layer names differ from "
                        "the model's (e.g. ONNX node names vs a zoo network); use the model the engine was built "
                        "from, or pass layer_map= to dlasim.explainer.measured.explain_measured")
    return MeasuredExplain(model=est.model, hardware=est.hardware, device=est.device, precision=est.precision,
                           batch=est.batch, source=profile.source, total_predicted_ms=est.total_ms,
                           total_measured_ms=total_meas,
                           matched_share=matched / total_meas if total_meas > 0 else 0.0,
                           rows=out_rows, causes=causes, correction=how, warnings=warnings, groups=groups)
