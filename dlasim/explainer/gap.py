"""One step's time split into the ideal and the causes, each from its own mechanism, and the gap of a
compare (second total - first total / naive speedup) split per matched group of steps.

Sources (../shared/reference): dla.md s1.2 (MAC atoms: channel padding), s1.5 (CBUF refetch), s3.4
(fallback, reformats and hand-overs); gpu_tensorrt.md s2.3 (why sparsity often gives no speedup), s5.1
(launch overhead), s5.3 (tile and wave quantization, tensor-core channel alignment).
"""
from __future__ import annotations

import math

from ..report import StepRow
from .classify import OUTCOME_CODES, outcome
from .expectation import Expectation


def step_parts(row: StepRow, ctx: Expectation) -> dict[str, float]:
    """A step's time (ms) as {"ideal": ..., cause code: ..., "other": ...}, each from its own mechanism.

    Layer steps: time = max(compute, memory, floor) + overhead (cost/parts.finish), and each term is split
    by the cost record's own parts:
    - ideal: the step's MACs at the expected rate; sparse_* the 2:4 rate not obtained (dense at the expected
      precision minus the ideal); precision_unsupported the dense ideal at the precision the step runs minus
      the one expected (peaks, dla.md s1.2, gpu_tensorrt.md s1.1);
    - compute above the run ideal: DLA padding_s (channel padding, dla.md s1.2), weight_stall_s (CBUF refetch,
      s1.5), rate_loss_s (MAC efficiency, depthwise/SDP rates); GPU tile, wave and K efficiencies, channel
      alignment and the kernel rate (rate_eff) as factors of compute / ideal (gpu_tensorrt.md s5.3), split in
      proportion to their logarithms;
    - memory above compute, in this order while it lasts: refetch_s (cbuf_refetch), float_io_s (the FP16/FP32
      output and residual bytes of an INT8 layer no Q follows, precision_unsupported, passes/qdq.py), a GEMV's
      stream_ramp_s (overhead); memory_bound is the DRAM time of the step's own bytes (memory minus those three)
      above its compute; floor and overhead: overhead, and so is a GPU kernel's fixed ramp/tail (ramp_s inside
      compute, stream_ramp_s inside a GEMV's memory time; cost/gpu.py tensor_latency_s).
    "other" is what these parts leave unexplained (time minus their sum): not forced to zero, so a cost
    term the split does not know shows up there (tests check it stays small).
    """
    t = row.time_ms
    if row.kind != "layer":
        return {row.kind: t}
    ideal = ctx.ideal_ms(row.macs)
    if ctx.device == "dla" and row.device == "gpu":
        return {"ideal": ideal, "fallback": t - ideal}
    p = row.parts
    out = {"ideal": ideal}
    state = p.sparse
    used = state == "used"
    dense_exp = row.macs / ctx.peak * 1e3                  # dense, at the expected precision's peak
    if ctx.sparse and row.macs and not used:
        out["sparse_too_small" if state == "too_small" else "sparse_ineligible"] = dense_exp - ideal
    dense_run = p.ideal_s * 1e3 if p.ideal_s is not None else dense_exp
    if row.precision != ctx.precision and row.macs:
        out["precision_unsupported"] = (dense_run - dense_exp) / (2 if used else 1)
    run = dense_run / 2 if used else dense_run
    for code, ms in _compute_losses(row, ctx, run).items():
        out[code] = out.get(code, 0.0) + ms
    excess = max(0.0, row.memory_ms - row.compute_ms)
    refetch = min(p.refetch_s * 1e3, excess)
    wide = min(p.float_io_s * 1e3, excess - refetch)
    out["cbuf_refetch"] = out.get("cbuf_refetch", 0.0) + refetch
    if wide:
        out["precision_unsupported"] = out.get("precision_unsupported", 0.0) + wide
    stream_ramp = min(p.stream_ramp_s * 1e3, excess - refetch - wide)   # a GEMV's ramp (cost/gpu.py)
    out["memory_bound"] = max(0.0, excess - p.refetch_s * 1e3 - p.float_io_s * 1e3 - p.stream_ramp_s * 1e3)
    out["overhead"] = out.get("overhead", 0.0) + row.overhead_ms + p.floor_s * 1e3 + stream_ramp
    out["other"] = t - sum(out.values())
    return out


