"""Cost formulas against hand-computed numbers (DLA conv core, CBUF traffic, SDP, GPU GEMM tiles, copies)."""
import math
from pathlib import Path

import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.cost import finish
from dlasim.cost.dla import conv_cycles, conv_traffic
from dlasim.cost.geometry import ConvShape
from dlasim.cost.gpu import gemm_time
from dlasim.hardware import hardware

XAVIER = hardware("xavier-agx")
DLA = XAVIER.dla


def test_finish_names_the_bound_and_adds_overhead():
    c = finish(2e-3, 1e-3, 1e-4)
    assert c.bound == "compute" and c.total_s == pytest.approx(2.1e-3)
    c = finish(1e-3, 3e-3, 0.0)
    assert c.bound == "memory" and c.total_s == pytest.approx(3e-3)
    c = finish(1e-6, 2e-6, 1e-6, floor_s=8e-6)
    assert c.bound == "overhead" and c.total_s == pytest.approx(9e-6) and c.parts.floor_s == pytest.approx(6e-6)


def test_dla_conv_cycles_seed000_3x3_int8():
    # 528 -> 256, 3x3, 14x14, batch 32, INT8 on a 64x32 atom: ceil(528/64)=9 C-atoms, 256/32=8 K-atoms,
    # 32*196 = 6272 output pixels per block (>= 16, full stripes): 9*8*9*6272 cycles
    cs = ConvShape(32, 528, 14, 14, 256, 14, 14, 3, 3)
    cycles, ideal = conv_cycles(cs, DLA, "int8", image_input=False)
    assert cycles == 9 * 8 * 9 * 6272
    assert ideal == pytest.approx(32 * 256 * 196 * 528 * 9 / 2048)
    # FP16: 16 kernels per atom -> twice the K-atoms
    assert conv_cycles(cs, DLA, "fp16", False)[0] == 9 * 16 * 9 * 6272


def test_dla_fc_batch1_runs_at_6_25_percent():
    # one output pixel per stripe: each atomic op waits the 16-cycle weight load (dla.md s1.2)
    cs = ConvShape(1, 1024, 1, 1, 1024, 1, 1)
    cycles, ideal = conv_cycles(cs, DLA, "int8", False)
    assert ideal / cycles == pytest.approx(1 / 16)
    # batch 32 fills a stripe: full efficiency
    cs32 = ConvShape(32, 1024, 1, 1, 1024, 1, 1)
    c32, i32 = conv_cycles(cs32, DLA, "int8", False)
    assert i32 / c32 == pytest.approx(1.0)


def test_dla_image_mode_first_layer_half_utilisation():
    cs = ConvShape(1, 3, 224, 224, 64, 112, 112, 7, 7, stride=2)
    cycles, ideal = conv_cycles(cs, DLA, "fp16", image_input=True)
    assert cycles == pytest.approx(ideal / 0.5)


def test_dla_cbuf_fit_and_refetch():
    # fits: 64x56x56 INT8 input (224 KB incl. 32-B atoms) + 64*64*9 B weights (36 KB) < 512 KB
    cs = ConvShape(1, 64, 56, 56, 64, 56, 56, 3, 3)
    traffic, refetch, stalled = conv_traffic(cs, DLA, 1, out_bytes=64 * 3136, extra_in_bytes=0)
    assert refetch == 0 and stalled == 0 and traffic == 64 * 3136 + 64 * 64 * 9 + 64 * 3136
    # does not fit: 512x28x28 FP16 input (784 KB) and 512*512*9*2 B = 4.5 MB of weights
    cs = ConvShape(1, 512, 28, 28, 512, 28, 28, 3, 3)
    x_in, wt, y = 512 * 784 * 2, 512 * 512 * 9 * 2, 512 * 784 * 2
    traffic, refetch, stalled = conv_traffic(cs, DLA, 2, out_bytes=y, extra_in_bytes=0)
    x_min = 3 * 28 * 512 * 2
    stream_w = math.ceil(wt / (DLA.cbuf_bytes - x_min)) * x_in + wt
    wt_min = 16 * 512 * 9 * 2
    stream_x = x_in + math.ceil(x_in / (DLA.cbuf_bytes - wt_min)) * wt
    assert traffic == min(stream_w, stream_x) + y
    assert refetch == traffic - (x_in + wt + y) > 0
    assert stream_w < stream_x and stalled == 0        # weight-stationary: the input streams, nothing waits


