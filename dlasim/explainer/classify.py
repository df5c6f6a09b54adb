"""The cause classifier: the one cause that explains a whole step against the expectation (`outcome`), and
the dominant cause of a step's predicted time where it deviates from a measurement (`step_cause`), in the
codes of docs/DESIGN.md "Cause vocabulary".

Sources (../shared/reference): dla.md s1.2 (channel padding), s1.5 (CBUF refetch), s3.1 (FP16/INT8 only),
s3.4 (fallback); gpu_tensorrt.md s2.1/s2.3 (2:4), s5.1 (launch), s5.3 (tile and wave quantization).
"""
from __future__ import annotations

from ..report import Estimate, StepRow
from .config import Findings
from .expectation import Expectation
from .join import MatchGroup
from .texts import deviation_text

OUTCOME_CODES = ("fallback", "precision_unsupported", "sparse_too_small", "sparse_ineligible")  # whole steps
SPARSE_CODES = ("sparse_too_small", "sparse_ineligible")
OK_BAND = 0.20          # |predicted / measured - 1| within this is "ok"
NEAR_FLOOR = 1.5        # measured time within this factor of its kernel class's floor + launch: "overhead"


def outcome(row: StepRow, ctx: Expectation) -> str | None:
    """The one cause that explains a whole step, if there is one (its kind, fallback, sparse, precision)."""
    if row.kind != "layer":
        return row.kind
    if ctx.device == "dla" and row.device == "gpu":
        return "fallback"
    if row.precision != ctx.precision and ctx.precision == "int8":
        return "precision_unsupported"
    if ctx.sparse and row.macs and row.parts.sparse != "used":
        return "sparse_too_small" if row.parts.sparse == "too_small" else "sparse_ineligible"
    return None


def channels(row: StepRow) -> tuple[int, int] | None:
    """(C, K) of the step's convolution-like anchor layer (StepRow.conv), if it has one."""
    return (row.conv.c, row.conv.k) if row.conv is not None else None


def findings(ctx: Expectation, est: Estimate, codes: list[str]) -> Findings:
    """What advice.py needs from the attribution of one configuration's estimate."""
    dense = [(r.layers[0], *ck) for r in est.steps if outcome(r, ctx) in SPARSE_CODES and (ck := channels(r))]
    return Findings(codes, ctx.ideal_ms(est.macs), dense)


def group_cause(est_steps: list[StepRow], group: MatchGroup, predicted_ms: float) -> tuple[str, str]:
    """(cause code, note) of one group's deviation, from its predicted steps' bound and kind."""
    meas = group.measured_ms
    if not group.steps:
        return ("ok", "zero-time row (NoOp)") if meas <= 0 else ("unmatched", "no predicted step")
    if not group.rows:
        return "unmatched", "predicted step with no measured row"
    if meas > 0 and predicted_ms > 0 and abs(predicted_ms / meas - 1) <= OK_BAND:
        return "ok", ""
    weights: dict[str, float] = {}
    for i in group.steps:
        row = est_steps[i]
        code = step_cause(row, meas if len(group.steps) == 1 else None)
        weights[code] = weights.get(code, 0.0) + max(row.time_ms, 1e-9)
    code = max(weights, key=weights.get)
    if group.kind == "concat" and predicted_ms == 0:
        return "memory_bound", "concat input copied (dlasim assumes the producer writes in place)"
    direction = "slower" if meas > predicted_ms else "faster"
    return code, f"measured {direction} than predicted; predicted time is {deviation_text(code)}"


def summary_code(code: str, row_kinds: set[str], step_kinds: list[str]) -> str:
    """The code a group's deviation is summed under: an unmatched group of copies (a measured reformat row,
    or predicted reformat/transition steps) counts as "reformat" (TensorRT layout changes dlasim does not
    predict, or copies it predicts that the engine did not make)."""
    if code != "unmatched":
        return code
    copies = "reformat" in row_kinds or any(k in ("reformat", "transition") for k in step_kinds)
    return "reformat" if copies else "unmatched"


def step_cause(row: StepRow, measured_ms: float | None) -> str:
    """The dominant cause of a step's predicted time: its kind for copies and launches; overhead when the
    measured time is within NEAR_FLOOR of its GPU kernel class's floor plus launch (StepRow.kernel_floor_ms)
    or the floor sets the prediction; otherwise the term that bounds it and the largest loss in that term
    (CBUF refetch in a memory-bound DLA step; channel padding, tile or wave quantization in a compute-bound
    one: a factor below 0.75 or padding above 20% of compute), else memory_bound / compute_bound."""
    if row.kind != "layer":
        return row.kind
    parts = row.parts
    if row.device == "gpu" and measured_ms is not None and measured_ms <= NEAR_FLOOR * row.kernel_floor_ms:
        return "overhead"
    if row.bound == "overhead":
        return "overhead"
    if row.bound == "memory":
        if parts.refetch_s > 0.2 * max(row.memory_ms, 1e-12) * 1e-3:
            return "cbuf_refetch"
        return "memory_bound"
    t = max(row.compute_ms * 1e-3, 1e-15)
    tiling = parts.tiling             # the dense kernel's tiles (GPU implicit GEMM), None elsewhere
    align = row.conv.align if row.conv is not None and row.conv.groups == 1 else 1.0
    if parts.padding_s > 0.2 * t or tiling is not None and tiling.k_eff < 0.75 or align > 1.25:
        return "channel_padding"
    if tiling is not None and tiling.tile_eff < 0.75:
        return "tile_quantization"
    if tiling is not None and tiling.wave_eff < 0.75:
        return "wave_quantization"
    return "compute_bound"
