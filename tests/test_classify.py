"""The cause classifier and the causes the other tests leave out, each from its own record field, on
hand-computed rows: GPU channel padding (StepRow.conv alignment and the GEMM-K tile padding), sparse kernels
kept dense, fixed costs (the kernel floor, a tensor-core kernel's ramp, a GEMV's stream ramp), whole-step
codes (outcome), the dominant cause of a measured deviation (step_cause, group_cause), and the records the
estimate hands the explain layer (copies, channels, kernel floors, device peaks) on real networks."""
from __future__ import annotations

import math

import pytest

import dlasim
from dlasim.cost import Tiling
from dlasim.explainer import classify as K
from dlasim.explainer import gap as G
from dlasim.explainer.join import MatchGroup
from dlasim.report import ConvChannels
from hand_rows import FULL, ctx as _ctx, row as _row

# ---- causes from their own mechanisms ------------------------------------------------------------


def test_gpu_channel_padding_is_the_alignment_over_the_k_efficiency():
    """C=3 pads to 4 (align 4/3) and the GEMM K tile is 80% full: compute / ideal = (4/3) / 0.8 = 5/3, so a
    1 ms ideal computes in 5/3 ms and the 2/3 ms loss is all channel padding."""
    conv = ConvChannels(3, 64, 1, align=4 / 3)
    p = G.step_parts(_row(time_ms=5 / 3, compute_ms=5 / 3, memory_ms=0.1, conv=conv, ideal_s=1e-3,
                          tiling=Tiling(1.0, 1.0, 0.8, 1.0)), _ctx())
    assert p["ideal"] == pytest.approx(1.0)
    assert p["channel_padding"] == pytest.approx(2 / 3)
    assert "tile_quantization" not in p and "wave_quantization" not in p and "compute_bound" not in p
    assert abs(p["other"]) < 1e-12


def test_channel_padding_shares_the_loss_with_the_tiles_by_logarithm():
    """align 2 and tile_eff 0.5: compute = 4 x the 1 ms ideal; each factor of 2 takes half of the 3 ms loss."""
    p = G.step_parts(_row(time_ms=4.0, compute_ms=4.0, conv=ConvChannels(4, 8, 1, align=2.0), ideal_s=1e-3,
                          tiling=Tiling(0.5, 1.0, 1.0, 1.0)), _ctx())
    assert p["channel_padding"] == pytest.approx(1.5) and p["tile_quantization"] == pytest.approx(1.5)
    assert abs(p["other"]) < 1e-12


def test_sparse_too_small_is_the_double_rate_the_dense_kernel_gives_up():
    """2:4 asked (2e12 MAC/s expected, ideal 0.5 ms); TensorRT keeps the dense kernel (1 ms dense ideal)."""
    p = G.step_parts(_row(time_ms=1.0, compute_ms=1.0, ideal_s=1e-3, sparse="too_small", tiling=FULL),
                     _ctx(sparse=True))
    assert p["ideal"] == pytest.approx(0.5) and p["sparse_too_small"] == pytest.approx(0.5)
    assert "sparse_ineligible" not in p and abs(p["other"]) < 1e-12


def test_sparse_used_kernel_counts_against_the_doubled_rate():
    """2:4 used: the run ideal is half the 1 ms dense ideal; compute 0.8 ms over its 0.5 ms at rate_eff 0.625
    (1 / 0.625 = 1.6) is 0.3 ms compute_bound, nothing sparse_*."""
    p = G.step_parts(_row(time_ms=0.8, compute_ms=0.8, ideal_s=1e-3, sparse="used", tiling=FULL,
                          sparse_tiling=Tiling(1.0, 1.0, 1.0, 0.625)), _ctx(sparse=True))
    assert p["ideal"] == pytest.approx(0.5) and p["compute_bound"] == pytest.approx(0.3)
    assert not {"sparse_too_small", "sparse_ineligible"} & set(p) and abs(p["other"]) < 1e-12


def test_fixed_costs_floor_ramp_and_launch_are_overhead():
    """compute 1.2 ms = the 1 ms run ideal + a 0.2 ms ramp; the floor adds 0.3 ms above it, the launch 0.05 ms:
    overhead 0.55 ms, no compute loss."""
    p = G.step_parts(_row(time_ms=1.55, compute_ms=1.2, memory_ms=0.5, overhead_ms=0.05, ideal_s=1e-3,
                          ramp_s=0.2e-3, floor_s=0.3e-3, tiling=FULL), _ctx())
    assert p["overhead"] == pytest.approx(0.55) and p["memory_bound"] == 0.0
    assert not {"compute_bound", "tile_quantization", "wave_quantization", "channel_padding"} & set(p)
    assert abs(p["other"]) < 1e-12