def test_dla_weight_stream_stalls_when_cbuf_cannot_double_buffer_a_kernel_group():
    # seed 000 3x3: 528 -> 256, 14x14, batch 32. Per image the input fits (FP16 196*1056 B = 7 banks of
    # 32 KB, INT8 196*544 B = 4 banks) but the weights (FP16 2.43 MB, INT8 1.22 MB) do not, so they are
    # re-read for every image: 32 * wt. A kernel group (16 FP16 / 32 INT8 kernels of 528*9 weights) is
    # 152 KB = 5 banks. FP16: 16 - 7 = 9 banks < 2 groups -> every weight fetch waits; INT8: 12 >= 10.
    cs = ConvShape(32, 528, 14, 14, 256, 14, 14, 3, 3)
    y = 32 * 256 * 196 * 2
    traffic, refetch, stalled = conv_traffic(cs, DLA, 2, out_bytes=y, extra_in_bytes=0)
    wt16 = 256 * 528 * 9 * 2
    assert traffic == 32 * (196 * 1056 + wt16) + y
    assert refetch == 31 * wt16 and stalled == 32 * wt16
    traffic8, refetch8, stalled8 = conv_traffic(cs, DLA, 1, out_bytes=y // 2, extra_in_bytes=0)
    wt8 = 256 * 528 * 9
    assert traffic8 == 32 * (196 * 544 + wt8) + y // 2 and refetch8 == 31 * wt8 and stalled8 == 0
    # the 1x1 layer's weights (270 KB FP16) fit beside the input rows: read once for the whole batch
    cs1 = ConvShape(32, 528, 14, 14, 256, 14, 14)
    t1, r1, s1 = conv_traffic(cs1, DLA, 2, out_bytes=y, extra_in_bytes=0)
    assert (r1, s1) == (0, 0) and t1 == 32 * 196 * 1056 + 256 * 528 * 2 + y


def test_orin_depthwise_runs_on_its_depthwise_processor_xavier_on_the_mac_array():
    cs = ConvShape(1, 256, 28, 28, 256, 28, 28, 3, 3, groups=256)
    orin = hardware("orin-agx").dla
    cycles, ideal = conv_cycles(cs, orin, "int8", False)
    assert cycles == pytest.approx(cs.macs / orin.depthwise_macs_per_cycle)
    # Xavier: one channel per group on the 64 x 32 INT8 atom: the cheaper of 256 one-atom blocks and the
    # dense 4 x 8 blocks, each 9 x 784 cycles
    cycles_x, _ = conv_cycles(cs, DLA, "int8", False)
    assert cycles_x == min(256, 4 * 8) * 9 * 784


def test_dla_fc_batch_reads_its_weights_once():
    # 4096 -> 4096 FC, batch 32, FP16: 32 MB of weights never fit, but multi-batch mode runs the 32 vectors
    # (256 KB) together inside each stripe (dla.md s1.2), so the weights stream once, not once per image
    cs = ConvShape(32, 4096, 1, 1, 4096, 1, 1)
    y = 32 * 4096 * 2
    traffic, refetch, stalled = conv_traffic(cs, DLA, 2, out_bytes=y, extra_in_bytes=0)
    assert traffic == 32 * 4096 * 2 + 4096 * 4096 * 2 + y and refetch == 0 and stalled == 0


def test_dla_weight_stall_is_added_to_compute_and_named_cbuf_refetch():
    g = dlasim.load(str(Path(__file__).resolve().parents[1] / "validation" / "data" / "seeds" / "kernel_3x3.prototxt"))
    e = dlasim.estimate(g, XAVIER, device="dla", precision="fp16", batch=32)
    conv = [s for s in e.steps if s.kind == "layer"][0]
    stall_ms = 32 * 256 * 528 * 9 * 2 / (DLA.dram_bytes_per_cycle * DLA.clock_hz) * 1e3
    assert conv.parts.weight_stall_s * 1e3 == pytest.approx(stall_ms)
    ex = dlasim.explain(g, XAVIER, device="dla", precision="fp16", batch=32)
    causes = {c["code"]: c["ms"] for c in ex.causes}
    assert causes["cbuf_refetch"] == pytest.approx(stall_ms, rel=1e-3)


def test_dla_sigmoid_fused_is_output_bound_at_lut_rate():
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 64, 64))
    g = b.build([b.sigmoid(b.conv(x, 64, 1, bias=False))])
    e = dlasim.estimate(g, XAVIER, device="dla", precision="fp16", input_formats="fp16:chw16",
                        output_formats="fp16:chw16")
    conv = [s for s in e.steps if s.kind == "layer"][0]
    # 64*64*64 outputs through the SDP LUT at 4 elem/cycle vs 64*64*4 MAC cycles
    assert conv.compute_ms == pytest.approx(64 * 64 * 64 / 4 / DLA.clock_hz / DLA.mac_eff("fp16") * 1e3)
    assert conv.parts.output_bound


