"""Hardware spec files (hardware_specs/*.toml) -> validated Platform objects.

Rules (docs/DESIGN.md): TOML read with tomllib (duplicate keys rejected), pydantic models with extra="forbid",
SI units in field names, and every number named in the block's `sources` table. A bad file raises
SpecError with one line naming the file, the field and what was expected.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Annotated, Literal, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from .errors import SpecError, did_you_mean
from .resources import spec_dir

try:                                   # Python 3.11+
    import tomllib
except ModuleNotFoundError:            # Python 3.10: the same parser, published as tomli
    import tomli as tomllib

SPEC_DIR = spec_dir()
Precision = Literal["fp32", "fp16", "int8"]


class FrozenDict(dict):
    """A dict that refuses changes: the mappings of cached Platform objects (sources, power_modes) are shared
    by every later hardware() call in the process, like their tuple fields. Pickles and copies as itself."""
    def _read_only(self, *args, **kwargs):
        raise TypeError("a spec mapping is read-only (hardware() objects are shared); copy it with dict(...)")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self):
        return FrozenDict, (dict(self),)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


ReadOnly = AfterValidator(FrozenDict)
# a CTA tile [M, N, K]: three sizes of 1 .. 1024 (TensorRT's tactic names go up to 256; a tile is held in one
# SM's shared memory and registers, so a size past 1024 is a typo, not a tile)
CtaTile = Annotated[tuple[Annotated[int, Field(ge=1, le=1024)], ...], Field(min_length=3, max_length=3)]
CtaTiles = tuple[CtaTile, ...]


class _Block(BaseModel):
    """A spec block: no unknown keys, and every numeric field it sets names its source."""
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # inf/nan rates: rejected
    sources: Annotated[dict[str, str], ReadOnly] = Field(default_factory=FrozenDict)

    @model_validator(mode="after")
    def _every_number_has_a_source(self):
        for name in self.model_fields_set:
            value = getattr(self, name)
            numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
            numeric = numeric or (isinstance(value, (list, tuple, dict)) and _has_number(value))
            if numeric and name not in self.sources:
                raise PydanticCustomError("no_source", "number has no entry in this block's sources table",
                                          {"field": name})
        for key in self.sources:
            if key not in type(self).model_fields:
                raise PydanticCustomError("bad_source", "sources entry names no field of this block",
                                          {"field": f"sources.{key}"})
        return self


def _has_number(v) -> bool:
    if isinstance(v, dict):
        return any(_has_number(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return any(_has_number(x) for x in v)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class Memory(_Block):
    dram_bandwidth_bytes_per_s: float = Field(gt=0)
    l2_bytes: int = Field(default=0, ge=0)
    emc_clock_hz: Optional[float] = Field(default=None, gt=0)   # DRAM (EMC) clock of that bandwidth
    # share of dram_bandwidth_bytes_per_s that all engines running at once draw together (dlasim concurrent)
    concurrent_efficiency: Optional[float] = Field(default=None, gt=0, le=1)


class Copies(_Block):
    """Reformat copies and GPU<->DLA hand-overs (reference/gpu_tensorrt.md s3.3, dla.md s3.4)."""
    reformat_efficiency: float = Field(gt=0, le=1)        # share of DRAM bandwidth a reformat kernel reaches
    reformat_floor_s: float = Field(ge=0)                 # fixed cost of one reformat step
    transition_overhead_s: float = Field(ge=0)            # synchronisation per GPU<->DLA hand-over
    dla_copy_efficiency: Optional[float] = Field(default=None, gt=0, le=1)  # copies into/out of DLA memory


class DlaSupport(_Block):
    """TensorRT's DLA layer rules for one DLA version (reference/dla.md s3.1-3.3)."""
    ops: tuple[str, ...]
    fusable_post_ops: tuple[str, ...]      # run in SDP on the conv's output (bias, BN, activation, eltwise)
    pool_fusion: bool = True                # PDP on-the-fly after a conv
    int8_fp16_only_ops: tuple[str, ...] = ()   # INT8 requested, run in FP16 instead
    conv_kernel_max: int
    conv_stride_max: int
    conv_pad_max: int
    conv_dilation_max: int
    conv_out_channels_max: int
    conv_groups_max: int
    deconv_kernel_max: int
    deconv_wide_kernels: tuple[int, ...]
    deconv_pad_max: int
    deconv_groups_max: int
    pool_window_max: int
    pool_stride_max: int
    pool_pad_max: int
    lrn_windows: tuple[int, ...]
    resize_nearest_scale_max: int
    resize_linear_scale_max: int
    tensor_dim_max: int
    batch_max: int
    max_loadables_per_core: int
    matmul_needs_constant_weights: bool = True
    concat_axis: int = 1
    cbuf_check: bool = True


