"""What each subcommand does: resolve the flags, call the public API, render. Each returns an Output."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import DlasimError
from .options import precision_of, resolve

SCHEMA_VERSION = "1"     # the version of the JSON documents (docs/schema/*.schema.json); bump on a breaking change


@dataclass(frozen=True)
class Output:
    text: str
    warnings: tuple[str, ...] = field(default_factory=tuple)
    wrap: bool = True          # text output: wrap to the terminal (not JSON, CSV, HTML or a spec file)


def document(d: dict, warnings) -> str:
    """A JSON document: schema_version first, the result, and every warning (the result's and the CLI's)."""
    from ..report import to_json
    return to_json({"schema_version": SCHEMA_VERSION, **d, "warnings": list(warnings)})


def _merge(*groups) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for g in groups:
        for w in g or ():
            seen.setdefault(w, None)
    return tuple(seen)


def _need_output(a) -> None:
    if getattr(a, "format", None) == "html" and not a.output:
        raise DlasimError("--format html needs -o FILE")


def _platform(r, warnings: list[str]):
    """The platform to estimate on; --noTF32 gives the GPU without its TF32 path."""
    from ..hardware import hardware, without_tf32
    plat = hardware(r.options["hw"])
    if r.no_tf32:
        if plat.gpu is None or not plat.gpu.tf32:
            warnings.append(f"--noTF32 has no effect: {plat.name} has no TF32 tensor cores (FP32 convolutions "
                            f"run on the CUDA cores anyway)")
        else:
            plat = without_tf32(plat)
    return plat


def run_warnings(r, est) -> list[str]:
    """Warnings that need the estimate: --noTF32 with nothing in FP32, --int8 without --fp16 on the GPU."""
    out = []
    gpu_fp32 = any(s.device == "gpu" and s.kind == "layer" and s.precision == "fp32" for s in est.steps)
    if r.no_tf32 and not gpu_fp32 and est.device == "gpu":
        out.append(f"--noTF32 has no effect: no GPU layer runs in FP32 at precision {est.precision}")
    from ..builder import runs_wider             # lazy: an estimate has run, so builder is loaded already
    if r.int8_without_fp16 and runs_wider(est, "fp16"):
        what = "engine" if est.device == "gpu" else "GPU layers"
        out.append(f"--int8 without --fp16: trtexec may not use FP16, so it cannot keep the FP16 {what} dlasim "
                   f"times faster here; it would time INT8 against FP32 (add --fp16 to match)")
    elif r.int8_without_fp16:
        wider = [s for s in est.steps if s.device == "gpu" and s.kind == "layer" and s.precision == "fp16"]
        if wider:
            out.append(f"--int8 without --fp16: trtexec would run the {len(wider)} GPU layer(s) without an INT8 "
                       f"kernel in FP32; dlasim costs them in FP16 (add --fp16 to match)")
    return out


def _prepare(a):
    _need_output(a)
    r = resolve(a)
    warnings = list(r.warnings)
    opts = dict(r.options)
    opts["hw"] = plat = _platform(r, warnings)
    if opts["device"] is None:
        opts["device"] = "dla" if plat.dla is not None else "gpu"
    if opts["device"] == "gpu" and a.gpu_fallback is not None:
        warnings.append(f"{'--allowGPUFallback' if a.gpu_fallback else '--no-gpu-fallback'} has no effect on a "
                        f"GPU build (it decides where layers the DLA cannot run go)")
    return r, opts, warnings


def options(a) -> dict:
    """The keyword arguments of dlasim.estimate from the model options (for subcommands added later: the
    model itself is resolve(a).model, since it may come from MODEL, --onnx or --deploy)."""
    return _prepare(a)[1]


def _check_model(model: str) -> None:
    from ..filekind import check_model
    check_model(model)


def cmd_estimate(a) -> Output:
    from ..api import estimate
    from .. import report
    r, opts, warnings = _prepare(a)
    _check_model(r.model)
    e = estimate(r.model, **opts)
    warnings = _merge(warnings, e.warnings, run_warnings(r, e))
    if a.format == "json":
        return Output(document(e.to_dict(), warnings), warnings, False)
    if a.format == "csv":
        return Output(report.estimate_csv(e), warnings, False)
    if a.format == "html":
        from ..html import estimate_page
        e.warnings[:] = list(warnings)
        return Output(estimate_page(e), warnings, False)
    from .text import width
    return Output(report.estimate_table(e, width(a.output is not None)), warnings)


def cmd_explain(a) -> Output:
    from ..explainer.waterfall import explain
    r, opts, warnings = _prepare(a)
    _check_model(r.model)
    hw = opts.pop("hw")
    if a.measured:
        from ..filekind import check_profile
        from ..explainer.measured import explain_measured
        check_profile(a.measured, "explain --measured")
        profile = a.measured
        if a.layer_info:
            from ..trtexec import join_layer_info, parse_layer_info
            from ..explainer.measured import load_profile
            check_profile(a.layer_info, "--layer-info", layer_info=True)
            profile = join_layer_info(load_profile(a.measured), parse_layer_info(a.layer_info))
        result = explain_measured(r.model, hw, profile, **opts)
        est_warnings = ()
    else:
        if a.layer_info:
            warnings.append("--layer-info has no effect without --measured")
        result = explain(r.model, hw, **opts)
        est_warnings = tuple(result.estimate.warnings) + tuple(run_warnings(r, result.estimate))
    warnings = _merge(warnings, est_warnings, getattr(result, "warnings", ()))
    if a.format == "json":
        d = result.to_dict()
        d.pop("warnings", None)
        return Output(document(d, warnings), warnings, False)
    if a.format == "html":
        from ..html import explain_page
        if hasattr(result, "estimate"):
            result.estimate.warnings[:] = list(warnings)        # the page shows them under its header
        return Output(explain_page(result), warnings, False)
    if a.measured:       # the name column takes what the numbers and the cause leave
        from .text import width
        text = result.render(width=max(24, width(a.output is not None) - 47))
    else:
        text = result.render()
    return Output(text, tuple(w for w in warnings if w not in getattr(result, "warnings", ())))


def _parse_vary(items: list[str]) -> dict:
    from ..explainer.compare import VARY_KEYS
    from ..sweep import parse_vary
    return parse_vary(items, VARY_KEYS, min_values=2, one_key=True)


def cmd_compare(a) -> Output:
    from ..explainer.compare import compare
    r, opts, warnings = _prepare(a)
    _check_model(r.model)
    vary = _parse_vary(a.vary)
    key = next(iter(vary))
    given = {"precision": a.precision or a.int8 or a.fp16 or a.best, "device": a.device or a.dla_core is not None,
             "batch": a.batch, "sparsity": a.sparsity != "disable", "hw": a.hw != "xavier-agx",
             "shapes": bool(a.shapes)}
    if given.get(key):
        warnings.append(f"--vary {key} sets the {key} of each variant: the {key} option given is not used")
    if "hw" in vary:
        if r.no_tf32:
            warnings.append("--noTF32 is not applied when --vary hw names the platforms")
        opts["hw"] = r.options["hw"]
    hw = opts.pop("hw")
    result = compare(r.model, hw, vary, **opts)
    warnings = _merge(warnings, *(v.warnings for v in result.variants))
    if a.format == "json":
        return Output(document(result.to_dict(), warnings), warnings, False)
    if a.format == "html":
        from ..html import compare_page
        return Output(compare_page(result), warnings, False)
    if a.format == "csv":
        return Output(result.csv(), warnings, False)
    return Output(result.render(), warnings)


def cmd_validate(a) -> Output:
    from .. import validate
    from .text import width
    result = validate.run(a.suite)
    if a.format == "json":
        return Output(document(result, ()), (), False)
    return Output(validate.render(result, width(a.output is not None)))


def cmd_calibrate(a) -> Output:
    from .. import calibrate
    from ..filekind import check_model, check_profile
    models = a.model + a.models
    if not models:
        raise DlasimError("calibrate: give the model the profile was measured on (MODEL or --model)")
    for m in models:
        check_model(m, "--model")
    for p in a.profile:
        check_profile(p, "--profile")
    if a.layer_info:
        check_profile(a.layer_info, "--layer-info", layer_info=True)
    params = tuple(p.strip() for p in a.params.split(",") if p.strip()) if a.params else None
    result = calibrate.calibrate(a.hw, models, a.profile, a.output, layer_info=a.layer_info, device=a.device,
                                 precision=precision_of(a)[0], batch=a.batch, params=params)
    warnings = tuple(result.pop("warnings", ()))
    if a.format == "json":
        return Output(document(result, warnings), warnings, False)
    return Output(calibrate.render(result), warnings)


def cmd_inspect(a) -> Output:
    from ..api import load
    from ..importers import parse_shapes
    from ..inspect import inspect_dict, inspect_table
    _check_model(a.model)
    g = load(a.model, shapes=parse_shapes(a.shapes) if a.shapes else None, batch=a.batch)
    if a.format == "json":
        return Output(document(inspect_dict(g), ()), (), False)
    return Output(inspect_table(g))


def cmd_profile(a) -> Output:
    from .. import trtexec
    from ..filekind import check_profile
    check_profile(a.profile, "profile")
    if a.layer_info:
        check_profile(a.layer_info, "--layer-info", layer_info=True)
    s = trtexec.profile_summary(a.profile, a.layer_info)
    if a.format == "json":
        w = tuple(s.pop("warnings", []))
        return Output(document(s, w), w, False)
    return Output(trtexec.render_profile_table(s))


def cmd_specs(a) -> Output:
    from ..hardware import SPEC_DIR, hardware, spec_names
    if a.action == "show":
        if not a.name:
            raise DlasimError("specs show: give a NAME (see dlasim specs list)")
        plat = hardware(a.name)
        with open(plat.path) as f:
            return Output(f.read(), (), False)
    lines = []
    for n in spec_names():
        p = hardware(n)
        modes = f"  modes: {', '.join(p.power_modes)}" if p.power_modes else ""
        lines.append(f"{n:<14} {p.description}{modes}")
    lines.append(f"(files in {SPEC_DIR}; pass --hw NAME, NAME:MODE or a path to a copy)")
    return Output("\n".join(lines))


def cmd_zoo(a) -> Output:
    from .. import zoo
    return Output("\n".join(f"zoo:{n:<18} {zoo.describe(n)}" for n in zoo.names()))


def cmd_concurrent(a) -> Output:
    from .concurrent import cmd
    from .text import width
    out = cmd(a, width(a.output is not None))
    if isinstance(out, dict):            # --format json: a versioned document like the other commands'
        warnings = out.pop("warnings", [])
        return Output(document(out, warnings), (), False)
    return Output(out, (), a.format == "table")   # the table fits the width; its prose lines wrap


def cmd_sweep(a) -> Output:
    from .sweep import cmd as sweep
    r, opts, warnings = _prepare(a)
    _check_model(r.model)
    a.model = r.model
    out = sweep(a, opts)
    if isinstance(out, dict):            # --format json: a versioned document like the other commands'
        return Output(document(out, warnings), tuple(warnings), False)
    return Output(out, tuple(warnings), a.format == "table")
