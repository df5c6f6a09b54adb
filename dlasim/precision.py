"""The precision an engine runs for the one a build asks: the one rule the build (passes/place.py), the cost
model's peaks, the explain layer's expectation and the HTML roofs share."""
from __future__ import annotations


def run_precision(device: str, requested: str, dla_precisions=("fp16", "int8")) -> str:
    """The precision `device` runs for a `requested` one, before per-layer exceptions (passes/place.py
    assign_precision): "best" runs INT8 (TensorRT picks the fastest kernels it is allowed, and INT8 ones are
    allowed); the DLA runs FP16 or INT8 only (reference/dla.md s3.1), and only those its spec lists
    (`dla_precisions`, the first one when the asked one is missing)."""
    if device == "dla":
        p = "int8" if requested in ("int8", "best") else "fp16"
        return p if p in dla_precisions else dla_precisions[0]
    return "int8" if requested == "best" else requested