class Dla(_Block):
    version: Literal["v1", "v2", "nvdla"]
    cores: int = Field(ge=1)
    clock_hz: float = Field(gt=0)
    precisions: tuple[Precision, ...] = Field(min_length=1)     # the build falls back to the first
    mac_atomic_c: int = Field(ge=1)
    mac_atomic_k_int8: int = Field(ge=1)
    mac_atomic_k_fp16: int = Field(ge=0)        # 0: no FP16 on this configuration
    cbuf_bytes: int = Field(gt=0)
    cbuf_banks: int = Field(gt=0)
    cbuf_bank_entries: int = Field(gt=0)
    cbuf_entry_bytes: int = Field(gt=0)
    sdp_elems_per_cycle: float = Field(gt=0)
    sdp_eltwise_elems_per_cycle: float = Field(gt=0)
    pdp_elems_per_cycle: float = Field(gt=0)
    cdp_elems_per_cycle: float = Field(gt=0)
    # bytes per cycle the PDP / CDP read DMA fetches a standalone layer's input at; None: no read limit
    pdp_read_bytes_per_cycle: Optional[float] = Field(default=None, gt=0)
    stripe_atomic_ops: int = Field(ge=1)        # output pixels per stripe (weights stationary)
    weight_reload_cycles: int = Field(ge=0)     # cycles to load the next stripe's weights
    image_mode_utilization: float = Field(gt=0, le=1)
    # bytes per DLA clock the DLA's DMA sustains (None: no DLA-side limit); dlasim/cost/dla.py dram_bandwidth
    dram_bytes_per_cycle: Optional[float] = Field(default=None, gt=0)
    mac_efficiency: float = Field(default=1.0, gt=0, le=1)  # sustained share of MAC cycles (pipeline bubbles)
    mac_efficiency_fp16: Optional[float] = Field(default=None, gt=0, le=1)  # FP16 if it differs from INT8
    layer_overhead_s: float = Field(ge=0)       # per fused hardware layer (programming, pipeline fill)
    subgraph_overhead_s: float = Field(ge=0)    # per DLA loadable launch (submit + sync)
    sparse_int8_conv: bool = False
    sparse_min_channels: int = Field(default=0, ge=0)
    depthwise_macs_per_cycle: Optional[float] = Field(default=None, gt=0)  # depthwise processor; None: MAC array
    multi_batch_max: Optional[int] = Field(default=None, ge=1)   # images per direct-conv op; None: no limit
    support: DlaSupport

    @model_validator(mode="after")
    def _cbuf_size_is_its_banks(self):
        # CBUF = banks x entries per bank x bytes per entry (reference/dla.md s1.1, s3.3)
        size = self.cbuf_banks * self.cbuf_bank_entries * self.cbuf_entry_bytes
        if size != self.cbuf_bytes:
            raise PydanticCustomError("cbuf_size", "{cbuf} bytes is not cbuf_banks x cbuf_bank_entries x "
                                      "cbuf_entry_bytes = {size}", {"field": "cbuf_bytes", "cbuf": self.cbuf_bytes,
                                                                    "size": size})
        if "fp16" in self.precisions and self.mac_atomic_k_fp16 < 1:
            raise PydanticCustomError("fp16_macs", "precisions lists fp16, so the DLA needs FP16 MACs: expected "
                                      "mac_atomic_k_fp16 >= 1 (0 means no FP16: drop fp16 from precisions)",
                                      {"field": "mac_atomic_k_fp16"})
        return self

    def macs_per_cycle(self, precision: str) -> int:
        k = self.mac_atomic_k_int8 if precision == "int8" else self.mac_atomic_k_fp16
        return self.mac_atomic_c * k

    def mac_eff(self, precision: str) -> float:
        if precision != "int8" and self.mac_efficiency_fp16 is not None:
            return self.mac_efficiency_fp16
        return self.mac_efficiency

    def atomic_k(self, precision: str) -> int:
        return self.mac_atomic_k_int8 if precision == "int8" else self.mac_atomic_k_fp16


