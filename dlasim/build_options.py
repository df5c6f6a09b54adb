"""The build options of one estimate, as one frozen record: what trtexec's flags say about the engine.

The public functions (dlasim.estimate, build, explain, compare, estimate_many) take these as keyword
arguments and make the record once (`BuildOptions.of`); from there it is one value handed to the loader
(shapes, batch) and to the passes (everything else). A bad value or an unknown option name is a one-line
DlasimError naming the option and what was expected.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from . import rules
from .errors import DlasimError, ModelError
from .dims import check_batch, check_dims

DEVICES = ("dla", "gpu")
PRECISIONS = ("fp32", "fp16", "int8", "best")
SPARSITY = ("disable", "enable", "force")
IO_PRECISIONS = ("fp32", "fp16", "int8")            # the precisions an engine input or output may have


TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def parse_flag(value, what: str) -> bool:
    """A boolean option from a TOML bool or text (1/true/yes/on, 0/false/no/off, any case); anything else is
    a DlasimError naming `what`, not a silent False."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE or text in FALSE:
        return text in TRUE
    raise DlasimError(f"{what}: expected true or false (1/0, yes/no, on/off), got {value!r}")


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """trtexec's build flags, in dlasim's spelling (dlasim's defaults differ from trtexec's in three places:
    cli/options.py DEFAULTS_VS_TRTEXEC).

    device:         "dla" (default; trtexec builds for the GPU unless given --useDLACore) or "gpu".
    precision:      what TensorRT may use: "fp16" (default; trtexec's default is FP32), "fp32", "int8" or
                    "best" (all of them). The DLA has no FP32: there "fp32" runs FP16, with a reason.
    batch:          set dimension 0 of every input (trtexec --batch); None keeps the model's.
    gpu_fallback:   let layers the DLA cannot run fall back to the GPU (default True; trtexec needs
                    --allowGPUFallback). False makes such a layer a BuildError, as in TensorRT.
    sparsity:       2:4 structured sparsity, as trtexec --sparsity: "disable" (default), "enable" or "force";
                    both of the latter take every eligible layer's weights as 2:4 sparse (dlasim keeps
                    weight shapes, not values) and use the sparse kernel where it is faster.
    dla_core:       which DLA core (trtexec --useDLACore), default 0; checked against the platform by the
                    build.
    shapes:         input shapes overriding the model's (trtexec --shapes), also filling dynamic dimensions:
                    ((input name, shape tuple), ...); `of` and the constructor take a {name: shape} dict.
    input_formats:  trtexec --inputIOFormats spelling, e.g. "int8:dla_hwc4" or "fp16:chw16"; None: FP32 linear.
    output_formats: trtexec --outputIOFormats spelling; None: FP32 linear.
    device, precision and sparsity take any case ("INT8" is "int8"); the record holds the lower-case value.
    """
    device: str = "dla"
    precision: str = "fp16"
    batch: int | None = None
    gpu_fallback: bool = True
    sparsity: str = "disable"
    dla_core: int = 0
    shapes: tuple[tuple[str, tuple[int, ...]], ...] | None = None
    input_formats: str | None = None
    output_formats: str | None = None

    def __post_init__(self):
        for name, allowed in (("device", DEVICES), ("precision", PRECISIONS), ("sparsity", SPARSITY)):
            value = getattr(self, name)
            if value not in allowed:
                if not (isinstance(value, str) and value.lower() in allowed):
                    raise DlasimError(f"{name}={value!r}: expected one of {', '.join(allowed)}")
                object.__setattr__(self, name, value.lower())      # "INT8", "GPU": as the CLI takes them
        b = self.batch
        if b is not None:
            check_batch(b)
        if type(self.gpu_fallback) is not bool:
            raise DlasimError(f"gpu_fallback={self.gpu_fallback!r} (--allowGPUFallback): expected True or False")
        c = self.dla_core
        if type(c) is not int or c < 0:
            raise DlasimError(f"dla_core={c!r} (--dla-core, --useDLACore): expected an integer >= 0")
        if self.shapes is not None:
            object.__setattr__(self, "shapes", _shapes(self.shapes))
        for name, flag in (("input_formats", "--inputIOFormats"), ("output_formats", "--outputIOFormats")):
            value = getattr(self, name)
            if value is not None:
                if not isinstance(value, str):
                    raise DlasimError(f"{name}={value!r} ({flag}): expected a string such as 'int8:dla_hwc4'")
                io_formats(value, f"{name} ({flag})")

    @classmethod
    def of(cls, base: "BuildOptions | None" = None, **options) -> "BuildOptions":
        """The record from keyword arguments (a value of None means: not given, keep the default or `base`'s).
        An unknown name is an error naming it."""
        unknown = [k for k in options if k not in _NAMES]
        if unknown:
            raise DlasimError(f"unknown option {unknown[0]!r} (known: {', '.join(_NAMES)})")
        if base is not None and not isinstance(base, BuildOptions):
            raise DlasimError(f"options={base!r}: expected a BuildOptions record; give the build options as "
                              f"keywords (device='gpu', precision='int8', ...)")
        given = {k: v for k, v in options.items() if v is not None}
        if base is None:
            return cls(**given)
        return replace(base, **given) if given else base

    def replace(self, **changes) -> "BuildOptions":
        """A copy with some options changed (checked as `of` checks them)."""
        return BuildOptions.of(self, **changes)

    def as_kwargs(self) -> dict:
        """The keyword arguments of dlasim.estimate that make this record (shapes as a dict)."""
        d = {f: getattr(self, f) for f in _NAMES}
        d["shapes"] = self.shape_map
        return d

    @property
    def shape_map(self) -> dict | None:
        """shapes as {input name: shape}, the loader's argument."""
        return None if self.shapes is None else dict(self.shapes)

    @property
    def build_key(self) -> tuple:
        """The options the passes read (shapes and batch act on the graph, before the build)."""
        return (self.device, self.precision, self.gpu_fallback, self.sparsity, self.dla_core,
                self.input_formats, self.output_formats)

    @property
    def input_io(self) -> tuple[tuple[str, str], ...]:
        """input_formats parsed: ((precision, format), ...), empty when not given."""
        return io_formats(self.input_formats, "input_formats (--inputIOFormats)")

    @property
    def output_io(self) -> tuple[tuple[str, str], ...]:
        return io_formats(self.output_formats, "output_formats (--outputIOFormats)")


