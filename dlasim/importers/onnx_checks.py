"""Validation of an ONNX ModelProto before dlasim converts it (a step of its own, run first).

Two layers of checks, each failing with one line that names the file, the node or tensor, and what was
expected:
1. onnx.checker.check_model(full_check=True): the ONNX spec (onnx/docs/IR.md) as the reference checker
   enforces it: node and attribute types against the operator schemas, type constraints (no string tensor
   into a Conv), strict shape inference. Nodes of custom domains that the model does not declare, and
   external-data files (checked here instead, without opening anything), are left out of that run.
2. dlasim's own: the graph has outputs and each is produced; op types are non-empty and, in the default
   domain, exist in some opset; dimensions are non-negative and their products plausible; initializer data
   is as long as its shape says; Conv attributes agree with the weight shape, pads are >= 0, strides and
   dilations >= 1; external-data locations are relative and stay inside the model's folder.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ..errors import ModelError

MAX_ELEMENTS = 1 << 40   # elements in one tensor: 4 TiB of FP32, beyond any accelerator's memory
_DEFAULT = ("", "ai.onnx")
# TensorProto.DataType -> bits per element (onnx/onnx.proto, TensorProto.DataType 1-28); 0: variable (string).
# raw_data packs sub-byte types: two 4-bit (UINT4, INT4, FLOAT4E2M1) or four 2-bit (UINT2, INT2) per byte,
# FLOAT6 4 per 3 bytes, so a tensor of n elements holds ceil(n * bits / 8) bytes; int32_data holds 2 (4-bit)
# or 4 (2-bit) elements per entry, one otherwise (FLOAT6 included).
_BITS = {1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 8: 0, 9: 8, 10: 16, 11: 64, 12: 32, 13: 64, 14: 64, 15: 128,
         16: 16, 17: 8, 18: 8, 19: 8, 20: 8, 21: 4, 22: 4, 23: 4, 24: 8, 25: 2, 26: 2, 27: 6, 28: 6}
_PER_INT32 = {4: 2, 2: 4}


def raw_bytes(data_type: int, n: int) -> int:
    """Bytes of n elements of an ONNX tensor type in raw_data (0 for strings)."""
    return -(-n * _BITS[data_type] // 8)


@dataclass(frozen=True)
class ExternalWeights:
    """Initializers whose values live in external files (onnx/docs/ExternalData.md), and which are missing."""
    tensors: int
    missing: tuple[str, ...]          # locations (relative to the model's folder) that are absent


def _err(path: str, what: str) -> ModelError:
    text = " ".join(what.split())
    return ModelError(f"{path}: {text if len(text) < 300 else text[:297] + '...'}")


def check_model(model, path: str) -> ExternalWeights:
    """Raise ModelError for a model that breaks the ONNX spec or dlasim's checks; report external weights."""
    g = model.graph
    weights = _external(g, path)
    _structure(g, path)
    _tensors(g, path)
    _convs(g, path)
    _checker(model, path)
    return weights


# ---- external data ---------------------------------------------------------------------------------
def _external(g, path: str) -> ExternalWeights:
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    count, missing = 0, []
    for t in g.initializer:
        if t.data_location != 1:
            continue
        count += 1
        info = {e.key: e.value for e in t.external_data}
        loc = info.get("location", "")
        for key in ("offset", "length"):
            if key in info and not info[key].isdigit():
                raise _err(path, f"initializer {t.name!r}: external data {key} {info[key]!r} is not a "
                                 f"non-negative integer")
        if not loc:
            raise _err(path, f"initializer {t.name!r}: external data has no location")
        if "\0" in loc or os.path.isabs(loc) or loc.startswith(("/", "\\")) or (len(loc) > 1 and loc[1] == ":"):
            raise _err(path, f"initializer {t.name!r}: external data location {loc!r} is absolute; ONNX "
                             f"requires a path relative to the model's folder")
        target = os.path.realpath(os.path.join(folder, loc))
        if os.path.commonpath([folder, target]) != folder:
            raise _err(path, f"initializer {t.name!r}: external data location {loc!r} leaves the model's "
                             f"folder; dlasim opens nothing outside it")
        if not os.path.isfile(target):
            if loc not in missing:
                missing.append(loc)
    return ExternalWeights(count, tuple(missing))


