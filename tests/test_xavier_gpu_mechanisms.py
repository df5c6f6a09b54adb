"""validation/xavier_gpu_mechanisms.py: each probe changes one GPU value, and the host-enqueue timeline."""
from __future__ import annotations

import importlib.util

import pytest

import dlasim
from dlasim import validate

_spec = importlib.util.spec_from_file_location(
    "xavier_gpu_mechanisms", validate.ROOT / "validation" / "xavier_gpu_mechanisms.py")
xgm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(xgm)


def test_enqueue_timeline_by_hand():
    # kernel 0 starts once enqueued (10 us) and ends at 15 us; kernel 1 is enqueued at 20 us, ends at 50 us;
    # kernel 2 was enqueued at 30 us, so it starts when kernel 1 ends: 55 us
    assert xgm.enqueue_timeline([0.005, 0.030, 0.005], 0.010) == pytest.approx(0.055)
    # no enqueue cost: the kernels back to back
    assert xgm.enqueue_timeline([0.005, 0.030, 0.005], 0.0) == pytest.approx(0.040)
    # kernels longer than the enqueue: only the first enqueue shows (10 + 50 + 50 us)
    assert xgm.enqueue_timeline([0.05, 0.05], 0.01) == pytest.approx(0.11)
    # kernels shorter than the enqueue: the host sets the pace (4 x 10 us, then the last 1 us kernel)
    assert xgm.enqueue_timeline([0.001] * 4, 0.01) == pytest.approx(0.041)


def test_probes_change_only_their_field_and_keep_the_power_mode():
    base = dlasim.hardware("xavier-nx:15w")
    p = xgm._platform("xavier-nx:15w", xgm._int8_at_fp16)
    assert p.gpu.fma_per_clk_per_sm_int8 == base.gpu.fma_per_clk_per_sm_fp16 == 512
    assert p.gpu.model_copy(update={"fma_per_clk_per_sm_int8": 1024}) == base.gpu
    assert (p.memory, p.dla) == (base.memory, base.dla)
    half = xgm._platform("xavier-agx", xgm._half("gemv_efficiency"))
    assert half.gpu.gemv_efficiency == pytest.approx(0.5 * dlasim.hardware("xavier-agx").gpu.gemv_efficiency)
    assert xgm._platform("xavier-agx", None) == dlasim.hardware("xavier-agx")


def test_unfused_leaky_relu_adds_pointwise_kernels():
    base = dlasim.hardware("xavier-nx:15w")
    p = xgm._platform("xavier-nx:15w", xgm._no_leaky)
    assert "LeakyRelu" in base.gpu.fusable_post_ops and "LeakyRelu" not in p.gpu.fusable_post_ops
    assert set(base.gpu.fusable_post_ops) - set(p.gpu.fusable_post_ops) == {"LeakyRelu"}
    fused = dlasim.estimate("zoo:yolov3_tiny", base, device="gpu", precision="int8")
    apart = dlasim.estimate("zoo:yolov3_tiny", p, device="gpu", precision="int8")
    assert len(apart.steps) > len(fused.steps)
    assert apart.total_ms > fused.total_ms


def test_a_concat_step_with_copies_is_one_kernel_per_copy():
    from types import SimpleNamespace as S
    est = S(steps=[S(time_ms=0.02, parts=S(copy_kernels=0)),       # a conv: one kernel
                   S(time_ms=0.0, parts=S(copy_kernels=0)),        # an in-place Concat: no kernel
                   S(time_ms=0.03, parts=S(copy_kernels=3))])      # a Concat copying 3 inputs: 3 x 10 us
    assert xgm.gpu_kernels(est) == pytest.approx([0.02, 0.01, 0.01, 0.01])


def test_torch2trt_quote_gives_latency_and_inverse_throughput():
    # T2T-03 quote: "Throughput (TensorRT) 722 | Latency (TensorRT) 1.64"
    lat, tput = xgm._t2t_quote_ms("T2T-03")
    assert lat == pytest.approx(1.64)
    assert tput == pytest.approx(1000 / 722)
