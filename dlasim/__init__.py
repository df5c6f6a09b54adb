"""dlasim: analytical latency simulator for NVIDIA DLA (Xavier/Orin) and GPUs under TensorRT.

Public API (no printing, no globals; results are plain picklable data):

    import dlasim
    g  = dlasim.load("model.onnx")          # or "net.prototxt", "zoo:resnet50", or a Graph
    hw = dlasim.hardware("orin-agx:30w")    # or a path to a TOML spec
    e  = dlasim.estimate(g, hw, device="dla", precision="int8", batch=1)
    e.total_ms, e.steps, e.to_dict()
"""
from __future__ import annotations

from ._version import __version__
from .api import build, estimate, load
from .build_options import BuildOptions
from .errors import BuildError, DlasimError, ModelError, SpecError
from .hardware import Platform, hardware
from .ir import Graph, GraphBuilder
from .report import Estimate, StepRow

__all__ = ["__version__", "load", "hardware", "estimate", "estimate_many", "build", "clear_caches", "compare",
           "explain", "Graph", "GraphBuilder", "BuildOptions", "Platform", "Estimate", "StepRow", "DlasimError",
           "ModelError", "SpecError", "BuildError"]


def clear_caches() -> None:
    """Forget the results estimate() reuses: Plans by graph content and options, per-layer conv costs (a
    memory bound; results never depend on it)."""
    from .cost import clear_caches as clear_costs
    from .passes import clear_caches as clear_plans
    clear_plans()
    clear_costs()


def estimate_many(models, hw="xavier-agx", workers: int = 1, backend: str = "process", progress=None,
                  **options) -> list:
    """Estimates of many models in order (in-process, `workers` local processes, or Ray); a failure is a
    batch.Failed in its slot. See dlasim.batch."""
    from .batch import estimate_many as _many
    return _many(models, hw, workers=workers, backend=backend, progress=progress, **options)


def _with_record(options, kw: dict) -> dict:
    """The keyword options of a BuildOptions record (its given fields) with `kw` on top."""
    if options is None:
        return kw
    if not isinstance(options, BuildOptions):
        raise DlasimError(f"options: expected a dlasim.BuildOptions record, got {type(options).__name__}")
    return {**{k: v for k, v in options.as_kwargs().items() if v is not None}, **kw}


def compare(model, hw="xavier-agx", vary: dict | None = None, options=None, **kw):
    """Estimates for each value of one option and the causes of the difference (`dlasim compare`).

    model, hw: as in dlasim.estimate.
    vary:      {KEY: [v1, v2, ...]}, exactly one KEY of precision, sparsity, device, batch, hw (hw values are
               platform names or NAME:MODE), model (models as dlasim.estimate takes them), shapes
               ({input name: shape} each), at least two values; the first is the baseline.
    options:   any other keyword of dlasim.estimate (device, precision, batch, gpu_fallback, sparsity,
               dla_core, shapes, input_formats, output_formats), held fixed, or a BuildOptions record as
               `options` (keywords change its fields).
    Returns a CompareResult: the estimates, the speedup first -> second, the gap to the ideal speedup split
    into causes, and advice. Raises DlasimError (one line).
    """
    from .explainer.compare import compare as _compare
    return _compare(model, hw, vary or {}, **_with_record(options, kw))


def explain(model, hw="xavier-agx", options=None, **kw):
    """One configuration's ideal-to-predicted waterfall, split into causes, with recovery advice.

    model, hw: as in dlasim.estimate.
    options:   any other keyword of dlasim.estimate (device, precision, batch, gpu_fallback, sparsity,
               dla_core, shapes, input_formats, output_formats), or a BuildOptions record as `options`
               (keywords change its fields).
    Returns an ExplainResult: the estimate, the ideal time and its basis, the causes (summing to predicted
    minus ideal) and re-estimated advice. Raises DlasimError (one line).
    """
    from .explainer.waterfall import explain as _explain
    return _explain(model, hw, **_with_record(options, kw))