def test_gpu_gemm_tile_and_wave_quantization():
    a100 = hardware("a100")
    gpu = a100.gpu
    m, n, k = 4096, 1024, 4096
    t, tiling = gemm_time(m, n, k, gpu, "fp16", [[256, 128, 32]])
    tiles = 16 * 8
    waves = math.ceil(tiles / gpu.sm_count)
    expect = waves * 256 * 128 * 4096 / (gpu.fma_per_clk_per_sm("fp16") * gpu.clock_hz * gpu.tensor_efficiency)
    assert t == pytest.approx(expect)
    assert tiling.tile_eff == 1.0 and tiling.wave_eff == pytest.approx(tiles / (waves * gpu.sm_count))
    # N = 96 in a 128-wide tile: tile efficiency 0.75
    _, tiling = gemm_time(4096, 96, 4096, gpu, "fp16", [[256, 128, 32]])
    assert tiling.tile_eff == pytest.approx(0.75)
    assert gemm_time(4096, 96, 4096, gpu, "fp16", [])[1] is None             # no tile to run: no tiling


def test_gpu_small_layer_hits_the_kernel_floor():
    b = GraphBuilder("t")
    x = b.input("x", (1, 8, 8, 8))
    g = b.build([b.conv(x, 8, 1)])
    e = dlasim.estimate(g, "h200", device="gpu", precision="fp32")
    conv = [s for s in e.steps if s.kind == "layer"][0]
    gpu = hardware("h200").gpu
    assert conv.bound == "overhead"
    assert conv.time_ms == pytest.approx((gpu.conv1x1_floor_s + gpu.launch_overhead_s) * 1e3)


