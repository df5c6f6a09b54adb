"""Model importers: turn a model file, a zoo name or a Graph into a shaped Graph.

`load_model` is the single entry point (docs/DESIGN.md, "Data flow": model file / zoo / builder -> Graph).
Suffixes: `.onnx` (importers/onnx.py, the `onnx` package, imported lazily so the CLI starts fast),
`.prototxt` (importers/caffe.py, no Caffe dependency), `.json` (Graph.to_json output), and `zoo:NAME`
(dlasim.zoo). `parse_shapes` reads trtexec's `--shapes=name:1x3x224x224[,name2:...]` spelling.
"""
from __future__ import annotations

import operator
import os
from pathlib import Path

from ..errors import ModelError
from ..dims import check_batch, check_dims
from ..ir import Graph

SUFFIXES = (".onnx", ".prototxt", ".json")


def load_model(model, shapes: dict[str, tuple] | None = None, batch: int | None = None) -> Graph:
    """Load `model` (a Graph, an onnx.ModelProto, a `.onnx`/`.prototxt`/`.json` path, or `zoo:NAME`) as a
    shaped Graph.

    `shapes` overrides input shapes (trtexec --shapes) and fills dynamic dimensions; `batch` sets
    dimension 0 of every input (trtexec --batch). A Graph argument is not modified: overrides make a copy.
    Any problem raises ModelError with a one-line message.
    """
    shapes = {k: tuple(int(d) for d in v) for k, v in (shapes or {}).items()}
    for name, shape in shapes.items():
        check_dims(name, shape)
    if batch is not None:
        check_batch(operator.index(batch) if hasattr(batch, "__index__") and type(batch) is not bool
                    else batch)   # numpy integers too
    if isinstance(model, Graph):
        g = model
    elif _is_model_proto(model):
        from .onnx import load_onnx_model
        return load_onnx_model(model, shapes, batch)
    elif not isinstance(model, (str, os.PathLike)):
        raise ModelError(f"model: expected a path, 'zoo:NAME', a Graph or an onnx.ModelProto, "
                         f"got {type(model).__name__}")
    else:
        text = os.fspath(model) if isinstance(model, os.PathLike) else str(model)
        if text.startswith("zoo:"):
            g = _load_zoo(text[4:])
        else:
            return _load_file(text, shapes, batch)
    if shapes:
        g = g.with_shapes(shapes)
    if batch is not None:
        g = g.with_batch(int(batch))
    return g


def _is_model_proto(model) -> bool:
    """An onnx.ModelProto, recognised without importing onnx (the CLI never passes one)."""
    cls = type(model)
    return cls.__name__ == "ModelProto" and cls.__module__.split(".")[0] == "onnx"


def _load_zoo(name: str) -> Graph:
    from .. import zoo                # imported on first use: the networks take a while to register
    return zoo.build(name)            # an unknown name is zoo's ModelError, naming the known ones


def _load_file(path: str, shapes: dict[str, tuple], batch: int | None) -> Graph:
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ModelError(f"{path}: unknown model format {suffix or '(no suffix)'!r}; expected "
                         f"{', '.join(SUFFIXES)} or zoo:NAME")
    if os.path.isdir(path):
        raise ModelError(f"{path}: cannot read model (a directory, expected a regular file)")
    if suffix == ".onnx":
        from .onnx import load_onnx
        return load_onnx(path, shapes, batch)
    if suffix == ".prototxt":
        from .caffe import load_prototxt
        return load_prototxt(path, shapes, batch)
    from .graph_json import graph_from_json
    g = graph_from_json(path).infer_shapes()
    if shapes:
        g = g.with_shapes(shapes)
    if batch is not None:
        g = g.with_batch(int(batch))
    return g


def parse_shapes(text: str) -> dict[str, tuple[int, ...]]:
    """Parse trtexec's `--shapes` value: `name:1x3x224x224[,name2:1x10]` -> {name: (1, 3, 224, 224), ...}.

    The name is everything before the last ':' (so `input:0:1x3x8x8` names tensor `input:0`); quotes
    around a name are dropped, as trtexec allows `'input:0':1x3x8x8`.
    """
    out: dict[str, tuple[int, ...]] = {}
    usage = "expected name:1x3x224x224[,name2:...]"
    for part in (text or "").split(","):
        part = part.strip()
        name, sep, dims = part.rpartition(":")
        name = name.strip().strip("'\"")
        try:
            shape = tuple(int(d) for d in dims.strip().lower().split("x"))
        except ValueError:
            shape = ()
        if not sep or not name or not shape or any(d < 1 for d in shape):
            raise ModelError(f"--shapes: {usage}, got {part!r}")
        if name in out:
            raise ModelError(f"--shapes: {name!r} is given twice")
        out[name] = shape
    return out


__all__ = ["load_model", "parse_shapes"]