def _compute_losses(row: StepRow, ctx: Expectation, run: float) -> dict[str, float]:
    """compute_ms - ideal at the run precision, by mechanism. DLA: padding_s, weight_stall_s, rate_loss_s.
    GPU implicit GEMM: compute / run = channel alignment / k_eff x 1 / tile_eff x 1 / wave_eff x 1 / rate_eff;
    each factor takes its share of the loss by its logarithm (the shares of log(compute / run), which is
    what they sum to only when the factors are the whole cost model). Other steps (no tiles): the whole
    compute above the run ideal is the kernel's rate below the peak, compute_bound."""
    loss = row.compute_ms - run
    p = row.parts
    if row.device == "dla":
        if p.rate_loss_s is None:
            return {"compute_bound": loss}
        return {"channel_padding": p.padding_s * 1e3, "cbuf_refetch": p.weight_stall_s * 1e3,
                "compute_bound": p.rate_loss_s * 1e3}
    tiling = p.sparse_tiling if p.sparse == "used" else p.tiling
    if tiling is None or run <= 0 or row.compute_ms <= 0:
        return {"compute_bound": loss}
    ramp = p.ramp_s * 1e3          # the kernel's fixed ramp/tail inside compute: overhead
    body = row.compute_ms - ramp
    factors = {"channel_padding": _channel_align(row) / tiling.k_eff,
               "tile_quantization": 1.0 / tiling.tile_eff, "wave_quantization": 1.0 / tiling.wave_eff,
               "compute_bound": 1.0 / tiling.rate_eff}
    total = math.log(body / run)
    out = {"overhead": ramp} if ramp else {}
    if abs(total) < 1e-12:
        return out
    out.update({k: (body - run) * math.log(f) / total for k, f in factors.items() if abs(f - 1.0) > 1e-12})
    return out


def _channel_align(row: StepRow) -> float:
    """GEMM-K padding of the input channels to the tensor-core alignment (StepRow.conv.align: padded / real
    input channels per group, gpu_tensorrt.md s5.3)."""
    return row.conv.align if row.conv is not None else 1.0


# ---- causes --------------------------------------------------------------------------------------


def gap_by_cause(groups, ctx1: Expectation, ctx2: Expectation, ideal: float) -> dict[str, float]:
    """second_total - first_total / ideal, split per matched group into cause codes.

    A group the second variant runs for one reason (a copy, a fallback, a layer kept dense or in FP16)
    counts whole under that code; otherwise each code gets its part in the second variant minus its part
    in the first scaled by the ideal speedup. Unmatched steps count whole. The values sum to the gap.
    """
    gap: dict[str, float] = {}
    for rows1, rows2 in groups:
        why = {outcome(r, ctx2) for r in rows2} if rows2 else {outcome(r, ctx1) for r in rows1}
        if len(why) == 1 and None not in why:
            code = why.pop()
            gap[code] = gap.get(code, 0.0) + sum(r.time_ms for r in rows2) - sum(r.time_ms for r in rows1) / ideal
            continue
        for rows, ctx, w in ((rows2, ctx2, 1.0), (rows1, ctx1, -1.0 / ideal)):
            for r in rows:
                for code, ms in step_parts(r, ctx).items():
                    code = "other" if code == "ideal" else code       # the ideals differ only by rounding
                    gap[code] = gap.get(code, 0.0) + w * ms
    return gap


def totals_by_cause(rows: list[StepRow], ctx: Expectation) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in rows:
        for code, ms in step_parts(r, ctx).items():
            out[code] = out.get(code, 0.0) + ms
    return out


def amounts(rows: list[StepRow], ctx: Expectation) -> dict[str, float]:
    """Per code, what a reader expects to see: the time of the steps a whole-step cause covers (fallback,
    sparse, precision), otherwise the summed part (copies, launches, losses)."""
    out = totals_by_cause(rows, ctx)
    wide = sum(step_parts(r, ctx).get("precision_unsupported", 0.0) for r in rows
               if r.kind == "layer" and r.parts.float_io_s and outcome(r, ctx) is None)
    for code in OUTCOME_CODES:
        out[code] = sum(r.time_ms for r in rows if outcome(r, ctx) == code)
    out["precision_unsupported"] += wide
    return out

