"""dlasim's own graph JSON (Graph.to_json) read back with a strict schema, before Graph.from_dict.

Shapes are lists of positive integers (or null: unknown) of at most MAX_ELEMENTS elements; every name
is a non-empty string. A bad file is one ModelError naming the field.
"""
from __future__ import annotations

import math
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import ModelError
from ..ir import Graph

MAX_ELEMENTS = 1 << 40     # elements in one tensor (as importers/onnx_checks.py)
Name = Field(min_length=1)


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class TensorRecord(_Strict):
    name: str = Name
    shape: Optional[list[int]] = None
    dtype: str = Field(default="float32", min_length=1)
    const: bool = False

    @field_validator("shape")
    @classmethod
    def _positive(cls, v):
        if v is not None and (any(d < 1 for d in v) or math.prod(v) > MAX_ELEMENTS):
            raise ValueError(f"dimensions must be positive and hold at most {MAX_ELEMENTS:.3g} elements")
        return v


class LayerRecord(_Strict):
    name: str = Name
    op: str = Name
    inputs: list[str]
    outputs: list[str] = Field(min_length=1)
    attrs: dict = Field(default_factory=dict)
    flags: list[str] = Field(default_factory=list)


class GraphRecord(_Strict):
    name: str
    inputs: list[str]
    outputs: list[str]
    tensors: list[TensorRecord]
    layers: list[LayerRecord]


def graph_from_json(path: str) -> Graph:
    from ..safeio import load_json

    data = load_json(path, "model")
    try:
        rec = GraphRecord.model_validate(data)
    except ValidationError as err:
        e = err.errors()[0]
        loc = ".".join(str(x) for x in e["loc"]) or "(top level)"
        raise ModelError(f"{path}: field {loc}: {e['msg']}") from None
    return Graph.from_dict(rec.model_dump(), source=path)
