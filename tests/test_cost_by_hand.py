"""Cost-model facts worked out by hand from the formula and the spec values they name, written for mutants
benchmarks/mutation.py found alive (seed 3 on dlasim/cost) and for the issue's two named mutants: pooling
priced at another unit's rate, and 2:4 sparse weights left uncompressed."""
import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.cost import finish
from dlasim.cost.dla import conv_traffic
from dlasim.cost.geometry import ConvShape
from dlasim.cost.gpu import class_efficiency
from dlasim.hardware import hardware

H200 = hardware("h200")
IO16 = dict(input_formats="fp16:hwc8", output_formats="fp16:hwc8")


def _with_dla(name: str, **rates):
    """The platform with DRAM made so fast that a DLA layer's time is its unit's cycles, and the given DLA
    rates changed so that every unit (SDP, SDP element-wise, PDP, CDP) has its own (the specs give PDP and CDP
    the same 8 elem/cycle, dla.md s0.1 fact 9, so a swap of the two would go unseen)."""
    plat = hardware(name)
    return plat.model_copy(update={"dla": plat.dla.model_copy(update=rates),
                                   "memory": plat.memory.model_copy(update={"dram_bandwidth_bytes_per_s": 1e18})})


XAVIER = _with_dla("xavier-agx", cdp_elems_per_cycle=3)
ORIN = _with_dla("orin-agx", cdp_elems_per_cycle=5)


def _rows(g, plat, device="dla", precision="fp16", **kw):
    e = dlasim.estimate(g, plat, device=device, precision=precision, **kw)
    return {s.name: s for s in e.steps if s.kind == "layer"}


def _unit_ms(elements: int, rate: float, plat) -> float:
    return elements / rate / plat.dla.clock_hz * 1e3


# ---- DLA: each standalone layer at its own unit's rate (dla.md s1.3, s0.1 fact 9) ---------------------------

def test_dla_max_pool_streams_its_input_through_the_pdp():
    # 1 x 64 x 56 x 56 -> 2x2 max pool: the PDP reads 64*56*56 = 200704 FP16 elements through its 8 B/cycle read
    # DMA (dla.md s1.3): 4 per cycle, below its 8-element output rate
    b = GraphBuilder("t")
    y = b.maxpool(b.input("x", (1, 64, 56, 56)), 2, name="pool")
    pool = _rows(b.build([y]), XAVIER)["pool"]
    assert pool.device == "dla"
    assert pool.compute_ms == pytest.approx(_unit_ms(200704, 4, XAVIER))
    assert pool.time_ms == pytest.approx(pool.compute_ms + XAVIER.dla.layer_overhead_s * 1e3)


def test_dla_average_pool_is_a_pdp_layer_too():
    b = GraphBuilder("t")
    y = b.avgpool(b.input("x", (1, 32, 40, 40)), 2, name="pool")
    assert _rows(b.build([y]), XAVIER)["pool"].compute_ms == pytest.approx(_unit_ms(32 * 40 * 40, 4, XAVIER))


def test_dla_lrn_runs_on_the_cdp():
    b = GraphBuilder("t")
    y = b.op("LRN", [b.input("x", (1, 64, 28, 28))], {"size": 5}, name="norm")
    norm = _rows(b.build([y]), XAVIER)["norm"]
    assert norm.device == "dla" and norm.compute_ms == pytest.approx(_unit_ms(64 * 28 * 28, 3, XAVIER))


def test_dla_relu_at_the_sdp_rate_and_an_add_at_the_element_wise_rate():
    # ReLU: one stream, 16 elem/cycle; Add of two tensors: the second operand from memory, 4 elem/cycle
    b = GraphBuilder("t")
    y = b.relu(b.input("a", (1, 32, 32, 32)), name="relu")
    assert _rows(b.build([y]), XAVIER)["relu"].compute_ms == pytest.approx(_unit_ms(32 * 32 * 32, 16, XAVIER))
    b = GraphBuilder("t")
    y = b.add(b.input("a", (1, 32, 32, 32)), b.input("b", (1, 32, 32, 32)), name="sum")
    assert _rows(b.build([y]), XAVIER)["sum"].compute_ms == pytest.approx(_unit_ms(32 * 32 * 32, 4, XAVIER))


