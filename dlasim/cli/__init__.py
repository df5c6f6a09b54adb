"""Command line: a thin layer over the public API. Bad input -> one line on stderr, exit status 2.

The subcommands and their JSON documents are described in docs/DESIGN.md; trtexec command lines paste as
they are (cli/options.py). Warnings (options that cannot take effect, ignored trtexec flags) go to stderr,
one line each, and into the JSON document's "warnings".

A subcommand is one row of SUBCOMMANDS: (name, help, function adding its options to its parser, function
running it). The run function returns a commands.Output (text, warnings) or a plain string. A subcommand
that takes a model calls options.add_model_options(p) in its setup and commands.options(a) /
options.resolve(a) in its run function (the model may come from MODEL, --onnx or --deploy).
"""
from __future__ import annotations

import argparse
import sys

from ..errors import DlasimError
from ..safeio import write_text
from . import commands as C
from .concurrent import HELP as CONCURRENT_HELP, add_options as add_concurrent_options
from .sweep import HELP as SWEEP_HELP, add_options as add_sweep_options
from .options import DEFAULTS_VS_TRTEXEC, _positive, add_model_options


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)      # a typo must not silently mean another flag
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # one line, exit 2 (argparse prints usage over several lines)
        sub = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        raise DlasimError(f"{sub}: {message}" if sub else message)


FORMATS_TJ = ("table", "json")


def _fmt_out(p, formats=FORMATS_TJ, output_required=False) -> None:
    p.add_argument("--format", type=str.lower, choices=list(formats), default="table",
                   help=f"output format: {', '.join(formats)} (default: table)")
    if output_required:
        p.add_argument("-o", "--output", required=True, metavar="FILE", help="the calibrated spec file to write "
                       "(required; no default)")
    else:
        p.add_argument("-o", "--output", default=None, metavar="FILE",
                       help="write to FILE instead of stdout (default: stdout)")


def _estimate(p) -> None:
    add_model_options(p)


def _explain(p) -> None:
    add_model_options(p, formats=("table", "json", "html"))
    p.add_argument("--measured", default=None, metavar="PROFILE.json",
                   help="trtexec --exportProfile JSON to compare with, per layer (default: none)")
    p.add_argument("--layer-info", "--layerInfo", dest="layer_info", default=None, metavar="LAYERINFO.json",
                   help="trtexec --exportLayerInfo JSON of the same engine, joined to --measured (default: none)")


def _compare(p) -> None:
    add_model_options(p)
    p.add_argument("--vary", required=True, action="append", metavar="KEY=V1,V2",
                   help="the option to vary: precision|sparsity|device|batch|hw|model|shapes (required; no default; "
                        "model: two model paths or zoo names, e.g. two Q/DQ placements of one network; shapes: "
                        "--shapes items, a repeated input name starting the next variant, e.g. "
                        "shapes=input:1x3x224x224,input:1x3x320x320)")


def _validate(p) -> None:
    p.add_argument("--suite", default=None, help="run only this suite of validation cases (default: all)")
    _fmt_out(p)


def _calibrate(p) -> None:
    p.add_argument("models", nargs="*", metavar="MODEL", help="the model(s), as --model (default: none)")
    p.add_argument("--hw", required=True, help="platform to fit, NAME[:MODE] or a .toml path (required)")
    p.add_argument("--model", action="append", default=[],
                   help="the model each profile was measured on; once, or once per --profile (required, or "
                        "give it as MODEL)")
    p.add_argument("--profile", "--measured", dest="profile", required=True, action="append",
                   metavar="PROFILE.json", help="trtexec --exportProfile JSON; repeat for several (required; "
                                                "--measured as explain spells it)")
    p.add_argument("--layer-info", default=None, metavar="LAYERINFO.json",
                   help="trtexec --exportLayerInfo JSON joined to the profile (default: none)")
    p.add_argument("--device", type=str.lower, choices=["dla", "gpu"], default=None,
                   help="device the profile ran on (default: dla when the profile has DLA subgraphs, else gpu)")
    p.add_argument("--precision", type=str.lower, choices=["fp32", "fp16", "int8", "best"], default=None,
                   help="precision of the measured engine (default: fp16)")
    for flag, what in (("fp16", "FP16"), ("int8", "INT8 (with --fp16: INT8 with FP16 fallback)"),
                       ("best", "every precision")):
        p.add_argument(f"--{flag}", action="store_true", help=f"trtexec: the engine allowed {what} (default: off)")
    p.add_argument("--batch", type=_positive, default=None, help="batch of the measured engine (default: the model's)")
    p.add_argument("--params", default=None,
                   help="comma-separated parameters to fit (default: a small set per device)")
    _fmt_out(p, output_required=True)


