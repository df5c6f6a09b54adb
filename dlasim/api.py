"""The public functions that load a model, build its Plan and cost it; the facade (dlasim/__init__.py)
re-exports them, and modules inside the package import them from here, never from the facade."""
from __future__ import annotations

from .hardware import hardware
from .ir import Graph
from .report import Estimate


def load(model, shapes: dict | None = None, batch: int | None = None) -> Graph:
    """A shaped Graph from a model.

    model:  a path (.onnx, .prototxt, .json from Graph.to_json), "zoo:NAME", an in-memory onnx.ModelProto,
            or a Graph (returned as is unless shapes/batch change it; the argument is never modified).
    shapes: {input name: shape tuple} overriding input shapes (trtexec --shapes); fills dynamic dimensions.
    batch:  set dimension 0 of every input (trtexec --batch).
    Raises ModelError (one line naming the file, layer or parameter).
    """
    from .importers import load_model
    return load_model(model, shapes=shapes, batch=batch)


def build(model, hw="xavier-agx", device: str = "dla", precision: str = "fp16", batch: int | None = None,
          gpu_fallback: bool = True, sparsity: str = "disable", dla_core: int = 0, shapes: dict | None = None,
          input_formats: str | None = None, output_formats: str | None = None):
    """Run the TensorRT-like passes only: the Plan (placement, fusion, loadables, reformats), no costs.

    model:          a path (.onnx, .prototxt, .json from Graph.to_json), "zoo:NAME" (`dlasim zoo list`), a
                    Graph (GraphBuilder.build(), dlasim.load) or an in-memory onnx.ModelProto.
    hw:             a platform: a built-in name ("xavier-agx", "orin-agx", "a100", ...; `dlasim specs list`),
                    "NAME:MODE" for a power mode ("orin-agx:15w"), a path to a spec .toml, or a Platform
                    (dlasim.hardware). Default "xavier-agx".
    device:         "dla" (default; trtexec builds for the GPU unless given --useDLACore) or "gpu".
    precision:      what TensorRT may use: "fp16" (default; trtexec's default is FP32), "fp32", "int8" or
                    "best" (all of them). The DLA has no FP32: there "fp32" runs FP16, with a reason.
    batch:          set dimension 0 of every input (trtexec --batch); None keeps the model's.
    gpu_fallback:   let layers the DLA cannot run fall back to the GPU (default True; trtexec needs
                    --allowGPUFallback). False makes such a layer a BuildError, as in TensorRT.
    sparsity:       2:4 structured sparsity, as trtexec --sparsity: "disable" (default), "enable" or "force";
                    both of the latter take every eligible layer's weights as 2:4 sparse (dlasim keeps
                    weight shapes, not values) and use the sparse kernel where it is faster.
    dla_core:       which DLA core (trtexec --useDLACore), default 0.
    shapes:         {input name: shape tuple} overriding input shapes (trtexec --shapes); also fills
                    dynamic dimensions.
    input_formats:  trtexec --inputIOFormats spelling, e.g. "int8:dla_hwc4" or "fp16:chw16"; None: FP32 linear.
    output_formats: trtexec --outputIOFormats spelling; None: FP32 linear.
    Raises ModelError, SpecError or BuildError (all DlasimError; one line).
    """
    from .passes import build_plan
    g = load(model, shapes=shapes, batch=batch)
    return build_plan(g, hardware(hw), device, precision, gpu_fallback, sparsity, dla_core,
                      input_formats, output_formats)


def estimate(model, hw="xavier-agx", device: str = "dla", precision: str = "fp16", batch: int | None = None,
             gpu_fallback: bool = True, sparsity: str = "disable", dla_core: int = 0, shapes: dict | None = None,
             input_formats: str | None = None, output_formats: str | None = None, label: str = "") -> Estimate:
    """Per-step and total latency of one inference of the whole batch, as TensorRT would build the engine.

    model:          a path (.onnx, .prototxt, .json from Graph.to_json), "zoo:NAME" (`dlasim zoo list`), a
                    Graph (GraphBuilder.build(), dlasim.load) or an in-memory onnx.ModelProto.
    hw:             a platform: a built-in name ("xavier-agx", "orin-agx", "a100", ...; `dlasim specs list`),
                    "NAME:MODE" for a power mode ("orin-agx:15w"), a path to a spec .toml, or a Platform
                    (dlasim.hardware). Default "xavier-agx".
    device:         "dla" (default; trtexec builds for the GPU unless given --useDLACore) or "gpu".
    precision:      what TensorRT may use: "fp16" (default; trtexec's default is FP32), "fp32", "int8" or
                    "best" (all of them). The DLA has no FP32: there "fp32" runs FP16, with a reason.
    batch:          set dimension 0 of every input (trtexec --batch); None keeps the model's.
    gpu_fallback:   let layers the DLA cannot run fall back to the GPU (default True; trtexec needs
                    --allowGPUFallback). False makes such a layer a BuildError, as in TensorRT.
    sparsity:       2:4 structured sparsity, as trtexec --sparsity: "disable" (default), "enable" or "force";
                    both of the latter take every eligible layer's weights as 2:4 sparse (dlasim keeps
                    weight shapes, not values) and use the sparse kernel where it is faster.
    dla_core:       which DLA core (trtexec --useDLACore), default 0.
    shapes:         {input name: shape tuple} overriding input shapes (trtexec --shapes); also fills
                    dynamic dimensions.
    input_formats:  trtexec --inputIOFormats spelling, e.g. "int8:dla_hwc4" or "fp16:chw16"; None: FP32 linear.
    output_formats: trtexec --outputIOFormats spelling; None: FP32 linear.
    label:          a name kept on the result (Estimate.label), e.g. a NAS candidate id.

    Returns an Estimate: total_ms, steps (one StepRow per fused layer, reformat, transition, launch; its
    `parts` a CostParts record, in seconds), fallback (Fallback records of the layers on the GPU: reason and
    kind), decisions (the passes' Decision records), dla_subgraphs, transitions, macs, warnings; to_dict() is
    the JSON of `dlasim estimate --format json`. Raises ModelError, SpecError or BuildError (all
    DlasimError; one line naming the parameter, file or layer).
    """
    from .passes import cached_plan
    from .simulate import estimate_plan
    g = load(model, shapes=shapes, batch=batch)
    plat = hardware(hw)
    kw = dict(gpu_fallback=gpu_fallback, sparsity=sparsity, dla_core=dla_core, input_formats=input_formats,
              output_formats=output_formats)
    e = estimate_plan(cached_plan(g, plat, device, precision, **kw), label=label)
    # (Q/DQ layers set the precisions themselves; the scan over the layers comes last, being the dearest test)
    if (device == "gpu" and precision != "fp32" and e.by_kind().get("reformat", 0.0) > 0.2 * e.total_ms
            and not any(l.op in ("QuantizeLinear", "DequantizeLinear") for l in g.layers)):
        # precision flags allow, not force: TensorRT times the wider precisions too and keeps the faster
        # engine (reference/gpu_tensorrt.md s2.1 "selection is by timing", s3.3 reformat costs)
        for wider in (("fp16", "fp32") if precision in ("int8", "best") else ("fp32",)):
            alt = estimate_plan(cached_plan(g, plat, device, wider, **kw), label=label)
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
