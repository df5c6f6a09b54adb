"""The size limits of a batch and an input dimension, checked where options and models come in."""
from __future__ import annotations

from .errors import ModelError


# the largest batch or input dimension: TensorRT 8.x Dims hold int32 sizes (NvInfer.h Dims32); TensorRT 10's
# Dims64 go further, but 2**31 images of one byte each already pass the memory of every platform dlasim has
DIM_MAX = 2 ** 31 - 1


def check_batch(batch) -> None:
    """A ModelError unless `batch` is an integer from 1 to DIM_MAX (--batch)."""
    if type(batch) is not int or not 1 <= batch <= DIM_MAX:
        raise ModelError(f"batch={batch!r} (--batch): expected an integer from 1 to {DIM_MAX}")


def check_dims(name: str, shape: tuple[int, ...]) -> None:
    """A ModelError if a dimension of input `name`'s shape (--shapes) passes DIM_MAX."""
    if any(abs(d) > DIM_MAX for d in shape):
        raise ModelError(f"shapes (--shapes): input {name!r}: a dimension past {DIM_MAX} (TensorRT dimensions "
                         f"are 32-bit), got {'x'.join(map(str, shape))[:60]}")


def output_shape(where: str, layer, shape) -> tuple[int, ...]:
    """A layer's inferred output `shape` as integers; a ModelError if a dimension is not a whole number, is
    below 1 or passes DIM_MAX (an attribute such as a pad of 0.5, inf or 1e300 in a graph JSON)."""
    try:
        out = tuple(map(int, shape))
    except (TypeError, ValueError, OverflowError):
        out = None
    if out is None or out != tuple(shape):
        raise ModelError(f"{where}: layer {layer.name!r} ({layer.op}) gives an output shape that is not whole "
                         f"numbers ({', '.join(map(str, shape))[:60]}): check its attributes")
    if out and min(out) <= 0:
        raise ModelError(f"{where}: layer {layer.name!r} ({layer.op}) gives an empty output shape {out}")
    if out and max(out) > DIM_MAX:
        raise ModelError(f"{where}: layer {layer.name!r} ({layer.op}) gives an output dimension past {DIM_MAX} "
                         f"(TensorRT dimensions are 32-bit)")
    return out