def test_orin_dla_softmax_at_the_element_wise_rate():
    # DLA v2 runs Softmax (dla.md s3.2) through the SDP's element-wise/LUT path: 16 elem/cycle on Orin
    b = GraphBuilder("t")
    y = b.softmax(b.input("x", (1, 64, 8, 8)), name="soft")
    soft = _rows(b.build([y]), ORIN)["soft"]
    assert soft.device == "dla"
    assert soft.compute_ms == pytest.approx(_unit_ms(64 * 8 * 8, ORIN.dla.sdp_eltwise_elems_per_cycle, ORIN))
    assert ORIN.dla.sdp_eltwise_elems_per_cycle != ORIN.dla.sdp_elems_per_cycle


def test_dla_pool_fused_after_a_conv_is_paced_by_the_pdp():
    # 1x1 conv 16 -> 16 on 64 x 64, FP16: one channel block x 4096 pixels = 4096 MAC cycles; the SDP takes the
    # 65536 outputs at 16 per cycle (4096 cycles); the fused PDP at 8 per cycle: 8192 cycles set the time
    b = GraphBuilder("t")
    y = b.maxpool(b.conv(b.input("x", (1, 16, 64, 64)), 16, 1, bias=False, name="c"), 2, name="pool")
    rows = _rows(b.build([y]), XAVIER)
    step = next(s for s in rows.values() if "pool" in s.layers)
    assert step.layers == ["c", "pool"]
    eff = XAVIER.dla.mac_eff("fp16")
    assert step.compute_ms == pytest.approx(65536 / 8 / (XAVIER.dla.clock_hz * eff) * 1e3)


# ---- DLA conv traffic --------------------------------------------------------------------------------------

def test_conv_to_a_1x1_output_from_a_larger_input_streams_weights_per_image():
    # not an FC (its input is 2 x 2): Xavier, FP16, N = 2, C = 64, K = 4096, 2 x 2 kernel. Per image the input
    # is 4 pixels x 128 B = 512 B; the weights 4096 x 64*2*2 x 2 B = 2 MiB do not fit the 512 KiB CBUF.
    # Re-reading the weights per input chunk: 512 + 1 x 2097152 = 2097664 B; re-reading the input per weight
    # chunk: ceil(2097152 / (524288 - 512)) = 5 chunks x 512 + 2097152 = 2099712 B. The cheaper, per image.
    dla = hardware("xavier-agx").dla
    traffic, refetch, _ = conv_traffic(ConvShape(2, 64, 2, 2, 4096, 1, 1, 2, 2), dla, 2, 1000, 0)
    assert traffic == 2 * 2097664 + 1000
    assert refetch == traffic - (2 * 512 + 2097152 + 1000)


# ---- the combination rule, geometry -------------------------------------------------------------------------

def test_finish_names_the_body_when_overhead_only_ties_it():
    assert finish(1.0, 0.5, 1.0).bound == "compute"
    assert finish(0.5, 1.0, 1.5).bound == "overhead"


def test_two_channel_two_group_conv_is_depthwise():
    assert ConvShape(1, 2, 8, 8, 2, 8, 8, 3, 3, groups=2).depthwise
    assert not ConvShape(1, 4, 8, 8, 4, 8, 8, 3, 3, groups=2).depthwise


# ---- GPU bytes and rates -----------------------------------------------------------------------------------

def test_gpu_conv_with_a_fused_residual_reads_the_residual():
    # conv 64 -> 64 3x3 on 8 x 64 x 32 x 32 + a skip tensor, FP16: input, skip and output 8 x 65536 elements
    b = GraphBuilder("t")
    conv = b.conv(b.input("x", (8, 64, 32, 32)), 64, 3, bias=False, name="c")
    y = b.relu(b.add(conv, b.input("skip", (8, 64, 32, 32)), name="sum"), name="r")
    c = next(s for s in _rows(b.build([y]), H200, device="gpu", **IO16).values() if "c" in s.layers)
    assert c.layers == ["c", "sum", "r"]
    assert c.bytes == 3 * 8 * 64 * 32 * 32 * 2 + 64 * 64 * 9 * 2


def test_gpu_matmul_of_two_activations_reads_each_once():
    # (4, 128, 64) x (4, 64, 128) FP16: both operands are activations (no weights), each read once, plus the
    # output; the second operand is not counted again as weights
    b = GraphBuilder("t")
    y = b.matmul(b.input("a", (4, 128, 64)), b.input("b", (4, 64, 128)), name="mm")
    mm = _rows(b.build([y]), H200, device="gpu", input_formats="fp16:chw", output_formats="fp16:chw")["mm"]
    assert mm.bytes == (4 * 128 * 64 + 4 * 64 * 128 + 4 * 128 * 128) * 2


