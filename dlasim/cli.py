"""Command line: a thin layer over the public API. Bad input -> one line on stderr, exit status 2.

Subcommands follow DESIGN.md; trtexec spellings are accepted as aliases (--int8, --fp16, --best,
--useDLACore=N, --allowGPUFallback, --sparsity=force, --batch=N, --shapes=name:1x3x224x224,
--inputIOFormats=..., --outputIOFormats=...).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

from .errors import DlasimError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse prints usage over several lines)
        raise DlasimError(f"{self.prog}: {message}")


def _model_options(p: argparse.ArgumentParser, formats=("table", "json", "csv", "html")) -> None:
    p.add_argument("model", help="path (.onnx, .prototxt, .json) or zoo:NAME")
    p.add_argument("--hw", default="xavier-agx", help="platform name, name:mode, or a .toml spec path")
    p.add_argument("--device", choices=["dla", "gpu"], default=None)
    p.add_argument("--dla-core", "--useDLACore", dest="dla_core", type=int, default=None)
    prec = p.add_mutually_exclusive_group()
    prec.add_argument("--precision", choices=["fp32", "fp16", "int8", "best"], default=None)
    prec.add_argument("--int8", dest="precision", action="store_const", const="int8")
    prec.add_argument("--fp16", dest="precision", action="store_const", const="fp16")
    prec.add_argument("--best", dest="precision", action="store_const", const="best")
    p.add_argument("--batch", type=int, default=None)
    fb = p.add_mutually_exclusive_group()
    fb.add_argument("--gpu-fallback", "--allowGPUFallback", dest="gpu_fallback", action="store_true", default=None)
    fb.add_argument("--no-gpu-fallback", dest="gpu_fallback", action="store_false")
    p.add_argument("--sparsity", choices=["disable", "enable", "force"], default="disable")
    p.add_argument("--shapes", default=None, help="trtexec spelling: input:1x3x224x224[,name:...]")
    p.add_argument("--inputIOFormats", "--input-io-formats", dest="input_formats", default=None)
    p.add_argument("--outputIOFormats", "--output-io-formats", dest="output_formats", default=None)
    p.add_argument("--format", choices=list(formats), default="table")
    p.add_argument("-o", "--output", default=None, help="write to this file instead of stdout")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="dlasim", description="Analytical latency simulator for NVIDIA DLA and GPUs under TensorRT")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    _model_options(sub.add_parser("estimate", help="placement and per-step latency"))
    ex = sub.add_parser("explain", help="why the time is what it is: causes and advice")
    _model_options(ex)
    ex.add_argument("--measured", default=None, help="trtexec --exportProfile JSON to compare with")
    cp = sub.add_parser("compare", help="vary one option and attribute the difference")
    _model_options(cp)
    cp.add_argument("--vary", required=True, action="append", help="KEY=V1,V2 (precision|sparsity|device|batch|hw)")
    va = sub.add_parser("validate", help="predicted vs measured on the validation cases")
    va.add_argument("--suite", default=None)
    va.add_argument("--format", choices=["table", "json"], default="table")
    va.add_argument("-o", "--output", default=None)
    ca = sub.add_parser("calibrate", help="fit spec parameters to a measured profile")
    ca.add_argument("--hw", required=True)
    ca.add_argument("--model", required=True, action="append")
    ca.add_argument("--profile", required=True, action="append")
    ca.add_argument("--layer-info", default=None)
    ca.add_argument("--device", choices=["dla", "gpu"], default=None)
    ca.add_argument("--precision", choices=["fp32", "fp16", "int8", "best"], default="fp16")
    ca.add_argument("--batch", type=int, default=None)
    ca.add_argument("--params", default=None, help="comma-separated parameters to fit (default: a small set)")
    ca.add_argument("--format", choices=["table", "json"], default="table")
    ca.add_argument("-o", "--output", required=True, help="the calibrated spec file to write")
    ins = sub.add_parser("inspect", help="graph, shapes, MACs, params")
    ins.add_argument("model")
    ins.add_argument("--shapes", default=None)
    ins.add_argument("--batch", type=int, default=None)
    ins.add_argument("--format", choices=["table", "json"], default="table")
    ins.add_argument("-o", "--output", default=None)
    pr = sub.add_parser("profile", help="summarise a measured trtexec profile")
    pr.add_argument("profile")
    pr.add_argument("--layer-info", default=None)
    pr.add_argument("--format", choices=["table", "json"], default="table")
    pr.add_argument("-o", "--output", default=None)
    sp = sub.add_parser("specs", help="list or show hardware spec files")
    sp.add_argument("action", nargs="?", choices=["list", "show"], default="list")
    sp.add_argument("name", nargs="?")
    from .sweep import add_parser as sweep_parser
    sweep_parser(sub, _model_options)
    zo = sub.add_parser("zoo", help="list the built-in networks")
    zo.add_argument("action", nargs="?", choices=["list"], default="list")
    return ap


def _options(a) -> dict:
    from .importers import parse_shapes
    device = a.device or ("dla" if a.dla_core is not None else None)
    return dict(hw=a.hw, device=device or "dla", precision=a.precision or "fp16", batch=a.batch,
                gpu_fallback=True if a.gpu_fallback is None else a.gpu_fallback, sparsity=a.sparsity,
                dla_core=a.dla_core or 0, shapes=parse_shapes(a.shapes) if a.shapes else None,
                input_formats=a.input_formats, output_formats=a.output_formats)


def _emit(text: str, path: str | None) -> None:
    """Print, or write atomically to `path` (nothing half-written on failure)."""
    if path is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".dlasim-")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)       # mkstemp makes 0600; give the file the usual mode
        os.replace(tmp, path)
    except OSError as e:
        raise DlasimError(f"{path}: cannot write ({e.strerror})") from None


def _need_output(a) -> None:
    if getattr(a, "format", None) == "html" and not a.output:
        raise DlasimError("--format html needs -o FILE")


def cmd_estimate(a) -> str:
    import dlasim
    from . import report
    _need_output(a)
    e = dlasim.estimate(a.model, **_options(a))
    if a.format == "json":
        return report.to_json(e.to_dict())
    if a.format == "csv":
        return report.estimate_csv(e)
    if a.format == "html":
        from .html import estimate_page
        return estimate_page(e)
    return report.estimate_table(e)


def cmd_explain(a) -> str:
    from . import report
    from . import causes
    _need_output(a)
    opts = _options(a)
    hw = opts.pop("hw")
    if a.measured:
        from .measured import explain_measured
        result = explain_measured(a.model, hw, a.measured, **opts)
    else:
        result = causes.explain(a.model, hw, **opts)
    if a.format == "json":
        return report.to_json(result.to_dict())
    if a.format == "html":
        from .html import explain_page
        return explain_page(result)
    if a.format == "csv":
        raise DlasimError("explain: --format csv is not available (use table, json or html)")
    return result.render()


def _parse_vary(items: list[str]) -> dict:
    vary = {}
    for item in items:
        key, eq, vals = item.partition("=")
        key = key.strip()
        if not eq or key not in ("precision", "sparsity", "device", "batch", "hw"):
            raise DlasimError(f"--vary: expected KEY=V1,V2 with KEY in precision|sparsity|device|batch|hw, got {item!r}")
        values = [v.strip() for v in vals.split(",") if v.strip()]
        if len(values) < 2:
            raise DlasimError(f"--vary {key}: give at least two values")
        if key == "batch":
            try:
                values = [int(v) for v in values]
            except ValueError:
                raise DlasimError(f"--vary batch: values must be integers, got {vals!r}") from None
        vary[key] = values
    if len(vary) != 1:
        raise DlasimError("--vary: give exactly one KEY")
    return vary


def cmd_compare(a) -> str:
    from . import report
    from . import causes
    _need_output(a)
    opts = _options(a)
    hw = opts.pop("hw")
    result = causes.compare(a.model, hw, _parse_vary(a.vary), **opts)
    if a.format == "json":
        return report.to_json(result.to_dict())
    if a.format == "html":
        from .html import compare_page
        return compare_page(result)
    if a.format == "csv":
        return result.csv()
    return result.render()


def cmd_validate(a) -> str:
    from . import validate, report
    result = validate.run(a.suite)
    return report.to_json(result) if a.format == "json" else validate.render(result)


def cmd_calibrate(a) -> str:
    from . import calibrate, report
    result = calibrate.calibrate_cli(a)
    return report.to_json(result) if a.format == "json" else calibrate.render(result)


def cmd_inspect(a) -> str:
    import dlasim
    from .importers import parse_shapes
    from .inspect import inspect_dict, inspect_table
    from . import report
    g = dlasim.load(a.model, shapes=parse_shapes(a.shapes) if a.shapes else None, batch=a.batch)
    return report.to_json(inspect_dict(g)) if a.format == "json" else inspect_table(g)


def cmd_profile(a) -> str:
    from . import trtexec, report
    s = trtexec.profile_summary(a.profile, a.layer_info)
    return report.to_json(s) if a.format == "json" else trtexec.render_profile_table(s)


def cmd_specs(a) -> str:
    from .hardware import SPEC_DIR, hardware, spec_names
    if a.action == "show":
        if not a.name:
            raise DlasimError("specs show: give a NAME (see dlasim specs list)")
        plat = hardware(a.name)
        with open(plat.path) as f:
            return f.read()
    lines = []
    for n in spec_names():
        p = hardware(n)
        modes = f"  modes: {', '.join(p.power_modes)}" if p.power_modes else ""
        lines.append(f"{n:<14} {p.description}{modes}")
    lines.append(f"(files in {SPEC_DIR}; pass --hw NAME, NAME:MODE or a path to a copy)")
    return "\n".join(lines)


def cmd_zoo(a) -> str:
    from . import zoo
    return "\n".join(f"zoo:{n:<18} {zoo.describe(n)}" for n in zoo.names())


def cmd_sweep(a) -> str:
    from .sweep import cmd_sweep as sweep
    return sweep(a, _options(a))


COMMANDS = {"estimate": cmd_estimate, "explain": cmd_explain, "compare": cmd_compare, "validate": cmd_validate,
            "calibrate": cmd_calibrate, "inspect": cmd_inspect, "profile": cmd_profile, "specs": cmd_specs,
            "zoo": cmd_zoo, "sweep": cmd_sweep}


def main(argv: list[str] | None = None) -> int:
    try:
        a = _parser().parse_args(argv)
        text = COMMANDS[a.cmd](a)
        _emit(text, getattr(a, "output", None) if a.cmd != "calibrate" else None)
        return 0
    except DlasimError as e:
        print(f"dlasim: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