def test_a_gemv_stream_ramp_is_overhead_not_memory_bound():
    """A GEMV (no tiles): memory 3 ms holds a 0.5 ms ramp; over 1 ms compute: 1.5 ms memory_bound, 0.5 overhead."""
    p = G.step_parts(_row(time_ms=3.0, compute_ms=1.0, memory_ms=3.0, ideal_s=1e-3, stream_ramp_s=0.5e-3),
                     _ctx())
    assert p["memory_bound"] == pytest.approx(1.5) and p["overhead"] == pytest.approx(0.5)
    assert p["compute_bound"] == pytest.approx(0.0) and abs(p["other"]) < 1e-12


@pytest.mark.parametrize("kind", ["reformat", "transition", "overhead"])
def test_copies_and_launches_are_their_kind(kind):
    assert G.step_parts(_row(kind=kind, time_ms=0.25), _ctx()) == {kind: 0.25}


def test_gap_of_a_group_run_for_one_reason_counts_whole():
    """A DLA step that falls back in the second variant (2 ms) against a 1 ms step at the first's 2x ideal
    speedup: the group gives 2 - 1/2 = 1.5 ms, all fallback."""
    first, second = _ctx("dla", "fp16"), _ctx("dla", "int8", peak=2e12)
    gap = G.gap_by_cause([([_row(device="dla", time_ms=1.0)], [_row(device="gpu", time_ms=2.0)])], first, second,
                         2.0)
    assert gap == pytest.approx({"fallback": 1.5})


# ---- whole-step outcomes -------------------------------------------------------------------------


@pytest.mark.parametrize("row, ctx, code", [
    (dict(kind="reformat"), dict(), "reformat"),
    (dict(kind="transition"), dict(), "transition"),
    (dict(device="gpu"), dict(device="dla"), "fallback"),
    (dict(precision="fp16"), dict(precision="int8"), "precision_unsupported"),
    (dict(precision="int8"), dict(precision="fp16"), None),          # wider than asked is not "unsupported"
    (dict(sparse="too_small"), dict(sparse=True), "sparse_too_small"),
    (dict(sparse="ineligible"), dict(sparse=True), "sparse_ineligible"),
    (dict(sparse="off"), dict(sparse=True), "sparse_ineligible"),
    (dict(sparse="off", macs=0), dict(sparse=True), None),            # no MACs: nothing to sparsify
    (dict(sparse="used"), dict(sparse=True), None),
    (dict(), dict(), None),
])
def test_outcome_names_the_one_cause_of_a_whole_step(row, ctx, code):
    assert K.outcome(_row(**row), _ctx(**ctx)) == code


# ---- the dominant cause of a measured deviation -------------------------------------------------------


@pytest.mark.parametrize("row, measured, code", [
    (dict(kind="transition"), 1.0, "transition"),
    (dict(floor_ms=0.010, compute_ms=0.5), 0.0149, "overhead"),        # within 1.5 x floor + launch
    (dict(floor_ms=0.010, compute_ms=0.5), 0.0151, "compute_bound"),
    (dict(floor_ms=0.010, compute_ms=0.5), None, "compute_bound"),     # a step of a group: no floor test
    (dict(device="dla", floor_ms=0.0, compute_ms=0.5), 0.0, "compute_bound"),
    (dict(bound="overhead"), None, "overhead"),
    (dict(bound="memory", memory_ms=1.0, refetch_s=0.21e-3), None, "cbuf_refetch"),
    (dict(bound="memory", memory_ms=1.0, refetch_s=0.19e-3), None, "memory_bound"),
    (dict(compute_ms=1.0, padding_s=0.21e-3), None, "channel_padding"),
    (dict(compute_ms=1.0, conv=ConvChannels(3, 64, 1, align=4 / 3)), None, "channel_padding"),
    (dict(compute_ms=1.0, conv=ConvChannels(6, 6, 2, align=4 / 3)), None, "compute_bound"),   # grouped: no
    (dict(compute_ms=1.0, conv=ConvChannels(20, 64, 1, align=1.2)), None, "compute_bound"),   # 24/20 < 1.25
    (dict(compute_ms=1.0, tiling=Tiling(0.9, 0.9, 0.7, 0.5)), None, "channel_padding"),
    (dict(compute_ms=1.0, tiling=Tiling(0.7, 0.9, 1.0, 0.5)), None, "tile_quantization"),
    (dict(compute_ms=1.0, tiling=Tiling(0.9, 0.7, 1.0, 0.5)), None, "wave_quantization"),
    (dict(compute_ms=1.0, tiling=Tiling(0.8, 0.8, 0.8, 0.1)), None, "compute_bound"),
])
def test_step_cause(row, measured, code):
    assert K.step_cause(_row(**row), measured) == code