def missing_weights_warning(weights: ExternalWeights | None, sparsity: str) -> list[str]:
    """The warning for missing external weight files; whether this run needs the values."""
    if weights is None or not weights.missing:
        return []
    files = ", ".join(weights.missing[:3]) + (" ..." if len(weights.missing) > 3 else "")
    if sparsity == "enable":
        need = ("--sparsity=enable needs them: TensorRT uses 2:4 kernels only where the weights have the 2:4 "
                "pattern, which cannot be checked without the values, so every eligible layer is costed as if "
                "its weights were 2:4-pruned (as with --sparsity=force)")
    else:
        need = "this run does not need them: dlasim costs from tensor shapes, not values"
    return [f"external weight file(s) missing: {files}; {need}"]


# ---- structure -------------------------------------------------------------------------------------
def _structure(g, path: str) -> None:
    import onnx.defs

    if not g.output:
        raise _err(path, "the graph has no outputs (ONNX requires at least one graph output)")
    produced = {i.name for i in g.input} | {t.name for t in g.initializer}
    for i, node in enumerate(g.node):
        label = f"node {node.name or i!r}"
        if not node.op_type:
            raise _err(path, f"{label} has an empty op_type")
        if node.domain in _DEFAULT and not onnx.defs.has(node.op_type):
            raise _err(path, f"{label}: {node.op_type!r} is no operator of any opset of the default ONNX "
                             f"domain (custom operators need their own domain)")
        produced.update(o for o in node.output if o)
    for o in g.output:
        if o.name not in produced:
            raise _err(path, f"graph output {o.name!r} is produced by no node, input or initializer")


