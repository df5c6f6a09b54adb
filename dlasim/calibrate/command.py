"""`dlasim calibrate`: fit spec parameters to measured profiles and write the calibrated spec, from typed values.

The command line's parsing stays in dlasim/cli; this takes the values it parsed.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..errors import DlasimError
from ..hardware import hardware
from .fitting import fit, fitted_values, public, source_line
from .observations import row_observations
from .params import DEFAULT_PARAMS
from .spec_patch import write_spec


def _observations(plat, models: list[str], profiles: list[str], layer_info: str | None, device: str | None,
                  precision: str, batch: int | None):
    """Observations of every (model, profile) pair; also the devices seen, whether reformat rows were
    matched, and warnings about partial matches. Each profile is joined to the Plan dlasim.estimate keeps
    under the spec as given (builder.py: timed against the precisions TensorRT times)."""
    from ..api import kept_engine
    from ..build_options import BuildOptions
    from ..explainer.measured import load_profile, require_match
    from ..trtexec import join_layer_info, parse_layer_info
    obs, devices, reformat_rows, warnings = [], set(), False, []
    for model, prof_path in zip(models, profiles):
        prof = load_profile(prof_path)
        if layer_info:
            prof = join_layer_info(prof, parse_layer_info(layer_info))
        dev = device or ("dla" if any(r.kind == "dla_subgraph" for r in prof.rows) else "gpu")
        devices.add(dev)
        plan = kept_engine(model, plat, BuildOptions.of(device=dev, precision=precision, batch=batch)).plan
        o, groups = row_observations(plan, prof, split_dla=True, dataset=str(prof_path))
        partial = require_match(groups, len(prof.rows), prof.source, plan.graph.name)
        if partial:
            warnings.append(f"{prof_path}: {partial}")
        obs += o
        reformat_rows |= any(g.kind == "reformat" and g.rows and g.steps and g.measured_ms > 0 for g in groups)
    return obs, devices, reformat_rows, warnings


def default_params(devices: set[str], precision: str, reformat_rows: bool) -> list[str]:
    """The parameters fitted when none are named: a small set per device (DEFAULT_PARAMS)."""
    params: list[str] = []
    for device in sorted(devices):
        if device == "dla":
            params += ["dla.mac_efficiency" if precision == "int8" else "dla.mac_efficiency_fp16"]
            params += DEFAULT_PARAMS["dla"]
        else:
            params += DEFAULT_PARAMS["gpu"]
            if reformat_rows:
                params.append("copies.reformat_efficiency")
    return params


def calibrate(hw: str, models: Sequence[str], profiles: Sequence[str], output: str, *,
              layer_info: str | None = None, device: str | None = None, precision: str | None = None,
              batch: int | None = None, params: Sequence[str] | None = None) -> dict:
    """Fit `params` (default: default_params) of platform `hw` to the profiles, write the spec to `output`.

    `models` is one model, or one per profile; `device` None takes dla for a profile with DLA subgraphs, else
    gpu; `precision` None is fp16. Returns the JSON-safe fit result with hardware, spec, output, source_line
    and warnings (partial matches).
    """
    plat = hardware(hw)
    models, profiles = list(models), list(profiles)
    if len(models) == 1:
        models = models * len(profiles)
    if len(models) != len(profiles):
        raise DlasimError(f"calibrate: give one --model, or one per --profile ({len(models)} models, "
                          f"{len(profiles)} profiles)")
    precision = precision or "fp16"
    obs, devices, reformat_rows, warnings = _observations(plat, models, profiles, layer_info, device, precision,
                                                          batch)
    files = [str(p) for p in profiles]
    chosen = list(params) if params is not None else default_params(devices, precision, reformat_rows)
    result = fit(obs, plat, chosen, data=files)
    src = source_line(result, "dlasim calibrate", files)
    values = fitted_values(result)
    write_spec(plat.path, output, values, {p: src for p in values})
    out = public(result)
    out.update(hardware=plat.label, spec=plat.path, output=str(output), source_line=src)
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
