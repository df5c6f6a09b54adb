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
    vary: Literal["precision", "sparsity", "device", "batch", "hw", "model"]
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


DOCUMENTS = {"estimate": EstimateDoc, "explain": ExplainDoc, "explain-measured": MeasuredExplainDoc,
             "compare": CompareDoc, "profile": ProfileDoc, "inspect": InspectDoc}


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