def test_gpu_pool_and_small_conv_get_their_own_kernel_floors():
    """Tensor-core conv kernels: kernel_floor_s; pooling and depthwise (memory-bound): memory_kernel_floor_s.

    Hand-computed on H200 (132 SMs, 1.98 GHz, 4.8 TB/s) with floors set to 20 us / 3 us and launch 1 us:
    the 1x1 conv (64x64 channels, 14x14) needs 64*64*196 = 0.8 M MACs, far below 1 us of tensor time, and
    the 2x2 max pool moves (64*14*14 + 64*7*7) * 2 B = 31 KB, 0.008 us at 4.8 TB/s: both sit at their floor."""
    plat = hardware("h200")
    # the generic floors: the H200's own class floors and the L2 term unset
    gpu = plat.gpu.model_copy(update={"kernel_floor_s": 20e-6, "memory_kernel_floor_s": 3e-6,
                                      "launch_overhead_s": 1e-6, "conv1x1_floor_s": None,
                                      "depthwise_floor_s": None, "conv1x1_efficiency": None,
                                      "depthwise_efficiency": None, "l2_bandwidth_bytes_per_s": None})
    plat = plat.model_copy(update={"gpu": gpu})
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 14, 14))
    y = b.conv(x, 64, 1, bias=False, name="conv")
    y = b.maxpool(y, 2, name="pool")
    y = b.conv(y, 64, 3, groups=64, bias=False, name="dw")
    e = dlasim.estimate(b.build([y]), plat, device="gpu", precision="fp16", input_formats="fp16:hwc8",
                        output_formats="fp16:hwc8")
    steps = {s.name: s for s in e.steps if s.kind == "layer"}
    assert steps["conv"].time_ms == pytest.approx((20e-6 + 1e-6) * 1e3)
    assert steps["pool"].time_ms == pytest.approx((3e-6 + 1e-6) * 1e3)
    assert steps["dw"].time_ms == pytest.approx((3e-6 + 1e-6) * 1e3)
    assert all(steps[n].bound == "overhead" for n in ("conv", "pool", "dw"))
    # above its floor a pool is bytes over bandwidth: 32 x 64 x 112 x 112 -> 56 x 56, FP16 (64 MB, ~15 us)
    b = GraphBuilder("t")
    x = b.input("x", (32, 64, 112, 112))
    g = b.build([b.maxpool(x, 2, name="pool")])
    e = dlasim.estimate(g, plat, device="gpu", precision="fp16", input_formats="fp16:hwc8",
                        output_formats="fp16:hwc8")
    pool = [s for s in e.steps if s.name == "pool"][0]
    nbytes = 32 * (64 * 112 * 112 + 64 * 56 * 56) * 2
    bw = plat.memory.dram_bandwidth_bytes_per_s * gpu.memory_efficiency
    assert nbytes / bw > 3e-6 and pool.time_ms == pytest.approx((nbytes / bw + 1e-6) * 1e3)


def test_sparse_ineligible_reasons():
    b = GraphBuilder("t")
    x = b.input("x", (8, 256, 32, 32))
    y = b.conv(x, 256, 3, groups=256, name="dw")
    y = b.conv(y, 256, 3, name="dense")
    io = dict(input_formats="fp16:hwc8", output_formats="fp16:hwc8")
    e = dlasim.estimate(b.build([y]), "a40", device="gpu", precision="fp16", sparsity="force", **io)
    parts = {s.name: s.parts for s in e.steps if s.kind == "layer"}
    assert parts["dw"].sparse in ("off", "ineligible")
    assert parts["dense"].sparse in ("used", "too_small")
    e = dlasim.estimate(b.build([y]), "xavier-agx", device="gpu", precision="fp16", sparsity="force", **io)
    dense = [s for s in e.steps if s.name == "dense"][0]
    assert dense.parts.sparse == "ineligible" and "no sparse tensor cores" in dense.parts.sparse_reason


