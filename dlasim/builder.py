"""The build as TensorRT's builder does it: the passes make a Plan, and where TensorRT times alternatives
the faster engine is kept.

Precision flags allow, not force: TensorRT times the precisions it may use and keeps the fastest engine
(reference/gpu_tensorrt.md s2.1 "Selection is by timing": it times the candidate tactics and keeps the
faster; s3.3: reformat copies are kernels with a time of their own). On the GPU a narrower engine can lose
to a wider one when its layers without narrow kernels and its tensor-core formats make it pay reformat
copies. So a GPU build at FP16, INT8 or best is timed against the wider precisions it allows (FP32; FP16
and FP32 under INT8 and best) and the fastest is the engine, with a warning naming the precision it runs.

An INT8 (or best) build is always timed against its FP16 engine: TensorRT times FP16 tactics beside the INT8
ones for every layer, and an INT8 engine can lose to FP16 through its reformats or through INT8 kernels that
its layers' shapes make slower (exported transformers and grouped-conv networks do, tests/fixtures/exports).
The FP32 engine is timed only where the requested one spends more than `rules.RULES.reformat_share_min` of
its time in reformat copies, a search bound of dlasim's, not of TensorRT's (hardware_specs/rules/precision.toml
says what it costs: a few A100 batch-1 engines whose FP32 engine is about 1% faster keep their requested
precision); below it the FP32 engine is not built. A network with Q/DQ layers is not timed against
wider precisions: its Q/DQ layers set the precisions (passes/qdq.py). The time here is the cost model's,
the same one the estimate reports, so the Engine carries the estimate of the Plan it keeps.

A DLA build hands the layers the DLA cannot run to the GPU, where the same tactic timing picks their
precision. So a DLA INT8 (or best) build whose GPU layers run INT8 is timed against the same build with its
GPU layers in FP16 (Plan.gpu_precision; the DLA loadables are the same): INT8 GPU layers between FP16-only
ones (softmax, LayerNorm pieces, the activations without INT8 kernels) pay an INT8 <-> FP16 reformat at every
change, and the FP16 layers pay none. The faster is kept, with a warning. The FP16 alternative is built only
where the INT8 build has such a copy between two GPU layers or an INT8 GPU conv that pads its channels per
group (fp16_may_win: a search bound of dlasim's, as the FP32 one above: without either, the FP16 GPU layers
save no copy and no padding and give up INT8's rate and bytes; benchmarks/dla_gpu_layers_bound.py counts
the FP16 wins it would skip and the builds it saves).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import rules
from .build_options import BuildOptions
from .hardware import Platform
from .ir import Graph
from .ops import QDQ
from .passes import cached_plan
from .plan import Decision, Plan
from .precision import run_precision
from .report import Estimate
from .simulate import estimate_plan

# the wider precisions a GPU build may run, by requested precision (fp32 has none): what the precision option
# allows besides itself (FP32 always; "int8" and "best" also FP16: cli/options.py DEFAULTS_VS_TRTEXEC)
WIDER = {"fp16": ("fp32",), "int8": ("fp16", "fp32"), "best": ("fp16", "fp32"), "fp32": ()}
ALWAYS_TIMED = "fp16"       # the wider precision every INT8 / best build is timed against (the module notes)
RUNS_WIDER = "TensorRT would run this engine in {}:"    # the warning of a build that keeps a wider engine
GPU_RUNS_WIDER = "TensorRT would run this engine's GPU layers in {}:"     # ... a DLA build's GPU layers
INT8_FP16 = {"int8", "fp16"}     # the precisions of a GPU-side copy that gates timing a DLA build's GPU layers


def runs_wider(est: Estimate, precision: str) -> bool:
    """Whether the build behind `est` kept its GPU layers in the wider `precision` (the RUNS_WIDER or
    GPU_RUNS_WIDER warning)."""
    heads = (RUNS_WIDER.format(precision.upper()), GPU_RUNS_WIDER.format(precision.upper()))
    return any(w.startswith(heads) for w in est.warnings)


def always_timed(options: BuildOptions, platform: Platform) -> list[tuple[BuildOptions, str | None]]:
    """The builds TensorRT times for `options` whatever their copies cost, as (options, Plan.gpu_precision):
    the requested one and, for INT8 / best, its FP16 alternative (the FP16 engine on the GPU, the GPU layers
    in FP16 on the DLA, where it has a GPU to fall back to). The latency tables (nas/table.py) price each
    and keep the faster per candidate."""
    if options.precision not in ("int8", "best") or (
            options.device == "dla" and (platform.gpu is None or not options.gpu_fallback)):
        return [(options, None)]
    if options.device == "gpu":
        return [(options, None), (options.replace(precision=ALWAYS_TIMED), None)]
    return [(options, None), (options, ALWAYS_TIMED)]


@dataclass(frozen=True)
class Engine:
    """What the build keeps: the Plan and its timing (the Estimate), in the requested precision's name."""
    plan: Plan
    estimate: Estimate