def test_group_cause_ok_band_and_the_heaviest_steps_code():
    rows = [_row(time_ms=1.0, compute_ms=1.0, tiling=Tiling(0.5, 1.0, 1.0, 1.0)),
            _row(time_ms=0.4, bound="memory", memory_ms=0.4)]
    g = MatchGroup(rows=[0], steps=[0, 1], kind="layer", name="r", measured_ms=1.2)
    assert K.group_cause(rows, g, 1.4) == ("ok", "")                           # 1.4 / 1.2 - 1 = 16.7% <= 20%
    code, note = K.group_cause(rows, MatchGroup([0], [0, 1], "layer", "r", 2.0), 1.4)
    assert code == "tile_quantization" and note.startswith("measured slower than predicted")  # 1.0 ms > 0.4 ms
    assert K.group_cause(rows, MatchGroup([], [0], "predicted_only", "s"), 1.0)[0] == "unmatched"
    assert K.group_cause(rows, MatchGroup([0], [], "noop", "r", 0.0), 0.0) == ("ok", "zero-time row (NoOp)")


@pytest.mark.parametrize("code, rows, steps, summed", [
    ("unmatched", {"reformat"}, [], "reformat"),                   # a TensorRT copy dlasim does not predict
    ("unmatched", set(), ["transition"], "reformat"),              # a predicted hand-over with no row
    ("unmatched", {"layer"}, [], "unmatched"),
    ("unmatched", set(), ["layer"], "unmatched"),
    ("memory_bound", {"reformat"}, ["reformat"], "memory_bound"),  # matched groups keep their own code
])
def test_summary_code(code, rows, steps, summed):
    assert K.summary_code(code, rows, steps) == summed


# ---- the records the explain layer reads, on real estimates ---------------------------------------------


def test_estimate_rows_carry_copies_channels_floors_and_peaks():
    e = dlasim.estimate("zoo:resnet18", "xavier-agx", device="dla", precision="fp16")
    copies = [r for r in e.steps if r.kind in ("reformat", "transition")]
    assert copies and all(r.copy is not None and r.name.startswith(r.copy.tensor + " ") for r in copies)
    first = next(r for r in e.steps if r.copy is not None and r.copy.tensor == "input")
    assert first.copy.src == ("fp32", "linear")                      # the engine's default input format
    conv1 = next(r for r in e.steps if r.layers and r.layers[0] == "conv1")
    assert (conv1.conv.c, conv1.conv.k, conv1.conv.groups, conv1.conv.align) == (3, 64, 1, 1.0)   # DLA: no align
    fc = next(r for r in e.steps if "fc" in r.layers)
    assert (fc.device, fc.conv.c, fc.conv.k) == ("dla", 512, 1000)      # the FC as a 1x1 conv: 512 -> 1000
    # one DLA core at FP16: atomic C 64 x atomic K 16 x 1.3952 GHz (hardware_specs/xavier-agx.toml)
    hw = dlasim.hardware("xavier-agx")
    assert e.peaks["dla"].rate("fp16") == pytest.approx(hw.dla.mac_atomic_c * hw.dla.mac_atomic_k_fp16 *
                                                        hw.dla.clock_hz)
    assert e.peaks["gpu"].rate("int8") == pytest.approx(hw.gpu.sm_count * hw.gpu.fma_per_clk_per_sm_int8 *
                                                        hw.gpu.clock_hz)
    assert "copy" not in e.to_dict(parts=True)["steps"][0] and "peaks" not in e.to_dict()


def test_gpu_rows_carry_the_channel_alignment_and_the_kernel_floor():
    e = dlasim.estimate("zoo:resnet18", "a100", device="gpu", precision="int8")
    conv1 = next(r for r in e.steps if r.layers and r.layers[0] == "conv1")
    assert conv1.conv.align == pytest.approx(4 / 3)                # C=3 pads to 4 (first-layer kernel)
    l1 = next(r for r in e.steps if r.layers and r.layers[0] == "layer1.0.conv1")
    assert l1.conv.align == pytest.approx(64 / 64)                  # 64 is a multiple of INT8's 32
    gpu = dlasim.hardware("a100").gpu
    assert l1.kernel_floor_ms == pytest.approx((gpu.kernel_floor_s + gpu.launch_overhead_s) * 1e3)
    assert all(r.kernel_floor_ms == 0.0 for r in e.steps if r.kind != "layer")
    assert math.isclose(sum(r.time_ms for r in e.steps), e.total_ms)