def test_copy_cost_bytes_over_bandwidth_plus_floor():
    b = GraphBuilder("t")
    x = b.input("x", (32, 528, 14, 14))
    g = b.build([b.conv(x, 256, 1, bias=False)])
    e = dlasim.estimate(g, XAVIER, device="dla", precision="int8")
    cp = XAVIER.copies
    first = [s for s in e.steps if s.kind == "reformat"][0]
    nbytes = 32 * 528 * 196 * 4 + 32 * 544 * 196 * 1     # FP32 read; INT8 write with C padded to 32
    assert first.bytes == nbytes
    eff = cp.dla_copy_efficiency or cp.reformat_efficiency
    # into DLA memory: the larger of the read and write streams sets the time (seed 000 breakdown)
    # a GPU kernel: the DRAM share, or the SMs' streaming rate (8 SMs x clock x per-SM bytes) when lower
    g = XAVIER.gpu
    bw = min(XAVIER.memory.dram_bandwidth_bytes_per_s * eff,
             eff / g.memory_efficiency * 8 * g.clock_hz * g.stream_bytes_per_clk_per_sm)
    expect = max(32 * 528 * 196 * 4 / bw, cp.reformat_floor_s) \
        + cp.transition_overhead_s
    assert first.time_ms == pytest.approx(expect * 1e3)


def test_power_mode_slows_the_dla():
    g = dlasim.load("zoo:resnet18")
    fast = dlasim.estimate(g, "orin-agx:maxn", device="dla", precision="int8")
    slow = dlasim.estimate(g, "orin-agx:15w", device="dla", precision="int8")
    assert slow.total_ms > 1.3 * fast.total_ms
    ratio = hardware("orin-agx:maxn").dla.clock_hz / hardware("orin-agx:15w").dla.clock_hz
    for f, s in zip(fast.steps, slow.steps):
        if f.kind == "layer" and f.device == "dla" and f.bound == "compute":
            # the MAC part scales with the clock; weight-fetch stalls follow the memory clock instead
            mac = lambda st: st.compute_ms - st.parts.weight_stall_s * 1e3
            assert mac(s) == pytest.approx(mac(f) * ratio)


def test_dla_hw_ops_multi_batch_only_for_direct_conv():
    from dlasim.cost.dla import hw_ops
    # dla.md s1.2: only direct convolution runs several images per operation, at most 32 (nv_full maxBatch)
    assert DLA.multi_batch_max == 32
    dc = ConvShape(64, 64, 56, 56, 64, 56, 56, 3, 3)
    assert hw_ops(dc, DLA, image_input=False) == 2                      # ceil(64 / 32)
    assert hw_ops(ConvShape(32, 64, 56, 56, 64, 56, 56, 3, 3), DLA, False) == 1
    assert hw_ops(ConvShape(33, 64, 56, 56, 64, 56, 56, 3, 3), DLA, False) == 2
    img = ConvShape(32, 3, 32, 32, 64, 16, 16, 3, 3, stride=2)           # image-input mode: one image per op
    assert hw_ops(img, DLA, image_input=True) == 32
    assert hw_ops(img, DLA.model_copy(update={"multi_batch_max": None}), image_input=True) == 1


def test_dla_first_conv_at_batch_32_pays_the_layer_overhead_per_image():
    from dlasim.ir import GraphBuilder
    b = GraphBuilder("t")
    x = b.input("input", (32, 3, 32, 32))
    g = b.build([b.conv(x, 64, kernel=3, stride=2, name="c1")])
    plat = dlasim.hardware("orin-agx")
    e = dlasim.estimate(g, plat, device="dla", precision="int8", input_formats="int8:dla_hwc4")
    step = next(s for s in e.steps if s.kind == "layer")
    assert step.overhead_ms == pytest.approx(32 * plat.dla.layer_overhead_s * 1e3)


def test_gpu_sparse_weights_are_half_the_values_plus_2_bits_per_kept_value():
    # 1024 -> 1024, 3x3: N = 9437184 weights. 2:4 keeps N/2, each with a 2-bit index in its group of 4
    # (gpu_tensorrt.md s2.1): metadata N/2 * 2 bits = N/8 bytes for every precision.
    # INT8: dense N B, sparse N/2 + N/8 B: saves 3N/8 = 3538944 B (w_bytes // 16 metadata would save 7N/16).
    # FP16: dense 2N B, sparse N + N/8 B: saves 7N/8 = 8257536 B.
    b = GraphBuilder("t")
    x = b.input("x", (32, 1024, 16, 16))
    g = b.build([b.conv(x, 1024, 3, bias=False, name="c")])
    for precision, saved in (("int8", 3538944), ("fp16", 8257536)):
        steps = {}
        for sparsity in ("disable", "force"):
            e = dlasim.estimate(g, "a100", device="gpu", precision=precision, sparsity=sparsity)
            steps[sparsity] = next(s for s in e.steps if s.name == "c")
        assert steps["force"].parts.sparse == "used"
        assert steps["disable"].bytes - steps["force"].bytes == saved


