"""Cost-model facts no other test pinned down (found by benchmarks/mutation.py): each number is worked out by hand
from the formula and the spec values it names."""
import math
import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.cost import finish
from dlasim.cost.dla import _fmap_bytes, conv_cycles
from dlasim.cost.geometry import ConvShape, conv_shape, sparse_weight_bytes
from dlasim.cost.gpu import class_efficiency, gemm_time, memory_time, padded_channels, transpose_is_view
from dlasim.hardware import hardware

H200 = hardware("h200")
IO = dict(input_formats="fp16:hwc8", output_formats="fp16:hwc8")


def _layers(g, plat, device="gpu", precision="fp16", **kw):
    e = dlasim.estimate(g, plat, device=device, precision=precision, **kw)
    return {s.name: s for s in e.steps if s.kind == "layer"}


def _shape_of(b, out):
    g = b.build([out])
    layer = next(l for l in g.layers if l.outputs[0] == out)
    return conv_shape(layer, g)


# ---- geometry: every layer kind as a convolution, on non-square shapes ----------------------------------

def test_conv_shape_keeps_height_and_width_apart():
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (2, 16, 20, 40)), 32, kernel=(1, 3))
    assert _shape_of(b, y) == ConvShape(2, 16, 20, 40, 32, 20, 40, 1, 3)


def test_deconv_shape_is_its_input_side_and_transposed():
    # 2x2 stride-2 deconvolution of 2 x 32 x 10 x 20 to 16 channels: out 20 x 40; MACs per input pixel
    b = GraphBuilder("t")
    y = b.deconv(b.input("x", (2, 32, 10, 20)), 16, kernel=2, stride=2)
    cs = _shape_of(b, y)
    assert cs == ConvShape(2, 32, 10, 20, 16, 20, 40, 2, 2, stride=2, transposed=True)
    assert cs.macs == 2 * 32 * 10 * 20 * 16 * 2 * 2


def test_conv_and_deconv_without_a_group_attribute_have_one_group():
    # ONNX's default group is 1 (an exported file may leave the attribute out); a 2 x 4 deconvolution kernel,
    # stride 2, pads 0: out H = (10 - 1) * 2 + 2 = 20, W = (20 - 1) * 2 + 4 = 42
    b = GraphBuilder("t")
    x = b.input("x", (1, 32, 10, 20))
    y = b.op("Conv", [x, b.const("w", (16, 32, 3, 3))], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})
    assert _shape_of(b, y) == ConvShape(1, 32, 10, 20, 16, 10, 20, 3, 3)
    b = GraphBuilder("t")
    x = b.input("x", (1, 32, 10, 20))
    y = b.op("ConvTranspose", [x, b.const("w", (32, 16, 2, 4))], {"kernel_shape": [2, 4], "strides": [2, 2]})
    assert _shape_of(b, y) == ConvShape(1, 32, 10, 20, 16, 20, 42, 2, 4, stride=2, transposed=True)


def test_fc_shape_is_batch_images_of_its_features():
    b = GraphBuilder("t")
    y = b.fc(b.input("x", (8, 512)), 100)
    assert _shape_of(b, y) == ConvShape(8, 512, 1, 1, 100, 1, 1)


def test_transposed_a_gemm_takes_its_rows_from_the_last_axis():
    b = GraphBuilder("t")
    w = b.const("w", (100, 512))
    y = b.op("Gemm", [b.input("x", (512, 8)), w], {"transA": 1, "transB": 1})
    assert _shape_of(b, y) == ConvShape(8, 512, 1, 1, 100, 1, 1)


def test_matmul_shapes_constant_weights_and_activations():
    # [1, 197, 768] x W[768, 3072]: a 1x1 conv over 197 pixels
    b = GraphBuilder("t")
    y = b.matmul(b.input("x", (1, 197, 768)), b.const("w", (768, 3072)))
    assert _shape_of(b, y) == ConvShape(1, 768, 1, 1, 3072, 197, 1)
    # attention [12, 197, 64] x [12, 64, 197]: 12 x 197 rows of 64 against 197 columns
    b = GraphBuilder("t")
    y = b.matmul(b.input("q", (12, 197, 64)), b.input("k", (12, 64, 197)))
    assert _shape_of(b, y) == ConvShape(12 * 197, 64, 1, 1, 197, 1, 1)


