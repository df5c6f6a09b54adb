"""Explicit quantization: TensorRT's Q/DQ propagation and fusion rules decide each GPU layer's precision.

A network with QuantizeLinear (Q) / DequantizeLinear (DQ) layers is explicitly quantized: the Q/DQ layers,
not the --int8 flag, say which tensors are INT8 (TensorRT developer guide, "Working with Quantized Types",
explicit quantization; gpu_tensorrt.md s5.2 "Q/DQ fusion: [DQ, DQ] > Node > Q -> quantized node; weights
quantized to INT8 ... redundant Q/DQ pairs erased"). The rules, as the table QDQ_RULES below and in order:

1. A DQ is propagated forward past a commuting layer (max-pooling, reshape/flatten/transpose/squeeze,
   concatenation, slicing: ops that only move or select values), so the commuting layer runs in INT8
   and its output is still an INT8 tensor a later layer can read ("DQ propagation").
2. A Q is propagated backward over a commuting layer whose every reader is a Q ("Q propagation"), so
   the layer before it may write INT8.
3. A quantizable layer (convolution, FC/MatMul, pooling, element-wise add) runs in INT8 when every input
   it reads is INT8 (a DQ input; for convolution and FC also INT8 weights: a DQ of a constant, folded at
   import). Its output is INT8 when every reader of it is a Q (the Q fuses into the layer); otherwise the
   layer writes the higher precision. A residual Add fused into a convolution takes its second input in
   the convolution's output precision: INT8 only when that input is a DQ and the output is quantized.
4. A layer whose inputs are not quantized runs in the higher precision (FP16 when allowed, else FP32).
5. A Q or DQ that does not fuse into a neighbour becomes an explicit reformat: a Q after a higher-precision
   layer is a FP16/FP32 -> INT8 copy, a DQ before one an INT8 -> FP16/FP32 copy. The A100 trex engines
   show exactly these as `Reformat` layers with "Origin": "QDQ" (gpu_tensorrt.md s3.3 table, s4.3;
   validation/data/trex/a100-resnet50/qat/resnet-qat.onnx.engine.graph.json: "QuantizeLinear_15" FP16 ->
   Int8 before every block, because the residual Add's skip input is not quantized).

The pass runs after fusion (it sees the fused conv + add + relu steps) on GPU builds. Q/DQ are not DLA
layers (dla.md s4.1: "Q/DQ -> collapsed into INT8 scales", tools/qdq-translator), so on a DLA build they
fall back to the GPU as standalone kernels like any unsupported layer, the DLA side keeps the implicit
(--int8) precision, and a DLA-only build fails naming that rewrite. Every decision is recorded with its
rule.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ops import MAC_OPS
from ..plan import Decision, Step
from .fuse import readers_and_outputs

Q, DQ = "QuantizeLinear", "DequantizeLinear"


@dataclass(frozen=True)
class QdqRules:
    """TensorRT's Q/DQ rule sets (developer guide "Working with Quantized Types"; gpu_tensorrt.md s5.2)."""
    commuting: frozenset      # rules 1-2: DQ moves past them, Q moves before them
    quantizable: frozenset    # rule 3: run INT8 with INT8 inputs
    weighted: frozenset       # rule 3: need INT8 (DQ'd) weights as well


QDQ_RULES = QdqRules(
    commuting=frozenset({"MaxPool", "GlobalMaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
                         "Concat", "Slice", "Split"}),
    quantizable=MAC_OPS | frozenset({"AveragePool", "GlobalAveragePool", "Add", "Sum"}),
    weighted=MAC_OPS,
)


def has_qdq(plan) -> bool:
    for s in plan.steps:
        if s.op == Q or s.op == DQ:
            return True
    return False