_NAMES = tuple(f.name for f in fields(BuildOptions))


def io_formats(text: str | None, flag: str) -> tuple[tuple[str, str], ...]:
    """trtexec's `--inputIOFormats=int8:dla_hwc4,fp16:chw16` -> (("int8", "dla_hwc4"), ("fp16", "chw16"))."""
    if not text:
        return ()
    out = []
    for item in text.split(","):
        prec, _, fmt = item.strip().partition(":")
        prec = prec.lower()
        fmt = (fmt or "linear").lower().replace("+", "_")
        if prec not in IO_PRECISIONS or fmt not in rules.RULES.formats.channel_align:
            raise DlasimError(f"{flag}: bad format {item!r} (expected e.g. int8:dla_hwc4, fp16:chw16, fp32:chw)")
        if fmt in rules.RULES.formats.internal:
            raise DlasimError(f"{flag}: {item!r} is a layout TensorRT uses inside an engine, not an I/O format "
                              f"(expected e.g. fp16:hwc8, int8:chw4, fp32:chw)")
        out.append((prec, fmt))
    return tuple(out)


def _shapes(value) -> tuple[tuple[str, tuple[int, ...]], ...]:
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, tuple):
        items = value
    else:
        raise ModelError(f"shapes={value!r} (--shapes): expected {{input name: shape tuple}}")
    out = []
    for item in items:
        try:
            name, dims = item
            shape = tuple(int(d) for d in dims)
        except (TypeError, ValueError):
            raise ModelError(f"shapes (--shapes): expected {{input name: shape tuple}}, got {item!r}") from None
        check_dims(str(name), shape)
        out.append((str(name), shape))
    return tuple(out)