def test_gpu_depthwise_memory_time_is_input_output_and_weights_over_its_share():
    # 3x3 depthwise on 16 x 256 x 64 x 64 FP16: 2 x 33.5 MB activations, past the H200's usable L2
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (16, 256, 64, 64)), 256, 3, groups=256, bias=False, name="dw")
    dw = _rows(b.build([y]), H200, device="gpu", **IO16)["dw"]
    nbytes = 2 * 16 * 256 * 64 * 64 * 2 + 256 * 9 * 2
    assert 2 * 16 * 256 * 64 * 64 * 2 > H200.gpu.l2_usable_fraction * H200.memory.l2_bytes
    assert dw.bytes == nbytes
    bw = H200.memory.dram_bandwidth_bytes_per_s * class_efficiency(H200.gpu, "depthwise")
    assert dw.memory_ms == pytest.approx(nbytes / bw * 1e3)


def test_concat_copy_out_of_a_fused_buffer_at_the_reformat_bandwidth():
    # two 3x3 siblings on 8 x 256 x 64 x 64 fuse into one conv; the Concat copies both halves (read + write,
    # 2 x 2 x 2 B x 8 x 256 x 4096 = 67 MB), one copy kernel per half: each far above the reformat floor
    b = GraphBuilder("t")
    x = b.input("x", (8, 256, 64, 64))
    y = b.concat([b.conv(x, 256, 3, name="a"), b.conv(x, 256, 3, name="b")], name="cat")
    cat = _rows(b.build([y]), H200, device="gpu", **IO16)["cat"]
    nbytes = 2 * 2 * 2 * 8 * 256 * 64 * 64
    cp = H200.copies
    mem_s = nbytes / (H200.memory.dram_bandwidth_bytes_per_s * cp.reformat_efficiency)
    assert mem_s / 2 > cp.reformat_floor_s and cat.bytes == nbytes
    assert cat.time_ms == pytest.approx((mem_s + 2 * H200.gpu.launch_overhead_s) * 1e3)


# ---- 2:4 sparsity: what is eligible, and compressed weights --------------------------------------------------

def _force_warning(y, b, **io) -> str:
    e = dlasim.estimate(b.build([y]), H200, device="gpu", precision="fp16", sparsity="force", **io)
    assert e.precision == "fp16"
    return " ".join(w for w in e.warnings if "--sparsity" in w)


def test_gpu_sparsity_needs_ungrouped_convs_and_constant_weights():
    # gpu_tensorrt.md s2.1: a grouped conv and a MatMul of two activations get no 2:4 kernels, and say why
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (8, 256, 32, 32)), 256, 3, groups=2, bias=False, name="grouped")
    assert "grouped/depthwise convolution" in _force_warning(y, b, **IO16)
    b = GraphBuilder("t")
    y = b.matmul(b.input("a", (8, 256, 256)), b.input("b", (8, 256, 256)), name="mm")
    assert "no constant weights" in _force_warning(y, b, input_formats="fp16:chw", output_formats="fp16:chw")
    b = GraphBuilder("t")                       # the positive case: an ungrouped conv with weights runs 2:4
    y = b.conv(b.input("x", (8, 2048, 16, 16)), 2048, 1, bias=False, name="plain")
    assert _force_warning(y, b, **IO16) == ""


def test_sparse_weights_are_read_compressed_on_the_gpu():
    # FP16 1x1 conv 2048 -> 2048 on 8 x 16 x 16, 2:4 forced (and faster): 4M weights -> 4M B of kept values +
    # 1 bit of index per dense weight (4M / 8 = 512 KiB; geometry.sparse_weight_bytes); activations
    # 2 x 8 x 2048 x 256 x 2 B
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (8, 2048, 16, 16)), 2048, 1, bias=False, name="c")
    g = b.build([y])
    act = 2 * 8 * 2048 * 256 * 2
    n = 2048 * 2048
    dense = _rows(g, H200, device="gpu", **IO16)["c"]
    sparse = _rows(g, H200, device="gpu", sparsity="force", **IO16)["c"]
    assert dense.bytes == act + n * 2
    assert sparse.bytes == act + n + n // 8