def test_sparse_weight_bytes_by_hand():
    assert sparse_weight_bytes(4096, 1) == 2048 + 512
    assert sparse_weight_bytes(4096, 2) == 4096 + 512
    assert sparse_weight_bytes(6, 1) == 3 + 1          # 3 kept values, 6 bits of index round up to a byte


# ---- finish and the DLA ----------------------------------------------------------------------------------

def test_finish_calls_a_tie_compute_bound():
    assert finish(1e-3, 1e-3, 0.0).bound == "compute"


def test_dla_feature_map_bytes_pad_channels_to_32_byte_atoms():
    assert _fmap_bytes((10,), 2) == 20                       # a vector: no channel axis to pad
    assert _fmap_bytes((2, 3, 5, 5), 1) == 2 * 25 * 32        # 3 INT8 channels fill one 32-B atom
    assert _fmap_bytes((1, 20, 4, 4), 2) == 16 * 64           # 20 FP16 channels = 40 B -> two atoms


def test_dla_image_mode_covers_four_channel_inputs():
    # dla.md s1.2: image-input mode for 1-4 channels; ideal / utilisation
    dla = hardware("xavier-agx").dla
    cs = ConvShape(1, 4, 64, 64, 32, 64, 64, 3, 3)
    cycles, ideal = conv_cycles(cs, dla, "fp16", image_input=True)
    assert cycles == pytest.approx(ideal / dla.image_mode_utilization)


def test_dla_concat_moves_nothing():
    b = GraphBuilder("t")
    x = b.input("x", (1, 32, 16, 16))
    y = b.concat([b.conv(x, 32, 3, name="a"), b.conv(x, 32, 3, name="b")], name="cat")
    steps = _layers(b.build([y]), "xavier-agx", device="dla", precision="int8")
    cat = next(s for s in steps.values() if "cat" in s.layers)
    assert cat.bytes == 0 and cat.macs == 0 and cat.compute_ms == 0 and cat.memory_ms == 0


# ---- GPU --------------------------------------------------------------------------------------------------

def test_padded_channels_by_precision():
    # gpu_tensorrt.md s5.3: image inputs of <= 4 channels pad to 4; FP16 to 8, INT8 to 32, FP32 none
    assert padded_channels(4, "fp16") == 4 and padded_channels(5, "fp16") == 8
    assert padded_channels(3, "int8") == 4 and padded_channels(5, "int8") == 32
    assert padded_channels(3, "fp32") == 3 and padded_channels(33, "int8") == 64


def test_memory_time_l2_share_is_zero_past_the_l2():
    gpu, l2 = H200.gpu, H200.memory.l2_bytes
    big = 2 * l2
    t, share = memory_time(big, 1000, 0.5, H200)
    assert share == 0.0
    assert t == pytest.approx((big + 1000) / (H200.memory.dram_bandwidth_bytes_per_s * 0.5))
    small = gpu.l2_usable_fraction * l2 / 2
    t, share = memory_time(small, 0, 0.5, H200)
    assert share == 1.0
    assert t == pytest.approx(small / (gpu.l2_bandwidth_bytes_per_s * 0.5 / gpu.memory_efficiency))


def test_gpu_depthwise_compute_on_cuda_cores_at_twice_the_fp32_rate():
    # 3x3 depthwise, 1 x 64 x 56 x 56 FP16: 64*56*56*9 MACs over SMs x CUDA FMA/clk x clock x 2 (FP16x2)
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (1, 64, 56, 56)), 64, 3, groups=64, name="dw")
    dw = _layers(b.build([y]), H200, **IO)["dw"]
    g = H200.gpu
    assert dw.compute_ms == pytest.approx(64 * 56 * 56 * 9 / (g.sm_count * g.cuda_core_fma_per_clk_per_sm
                                                             * g.clock_hz * 2) * 1e3)


def test_grouped_gpu_conv_runs_its_groups_one_after_another():
    # 2 groups of 64 -> 64 channels: twice the tiles x waves of one 64 -> 64 conv, plus one kernel ramp
    def compute_ms(c, groups):
        b = GraphBuilder("t")
        y = b.conv(b.input("x", (8, c, 28, 28)), c, 3, groups=groups, bias=False, name="c")
        return _layers(b.build([y]), H200, **IO)["c"].compute_ms
    ramp_ms = (H200.gpu.tensor_latency_s or 0.0) * 1e3
    assert compute_ms(128, 2) - ramp_ms == pytest.approx(2 * (compute_ms(64, 1) - ramp_ms))


