"""The public functions that load a model, build its Plan and cost it; the facade (dlasim/__init__.py)
re-exports them, and modules inside the package import them from here, never from the facade."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .build_options import BuildOptions
from .hardware import hardware
from .ir import Graph
from .report import Estimate

if TYPE_CHECKING:
    from .plan import Plan


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


def build(model, hw="xavier-agx", options: BuildOptions | None = None, **kw) -> Plan:
    """Run the TensorRT-like passes only: the Plan (placement, fusion, loadables, reformats), no costs and no
    choice by timing (dlasim.estimate makes that).

    model, hw: as in dlasim.estimate.
    options:   a dlasim.BuildOptions record and/or its fields as keyword arguments, as in dlasim.estimate.
    Raises ModelError, SpecError or BuildError (all DlasimError; one line).
    """
    from .passes import build_plan
    opts = BuildOptions.of(options, **kw)
    return build_plan(load(model, shapes=opts.shape_map, batch=opts.batch), hardware(hw), opts)


def estimate(model, hw="xavier-agx", options: BuildOptions | None = None, label: str = "", **kw) -> Estimate:
    """Per-step and total latency of one inference of the whole batch, as TensorRT would build the engine.

    model:   a path (.onnx, .prototxt, .json from Graph.to_json), "zoo:NAME" (`dlasim zoo list`), a Graph
             (GraphBuilder.build(), dlasim.load) or an in-memory onnx.ModelProto.
    hw:      a platform: a built-in name ("xavier-agx", "orin-agx", "a100", ...; `dlasim specs list`),
             "NAME:MODE" for a power mode ("orin-agx:15w"), a path to a spec .toml, or a Platform
             (dlasim.hardware). Default "xavier-agx".
    options: a dlasim.BuildOptions record to start from; the keyword arguments set or change its fields:
             device ("dla", default, or "gpu"), precision ("fp16", default, "fp32", "int8", "best"), batch,
             gpu_fallback (default True), sparsity ("disable", default, "enable", "force"), dla_core (0),
             shapes ({input name: shape}), input_formats / output_formats (trtexec spellings, e.g.
             "int8:dla_hwc4"); BuildOptions documents each. An unknown keyword is an error naming it.
    label:   a name kept on the result (Estimate.label), e.g. a NAS candidate id.

    Returns an Estimate: total_ms, steps (one StepRow per fused layer, reformat, transition, launch; its
    `parts` a CostParts record, in seconds), fallback (Fallback records of the layers on the GPU: reason and
    kind), decisions (the passes' Decision records), dla_subgraphs, transitions, macs, warnings; to_dict() is
    the JSON of `dlasim estimate --format json`. Raises ModelError, SpecError or BuildError (all
    DlasimError; one line naming the parameter, file or layer).
    """
    from .builder import build_engine
    opts = BuildOptions.of(options, **kw)
    graph = load(model, shapes=opts.shape_map, batch=opts.batch)
    engine = build_engine(graph, hardware(hw), opts)       # the passes, then TensorRT's choice by timing
    return labelled(engine.estimate, label, _weights_warning(graph, opts.sparsity))


def kept_engine(model, hw, opts: BuildOptions):
    """The builder.Engine (Plan and Estimate) dlasim.estimate keeps, for the explain layer's measured
    comparison, which joins the profile to that Plan."""
    from .builder import build_engine
    return build_engine(load(model, shapes=opts.shape_map, batch=opts.batch), hardware(hw), opts)


def labelled(e: Estimate, label: str, warnings: list[str]) -> Estimate:
    """The estimate with its label and the warnings about the model's weights."""
    e.label = label
    e.warnings += warnings
    return e


def _weights_warning(g: Graph, sparsity: str) -> list[str]:
    weights = getattr(g, "external_weights", None)
    if weights is None:
        return []
    from .importers.onnx_checks import missing_weights_warning
    return missing_weights_warning(weights, sparsity)