def test_sparse_weights_are_read_compressed_on_the_orin_dla():
    # INT8 3x3 conv 128 -> 128 on 1 x 128 x 8 x 8: 147456 weights -> 73728 kept + 18432 index bytes
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (1, 128, 8, 8)), 128, 3, bias=False, name="c")
    g = b.build([y])
    dense = _rows(g, "orin-agx", precision="int8")["c"]
    sparse = _rows(g, "orin-agx", precision="int8", sparsity="force")["c"]
    assert dense.bytes - sparse.bytes == 147456 - (73728 + 18432)


def test_gpu_sparsity_needs_input_channels_in_fours():
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (8, 6, 64, 64)), 256, 3, bias=False, name="c6")
    assert "input channels 6 not divisible by 4" in _force_warning(y, b, **IO16)


# ---- wider outputs of an INT8 layer (explicit quantization) ---------------------------------------------------

def test_int8_layer_writing_fp32_carries_its_extra_output_and_residual_bytes_as_precision_unsupported():
    # Q/DQ 1x1 conv 32 -> 32 on 8 x 112 x 112 + an unquantized skip, the network output (passes/qdq.py rule 3:
    # INT8 in, FP32 out): output and skip 3211264 elements each, 4 - 1 bytes wider than INT8, over the A100's
    # conv1x1 share of DRAM. The step is memory-bound, so all of it is the precision_unsupported cause
    from dlasim.cost.gpu import sm_stream_scale
    from dlasim.zoo.quantized import qconv
    plat = hardware("a100")
    b = GraphBuilder("t")
    c = qconv(b, b.input("x", (8, 32, 112, 112)), 32, 1, 1, "c")
    y = b.add(c, b.input("skip", (8, 32, 112, 112)), name="add")
    r = dlasim.explain(b.build([y]), plat, device="gpu", precision="int8")
    conv = next(s for s in r.estimate.steps if "add" in s.layers)
    assert conv.precision == "int8" and conv.memory_ms > conv.compute_ms
    wide_ms = 2 * 3211264 * (4 - 1) / (plat.memory.dram_bandwidth_bytes_per_s
                                      * class_efficiency(plat.gpu, "conv1x1") * sm_stream_scale(plat)) * 1e3
    assert wide_ms < conv.memory_ms - conv.compute_ms
    by = {c["code"]: c["ms"] for c in r.causes}
    assert by["precision_unsupported"] == pytest.approx(wide_ms)


# ---- more DLA conv facts (survivors of the seed-5 sample) ------------------------------------------------------

def test_sparse_atomic_op_of_320_channels_takes_three_double_atoms():
    # Orin INT8: a sparse atomic op covers 2 x 64 = 128 input channels: ceil(320/128) = 3 (dense: 5);
    # K = 128 -> one kernel atom; 16 x 16 = 256 output pixels per block (full stripes); 1x1 kernel
    from dlasim.cost.dla import conv_cycles
    dla = hardware("orin-agx").dla
    cs = ConvShape(1, 320, 16, 16, 128, 16, 16, 1, 1)
    assert conv_cycles(cs, dla, "int8", False, sparse=True)[0] == 3 * 1 * 256
    assert conv_cycles(cs, dla, "int8", False)[0] == 5 * 1 * 256


def test_small_weights_stay_in_the_cbuf_for_the_whole_batch():
    # Xavier FP16, N = 2, C = 64, 224 x 224, K = 64, 3x3: one image (224*224*128 B = 6.4 MB) does not fit the
    # 512 KiB CBUF, but the 73728 B of weights fit beside the 3 input rows it needs (3*224*128 = 86016 B):
    # the weights are read once for both images, the input once
    dla = hardware("xavier-agx").dla
    x_img, wt = 224 * 224 * 128, 64 * 64 * 9 * 2
    assert x_img > dla.cbuf_bytes and wt <= dla.cbuf_bytes - 3 * 224 * 128
    assert conv_traffic(ConvShape(2, 64, 224, 224, 64, 224, 224, 3, 3), dla, 2, 500, 0) == \
        (2 * x_img + wt + 500, 0, 0)