def _tensors(g, path: str) -> None:
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        tt = vi.type.tensor_type
        if tt.HasField("shape"):
            _dims(path, f"tensor {vi.name!r}", [d.dim_value for d in tt.shape.dim if d.HasField("dim_value")])
    for t in g.initializer:
        _dims(path, f"initializer {t.name!r}", list(t.dims))
        if t.data_type not in _BITS:
            raise _err(path, f"initializer {t.name!r}: data type {t.data_type} is not an ONNX tensor type "
                             f"(TensorProto.DataType 1-{max(_BITS)})")
        if t.data_location == 1:
            continue
        n, bits = math.prod(t.dims), _BITS[t.data_type]
        if t.HasField("raw_data") and bits:
            held = len(t.raw_data)  # a transient copy of one tensor's bytes (protobuf has no cheaper length)
            if held != raw_bytes(t.data_type, n):
                raise _err(path, f"initializer {t.name!r}: raw_data holds {held} bytes, its shape "
                                 f"{list(t.dims)} needs {raw_bytes(t.data_type, n)}")
        typed = max(len(t.float_data), len(t.int32_data), len(t.int64_data), len(t.double_data),
                    len(t.uint64_data), len(t.string_data))
        need = -(-n // _PER_INT32.get(bits, 1)) if t.int32_data else n
        if not t.HasField("raw_data") and typed and typed < need:
            raise _err(path, f"initializer {t.name!r} holds {typed} values, its shape {list(t.dims)} needs {need}")


def _dims(path: str, what: str, dims: list[int]) -> None:
    if any(d < 0 for d in dims):
        raise _err(path, f"{what} has a negative dimension {list(dims)}")
    if math.prod(dims) > MAX_ELEMENTS:
        raise _err(path, f"{what} has {math.prod(dims):.3g} elements {list(dims)}, more than the "
                         f"{MAX_ELEMENTS:.3g} dlasim accepts (beyond any device's memory)")


def _convs(g, path: str) -> None:
    from onnx import helper

    inits = {t.name: t for t in g.initializer}
    for i, node in enumerate(g.node):
        if node.domain not in _DEFAULT or node.op_type not in ("Conv", "ConvTranspose", "MaxPool",
                                                                  "AveragePool", "LpPool"):
            continue
        label = f"node {node.name or i!r} ({node.op_type})"
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        for key, low in (("pads", 0), ("strides", 1), ("dilations", 1), ("kernel_shape", 1)):
            v = attrs.get(key)
            if isinstance(v, list) and any(not isinstance(x, int) or x < low for x in v):
                raise _err(path, f"{label}: {key} must be integers >= {low}, got {v}")
        group = attrs.get("group", 1)
        if not isinstance(group, int) or group < 1:
            raise _err(path, f"{label}: group must be an integer >= 1, got {group!r}")
        w = inits.get(node.input[1]) if node.op_type.startswith("Conv") and len(node.input) > 1 else None
        if w is None:
            continue
        wd = list(w.dims)
        k = attrs.get("kernel_shape")
        if len(wd) < 3:
            raise _err(path, f"{label}: weight {w.name!r} has shape {wd}; expected [M, C/group, k...]")
        if isinstance(k, list) and k != wd[2:]:
            raise _err(path, f"{label}: kernel_shape {k} disagrees with the weight shape {wd}")
        n = len(wd) - 2
        for key, size in (("pads", 2 * n), ("strides", n), ("dilations", n)):
            v = attrs.get(key)
            if isinstance(v, list) and len(v) != size:
                raise _err(path, f"{label}: {key} has {len(v)} values, the {n}-d kernel needs {size}")
        if node.op_type == "Conv" and wd[0] % group:
            raise _err(path, f"{label}: group {group} does not divide the {wd[0]} output channels of {w.name!r}")


# ---- the reference checker -------------------------------------------------------------------------
_BIG = 1 << 20   # initializers above this many bytes reach the checker as typed inputs (no data copied)


def _nbytes(t) -> int:
    """Bytes of an initializer by its shape (ByteSize() would serialize it)."""
    n = math.prod(t.dims)
    return raw_bytes(t.data_type, n) if _BITS.get(t.data_type) else 8 * n


def _checker(model, path: str) -> None:
    import onnx
    from onnx import checker

    declared = {o.domain for o in model.opset_import}
    undeclared = {n.domain for n in model.graph.node} - declared - set(_DEFAULT)
    shapeless = any(not o.type.tensor_type.HasField("shape") for o in model.graph.output)
    heavy = any(t.data_location == 1 or _nbytes(t) > _BIG for t in model.graph.initializer)
    if heavy or undeclared or shapeless:
        model = _checkable_copy(model, undeclared)
        if not model.graph.output:
            return      # no output of known rank: the checker would stop at that, not at real faults
    try:
        checker.check_model(model, full_check=True)
    except (checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise _err(path, f"not a valid ONNX model (onnx.checker: {e})") from None
    except Exception as e:  # protobuf-level problems the checker reports in its own way
        raise _err(path, f"not a valid ONNX model (onnx.checker: {type(e).__name__}: {e})") from None


def _checkable_copy(model, undeclared: set[str]):
    """A copy without weight data: external and large initializers become typed graph inputs (no file is
    touched, no weight copied; their data lengths are checked in _tensors), and undeclared custom domains
    are declared at version 1 (the importer treats their nodes as unknown ops)."""
    import onnx
    from onnx import helper

    src = model.graph
    m = onnx.ModelProto()
    for f in ("ir_version", "producer_name", "producer_version", "domain", "model_version"):
        setattr(m, f, getattr(model, f))
    m.opset_import.extend(model.opset_import)
    m.functions.extend(model.functions)
    for domain in sorted(undeclared):
        m.opset_import.append(helper.make_opsetid(domain, 1))
    g = m.graph
    g.name = src.name
    g.node.extend(src.node)
    g.input.extend(src.input)
    g.output.extend(src.output)
    g.value_info.extend(src.value_info)
    g.sparse_initializer.extend(src.sparse_initializer)
    names = {i.name for i in src.input}
    for t in src.initializer:
        if t.data_location == 1 or _nbytes(t) > _BIG:
            if t.name not in names:
                g.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        else:
            g.initializer.append(t)
    if any(not o.type.tensor_type.HasField("shape") for o in g.output):
        # IR.md lets a graph output omit its shape; the checker wants one: take what inference gives and
        # leave out outputs of unknown rank (their producers are still checked)
        try:
            m = onnx.shape_inference.infer_shapes(m, strict_mode=False)
        except Exception:
            pass
        known = [o for o in m.graph.output if o.type.tensor_type.HasField("shape")]
        del m.graph.output[:]
        m.graph.output.extend(known)
    return m
