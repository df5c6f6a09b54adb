"""dlasim: analytical latency simulator for NVIDIA DLA (Xavier/Orin) and GPUs under TensorRT.

Public API (no printing, no globals; results are plain picklable data):

    import dlasim
    g  = dlasim.load("model.onnx")          # or "net.prototxt", "zoo:resnet50", or a Graph
    hw = dlasim.hardware("orin-agx:30w")    # or a path to a TOML spec
    e  = dlasim.estimate(g, hw, device="dla", precision="int8", batch=1)
    e.total_ms, e.steps, e.to_dict()
"""
from __future__ import annotations

from .errors import BuildError, DlasimError, ModelError, SpecError
from .hardware import Platform, hardware
from .ir import Graph, GraphBuilder
from .report import Estimate, StepRow

__all__ = ["load", "hardware", "estimate", "estimate_many", "build", "compare", "explain", "Graph", "GraphBuilder",
           "Platform", "Estimate", "StepRow", "DlasimError", "ModelError", "SpecError", "BuildError"]
__version__ = "0.1.0"


def load(model, shapes: dict | None = None, batch: int | None = None) -> Graph:
    """A Graph from a path (.onnx, .prototxt, .json), `zoo:NAME`, or a Graph (returned as is)."""
    from .importers import load_model
    return load_model(model, shapes=shapes, batch=batch)


def build(model, hw="xavier-agx", device: str = "dla", precision: str = "fp16", batch: int | None = None,
          gpu_fallback: bool = True, sparsity: str = "disable", dla_core: int = 0, shapes: dict | None = None,
          input_formats: str | None = None, output_formats: str | None = None):
    """Run the TensorRT-like passes only: the Plan (placement, fusion, loadables, reformats)."""
    from .passes import build_plan
    g = load(model, shapes=shapes, batch=batch)
    return build_plan(g, hardware(hw), device, precision, gpu_fallback, sparsity, dla_core,
                      input_formats, output_formats)


def estimate(model, hw="xavier-agx", device: str = "dla", precision: str = "fp16", batch: int | None = None,
             gpu_fallback: bool = True, sparsity: str = "disable", dla_core: int = 0, shapes: dict | None = None,
             input_formats: str | None = None, output_formats: str | None = None, label: str = "") -> Estimate:
    """Per-step and total latency of one inference of the whole batch."""
    from .simulate import estimate_plan
    g = load(model, shapes=shapes, batch=batch)
    plat = hardware(hw)
    kw = dict(gpu_fallback=gpu_fallback, sparsity=sparsity, dla_core=dla_core, input_formats=input_formats,
              output_formats=output_formats)
    e = estimate_plan(build(g, plat, device, precision, **kw), label=label)
    explicit = any(l.op in ("QuantizeLinear", "DequantizeLinear") for l in g.layers)  # Q/DQ set the precisions
    if device == "gpu" and precision != "fp32" and not explicit and e.by_kind().get("reformat", 0.0) > 0.2 * e.total_ms:
        # precision flags allow, not force: TensorRT times the wider precisions too and keeps the faster
        # engine (reference/gpu_tensorrt.md s2.1 "selection is by timing", s3.3 reformat costs)
        for wider in (("fp16", "fp32") if precision in ("int8", "best") else ("fp32",)):
            alt = estimate_plan(build(g, plat, device, wider, **kw), label=label)
            if alt.total_ms < e.total_ms:
                alt.precision = precision
                alt.warnings.append(f"TensorRT would run this engine in {wider.upper()}: the {precision.upper()} "
                                    f"engine's reformat copies cost more than its kernels save "
                                    f"({e.total_ms:.4f} ms vs {alt.total_ms:.4f} ms)")
                e = alt
    e.warnings += _weights_warning(g, sparsity)
    return e


def _weights_warning(g: Graph, sparsity: str) -> list[str]:
    weights = getattr(g, "external_weights", None)
    if weights is None:
        return []
    from .importers.onnx_checks import missing_weights_warning
    return missing_weights_warning(weights, sparsity)


def estimate_many(models, hw="xavier-agx", workers: int = 1, backend: str = "process", progress=None,
                  **options) -> list:
    """Estimates of many models in order (in-process, `workers` local processes, or Ray); a failure is a
    batch.Failed in its slot. See dlasim.batch."""
    from .batch import estimate_many as _many
    return _many(models, hw, workers=workers, backend=backend, progress=progress, **options)


def compare(model, hw="xavier-agx", vary: dict | None = None, **options):
    """Estimates for each value of one option (precision, sparsity, device, batch, hw) and the causes."""
    from .causes import compare as _compare
    return _compare(model, hw, vary or {}, **options)


def explain(model, hw="xavier-agx", **options):
    """One configuration's ideal-to-predicted waterfall, split into causes, with recovery advice."""
    from .causes import explain as _explain
    return _explain(model, hw, **options)