def build_engine(graph: Graph, platform: Platform, options: BuildOptions) -> Engine:
    """The Plan TensorRT would keep for `graph` (at the batch and shapes asked) on `platform`, timed."""
    plan = cached_plan(graph, platform, options)
    e = estimate_plan(plan)
    if not WIDER[options.precision] or any(l.op in QDQ for l in graph.layers):
        return Engine(plan, e)
    if options.device == "dla":
        return _dla_gpu_layers_timed(graph, platform, options, Engine(plan, e))
    copies = e.by_kind().get("reformat", 0.0) > rules.RULES.reformat_share_min * e.total_ms
    asked = e
    for wider in (w for w in WIDER[options.precision] if copies or w == ALWAYS_TIMED):
        alt_plan = cached_plan(graph, platform, options.replace(precision=wider))
        alt = estimate_plan(alt_plan)
        if alt.total_ms < e.total_ms:
            alt.precision = options.precision
            w, p = wider.upper(), options.precision.upper()
            _kept(alt, asked, f"{RUNS_WIDER.format(w)} it times faster than the {p} engine",
                  f"TensorRT keeps the {w} engine: it times faster than the {p} one",
                  run_precision("gpu", options.precision))
            plan, e = alt_plan, alt
    return Engine(plan, e)


def _dla_gpu_layers_timed(graph: Graph, platform: Platform, options: BuildOptions, asked: Engine) -> Engine:
    """The DLA build `asked`, or the same build with its GPU layers in FP16 where that times faster (the
    module notes)."""
    if options.precision not in ("int8", "best") or not fp16_may_win(asked.estimate):
        return asked
    alt_plan = cached_plan(graph, platform, options, gpu_precision=ALWAYS_TIMED)
    alt = estimate_plan(alt_plan)
    if alt.total_ms >= asked.estimate.total_ms:
        return asked
    w, p = ALWAYS_TIMED.upper(), run_precision("gpu", options.precision).upper()     # "best" runs INT8
    _kept(alt, asked.estimate, f"{GPU_RUNS_WIDER.format(w)} the engine times faster than with {p} GPU layers",
          f"TensorRT keeps the GPU layers in {w}: the engine times faster than with {p} ones", p.lower())
    return Engine(alt_plan, alt)


def fp16_may_win(est: Estimate) -> bool:
    """Whether a DLA INT8 build's GPU layers may time faster in FP16 (the search bound in the module notes):
    an INT8 <-> FP16 copy between GPU layers, or an INT8 GPU conv padding its input channels per group to
    the INT8 tensor-core alignment (chw32; a grouped conv of group width 8 does 4x the MACs, FP16 hwc8 none)."""
    for r in est.steps:
        if r.kind == "reformat" and r.copy is not None and {r.copy.src[0], r.copy.dst[0]} == INT8_FP16:
            return True
        if (r.kind == "layer" and r.device == "gpu" and r.precision == "int8" and r.conv is not None
                and r.conv.align > 1):
            return True
    return False


def _kept(alt: Estimate, asked: Estimate, warning: str, reason: str, precision: str) -> None:
    """Mark `alt`, the timed alternative kept over the requested build `asked`: the requested build's option
    warnings plus `warning`, and on its layers the reasons of the requested build's, with `reason` (and both
    times) added where a layer runs wider than there, or than `precision` where the builds fuse differently;
    those layers also get a "builder" Decision (the Estimate's list is its own copy of the Plan's)."""
    reformat_ms = asked.by_kind().get("reformat", 0.0)
    times = f"{alt.total_ms:.4f} ms vs {asked.total_ms:.4f} ms"
    alt.warnings[:] = list(asked.warnings)      # the options' warnings are the requested build's
    alt.warnings.append(f"{warning} ({times}, of which {reformat_ms:.4f} ms reformat copies)")
    why = f"{reason} ({times})"
    was = {r.name: r for r in asked.steps if r.kind == "layer"}
    for row in alt.steps:
        if row.kind != "layer":
            continue
        old = was.get(row.name)
        if old is not None and old.precision == row.precision:
            row.reason = old.reason or row.reason      # why it is not the requested precision, if it says
        elif row.precision != (precision if old is None else old.precision):
            base = row.reason or (old.reason if old is not None else "")
            row.reason = f"{base}; {why}" if base else why
            alt.decisions.append(Decision(row.name, "builder", row.precision, why))