def test_only_the_networks_first_conv_runs_in_image_mode():
    # 3 -> 4 channels (the first layer, image mode), then 4 -> 16 channels: a direct convolution although it has
    # <= 4 input channels. Xavier FP16, 32 x 32, 3x3: ceil(4/64) x ceil(16/16) = 1 block x 1024 pixels x 9 =
    # 9216 MAC cycles (the SDP's 16 x 1024 / 16 = 1024 cycles are fewer)
    b = GraphBuilder("t")
    y = b.conv(b.conv(b.input("x", (1, 3, 32, 32)), 4, 3, bias=False, name="c1"), 16, 3, bias=False, name="c2")
    c2 = _rows(b.build([y]), XAVIER)["c2"]
    assert c2.compute_ms == pytest.approx(9216 / (XAVIER.dla.clock_hz * XAVIER.dla.mac_eff("fp16")) * 1e3)


def test_a_chw32_input_is_read_by_a_direct_conv_not_image_mode():
    """dla.md s1.2/s3.4: image-input mode is the kDLA_HWC4 input; a 3-channel input given as kCHW32
    (--inputIOFormats=int8:chw32) is read by a direct convolution, C padded to the 32-byte atom (s1.4).
    Orin INT8, 3 -> 64 channels, 3x3 pad 1 on 224 x 224 (50176 output pixels)."""
    orin = hardware("orin-agx")
    dla, hz = orin.dla, orin.dla.clock_hz
    bw = dla.dram_bytes_per_cycle * hz                 # 64 B per DLA cycle, below the 204.8 GB/s peak
    assert (dla.mac_atomic_c, dla.mac_atomic_k_int8, dla.sdp_elems_per_cycle) == (64, 128, 64)
    b = GraphBuilder("img")
    g = b.build([b.conv(b.input("x", (1, 3, 224, 224)), 64, 3, name="c")])
    pix, out, wt = 224 * 224, 224 * 224 * 64, 64 * 3 * 9          # INT8: one byte each
    est = dlasim.estimate(g, orin, device="dla", precision="int8", input_formats="int8:chw32")
    assert not [s for s in est.steps if s.kind == "reformat" and s.name.startswith("x ")]   # read as given
    c = next(s for s in est.steps if s.name == "c")
    # direct conv: ceil(3/64) x ceil(64/128) = 1 atom x 9 taps x 50176 pixels (stripes of 32 pixels need
    # 16-cycle weight loads: 25088 < 50176) = 451584 cycles, above the SDP's 64 x 50176 / 64 = 50176
    assert c.compute_ms == pytest.approx(9 * pix / hz * 1e3)                          # 0.28224 ms
    assert c.bytes == pix * 32 + wt + out == 4818624                                   # C 3 -> 32 bytes a pixel
    assert c.memory_ms == pytest.approx(c.bytes / bw * 1e3)
    # the same input as kDLA_HWC4 (and the FP32 default, copied into it) runs image mode: 4 bytes a pixel,
    # MACs at half the ideal rate (3 x 64 x 9 x 50176 / 8192 / 0.5 = 21168 cycles), so the SDP bounds it
    for fmt in ("int8:dla_hwc4", None):
        kw = {"input_formats": fmt} if fmt else {}
        img = next(s for s in dlasim.estimate(g, orin, device="dla", precision="int8", **kw).steps
                   if s.name == "c")
        assert img.bytes == pix * 4 + wt + out == 3413696
        assert img.compute_ms == pytest.approx(pix * 64 / 64 / hz * 1e3)              # 0.03136 ms


def test_orin_depthwise_processor_has_no_channel_padding():
    # a depthwise conv on Orin's depthwise processor runs at its own rate, no MAC atoms to pad (cost/dla.py)
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (1, 64, 56, 56)), 64, 3, groups=64, bias=False, name="dw")
    r = dlasim.explain(b.build([y]), "orin-agx", device="dla", precision="int8")
    dw = next(s for s in r.estimate.steps if s.name == "dw")
    assert dw.device == "dla"
    pad = sum(c["ms"] for c in r.causes if c["code"] == "channel_padding")
    assert pad == pytest.approx(0.0, abs=1e-9)
    assert all(abs(c["ms"]) <= r.total_ms for c in r.causes)