# ---- closing the mutants that survived benchmarks/mutation.py on classify.py and gap.py (seed 3) ------------


def test_the_floor_test_applies_to_a_one_step_group_only():
    """A 12 us measurement against a 10 us floor + launch is overhead for one step; for a group of two steps
    the measurement is not one kernel's, so each step keeps its own cause (tile quantization)."""
    tiled = dict(time_ms=0.7, compute_ms=0.7, floor_ms=0.010, tiling=Tiling(0.5, 1.0, 1.0, 1.0))
    one = [_row(**tiled)]
    assert K.group_cause(one, MatchGroup([0], [0], "layer", "r", 0.012), 0.7)[0] == "overhead"
    two = [_row(**tiled), _row(**tiled)]
    assert K.group_cause(two, MatchGroup([0], [0, 1], "layer", "r", 0.012), 1.4)[0] == "tile_quantization"


def test_a_concat_row_dlasim_writes_in_place_is_a_copy_it_missed():
    rows = [_row(time_ms=0.0, bound="memory")]
    assert K.group_cause(rows, MatchGroup([0], [0], "concat", "x copy", 0.05), 0.0) == \
        ("memory_bound", "concat input copied (dlasim assumes the producer writes in place)")
    rows = [_row(time_ms=0.0, compute_ms=1.0)]                      # not a concat group: its own cause
    assert K.group_cause(rows, MatchGroup([0], [0], "layer", "x", 0.05), 0.0)[0] == "compute_bound"
    rows = [_row(time_ms=0.01, compute_ms=1.0)]                     # a predicted concat copy: its own cause
    assert K.group_cause(rows, MatchGroup([0], [0], "concat", "x copy", 0.05), 0.01)[0] == "compute_bound"


def test_gap_adds_up_the_parts_of_every_mixed_group():
    """Two groups of the same layer, memory-bound by 1 ms in the second variant and 0.5 ms in the first, at a
    naive speedup of 1: 0.5 ms memory_bound each, 1 ms together; the ideals cancel."""
    second = _row(time_ms=2.0, compute_ms=1.0, memory_ms=2.0, ideal_s=1e-3, tiling=FULL)
    first = _row(time_ms=1.5, compute_ms=1.0, memory_ms=1.5, ideal_s=1e-3, tiling=FULL)
    gap = G.gap_by_cause([([first], [second]), ([first], [second])], _ctx(), _ctx(), 1.0)
    assert gap["memory_bound"] == pytest.approx(1.0) and abs(gap["other"]) < 1e-12
    assert sum(gap.values()) == pytest.approx(2 * (2.0 - 1.5))


def test_amounts_are_the_whole_steps_of_whole_step_causes_and_the_parts_of_the_rest():
    """INT8 on the DLA: a GPU fallback step (2 ms), a copy (0.3 ms), an FP16 step (1 ms, all
    precision_unsupported, whole) and INT8 steps writing FP16 (0.4 ms of wider output bytes above compute; none
    where memory stays under compute): fallback 2 ms, reformat 0.3 ms, precision_unsupported 1 + 0.4 ms."""
    rows = [_row(device="gpu", time_ms=2.0), _row(kind="reformat", time_ms=0.3),
            _row(device="dla", precision="fp16", time_ms=1.0, compute_ms=1.0, ideal_s=1e-3),
            _row(device="dla", precision="int8", time_ms=6.0, compute_ms=5.0, memory_ms=6.0, ideal_s=1e-3,
                 float_io_s=0.4e-3),
            _row(device="dla", precision="int8", time_ms=5.0, compute_ms=5.0, memory_ms=4.0, ideal_s=1e-3,
                 float_io_s=0.2e-3)]                      # its wider bytes hide under compute: nothing
    a = G.amounts(rows, _ctx("dla", "int8", peak=2e12))
    assert a["fallback"] == pytest.approx(2.0) and a["reformat"] == pytest.approx(0.3)
    assert a["precision_unsupported"] == pytest.approx(1.4)
    assert a["sparse_too_small"] == 0.0 and a["sparse_ineligible"] == 0.0
