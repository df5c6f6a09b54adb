"""The model options of estimate / explain / compare, in dlasim's and trtexec's spellings.

A trtexec command line pastes as it is: `--onnx=FILE` / `--deploy=FILE` name the model, `--int8 --fp16`
combine, `--optShapes` sets the shapes, and the flags that do not change a latency estimate are accepted and
named in one warning. `resolve` turns the parsed flags into the keyword arguments of `dlasim.estimate` plus
the warnings for what cannot take effect.

dlasim's defaults differ from trtexec's in three places (DEFAULTS_VS_TRTEXEC, shown in --help):
device (DLA, trtexec: GPU), precision (FP16, trtexec: FP32) and GPU fallback (on, trtexec: off).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from ..errors import DlasimError

DEFAULTS_VS_TRTEXEC = (
    "dlasim defaults that differ from trtexec's: --device dla on a platform with a DLA (trtexec builds for "
    "the GPU unless --useDLACore is given), precision FP16 (trtexec: FP32 unless --fp16/--int8/--best), GPU fallback on "
    "(trtexec: off unless --allowGPUFallback; turn it off with --no-gpu-fallback). --int8 alone runs layers "
    "without INT8 kernels in FP16 (trtexec: FP32; a warning says when that happens).")

# trtexec flags that change nothing a latency estimate depends on: accepted, named in one warning.
# (name, takes a value). trtexec writes values as --name=value; --name value works too.
IGNORED = (
    ("saveEngine", True), ("memPoolSize", True), ("workspace", True), ("iterations", True),
    ("avgRuns", True), ("warmUp", True), ("duration", True), ("exportProfile", True),
    ("exportLayerInfo", True), ("exportTimes", True), ("exportOutput", True), ("timingCacheFile", True),
    ("calib", True), ("profilingVerbosity", True), ("sleepTime", True), ("idleTime", True),
    ("percentile", True), ("plugins", True), ("staticPlugins", True), ("setPluginsToSerialize", True),
    ("maxBatch", True), ("loadInputs", True), ("profile", True), ("avgTiming", True), ("minTiming", True),
    ("verbose", False), ("useCudaGraph", False), ("useSpinWait", False), ("separateProfileRun", False),
    ("dumpProfile", False), ("dumpLayerInfo", False), ("dumpOutput", False), ("dumpRawBindingsToFile", False),
    ("buildOnly", False), ("skipInference", False), ("noDataTransfers", False), ("threads", False),
    ("noBuilderCache", False), ("timeRefit", False), ("refit", False), ("stripWeights", False),
    ("useManagedMemory", False), ("useRuntime", True), ("persistentCacheRatio", True), ("safe", False),
    ("consistency", False), ("restricted", False), ("versionCompatible", False), ("excludeLeanRuntime", False),
)
# trtexec flags that would change latency in ways dlasim does not model: accepted, named in a warning.
UNMODELLED = (
    ("streams", True), ("infStreams", True), ("maxAuxStreams", True), ("builderOptimizationLevel", True),
    ("tacticSources", True), ("layerPrecisions", True), ("layerOutputTypes", True),
    ("layerDeviceTypes", True), ("precisionConstraints", True), ("exposeDMA", False), ("directIO", False),
    ("noCompilationCache", False), ("allowWeightStreaming", False), ("weightStreamingBudget", True),
)


def _device(text: str):
    """--device: dla or gpu in any case, or dlaN (core N, as `dlasim concurrent` names the units); an integer
    is trtexec's CUDA device number (ignored, with a warning)."""
    t = text.lower()
    if t in ("dla", "gpu") or (t[:3] == "dla" and t[3:].isdigit()):
        return t
    if text.isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"expected dla, dla0, dla1 or gpu (or trtexec's CUDA device number), "
                                     f"got {text!r}")


