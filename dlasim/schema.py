"""The JSON documents the CLI prints (`--format json`), as pydantic models; their JSON Schemas are generated
from these models into docs/schema/ (`python -m dlasim.schema [DIR]`) and tests validate real outputs.

schema_version (dlasim/cli/commands.py SCHEMA_VERSION) changes when a document changes incompatibly. The
models forbid unknown keys, so an output that grows a key without the schema fails the tests. Only the CLI
tests and the generator import this module (pydantic is not on the estimate path).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from .plan import FallbackKind

# The stable cause codes (docs/DESIGN.md, "Cause vocabulary"). explain / compare use the first group;
# explain --measured adds "ok" (prediction within tolerance) and "unmatched" (no counterpart on one side).
CAUSE_CODES = ("reformat", "transition", "fallback", "overhead", "memory_bound", "compute_bound", "cbuf_refetch",
               "channel_padding", "tile_quantization", "wave_quantization", "sparse_ineligible",
               "sparse_too_small", "precision_unsupported", "other")
MEASURED_CODES = ("ok", "unmatched")
CauseCode = Literal[CAUSE_CODES + MEASURED_CODES]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Step(_Doc):
    name: str
    kind: Literal["layer", "reformat", "transition", "overhead"]
    op: str
    device: Literal["dla", "gpu"]
    precision: Literal["fp32", "fp16", "int8"]
    time_ms: float = Field(ge=0)
    bound: Literal["compute", "memory", "overhead"]
    layers: list[str] = Field(description="original node names fused into the step")
    macs: int = Field(ge=0)
    bytes: int = Field(ge=0)
    compute_ms: float
    memory_ms: float
    overhead_ms: float
    subgraph: int = Field(description="DLA loadable index, -1 on the GPU")
    reason: str = Field(description="why this device or precision, when not the requested one")
    parts: Optional[dict] = Field(default=None, description="cost details: the fields of the step's CostParts "
                                  "(dlasim/cost) that differ from their defaults, times in seconds "
                                  "(API to_dict(parts=True) only)")


class Fallback(_Doc):
    name: str
    op: str
    reason: str = Field(description="why, for people")
    kind: Literal[tuple(k.value for k in FallbackKind)] = Field(
        description="why, for scripts (dlasim/plan.py FallbackKind)")


class EstimateBody(_Doc):
    model: str
    hardware: str
    device: Literal["dla", "gpu"]
    precision: Literal["fp32", "fp16", "int8", "best"]
    batch: int = Field(ge=1)
    sparsity: Literal["disable", "enable", "force"]
    total_ms: float = Field(gt=0, description="latency of one inference of the whole batch")
    throughput_qps: float = Field(gt=0, description="inferences (samples) per second = batch / latency")
    macs: int = Field(ge=0)
    steps: list[Step]
    fallback: list[Fallback] = Field(description="layers that could not run on the DLA")
    dla_subgraphs: int = Field(ge=0)
    transitions: int = Field(ge=0)
    warnings: list[str]
    label: str


class Document(_Doc):
    schema_version: Literal["1"]
    warnings: list[str] = Field(description="options that cannot take effect, ignored trtexec flags, ...")


class EstimateDoc(Document, EstimateBody):
    """`dlasim estimate --format json`."""


class Cause(_Doc):
    code: CauseCode
    ms: float
    share: float
    text: str


class Advice(_Doc):
    change: str
    text: str
    predicted_ms: float
    gain_ms: float
    gain_pct: float
    speedup_after: Optional[float] = None


class SparseGain(_Doc):
    name: str
    channels: str = Field(description="input->output channels, e.g. 512->512")
    dense_ms: float
    sparse_ms: float


class ExplainDoc(Document):
    """`dlasim explain --format json` (without --measured)."""
    model: str
    hardware: str
    device: Literal["dla", "gpu"]
    precision: str
    batch: int
    sparsity: str
    total_ms: float
    ideal_ms: float
    ideal_basis: str
    gap_ms: float
    unexplained_ms: float = Field(0.0, description="what the causes' own mechanisms leave of the gap (reported, not folded into a cause)")
    causes: list[Cause] = Field(description="predicted - ideal, split by cause, largest first")
    sparse_gains: list[SparseGain]
    advice: list[Advice]
    estimate: EstimateBody


class MeasuredRow(_Doc):
    name: str
    kind: str
    predicted_ms: Optional[float]
    measured_ms: Optional[float]
    cause: CauseCode
    note: Optional[str] = None
    steps: list[str]
    rows: Optional[list[str]] = Field(default=None, description="the measured rows merged into this one")
    measured_rows: Optional[int] = None


class MeasuredExplainDoc(Document):
    """`dlasim explain --measured PROFILE --format json`."""
    model: str
    hardware: str
    device: Literal["dla", "gpu"]
    precision: str
    batch: int
    measured: str
    total_predicted_ms: float
    total_measured_ms: float
    matched_share: float = Field(ge=0, le=1)
    correction: str
    rows: list[MeasuredRow]
    causes: list[Cause]


class Variant(EstimateBody):
    pass


class Diff(_Doc):
    name: str
    kind: str
    ms: list[Optional[float]]
    delta_ms: float
    ratio: Optional[float]


class CompareDoc(Document):
    """`dlasim compare --format json`."""
    vary: Literal["precision", "sparsity", "device", "batch", "hw", "model", "shapes"]
    variants: list[Variant] = Field(min_length=2)
    speedup: float = Field(description="first variant's total over the second's")
    ideal_speedup: float = Field(description="the naive expectation, e.g. 2.0 for FP16 -> INT8")
    speedups: list[float]
    gap_ms: float
    unexplained_ms: float = Field(0.0, description="what the causes' own mechanisms leave of the gap (reported, not folded into a cause)")
    causes: list[Cause]
    diff: list[Diff]
    advice: list[Advice]


class ProfileLayer(_Doc):
    name: str
    time_ms: float
    median_ms: Optional[float] = None
    share: float
    kind: str
    layers: list[str]
    layer_type: Optional[str] = None
    tactic: Optional[str] = None
    tile: Optional[list[int]] = None
    has_sparse_weights: Optional[bool] = None
    origin: Optional[str] = None


class ProfileDoc(Document):
    """`dlasim profile PROFILE [--layer-info L] --format json`."""
    model_config = ConfigDict(extra="allow")
    source: str
    count: Optional[int]
    total_ms: float
    layers: list[ProfileLayer]
    by_kind: dict
    largest: list[ProfileLayer]
    dla_time_attribution: Optional[dict]


class InspectNode(_Doc):
    name: str
    op: str
    inputs: list[str]
    output_shapes: list[list[int]]
    macs: int
    params: int
    flags: dict | list


class InspectDoc(Document):
    """`dlasim inspect --format json`."""
    model: str
    inputs: dict[str, list[int]]
    outputs: dict[str, list[int]]
    nodes: list[InspectNode]
    macs: int
    params: int


# `dlasim concurrent` causes of an engine's slowdown together (dlasim/concurrent/model.py; docs/DESIGN.md JSON contract)
CONCURRENT_CODES = ("dram", "gpu_share", "dla_share", "copies", "pipeline_wait")


class ConcurrentCause(_Doc):
    code: Literal[CONCURRENT_CODES]
    ms: float = Field(ge=0, description="time added per inference of the engine's batch")
    text: str


class AddedMs(_Doc):
    dram: float = Field(ge=0)
    unit_share: float = Field(ge=0, description="waiting for the GPU or DLA core other engines use")
    copies: float = Field(ge=0, description="reformat/transition copies slowed by DRAM or GPU sharing")
    pipeline_wait: float = Field(ge=0)


class ConcurrentEngine(_Doc):
    name: str
    model: str
    unit: str = Field(pattern=r"^(gpu|dla[0-9]+)$")
    device: Literal["dla", "gpu"]
    precision: Literal["fp32", "fp16", "int8", "best"]
    batch: int = Field(ge=1)
    alone_ms: float = Field(gt=0, description="stand-alone latency of one inference of the batch")
    together_ms: float = Field(gt=0, description="throughput: time per inference together; pipeline: stage time")
    alone_qps: float = Field(ge=0)
    together_qps: float = Field(ge=0)
    alone_img_per_s: float = Field(ge=0)
    together_img_per_s: float = Field(ge=0)
    slowdown: float = Field(gt=0, description="together_ms / alone_ms")
    added_ms: AddedMs
    mean_dram_factor: float = Field(gt=0, le=1, description="mean rate of its DRAM streams against alone")
    gpu_ms_alone: float = Field(ge=0)
    dram_bytes: int = Field(ge=0, description="DRAM traffic per inference")
    causes: list[ConcurrentCause] = Field(description="largest first")
    warnings: list[str]


class Dram(_Doc):
    peak_bytes_per_s: float = Field(gt=0)
    cap_bytes_per_s: float = Field(gt=0, description="what all engines draw together at most")
    mean_use: float = Field(ge=0, le=1)
    saturated_share: float = Field(ge=0, le=1)


class TimelineSpan(_Doc):
    engine: int = Field(ge=0)
    name: str
    kind: Literal["layer", "reformat", "transition", "overhead"]
    unit: str
    start_ms: float = Field(ge=0)
    end_ms: float = Field(ge=0)
    iteration: int = Field(ge=0)


class ConcurrentBody(_Doc):
    hardware: str
    mode: Literal["throughput", "pipeline"]
    processes: Literal["each", "one"] = Field(description="each: an engine per process (parallel trtexec); "
                                                          "one: one application, a stream per engine")
    dla_wait_gpu_share: float = Field(ge=0, description="GPU share a DLA engine's process held during its DLA task")
    aggregate_img_per_s: float = Field(ge=0, description="throughput: sum over engines; pipeline: frames/s x batch")
    alone_sum_img_per_s: float = Field(ge=0, description="throughput: the naive sum of stand-alone img/s; "
                                                         "pipeline: the slowest stage alone")
    dram: Dram
    pipeline_latency_ms: Optional[float] = Field(description="pipeline: frame latency end to end; else null")
    engines: list[ConcurrentEngine] = Field(min_length=1)


class ConcurrentDoc(Document, ConcurrentBody):
    """`dlasim concurrent --format json`."""
    timeline: list[TimelineSpan]


class AdviceEngine(_Doc):
    unit: str = Field(pattern=r"^(gpu|dla[0-9]+)$")
    model: str
    batch: int = Field(ge=1)


class AdviceCandidate(_Doc):
    engines: list[AdviceEngine] = Field(min_length=1)
    aggregate_img_per_s: float = Field(ge=0, description="simulated together")
    worst_latency_ms: float = Field(gt=0)
    feasible: bool = Field(description="every engine's latency together under the bound")
    note: str


class BestBody(ConcurrentBody):
    warnings: list[str]


class ConcurrentAdviceDoc(Document):
    """`dlasim concurrent --advise --format json`."""
    hardware: str
    latency_ms: Optional[float]
    summary: str
    candidates: list[AdviceCandidate] = Field(description="best first: feasible, then by aggregate img/s")
    best: Optional[BestBody] = Field(description="the best candidate simulated together (no timeline)")


class SweepPoint(_Doc):
    hw: str
    device: Literal["dla", "gpu"]
    precision: Literal["fp32", "fp16", "int8", "best"]
    sparsity: Literal["disable", "enable", "force"]
    batch: int = Field(ge=1)
    total_ms: Optional[float] = Field(gt=0, description="latency of one inference of the batch; null when the "
                                                         "estimate failed (error says why)")
    throughput_per_s: Optional[float] = Field(description="batch inferences per second of latency")
    dla_subgraphs: int = Field(ge=0)
    transitions: int = Field(ge=0)
    fallback_layers: int = Field(ge=0)
    pareto: bool = Field(description="no other point has lower or equal latency and higher or equal throughput")
    error: str


class SweepDoc(Document):
    """`dlasim sweep --format json`."""
    model: str
    varied: list[Literal["precision", "batch", "hw", "device", "sparsity"]] = Field(min_length=1)
    points: list[SweepPoint] = Field(min_length=1, description="every combination of the --vary values")
    pareto: list[int] = Field(description="indices into points of the latency/throughput Pareto set")


DOCUMENTS = {"estimate": EstimateDoc, "explain": ExplainDoc, "explain-measured": MeasuredExplainDoc,
             "compare": CompareDoc, "profile": ProfileDoc, "inspect": InspectDoc,
             "concurrent": ConcurrentDoc, "concurrent-advice": ConcurrentAdviceDoc, "sweep": SweepDoc}


def schemas() -> dict[str, dict]:
    return {name: model.model_json_schema() for name, model in DOCUMENTS.items()}


def write(directory: str | Path) -> list[Path]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for name, schema in schemas().items():
        path = d / f"{name}.schema.json"
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
        out.append(path)
    return out


if __name__ == "__main__":
    for p in write(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "docs" / "schema"):
        print(p)
