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
"""
from __future__ import annotations

from dataclasses import dataclass

from . import rules
from .build_options import BuildOptions
from .hardware import Platform
from .ir import Graph
from .ops import QDQ
from .passes import cached_plan
from .plan import Plan
from .report import Estimate
from .simulate import estimate_plan

# the wider precisions a GPU build may run, by requested precision (fp32 has none): what the precision option
# allows besides itself (FP32 always; "int8" and "best" also FP16: cli/options.py DEFAULTS_VS_TRTEXEC)
WIDER = {"fp16": ("fp32",), "int8": ("fp16", "fp32"), "best": ("fp16", "fp32"), "fp32": ()}
ALWAYS_TIMED = "fp16"       # the wider precision every INT8 / best build is timed against (the module notes)
RUNS_WIDER = "TensorRT would run this engine in {}:"    # the warning of a build that keeps a wider engine


def runs_wider(est: Estimate, precision: str) -> bool:
    """Whether the build behind `est` kept its wider `precision` engine (the RUNS_WIDER warning)."""
    head = RUNS_WIDER.format(precision.upper())
    return any(w.startswith(head) for w in est.warnings)


@dataclass(frozen=True)
class Engine:
    """What the build keeps: the Plan and its timing (the Estimate), in the requested precision's name."""
    plan: Plan
    estimate: Estimate


def build_engine(graph: Graph, platform: Platform, options: BuildOptions) -> Engine:
    """The Plan TensorRT would keep for `graph` (at the batch and shapes asked) on `platform`, timed."""
    plan = cached_plan(graph, platform, options)
    e = estimate_plan(plan)
    if options.device != "gpu" or not WIDER[options.precision]:
        return Engine(plan, e)
    copies = e.by_kind().get("reformat", 0.0) > rules.RULES.reformat_share_min * e.total_ms
    timed = [w for w in WIDER[options.precision] if copies or w == ALWAYS_TIMED]
    if not timed or any(l.op in QDQ for l in graph.layers):
        return Engine(plan, e)
    asked = e
    for wider in timed:
        alt_plan = cached_plan(graph, platform, options.replace(precision=wider))
        alt = estimate_plan(alt_plan)
        if alt.total_ms < e.total_ms:
            alt.precision = options.precision
            reformat_ms = asked.by_kind().get("reformat", 0.0)
            alt.warnings[:] = list(asked.warnings)      # the options' warnings are the requested build's
            alt.warnings.append(RUNS_WIDER.format(wider.upper()) + f" it times faster than the "
                                f"{options.precision.upper()} engine ({alt.total_ms:.4f} ms vs {asked.total_ms:.4f} "
                                f"ms, of which {reformat_ms:.4f} ms reformat copies)")
            plan, e = alt_plan, alt
    return Engine(plan, e)