def quantize(plan, rules: QdqRules = QDQ_RULES) -> None:
    """Apply the Q/DQ rules to an explicitly quantized network; a no-op for a network without Q/DQ."""
    if plan.device != "gpu" or not has_qdq(plan):
        return
    hi = "fp32" if plan.precision == "fp32" else "fp16"     # rule 4: the higher precision TensorRT may use
    steps = plan.steps
    readers, outputs = readers_and_outputs(plan)
    memo: dict[str, bool] = {}

    def q_wanted(t: str) -> bool:
        """Rule 2: every reader of `t` is a Q, or a commuting layer whose output is wanted quantized."""
        if t not in memo:
            memo[t] = False                      # cycles cannot happen (topological order); guard anyway
            rs = readers.get(t, ())
            memo[t] = bool(rs) and t not in outputs and all(
                r.device == "gpu" and (r.op == Q or (r.members[0].op in rules.commuting and len(r.outputs) == 1
                                                     and q_wanted(r.outputs[0].name))) for r in rs)
        return memo[t]

    int8: set[str] = set()                       # tensors materialised in INT8
    float_read: set[tuple[int, str]] = set()     # (step id, tensor) read in the higher precision
    kept: list[Step] = []
    pending_dq: list[Step] = []
    g = plan.graph
    for s in steps:
        if s.device != "gpu":
            kept.append(s)
            continue
        op = s.members[0].op
        if op == Q:
            x, y = s.inputs[0], s.outputs[0]
            if x.name in int8:                   # the producer already writes INT8: the Q fused into it
                _alias(plan, s, readers, "Q fused into its producer's output (rule 2/3)")
                int8.add(x.name)
                continue
            _explicit(s, hi, "int8", "Q of a tensor no layer writes in INT8: explicit reformat (rule 5)")
            plan.decisions.append(Decision(s.name, "qdq", "explicit reformat", s.reason))
            int8.add(y.name)
            kept.append(s)
            continue
        if op == DQ:
            int8.add(s.outputs[0].name)          # decided once its readers are known
            pending_dq.append(s)
            kept.append(s)
            continue
        anchor = s.anchor.op if s.anchor is not None else op
        ins = [t.name for t in s.inputs]
        if anchor in rules.commuting and ins and all(t in int8 for t in ins):
            _set(s, "int8", "int8", "commuting layer after a DQ runs INT8 (rule 1)")
            int8.update(t.name for t in s.outputs)
        elif anchor in rules.quantizable and ins and ins[0] in int8 and (
                anchor not in rules.weighted or _int8_weights(s, g)):
            res_int8 = all(t in int8 for t in ins[1:])
            out_q = len(s.outputs) == 1 and q_wanted(s.outputs[0].name) and res_int8
            if out_q:
                _set(s, "int8", "int8", "INT8 inputs and a Q after it: quantized layer (rule 3)")
                int8.add(s.outputs[0].name)
            else:
                why = ("its residual input is not quantized" if not res_int8 else
                       "no Q follows it")
                # a network output is written in the engine's output precision directly (FP32 by default;
                # the trex engines' last FC: Int8 in, "Row major linear FP32" out)
                out = "fp32" if s.outputs and s.outputs[0].name in outputs else hi
                _set(s, "int8", out, f"INT8 inputs, {out.upper()} output: {why} (rule 3)")
                float_read.update((id(s), t) for t in ins[1:])
        else:
            why = ("its weights are not quantized" if anchor in rules.weighted and ins and ins[0] in int8
                   else "its inputs are not quantized (no DQ)" if anchor in rules.quantizable or
                   anchor in rules.commuting else f"{anchor} is not a quantizable layer")
            _set(s, hi, hi, f"runs {hi.upper()}: {why} (rule 4)")
            float_read.update((id(s), t) for t in ins)
        plan.decisions.append(Decision(s.name, "qdq", s.precision + ("" if s.out_precision in ("", s.precision)
                                                                      else f" -> {s.out_precision}"), s.reason))
        kept.append(s)
    dead: set[int] = set()
    for s in pending_dq:
        x, y = s.inputs[0], s.outputs[0]
        rs = readers.get(y.name, ())
        floats = [r for r in rs if (id(r), y.name) in float_read or r.device != "gpu"]
        if not floats:
            dead.add(id(s))
            _alias(plan, s, readers, "DQ fused into the INT8 layers that read it (rule 3)")
            continue
        _explicit(s, "int8", hi, "DQ before a layer that reads " + hi.upper() + ": explicit reformat (rule 5)")
        plan.decisions.append(Decision(s.name, "qdq", "explicit reformat", s.reason))
        for r in rs:                              # INT8 readers keep reading the INT8 tensor
            if r not in floats:
                r.inputs = [x if t.name == y.name else t for t in r.inputs]
    plan.steps = [s for s in kept if id(s) not in dead]


def _int8_weights(s: Step, g) -> bool:
    """Rule 3: the anchor's constant weights are INT8 (a DequantizeLinear of a constant, folded at import)."""
    a = s.anchor
    ws = [g.tensors[t] for t in a.inputs[1:2] if t]
    return bool(ws) and all(w.const and w.dtype == "int8" for w in ws)


def _set(s: Step, precision: str, out: str, reason: str) -> None:
    s.precision = precision
    s.out_precision = out
    s.reason = reason
    s.precision_unsupported = False   # the Q/DQ placement, not the op, decides the precision


def _explicit(s: Step, src: str, dst: str, reason: str) -> None:
    """Rule 5: the Q/DQ becomes a reformat copy; insert_reformats fills in the formats and bytes."""
    s.kind, s.op, s.precision, s.out_precision = "reformat", "Reformat", dst, dst
    s.reason = reason
    s.precision_unsupported = False
    s.qdq = (src, dst)


def _alias(plan, s: Step, readers: dict, reason: str) -> None:
    """The Q/DQ disappears: readers of its output read its input."""
    x, y = s.inputs[0], s.outputs[0]
    plan.alias[y.name] = plan.resolve(x.name)
    for r in readers.get(y.name, ()):
        r.inputs = [x if t.name == y.name else t for t in r.inputs]
    readers.setdefault(x.name, []).extend(readers.get(y.name, ()))
    plan.decisions.append(Decision(s.name, "qdq", "fused", reason))