class Gpu(_Block):
    arch: str
    compute_capability: str = Field(pattern=r"^[0-9]+\.[0-9]+$")   # MAJOR.MINOR, e.g. 8.7
    sm_count: int = Field(ge=1)
    clock_hz: float = Field(gt=0)
    fma_per_clk_per_sm_fp32: float = Field(gt=0)   # FP32 path TensorRT uses (TF32 tensor cores on Ampere+)
    cuda_core_fma_per_clk_per_sm: float = Field(gt=0)  # FP32 FFMA on the CUDA cores (SIMT kernels, depthwise)
    fma_per_clk_per_sm_fp16: float = Field(gt=0)
    fma_per_clk_per_sm_int8: float = Field(gt=0)
    sparse_tensor_cores: bool = False              # 2:4 structured sparsity (Ampere and later)
    cta_tiles_fp32: CtaTiles                # [M, N, K] CTA tiles TensorRT picks
    cta_tiles_fp16: CtaTiles
    cta_tiles_int8: CtaTiles
    sparse_cta_tiles: CtaTiles = ()
    ctas_per_sm: int = Field(default=1, ge=1)
    tensor_efficiency: float = Field(gt=0, le=1)   # sustained share of peak for a large, aligned GEMM
    sparse_efficiency: float = Field(default=0.5, gt=0, le=1)  # sparse speed-up over dense = 2 x this (large GEMM)
    sparse_k_half: float = Field(default=0.0, ge=0)  # GEMM K at which a sparse tile reaches half that share
    memory_efficiency: float = Field(gt=0, le=1)   # share of DRAM bandwidth a streaming kernel reaches
    # bytes read+written per SM per clock a streaming kernel moves; unset: the SMs never limit memory-bound
    # kernels (cost/gpu.py sm_stream_scale)
    stream_bytes_per_clk_per_sm: Optional[float] = Field(default=None, gt=0)
    kernel_floor_s: float = Field(ge=0)            # shortest time of a tensor-core conv/GEMM kernel
    memory_kernel_floor_s: float = Field(ge=0)     # shortest time of a memory-bound kernel (pool, pointwise, ...)
    launch_overhead_s: float = Field(ge=0)         # per kernel, between kernels
    fusable_post_ops: tuple[str, ...]              # fused into a conv/GEMM epilogue
    # per kernel class (cost/gpu.py kernel_class); unset: the generic field above serves that class
    gemm_floor_s: Optional[float] = Field(default=None, ge=0)             # FC/GEMM with >= a tile of rows (else kernel_)
    conv_tensor_efficiency: Optional[float] = Field(default=None, gt=0, le=1)  # tensor share, R x S > 1 convs (else tensor_)
    conv1x1_efficiency: Optional[float] = Field(default=None, gt=0, le=1)  # DRAM share, 1x1 convs (else memory_)
    conv1x1_floor_s: Optional[float] = Field(default=None, ge=0)          # (else kernel_floor_s)
    gemv_efficiency: Optional[float] = Field(default=None, gt=0, le=1)    # DRAM share, FC weight stream (else memory_)
    gemv_floor_s: Optional[float] = Field(default=None, ge=0)             # (else kernel_floor_s)
    depthwise_efficiency: Optional[float] = Field(default=None, gt=0, le=1)  # DRAM share (else memory_)
    depthwise_floor_s: Optional[float] = Field(default=None, ge=0)        # (else memory_kernel_floor_s)
    reduce_efficiency: Optional[float] = Field(default=None, gt=0, le=1)    # DRAM share, global pools (else memory_)
    reduce_floor_s: Optional[float] = Field(default=None, ge=0)             # (else memory_kernel_floor_s)
    tensor_latency_s: Optional[float] = Field(default=None, ge=0)         # fixed ramp/tail of a tensor-core or GEMV kernel
    # operand bytes a CTA can load into shared memory per SM clock; unset: a tile's operand loads never limit it
    # (cost/gpu.py tile_rate_share)
    operand_bytes_per_clk_per_sm: Optional[float] = Field(default=None, gt=0)
    l2_bandwidth_bytes_per_s: Optional[float] = Field(default=None, gt=0)  # activations resident in L2 move at this
    l2_usable_fraction: Optional[float] = Field(default=None, gt=0, le=1)  # share of memory.l2_bytes a step may use
    # dlasim concurrent, engines in separate processes: the share of the GPU's time slices the context of a
    # DLA engine holds while its DLA task runs (dlasim/concurrent/contention.py `holds`); unset: none
    process_dla_wait_share: Optional[float] = Field(default=None, ge=0)

    def fma_per_clk_per_sm(self, precision: str) -> float:
        return getattr(self, f"fma_per_clk_per_sm_{precision}")

    @property
    def tf32(self) -> bool:
        """FP32 convolutions run on TF32 tensor cores (Ampere and later: a faster FP32 path than the CUDA cores)."""
        return self.fma_per_clk_per_sm_fp32 > self.cuda_core_fma_per_clk_per_sm

    def cta_tiles(self, precision: str) -> tuple[tuple[int, ...], ...]:
        return getattr(self, f"cta_tiles_{precision}")