def _int_at_least(text: str, lo: int, what: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if n < lo:
        raise argparse.ArgumentTypeError(f"expected {what}, got {n}")
    return n


def _positive(text: str) -> int:
    return _int_at_least(text, 1, "a positive integer")


def _core(text: str) -> int:
    return _int_at_least(text, 0, "a DLA core number (0, 1, ...)")


def add_model_options(p: argparse.ArgumentParser, formats=("table", "json", "csv", "html")) -> None:
    """The options every model subcommand takes (estimate, explain, compare)."""
    p.add_argument("model", nargs="?", default=None,
                   help="model: .onnx, .prototxt, .json (Graph.to_json) or zoo:NAME (default: none; "
                        "or give --onnx=FILE / --deploy=FILE)")
    src = p.add_argument_group("model, trtexec spellings")
    src.add_argument("--onnx", default=None, metavar="FILE", help="ONNX model, as trtexec (default: none)")
    src.add_argument("--deploy", default=None, metavar="FILE",
                     help="Caffe prototxt, as trtexec (default: none)")
    src.add_argument("--model", dest="caffe_weights", default=None, metavar="FILE",
                     help="Caffe weights (.caffemodel) as trtexec; weights do not change latency, so only "
                          "noted (default: none)")
    p.add_argument("--hw", default="xavier-agx",
                   help="platform name, NAME:MODE (power mode) or a .toml spec path (default: xavier-agx)")
    p.add_argument("--device", type=_device, default=None,
                   help="dla or gpu (default: dla when the platform has one, else gpu; trtexec's default is the GPU; "
                        "--useDLACore implies dla)")
    p.add_argument("--dla-core", "--useDLACore", dest="dla_core", type=_core, default=None, metavar="N",
                   help="DLA core to run on; implies --device dla (default: 0)")
    p.add_argument("--precision", type=str.lower, choices=["fp32", "fp16", "int8", "best"], default=None,
                   help="engine precision (default: fp16; trtexec's default is fp32)")
    p.add_argument("--fp16", action="store_true", help="trtexec: allow FP16 (default: off)")
    p.add_argument("--int8", action="store_true",
                   help="trtexec: allow INT8; with --fp16, INT8 with FP16 fallback (default: off)")
    p.add_argument("--best", action="store_true", help="trtexec: allow every precision (default: off)")
    p.add_argument("--noTF32", dest="no_tf32", action="store_true",
                   help="trtexec: FP32 GPU convolutions without TF32 tensor cores (default: TF32 where the GPU "
                        "has it)")
    p.add_argument("--batch", type=_positive, default=None,
                   help="batch size (default: the model's own, usually 1)")
    fb = p.add_mutually_exclusive_group()
    fb.add_argument("--gpu-fallback", "--allowGPUFallback", dest="gpu_fallback", action="store_true",
                    default=None, help="layers the DLA cannot run go to the GPU (default: on; trtexec: off)")
    fb.add_argument("--no-gpu-fallback", dest="gpu_fallback", action="store_false",
                    help="fail like TensorRT when a layer cannot run on the DLA (default: off)")
    p.add_argument("--sparsity", type=str.lower, choices=["disable", "enable", "force"], default="disable",
                   help="2:4 structured sparsity, as trtexec (default: disable)")
    p.add_argument("--shapes", default=None, metavar="NAME:DIMS[,...]",
                   help="input shapes, e.g. input:1x3x224x224 (default: the model's)")
    p.add_argument("--optShapes", dest="opt_shapes", default=None, metavar="NAME:DIMS[,...]",
                   help="trtexec optimization-profile opt shapes; the estimate uses them unless --shapes "
                        "is given (default: none)")
    p.add_argument("--minShapes", dest="min_shapes", default=None, metavar="NAME:DIMS[,...]",
                   help="profile minimum shapes, checked against the shapes used (default: none)")
    p.add_argument("--maxShapes", dest="max_shapes", default=None, metavar="NAME:DIMS[,...]",
                   help="profile maximum shapes, checked against the shapes used (default: none)")
    p.add_argument("--inputIOFormats", "--input-io-formats", dest="input_formats", default=None,
                   metavar="FMT", help="engine input formats, as trtexec, e.g. int8:chw32 (default: the "
                                       "engine's native format)")
    p.add_argument("--outputIOFormats", "--output-io-formats", dest="output_formats", default=None,
                   metavar="FMT", help="engine output formats, as trtexec (default: the engine's native format)")
    p.add_argument("--format", type=str.lower, choices=list(formats), default="table",
                   help=f"output format: {', '.join(formats)} (default: table)")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write to FILE instead of stdout (default: stdout; html needs a file)")
    add_ignored_flags(p)


def add_ignored_flags(p: argparse.ArgumentParser) -> None:
    names = ", ".join(f"--{n}" for n, _ in IGNORED)
    unmodelled = ", ".join(f"--{n}" for n, _ in UNMODELLED)
    grp = p.add_argument_group(
        "trtexec flags accepted and ignored",
        f"These change nothing a latency estimate depends on; they are accepted so a trtexec command line "
        f"pastes as it is, and named in one warning: {names}, --loadEngine (with a model), --device=N "
        f"(CUDA device number). These would change latency in ways dlasim does not model; they are "
        f"accepted with a warning that they cannot take effect: {unmodelled}.")
    for name, value in IGNORED + UNMODELLED:
        if value:
            grp.add_argument(f"--{name}", dest=f"trt_{name}", default=None, help=argparse.SUPPRESS)
        else:
            grp.add_argument(f"--{name}", dest=f"trt_{name}", action="store_true", help=argparse.SUPPRESS)
    grp.add_argument("--loadEngine", dest="load_engine", default=None, help=argparse.SUPPRESS)


@dataclass(frozen=True)
class Resolved:
    """What the flags mean: the model, the keyword arguments of dlasim.estimate, and CLI-level warnings."""
    model: str
    options: dict
    no_tf32: bool = False
    int8_without_fp16: bool = False
    warnings: tuple[str, ...] = field(default_factory=tuple)


def _flag_list(a, table) -> list[str]:
    out = []
    for name, value in table:
        v = getattr(a, f"trt_{name}", None)
        if v:
            out.append(f"--{name}={v}" if value and len(str(v)) <= 24 else f"--{name}")
    return out


def _model(a, notes: list[str]) -> str:
    given = [(flag, v) for flag, v in (("MODEL", a.model), ("--onnx", a.onnx), ("--deploy", a.deploy)) if v]
    if len(given) > 1:
        raise DlasimError(f"give the model once: {' and '.join(f for f, _ in given)} both name one")
    if a.caffe_weights and not given:
        raise DlasimError(f"--model={a.caffe_weights} is trtexec's Caffe weights file; give the network with "
                          f"--deploy=FILE.prototxt (or --onnx=FILE)")
    if not given:
        if a.load_engine:
            raise DlasimError(f"--loadEngine={a.load_engine}: dlasim cannot read a serialized engine; give the "
                              f"model it was built from (--onnx=FILE, --deploy=FILE or MODEL)")
        raise DlasimError("give a model: MODEL (a path or zoo:NAME), --onnx=FILE or --deploy=FILE")
    if a.caffe_weights:
        notes.append(f"--model={a.caffe_weights}")
    if a.load_engine:
        notes.append(f"--loadEngine={a.load_engine}")
    return given[0][1]


def precision_of(a) -> tuple[str, bool]:
    """(precision, --int8 given without --fp16) from --precision and the trtexec flags (estimate, explain,
    compare, calibrate)."""
    flags = [f for f in ("fp16", "int8", "best") if getattr(a, f)]
    if a.precision and flags:
        raise DlasimError(f"give --precision {a.precision} or the trtexec flags "
                          f"({' '.join('--' + f for f in flags)}), not both")
    if a.precision:
        return a.precision, False
    if a.best:
        return "best", False
    if a.int8:
        return "int8", not a.fp16
    return "fp16", False


def _shape_arg(text: str | None, flag: str) -> dict | None:
    if not text:
        return None
    from ..importers import parse_shapes
    try:
        return parse_shapes(text)
    except DlasimError as e:
        raise DlasimError(str(e).replace("--shapes", flag, 1)) from None


def _shapes(a, warnings: list[str]) -> dict | None:
    shapes, opt = _shape_arg(a.shapes, "--shapes"), _shape_arg(a.opt_shapes, "--optShapes")
    lo, hi = _shape_arg(a.min_shapes, "--minShapes"), _shape_arg(a.max_shapes, "--maxShapes")
    if shapes and opt and shapes != opt:
        warnings.append("--shapes and --optShapes differ: the estimate is at --shapes, the shapes trtexec "
                        "times (kernels tuned for --optShapes are not modelled)")
    use = shapes or opt
    for bound, flag, ok in ((lo, "--minShapes", lambda u, b: u >= b), (hi, "--maxShapes", lambda u, b: u <= b)):
        for name, dims in (bound or {}).items():
            if use is None or name not in use:
                raise DlasimError(f"{flag}: {name!r} has no --shapes/--optShapes entry to check against")
            u = use[name]
            if len(u) != len(dims) or not all(ok(x, y) for x, y in zip(u, dims)):
                raise DlasimError(f"{flag}: {name} {'x'.join(map(str, u))} is outside the profile bound "
                                  f"{'x'.join(map(str, dims))}")
    return use


def resolve(a) -> Resolved:
    """Parsed flags -> model, dlasim.estimate keyword arguments and warnings. Raises DlasimError on a conflict."""
    ignored: list[str] = []
    warnings: list[str] = []
    model = _model(a, ignored)
    precision, int8_only = precision_of(a)
    device = a.device
    if isinstance(device, int):
        ignored.append(f"--device={device}")
        device = None
    core = a.dla_core
    if isinstance(device, str) and device[3:].isdigit():         # dlaN: the DLA, core N
        if core is not None and core != int(device[3:]):
            raise DlasimError(f"--device {device} and --useDLACore={core} conflict: give one DLA core")
        core, device = int(device[3:]), "dla"
    if core is not None:
        if device == "gpu":
            raise DlasimError(f"--useDLACore={core} and --device gpu conflict: the DLA core option "
                              f"means a DLA build")
        device = "dla"
    ignored += _flag_list(a, IGNORED)
    if ignored:
        warnings.append(f"ignored (no effect on a latency estimate): {', '.join(ignored)}")
    unmodelled = _flag_list(a, UNMODELLED)
    if unmodelled:
        warnings.append(f"not modelled, cannot take effect: {', '.join(unmodelled)}")
    shapes = _shapes(a, warnings)
    if a.batch and shapes:
        other = sorted({dims[0] for dims in shapes.values() if dims and dims[0] != a.batch})
        if other:
            warnings.append(f"--batch={a.batch} and the shapes' batch ({', '.join(map(str, other))}) differ: "
                            f"the estimate is at batch {a.batch}")
    opts = dict(hw=a.hw, device=device, precision=precision, batch=a.batch,
                gpu_fallback=True if a.gpu_fallback is None else a.gpu_fallback, sparsity=a.sparsity,
                dla_core=core or 0, shapes=shapes, input_formats=a.input_formats,
                output_formats=a.output_formats)
    return Resolved(model, opts, a.no_tf32, int8_only, tuple(warnings))
