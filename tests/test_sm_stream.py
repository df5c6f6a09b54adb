"""The SM-side streaming limit of memory-bound GPU kernels and GPU copies (cost/gpu.py sm_stream_scale)."""
import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.cost.gpu import sm_stream_scale

IO = dict(input_formats="fp16:chw", output_formats="fp16:chw")


def _with(plat, **gpu):
    return plat.model_copy(update={"gpu": plat.gpu.model_copy(update=gpu)})


def _toy(stream):
    """6 SMs at 1 GHz on 60 GB/s DRAM with a DRAM-side share of 0.8 (48 GB/s)."""
    p = dlasim.hardware("xavier-nx")
    p = p.model_copy(update={"memory": p.memory.model_copy(update={"dram_bandwidth_bytes_per_s": 60e9})})
    return _with(p, sm_count=6, clock_hz=1e9, memory_efficiency=0.8, stream_bytes_per_clk_per_sm=stream)


def test_scale_is_sm_rate_over_dram_share_when_the_sms_limit():
    # 4 B/clk x 6 SMs x 1 GHz = 24 GB/s against 0.8 x 60 GB/s = 48 GB/s -> 0.5
    assert sm_stream_scale(_toy(4.0)) == pytest.approx(0.5)
    # 10 B/clk -> 60 GB/s > 48 GB/s: the DRAM limits, no scaling
    assert sm_stream_scale(_toy(10.0)) == 1.0


def test_no_per_sm_rate_means_no_sm_limit():
    for name in ("h200", "a100", "orin-agx"):
        assert dlasim.hardware(name).gpu.stream_bytes_per_clk_per_sm is None
        assert sm_stream_scale(dlasim.hardware(name)) == 1.0


def _pool_memory_ms(plat):
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 256, 256))
    e = dlasim.estimate(b.build([b.maxpool(x, 2)]), plat, device="gpu", precision="fp16", **IO)
    return [s for s in e.steps if s.kind == "layer"][0].memory_ms


def test_pool_moves_its_bytes_at_the_sm_streaming_rate():
    nbytes = 64 * 256 * 256 * 2 + 64 * 128 * 128 * 2      # FP16 read + write: 10,485,760 B
    assert _pool_memory_ms(_toy(4.0)) == pytest.approx(nbytes / 24e9 * 1e3)      # 0.4369 ms
    assert _pool_memory_ms(_toy(10.0)) == pytest.approx(nbytes / 48e9 * 1e3)     # DRAM-limited: 0.2185 ms


def test_xavier_nx_streams_by_its_sms_not_its_bus():
    agx, nx = dlasim.hardware("xavier-agx"), dlasim.hardware("xavier-nx")
    assert agx.gpu.stream_bytes_per_clk_per_sm == nx.gpu.stream_bytes_per_clk_per_sm
    # both SM-limited: the NX/AGX time ratio is (8 SMs x 1377 MHz) / (6 SMs x 1109.25 MHz) = 1.655,
    # not the DRAM ratio 136.5 / 59.7 = 2.286
    assert _pool_memory_ms(nx) / _pool_memory_ms(agx) == pytest.approx(8 * 1377 / (6 * 1109.25))


def test_a_lower_gpu_clock_slows_sm_limited_streaming():
    # Xavier NX 10 W: GPU 800 MHz, EMC 1600 MHz (51.2 GB/s); 6 x 800e6 x rate stays below 0.8552 x 51.2 GB/s
    fast, slow = dlasim.hardware("xavier-nx"), dlasim.hardware("xavier-nx:10w")
    assert _pool_memory_ms(slow) / _pool_memory_ms(fast) == pytest.approx(1109.25 / 800)


def test_gemv_weight_stream_keeps_its_dram_share():
    b = GraphBuilder("t")
    x = b.input("x", (1, 4096))
    e = dlasim.estimate(b.build([b.fc(x, 4096)]), _toy(1.0), device="gpu", precision="fp16",
                        input_formats="fp16:chw", output_formats="fp16:chw")
    st = [s for s in e.steps if s.kind == "layer"][0]
    gpu = _toy(1.0).gpu
    w = 4096 * 4096 * 2
    assert st.parts.kernel_class == "gemv"
    # weights + 8 KiB in + 8 KiB out at gemv_efficiency x 60 GB/s, plus the kernel ramp; no SM scaling
    expect = (w + 2 * 4096 * 2) / (gpu.gemv_efficiency * 60e9) + (gpu.tensor_latency_s or 0.0)
    assert st.memory_ms == pytest.approx(expect * 1e3, rel=1e-3)


def test_dla_transition_copy_is_sm_limited_too():
    b = GraphBuilder("t")
    x = b.input("x", (32, 528, 14, 14))
    g = b.build([b.conv(x, 256, 1, bias=False)])
    fast, slow = _toy(10.0), _toy(4.0)
    t = [[s for s in dlasim.estimate(g, p, device="dla", precision="int8").steps if s.kind == "reformat"][0]
         for p in (fast, slow)]
    # the FP32 read (13.2 MB) sets the time: over 60 GB/s x dla_copy_efficiency, then over half that
    assert t[1].memory_ms == pytest.approx(2 * t[0].memory_ms)
    assert t[0].memory_ms == pytest.approx(32 * 528 * 196 * 4 / (60e9 * fast.copies.dla_copy_efficiency) * 1e3)