def test_layers_without_macs_report_none():
    # a launch, a standalone pooling layer and a GPU reshape move no MACs
    b = GraphBuilder("t")
    y = b.maxpool(b.input("x", (1, 64, 56, 56)), 2, name="pool")
    e = dlasim.estimate(b.build([y]), XAVIER, device="dla", precision="fp16")
    assert [(s.kind, s.macs) for s in e.steps if s.kind in ("overhead", "layer")] == [("overhead", 0), ("layer", 0)]
    b = GraphBuilder("t")
    y = b.reshape(b.relu(b.input("x", (1, 64, 8, 8)), name="r"), [1, 64, 64], name="flat")
    flat = _rows(b.build([y]), H200, device="gpu", input_formats="fp16:chw", output_formats="fp16:chw")["flat"]
    assert flat.macs == 0 and flat.bytes == 0 and flat.time_ms == 0


def test_gpu_gemv_moves_input_output_and_weights():
    # FC 4096 -> 1000 at batch 1, FP16: 1 row, fewer than a CTA tile's: a GEMV streaming its weights
    b = GraphBuilder("t")
    y = b.fc(b.input("x", (1, 4096)), 1000, bias=False, name="fc")
    fc = _rows(b.build([y]), H200, device="gpu", input_formats="fp16:chw", output_formats="fp16:chw")["fc"]
    assert fc.bytes == (4096 + 1000 + 4096 * 1000) * 2



def test_dla_conv_with_a_fused_residual_reads_the_residual():
    # Xavier INT8 3x3 conv 64 -> 64 on 16 x 16 + a skip tensor (SDP element-wise operand from memory,
    # dla.md s1.3): input, skip and output 256 pixels x 64 B (64 channels = two 32-byte atoms), weights
    # 64 x 64 x 9 B; everything fits the CBUF, so each is read or written once
    b = GraphBuilder("t")
    conv = b.conv(b.input("x", (1, 64, 16, 16)), 64, 3, bias=False, name="c")
    y = b.add(conv, b.input("skip", (1, 64, 16, 16)), name="sum")
    step = next(s for s in _rows(b.build([y]), "xavier-agx", precision="int8").values() if "c" in s.layers)
    assert step.layers == ["c", "sum"] and step.device == "dla"
    assert step.bytes == 3 * 256 * 64 + 64 * 64 * 9


def test_dla_image_input_reads_four_channels_per_pixel_at_the_element_size():
    # an image-input-mode conv (3 channels, dla.md s1.2 / s3.4 kDLA_HWC4) reads 4 channels per pixel of
    # bpe bytes each: FP16 224 x 224 x 4 x 2 B, INT8 224 x 224 x 4 x 1 B, plus weights and the output
    cs = ConvShape(1, 3, 224, 224, 64, 112, 112, 7, 7, stride=2)
    out16, out8 = 64 * 112 * 112 * 2, 64 * 112 * 112
    traffic, refetch, _ = conv_traffic(cs, XAVIER.dla, 2, out16, 0, False, True)
    assert refetch == 0 and traffic == 224 * 224 * 4 * 2 + 64 * 3 * 49 * 2 + out16
    traffic, refetch, _ = conv_traffic(cs, XAVIER.dla, 1, out8, 0, False, True)
    assert refetch == 0 and traffic == 224 * 224 * 4 + 64 * 3 * 49 + out8


def test_wider_output_bytes_stream_at_the_sm_limited_rate_on_a_jetson_gpu():
    # the same Q/DQ 1x1 conv + unquantized skip as above on the Xavier iGPU, whose SMs, not its DRAM, limit
    # streaming (sm_stream_scale < 1, cost/gpu.py): output and skip 32 x 56 x 56 = 100352 elements each, 4 - 1
    # bytes wider than INT8, over DRAM x the conv1x1 share x that scale
    from dlasim.cost.gpu import sm_stream_scale
    from dlasim.zoo.quantized import qconv
    xav = hardware("xavier-agx")
    assert sm_stream_scale(xav) < 1.0
    b = GraphBuilder("t")
    c = qconv(b, b.input("x", (1, 32, 56, 56)), 32, 1, 1, "c")
    y = b.add(c, b.input("skip", (1, 32, 56, 56)), name="add")
    e = dlasim.estimate(b.build([y]), xav, device="gpu", precision="int8")
    conv = next(s for s in e.steps if "add" in s.layers)
    want = 2 * 100352 * (4 - 1) / (xav.memory.dram_bandwidth_bytes_per_s * class_efficiency(xav.gpu, "conv1x1")
                                   * sm_stream_scale(xav))
    assert conv.parts.float_io_s == pytest.approx(want, rel=1e-9)