def test_gpu_conv_memory_time_is_all_its_bytes_over_the_class_share():
    # 8 x 64 x 128 x 128 FP16 in and out (16.8 MB each, 33.5 MB together: past H200's usable L2) + weights
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (8, 64, 128, 128)), 64, 3, bias=False, name="c")
    c = _layers(b.build([y]), H200, **IO)["c"]
    nbytes = 2 * 8 * 64 * 128 * 128 * 2 + 64 * 64 * 9 * 2
    assert c.bytes == nbytes
    if 2 * 8 * 64 * 128 * 128 * 2 > H200.gpu.l2_usable_fraction * H200.memory.l2_bytes:
        bw = H200.memory.dram_bandwidth_bytes_per_s * class_efficiency(H200.gpu, "conv")
        assert c.memory_ms == pytest.approx(nbytes / bw * 1e3)


def test_simt_image_conv_memory_counts_input_output_and_weights():
    # FP32 first conv on a TF32 GPU runs as CUDA-core implicit GEMM (passes/place.py); its bytes:
    # input 8x3x512x512 + output 8x64x256x256 + weights 64x3x7x7, all FP32, past the A100's L2
    plat = hardware("a100")
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (8, 3, 512, 512)), 64, 7, stride=2, bias=False, name="c")
    c = _layers(b.build([y]), plat, precision="fp32")["c"]
    assert c.parts.simt
    nbytes = (8 * 3 * 512 * 512 + 8 * 64 * 256 * 256 + 64 * 3 * 49) * 4
    assert c.bytes == nbytes
    bw = plat.memory.dram_bandwidth_bytes_per_s * class_efficiency(plat.gpu, "conv")
    assert c.memory_ms == pytest.approx(nbytes / bw * 1e3)


def test_gpu_sparse_time_is_the_slower_of_sparse_tiles_and_compressed_bytes():
    # H200 FP16 3x3 conv 1024 -> 1024 on 32 x 16 x 16: GEMM M = 8192, N = 1024, K = 9216. Sparse tiles run
    # at 2x the rate with efficiency (the dense share of its class: conv_tensor_efficiency for a 3x3 conv) x
    # sparse_efficiency x K / (K + sparse_k_half)
    plat = H200
    gpu = plat.gpu
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (32, 1024, 16, 16)), 1024, 3, bias=False, name="c")
    c = _layers(b.build([y]), plat, sparsity="force", **IO)["c"]
    m, n, k = 8192, 1024, 9216
    s_eff = gpu.conv_tensor_efficiency * gpu.sparse_efficiency * k / (k + gpu.sparse_k_half)
    sp = gemm_time(m, n, k, gpu, "fp16", gpu.sparse_cta_tiles or gpu.cta_tiles("fp16"), 2.0, s_eff)[0]
    sp += gpu.tensor_latency_s or 0.0
    act = 2 * 32 * 1024 * 256 * 2
    mem = memory_time(act, sparse_weight_bytes(1024 * 1024 * 9, 2), class_efficiency(gpu, "conv"), plat)[0]
    assert c.parts.sparse_s == pytest.approx(max(sp, mem))
    assert gpu.sparse_k_half > 0          # else the K / (K + half) factor above tests nothing


def _concat_flatten(kernels):
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 16, 16))
    y = b.concat([b.conv(x, 64, kernels[0], name="a"), b.conv(x, 64, kernels[1], name="b")], name="cat")
    steps = _layers(b.build([b.flatten(y, name="flat")]), H200, input_formats="fp16:hwc8", output_formats="fp16:chw")
    return {s.layers[0]: s for s in steps.values() if s.layers in (["cat"], ["flat"])}


def test_gpu_in_place_layers_cost_nothing():
    # a 3x3 and a 1x1 branch stay two kernels writing into the concatenated buffer; Flatten is a view
    steps = _concat_flatten((3, 1))
    assert len(steps) == 2
    for s in steps.values():
        assert s.time_ms == 0 and s.bytes == 0 and s.compute_ms == 0 and s.parts.in_place is True