def _inspect(p) -> None:
    p.add_argument("model", help="model: .onnx, .prototxt, .json or zoo:NAME (required)")
    p.add_argument("--shapes", default=None, metavar="NAME:DIMS[,...]",
                   help="input shapes, e.g. input:1x3x224x224 (default: the model's)")
    p.add_argument("--batch", type=_positive, default=None, help="batch size (default: the model's)")
    _fmt_out(p)


def _profile(p) -> None:
    p.add_argument("profile", metavar="PROFILE.json", help="trtexec --exportProfile JSON (required)")
    p.add_argument("--layer-info", default=None, metavar="LAYERINFO.json",
                   help="trtexec --exportLayerInfo JSON of the same engine (default: none)")
    _fmt_out(p)


def _specs(p) -> None:
    p.add_argument("action", nargs="?", type=str.lower, choices=["list", "show"], default="list",
                   help="list the platforms, or show one spec file (default: list)")
    p.add_argument("name", nargs="?", help="platform to show (default: none)")


def _sweep(p) -> None:
    add_model_options(p)
    add_sweep_options(p)


def _zoo(p) -> None:
    p.add_argument("action", nargs="?", type=str.lower, choices=["list"], default="list",
                   help="list the built-in networks (default: list)")


SUBCOMMANDS = [
    ("estimate", "placement and per-step latency, throughput", _estimate, C.cmd_estimate),
    ("explain", "why the time is what it is: causes and advice", _explain, C.cmd_explain),
    ("compare", "vary one option and attribute the difference", _compare, C.cmd_compare),
    ("validate", "predicted vs measured on the validation cases", _validate, C.cmd_validate),
    ("calibrate", "fit spec parameters to a measured profile", _calibrate, C.cmd_calibrate),
    ("inspect", "graph, shapes, MACs, params", _inspect, C.cmd_inspect),
    ("profile", "summarise a measured trtexec profile", _profile, C.cmd_profile),
    ("specs", "list or show hardware spec files", _specs, C.cmd_specs),
    ("zoo", "list the built-in networks", _zoo, C.cmd_zoo),
    ("concurrent", CONCURRENT_HELP, add_concurrent_options, C.cmd_concurrent),
    ("sweep", SWEEP_HELP, _sweep, C.cmd_sweep),
]


def _version() -> str:
    from .._version import __version__
    return __version__


def parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="dlasim", description="Analytical latency simulator for NVIDIA DLA and GPUs under TensorRT.",
                 epilog=DEFAULTS_VS_TRTEXEC)
    ap.add_argument("--version", action="version", version=f"dlasim {_version()}",
                    help="print the version and exit")
    sub = ap.add_subparsers(dest="cmd", parser_class=_Parser, metavar="COMMAND")
    for name, text, setup, _ in SUBCOMMANDS:
        sp = sub.add_parser(name, help=text, description=text, epilog=DEFAULTS_VS_TRTEXEC
                            if setup in (_estimate, _explain, _compare) else None)
        setup(sp)
    return ap


def _emit(text: str, path: str | None) -> None:
    """Print, or write to `path` whole or not at all (safeio.write_text)."""
    if path is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    write_text(path, text)


def main(argv: list[str] | None = None) -> int:
    from .text import fit, width
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        ap = parser()
        if not argv:
            ap.print_help()
            return 0
        a = ap.parse_args(argv)
        if a.cmd is None:
            raise DlasimError("give a COMMAND (dlasim --help lists them)")
        run = next(fn for name, _, _, fn in SUBCOMMANDS if name == a.cmd)
        out = run(a)
        if isinstance(out, str):
            out = C.Output(out)
        path = getattr(a, "output", None) if a.cmd != "calibrate" else None
        text = fit(out.text, width(path is not None)) if out.wrap else out.text
        for w in out.warnings:
            print(f"dlasim: warning: {w}", file=sys.stderr)
        _emit(text, path)
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