class PowerMode(_Block):
    description: str = ""
    dla_clock_hz: Optional[float] = Field(default=None, gt=0)
    gpu_clock_hz: Optional[float] = Field(default=None, gt=0)
    emc_clock_hz: Optional[float] = Field(default=None, gt=0)     # the mode's DRAM (EMC) clock cap (nvpmodel)
    dram_bandwidth_bytes_per_s: Optional[float] = Field(default=None, gt=0)   # or the bandwidth itself

    @model_validator(mode="after")
    def _one_memory_limit(self):
        if self.emc_clock_hz and self.dram_bandwidth_bytes_per_s:
            raise PydanticCustomError("two_limits", "give emc_clock_hz or dram_bandwidth_bytes_per_s, not both",
                                      {"field": "emc_clock_hz"})
        return self


def emc_bandwidth(peak_bytes_per_s: float, peak_emc_hz: float, mode_emc_hz: float) -> float:
    """DRAM bandwidth under an EMC clock cap: the bus width and data rate per clock are fixed, so bandwidth
    scales with the EMC clock (reference/dla.md s2: nvpmodel caps EMC per mode, e.g. AGX Orin 15W at 2133 MHz;
    s0.1 fact 6: 204.8 GB/s = 256-bit LPDDR5-6400, i.e. a 3200 MHz EMC clock). A cap above the peak clock
    does not bind."""
    return peak_bytes_per_s * min(mode_emc_hz, peak_emc_hz) / peak_emc_hz