def test_dla_standalone_pool_and_lrn_stream_at_the_pdp_cdp_read_dma_rate():
    from dlasim.cost.dla import read_limited_rate
    # dla.md s1.3: PDP / CDP read DMA peak 8 B/cycle = 8 INT8 or 4 FP16 elements per cycle, below the 8 elem/cycle
    # PDP/CDP rate in FP16; INT8 keeps the unit rate
    assert DLA.pdp_read_bytes_per_cycle == 8
    assert read_limited_rate(8, 8, 2) == 4
    assert read_limited_rate(8, 8, 1) == 8
    assert read_limited_rate(8, None, 2) == 8
    b = GraphBuilder("t")
    x = b.input("x", (1, 192, 56, 56))
    g = b.build([b.maxpool(x, 3, 2, pad=1, name="pool")])
    e = dlasim.estimate(g, XAVIER, device="dla", precision="fp16", input_formats="fp16:chw16",
                        output_formats="fp16:chw16")
    pool = next(s for s in e.steps if s.kind == "layer")
    # 192*56*56 = 602112 input elements at 4 elem/cycle, 1395.2 MHz: 107.9 us (at the PDP's 8: half)
    assert pool.compute_ms == pytest.approx(602112 / 4 / 1395.2e6 * 1e3)
    assert pool.compute_ms == pytest.approx(0.10789, rel=1e-3)


def test_dla_image_input_conv_reads_four_channels_per_pixel():
    # image-input mode reads kDLA_HWC4 (C' = 4, dla.md s3.4): 416 x 416 x 4 B in INT8, not the 32-byte
    # channel atom of a feature map (416 x 416 x 32 B); weights 16 x 3 x 3 x 3 = 432 B
    cs = ConvShape(1, 3, 416, 416, 16, 416, 416, 3, 3)
    out = 416 * 416 * 32
    traffic, refetch, stalled = conv_traffic(cs, DLA, 1, out_bytes=out, extra_in_bytes=0, image=True)
    assert (traffic, refetch, stalled) == (416 * 416 * 4 + 432 + out, 0, 0)
    traffic, _, _ = conv_traffic(cs, DLA, 1, out_bytes=out, extra_in_bytes=0)
    assert traffic == 416 * 416 * 32 + 432 + out


def test_dla_hwc4_keeps_one_channel_for_a_grey_image():
    from dlasim.cost.dla import hwc4_channels
    from dlasim.passes.reformat import copy_bytes
    # dla.md s3.4: kDLA_HWC4 maps C in {1, 3, 4} to C' in {1, 4, 4}
    assert [hwc4_channels(c) for c in (1, 3, 4)] == [1, 4, 4]
    assert copy_bytes((1, 1, 64, 64), ("fp32", "linear"), ("int8", "dla_hwc4")) == (64 * 64 * 4, 64 * 64)
    assert copy_bytes((1, 3, 64, 64), ("fp32", "linear"), ("int8", "dla_hwc4")) == (3 * 64 * 64 * 4, 4 * 64 * 64)
    cs = ConvShape(1, 1, 64, 64, 16, 64, 64, 3, 3)
    traffic, _, _ = conv_traffic(cs, DLA, 1, out_bytes=0, extra_in_bytes=0, image=True)
    assert traffic == 64 * 64 * 1 + 16 * 9