def test_concat_of_a_horizontally_fused_conv_copies_its_inputs():
    # two 3x3 siblings fuse into one conv (passes/fuse.py); the Concat copies both 64 x 16 x 16 FP16 halves
    # out of the fused buffer, one copy kernel per tensor ("<tensor> copy" rows): each reads + writes
    # 2 x 2 B x 16384 elements at the reformat bandwidth, with its own floor and launch
    cat = _concat_flatten((3, 3))["cat"]
    assert cat.parts.concat_copy is True and cat.parts.copy_kernels == 2
    each = 2 * 2 * 64 * 16 * 16
    assert cat.bytes == 2 * each and cat.macs == 0
    cp = H200.copies
    one = max(each / (H200.memory.dram_bandwidth_bytes_per_s * cp.reformat_efficiency), cp.reformat_floor_s)
    assert cat.time_ms == pytest.approx(2 * (one + H200.gpu.launch_overhead_s) * 1e3)
    # by hand: 65536 B / (4.8e12 B/s x 0.1535) = 0.089 us, under the 3.92 us floor: 2 x (3.92 + 0.84) us
    assert cat.time_ms == pytest.approx(2 * (3.92e-6 + 0.84e-6) * 1e3, rel=1e-3)


def test_densenet_concat_copies_one_kernel_per_shared_input():
    # DenseNet layer 3 of block 1 concatenates the block input (64 ch) and two 32-channel feature maps at
    # 56 x 56; the first two were written in place into layer 2's concat, so layer 3 copies both: two kernels
    from dlasim.cost.gpu import concat_copies
    g = dlasim.load("zoo:densenet121")
    e = dlasim.estimate(g, "xavier-agx", device="gpu", precision="fp16")
    cat = next(s for s in e.steps if s.name == "features.denseblock1.denselayer3.cat")
    sizes = [2 * 2 * 64 * 56 * 56, 2 * 2 * 32 * 56 * 56]
    assert cat.bytes == sum(sizes)
    plat = dlasim.hardware("xavier-agx")
    stream, floored, launches = concat_copies(sizes, plat)
    assert launches == pytest.approx(2 * plat.gpu.launch_overhead_s)
    assert cat.time_ms == pytest.approx((floored + launches) * 1e3)
    # one kernel for both (the model before) would pay one floor and one launch: the split costs more
    assert floored + launches > max(stream, plat.copies.reformat_floor_s) + plat.gpu.launch_overhead_s


def test_transpose_is_a_view_only_when_size_1_axes_move():
    assert transpose_is_view((197, 1, 768), [1, 0, 2])
    assert not transpose_is_view((1, 2, 3), [0, 2, 1])       # 2 and 3 swap places: a copy
    assert not transpose_is_view((2, 3), None)                # no perm: reverse the axes
    assert transpose_is_view((1, 5), None)
    assert not transpose_is_view((), [0])


def test_int8_conv_pool_pool_half_reads_nothing_from_dram():
    # ConvActPool (gpu_tensorrt.md s5.2): the pool reads the conv output on chip and writes its own output
    b = GraphBuilder("t")
    y = b.maxpool(b.relu(b.conv(b.input("x", (1, 64, 56, 56)), 64, 3, name="c")), 2, name="pool")
    steps = _layers(b.build([y]), "a100", precision="int8", input_formats="int8:chw32", output_formats="int8:chw32")
    pool = next(s for s in steps.values() if "pool" in s.layers)
    conv = next(s for s in steps.values() if "c" in s.layers)
    assert pool.parts.fused_with == conv.name
    assert pool.bytes == 64 * 28 * 28 * 1 and pool.overhead_ms == 0


def test_gpu_reformat_pays_read_plus_write_and_no_hand_over():
    # fp32:linear -> fp16:hwc8 of 8 x 64 x 64 x 64 on the GPU alone: 8 MiB read + 4 MiB written, both streams
    # over the reformat share of DRAM (cost/copies.py, gpu_tensorrt.md s3.3); no GPU<->DLA synchronisation
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (8, 64, 64, 64)), 64, 3, name="c")
    e = dlasim.estimate(b.build([y]), H200, device="gpu", precision="fp16", output_formats="fp16:hwc8")
    rf = next(s for s in e.steps if s.kind == "reformat")
    nbytes = 8 * 64 * 64 * 64 * (4 + 2)
    assert rf.bytes == nbytes and rf.overhead_ms == 0
    cp = H200.copies
    assert rf.time_ms == pytest.approx(max(nbytes / (H200.memory.dram_bandwidth_bytes_per_s * cp.reformat_efficiency),
                                           cp.reformat_floor_s) * 1e3)