class Platform(_Block):
    name: str
    description: str
    memory: Memory
    copies: Copies
    dla: Optional[Dla] = None
    gpu: Optional[Gpu] = None
    power_modes: Annotated[dict[str, PowerMode], ReadOnly] = Field(default_factory=FrozenDict)
    default_power_mode: Optional[str] = None
    mode: Optional[str] = None                     # the power mode applied, if any
    path: str = ""

    def __repr__(self) -> str:          # one line (pydantic's prints every block and source)
        mode = f":{self.mode}" if self.mode else ""
        return f"Platform({self.name + mode!r}: {self.description})"

    @model_validator(mode="after")
    def _default_mode_exists(self):
        if self.dla is None and self.gpu is None:
            raise PydanticCustomError("no_device", "a platform needs a [dla] or a [gpu] block", {"field": "dla"})
        for name, pm in self.power_modes.items():
            if pm.emc_clock_hz and not self.memory.emc_clock_hz:
                raise PydanticCustomError("no_emc", "power mode sets emc_clock_hz but [memory] has no emc_clock_hz "
                                          "(the EMC clock of dram_bandwidth_bytes_per_s)",
                                          {"field": f"power_modes.{name}.emc_clock_hz"})
        if self.default_power_mode and self.default_power_mode not in self.power_modes:
            raise PydanticCustomError("bad_mode", "'{mode}' is not in power_modes",
                                      {"field": "default_power_mode", "mode": self.default_power_mode})
        return self

    @property
    def label(self) -> str:
        return f"{self.name}:{self.mode}" if self.mode else self.name

    def with_mode(self, mode: str) -> "Platform":
        if mode not in self.power_modes:
            # nvpmodel writes MAXN, 30W: the spelling of the mode's name does not matter
            mode = {m.lower(): m for m in self.power_modes}.get(mode.lower(), mode)
        if mode not in self.power_modes:
            known = ", ".join(self.power_modes) or "none"
            raise SpecError(f"{self.name}: unknown power mode {mode!r} (known: {known})")
        pm = self.power_modes[mode]
        upd: dict = {"mode": mode}
        bw = pm.dram_bandwidth_bytes_per_s
        if pm.emc_clock_hz:
            bw = emc_bandwidth(self.memory.dram_bandwidth_bytes_per_s, self.memory.emc_clock_hz, pm.emc_clock_hz)
        if bw:
            upd["memory"] = self.memory.model_copy(update={"dram_bandwidth_bytes_per_s": bw})
        if pm.dla_clock_hz and self.dla:
            upd["dla"] = self.dla.model_copy(update={"clock_hz": pm.dla_clock_hz})
        if pm.gpu_clock_hz and self.gpu:
            upd["gpu"] = self.gpu.model_copy(update={"clock_hz": pm.gpu_clock_hz})
        return self.model_copy(update=upd)


def check_dla_core(platform: Platform, core) -> int:
    """`--dla-core N` (trtexec --useDLACore): an integer from 0 to the platform's DLA core count - 1."""
    if isinstance(core, bool) or not isinstance(core, int):
        raise SpecError(f"dla_core={core!r} (--dla-core, --useDLACore): expected an integer")
    cores = platform.dla.cores if platform.dla else 0
    if core < 0 or (core >= cores and (cores or core)):
        allowed = f"0..{cores - 1}" if cores > 1 else "0"
        raise SpecError(f"dla_core={core} (--dla-core, --useDLACore): {platform.name} has {cores} DLA core(s), "
                        f"numbered from 0: expected {allowed}, got {core}")
    return core


# fields of earlier spec versions: what replaced them, said in the error of a spec that still has one
RENAMED = {"dla.dram_efficiency": "; dla.dram_efficiency (a share of the DRAM peak) was replaced by "
                                  "dla.dram_bytes_per_cycle = share x DRAM bytes/s / DLA clock_hz at the clock "
                                  "the share was read at, or no field for a share of 1 (the DRAM peak) "
                                  "(hardware_specs/README.md 'DLA memory')"}


def _format_error(path: str, err: ValidationError) -> str:
    e = err.errors()[0]
    loc = [str(p) for p in e["loc"]]
    if (e.get("ctx") or {}).get("field"):             # raised by a block validator: name the field itself
        loc.append(e["ctx"]["field"])
    loc = ".".join(loc) or "(top level)"
    msg = e["msg"]
    if e["type"] == "missing":
        msg = "required field is missing"
    elif e["type"] == "extra_forbidden":
        msg = "unknown field (not allowed)" + RENAMED.get(loc, "")
    elif "input" in e and e["type"] not in ("value_error", "no_source", "bad_source", "bad_mode", "no_device",
                                            "two_limits", "no_emc", "cbuf_size"):
        field = (e.get("ctx") or {}).get("field")
        value = e["input"]
        if field and isinstance(value, dict) and field in value:
            value = value[field]          # a block validator's input is the whole block: show the field's value
        got = repr(value)
        msg = f"{msg}, got {got if len(got) <= 60 else got[:57] + '...'}"
    more = f" (+{len(err.errors()) - 1} more)" if len(err.errors()) > 1 else ""
    return f"{path}: field {loc}: {msg}{more}"