def test_int8_depsep_pair_keeps_the_depthwise_output_on_chip():
    # DepSepConvolution (gpu_tensorrt.md s5.2, CC >= 7.2): the depthwise half reads its input and weights and
    # writes nothing; the pointwise half reads only its weights, writes its output, and pays no launch or floor
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (1, 64, 56, 56)), 64, 3, groups=64, bias=False, name="dw")
    y = b.conv(y, 128, 1, bias=False, name="pw")
    steps = _layers(b.build([y]), "a100", precision="int8", input_formats="int8:chw32", output_formats="int8:chw32")
    dw = next(s for s in steps.values() if "dw" in s.layers)
    pw = next(s for s in steps.values() if "pw" in s.layers)
    assert pw.parts.fused_with == dw.name
    assert dw.bytes == 64 * 56 * 56 + 64 * 9
    assert pw.bytes == 128 * 56 * 56 + 128 * 64
    assert pw.overhead_ms == 0 and pw.parts.floor_s == 0.0


def test_matmul_rows_set_gemm_or_gemv():
    # rows M = N x P x Q; H200's smallest FP16 CTA tile has 64 rows
    gpu = H200.gpu
    from dlasim.cost.gpu import kernel_class
    assert kernel_class("MatMul", ConvShape(1, 768, 1, 1, 3072, 197, 1), "fp16", gpu) == "gemm"
    assert kernel_class("MatMul", ConvShape(2, 768, 1, 1, 3072, 16, 2), "fp16", gpu) == "gemm"    # 64 rows
    assert kernel_class("MatMul", ConvShape(1, 768, 1, 1, 3072, 8, 1), "fp16", gpu) == "gemv"


def test_fp32_gets_no_sparse_kernels():
    # gpu_tensorrt.md s2.1: 2:4 sparse math in FP16 / INT8 only
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (8, 256, 32, 32)), 256, 3, bias=False, name="c")
    c = _layers(b.build([y]), H200, precision="fp32", sparsity="force")["c"]
    assert c.parts.sparse == "ineligible" and "FP16 or INT8" in c.parts.sparse_reason


def test_gpu_transpose_is_free_only_as_a_view():
    b = GraphBuilder("t")
    x = b.input("x", (197, 1, 768))
    y = b.op("Transpose", [x], {"perm": [1, 0, 2]}, name="view")
    y = b.op("Transpose", [b.relu(y, name="r")], {"perm": [0, 2, 1]}, name="copy")
    steps = _layers(b.build([y]), H200, input_formats="fp16:chw", output_formats="fp16:chw")
    view = next(s for s in steps.values() if s.layers == ["view"])
    copy = next(s for s in steps.values() if "copy" in s.layers and "r" not in s.layers)
    assert view.bytes == 0 and view.time_ms == 0 and view.parts.in_place is True
    assert copy.bytes == 2 * 2 * 197 * 768 and copy.macs == 0            # FP16 read + write


def test_simt_image_conv_computes_at_the_cuda_core_rate():
    # CUDA-core implicit GEMM: MACs over SMs x CUDA FMA/clk x clock x tensor_efficiency (cost/gpu.py)
    plat = hardware("a100")
    g = plat.gpu
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (8, 3, 512, 512)), 64, 7, stride=2, bias=False, name="c")
    c = _layers(b.build([y]), plat, precision="fp32")["c"]
    macs = 8 * 64 * 256 * 256 * 3 * 49
    assert c.compute_ms == pytest.approx(macs / (g.sm_count * g.cuda_core_fma_per_clk_per_sm * g.clock_hz
                                                 * g.tensor_efficiency) * 1e3)


def test_unknown_op_is_priced_as_two_passes_over_its_data():
    # 1 x 64 x 32 x 32 FP16 in and (shape assumed) out: 2 x (131072 + 131072) B, flagged unmodelled
    b = GraphBuilder("t")
    y = b.op("NoSuchOp", [b.input("x", (1, 64, 32, 32))], {}, name="odd")
    s = next(s for s in _layers(b.build([y]), H200, **IO).values() if "odd" in s.layers)
    assert s.parts.unmodelled is True and s.bytes == 2 * 2 * 64 * 32 * 32 * 2