def _toml_where(path: str, msg: str) -> str:
    """' at key dla.clock_hz' for a TOML error such as a duplicate key (tomllib names only line and column)."""
    m = re.search(r"at line (\d+), column \d+", msg)
    if not m:
        return ""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()[: int(m.group(1))]
    except OSError:
        return ""
    key = re.match(r"\s*([A-Za-z0-9_.\"'-]+)\s*=", lines[-1]) if lines else None
    if not key:
        return ""
    headers = (re.match(r"\s*\[\[?\s*([\w.\"' -]+?)\s*\]\]?\s*(#.*)?$", ln) for ln in reversed(lines))
    table = next((t.group(1) for t in headers if t), "")
    name = f"{table + '.' if table else ''}{key.group(1).strip(chr(34) + chr(39))}"
    return f": key {name} given twice" if "overwrite" in msg else f" at key {name}"


INT_MAX = 2 ** 53       # the largest integer a float holds exactly; the cost model multiplies ints into floats


def _huge_integer(value, where: str = "") -> str:
    """The dotted key of the first integer in parsed TOML whose magnitude passes INT_MAX, else ""."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((str(i), v) for i, v in enumerate(value))
    else:
        return where if type(value) is int and abs(value) > INT_MAX else ""
    for k, v in items:
        hit = _huge_integer(v, f"{where}.{k}" if where else str(k))
        if hit:
            return hit
    return ""


@functools.lru_cache(maxsize=64)
def _load_file(path: str, mtime: float) -> Platform:
    from .safeio import read_text
    text = read_text(path, "spec file", error=SpecError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: not valid TOML{_toml_where(path, str(e))} ({e})") from None
    except RecursionError:
        raise SpecError(f"{path}: not valid TOML (arrays or tables nest too deeply)") from None
    huge = _huge_integer(data)
    if huge:
        raise SpecError(f"{path}: field {huge}: an integer past 2**53 (it has no exact float; no spec quantity "
                        f"is that large)")
    try:
        return Platform.model_validate({**data, "path": path})
    except ValidationError as e:
        raise SpecError(_format_error(path, e)) from None


def spec_names() -> list[str]:
    return sorted(p.stem for p in SPEC_DIR.glob("*.toml"))


def hardware(spec: str | Path | Platform = "xavier-agx") -> Platform:
    """Load a platform (validated; every number names its source).

    spec: a built-in name ("xavier-agx", "orin-agx", "a100", ...; see spec_names() or `dlasim specs list`),
          "NAME:MODE" for a power mode ("orin-agx:15w"; default the file's default mode), a path to a spec
          .toml (optionally "PATH:MODE"), or a Platform (returned as is). Default "xavier-agx".
    Raises SpecError (one line naming the file, the field and what was expected).
    """
    if isinstance(spec, Platform):
        return spec
    text = str(spec)
    mode = None
    if ":" in text and not Path(text).exists():
        text, mode = text.rsplit(":", 1)
        if not mode.strip():
            raise SpecError(f"--hw {spec}: empty power mode after ':'; expected NAME:MODE such as orin-agx:30w "
                            f"(or NAME alone for the default mode)")
    path = Path(text)
    if path.suffix != ".toml":
        path = SPEC_DIR / f"{text}.toml"
        if not path.exists():
            names = spec_names()
            if text.lower() not in names:
                raise SpecError(f"unknown hardware {text!r}{did_you_mean(text, names)} (known: "
                                f"{', '.join(names)}; or give a .toml path)")
            path = SPEC_DIR / f"{text.lower()}.toml"         # ORIN-AGX: the names are lower case
    elif not path.exists():
        raise SpecError(f"{text}: spec file not found")
    plat = _load_file(str(path), path.stat().st_mtime)
    mode = mode or plat.default_power_mode
    return plat.with_mode(mode) if mode else plat


def without_tf32(plat: Platform) -> Platform:
    """The platform as trtexec --noTF32 builds for it: FP32 convolutions and GEMMs use the CUDA cores
    (cuda_core_fma_per_clk_per_sm) instead of the TF32 tensor cores (fma_per_clk_per_sm_fp32); the FP32 tile
    shapes are kept. TensorRT's TF32 default and --noTF32: reference/gpu_tensorrt.md (A100 TF32 vs FP32 rates)."""
    if plat.gpu is None or not plat.gpu.tf32:
        return plat
    gpu = plat.gpu.model_copy(update={"fma_per_clk_per_sm_fp32": plat.gpu.cuda_core_fma_per_clk_per_sm})
    return plat.model_copy(update={"gpu": gpu})