def test_tile_rate_share_by_hand():
    # tm x tn tile: each K step loads (tm + tn) x tk elements for tm x tn x tk FMAs (cost/gpu.py tile_rate_share)
    from dlasim.cost.gpu import tile_rate_share
    assert tile_rate_share(256, 64, 6e13, 1e12) == pytest.approx(1e12 * 256 * 64 / 320 / 6e13)   # 0.853
    assert tile_rate_share(64, 32, 6e13, 1e12) == pytest.approx(0.3556, rel=1e-3)
    assert tile_rate_share(256, 128, 6e13, 1e12) == 1.0            # 85.3 x 1e12 > 6e13: the SM rate binds
    assert tile_rate_share(64, 32, 6e13, 0.0) == 1.0                 # no operand limit in the spec


def test_xavier_narrow_tile_runs_below_the_wide_tile_rate():
    # Xavier FP16: feed = operand_bytes_per_clk_per_sm / 2 B elements per SM clock. A 64-output-channel 3x3 conv
    # either wastes half of a 256 x 128 tile or runs the 128 x 64 tile below the SM rate; by hand (feed 5.425,
    # peak 512 x 0.9048 = 463.3 FMA/clk): 128 x 64 -> 5.425 x 42.67 / 463.3 = 0.50, the same time as the
    # half-empty 256 x 128 tile (tile_eff 0.47 = 3136 x 64 / (13 x 256 x 128)), so the narrow conv runs at about
    # half the per-MAC rate of a 256-channel one
    plat = hardware("xavier-agx")
    gpu = plat.gpu
    feed = gpu.operand_bytes_per_clk_per_sm / 2
    peak = gpu.fma_per_clk_per_sm("fp16") * gpu.tensor_efficiency
    from dlasim.cost.gpu import tile_rate_share
    assert tile_rate_share(128, 64, peak, feed) == pytest.approx(feed * 128 * 64 / 192 / peak)
    assert 0.45 < tile_rate_share(128, 64, peak, feed) < 0.55
    steps = {}
    for k in (64, 256):
        b = GraphBuilder("t")
        y = b.conv(b.input("x", (1, 256, 56, 56)), k, 3, bias=False, name="c")
        steps[k] = _layers(b.build([y]), plat, **IO)["c"].parts
    rate = {k: p.tiling.tile_eff * p.tiling.rate_eff for k, p in steps.items()}
    assert rate[64] == pytest.approx(0.5 * rate[256], rel=0.1)


def test_h200_3x3_conv_tiles_run_at_the_conv_class_share():
    # H200 FP16, 32 x 256 x 14 x 14, 3x3 256 -> 256: M = 6272, N = 256, K = 2304; the conv class uses
    # conv_tensor_efficiency (fitted on the grid's 3x3 convs), a 1x1 conv and GEMMs keep tensor_efficiency
    from dlasim.cost.gpu import class_tensor_efficiency
    gpu = H200.gpu
    assert gpu.conv_tensor_efficiency is not None and gpu.conv_tensor_efficiency < gpu.tensor_efficiency
    assert class_tensor_efficiency(gpu, "conv") == gpu.conv_tensor_efficiency
    assert class_tensor_efficiency(gpu, "conv1x1") == class_tensor_efficiency(gpu, "gemm") == gpu.tensor_efficiency
    assert class_tensor_efficiency(hardware("a100").gpu, "conv") == hardware("a100").gpu.tensor_efficiency
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (32, 256, 14, 14)), 256, 3, bias=False, name="c")
    c = _layers(b.build([y]), H200, **IO)["c"]
    # by hand: the best tile over the fp16 list at 2048 x 1.98e9 x eff FMA/s per SM, 132 SMs
    rate = 2048 * 1.98e9 * gpu.conv_tensor_efficiency
    best = min(math.ceil(math.ceil(6272 / tm) * math.ceil(256 / tn) / 132) * tm * tn * math.ceil(2304 / tk) * tk / rate
               for tm, tn, tk in gpu.cta_tiles("fp16"))
    assert c.compute_ms == pytest.approx((best + gpu.tensor_latency_s) * 1e3)
    assert c.parts.tiling.rate_eff == pytest.approx(gpu.conv_tensor_efficiency)
