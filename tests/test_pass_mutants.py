"""Build-pass decisions no other test pinned down (found alive by `benchmarks/mutation.py --package passes`):
each limit is taken at its boundary, each CBUF bank count worked out by hand from dla.md s3.3, each fusion
and partition rule checked on both sides."""
import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.errors import BuildError
from dlasim.build_options import BuildOptions
from dlasim.passes import build_plan
from dlasim.passes.dla_support import cbuf_banks_needed

XAVIER = dlasim.hardware("xavier-agx")
H200 = dlasim.hardware("h200")


def plan(g, hw=XAVIER, **kw):
    kw.setdefault("device", "dla")
    kw.setdefault("precision", "fp16")
    return build_plan(g, hw, BuildOptions.of(**kw))


def fallback_reasons(g, hw=XAVIER, **kw) -> dict[str, str]:
    return {f.name: f.reason for f in plan(g, hw, **kw).fallback}


def one_layer(shape, make):
    b = GraphBuilder("t")
    y = make(b, b.input("x", shape))
    return b.build([y])


# ---- DLA support: limits at their boundary, reasons naming the offending value ------------------------------

def test_conv_kernel_at_the_limit_runs_on_the_dla():
    # Xavier conv_kernel_max = 32 (dla.md s3.1): a 32x32 kernel is accepted, 33x33 is not. CBUF for the 32x32
    # kernel, C = 8 FP16, W = 64: ceil(16384/32768) = 1 weight bank; ceil(ceil(16/32)*64/4) = 16 entries per
    # slice x 32 rows / 256 = 2 data banks: fits
    assert cbuf_banks_needed(8, 32, 32, 64, 1, 2, XAVIER.dla) == (1, 2)
    assert fallback_reasons(one_layer((1, 8, 64, 64), lambda b, x: b.conv(x, 8, 32, pad=0, name="c"))) == {}
    assert fallback_reasons(one_layer((1, 8, 64, 64), lambda b, x: b.conv(x, 8, 33, pad=0, name="c"))) == \
        {"c": "kernel 33 > 32"}


def test_padding_reason_names_the_largest_pad():
    g = one_layer((1, 8, 64, 64), lambda b, x: b.conv(x, 8, 3, pad=(1, 1, 32, 1), name="c"))
    assert fallback_reasons(g) == {"c": "padding 32 > 31"}


def test_tensor_dimension_reason_names_the_large_dimension():
    g = one_layer((1, 16, 9000, 4), lambda b, x: b.relu(x, name="r"))
    assert fallback_reasons(g) == {"r": "tensor dimension 9000 > 8192"}


def test_cbuf_data_banks_grow_with_the_dilated_kernel_height():
    # C = 512 FP16, 3x3, W = 160: 1280 entries per slice (test_passes.py); dilation 2 spans 5 rows:
    # ceil(1280 * 5 / 256) = 25 data banks (dilation 1: 15)
    assert cbuf_banks_needed(512, 3, 3, 160, 2, 2, XAVIER.dla) == (1, 25)


def test_cbuf_check_reads_the_kernel_height_not_its_width():
    # C = 512 FP16, W = 160: 1280 entries per slice; weights 512*7*2 = 7168 B -> 1 bank either way.
    # A 1x7 kernel spans 1 row: 5 data banks, fits; a 7x1 kernel spans 7 rows: ceil(1280*7/256) = 35 banks
    shape = (1, 512, 16, 160)
    wide = one_layer(shape, lambda b, x: b.conv(x, 16, (1, 7), pad=(0, 3), bias=False, name="c"))
    tall = one_layer(shape, lambda b, x: b.conv(x, 16, (7, 1), pad=(3, 0), bias=False, name="c"))
    assert fallback_reasons(wide) == {}
    assert fallback_reasons(tall) == {"c": "CBUF check failed: 1 weight banks + 35 data banks > 16 "
                                           "(reduce the input width or weights)"}


def test_cbuf_check_counts_two_bytes_per_fp16_element():
    # C = 512, 3x3, W = 160 in FP16 needs 1 + 15 = 16 banks: exactly the CBUF, so it runs on the DLA
    # (at 4 bytes per element it would need 1 + 30)
    assert cbuf_banks_needed(512, 3, 3, 160, 1, 2, XAVIER.dla) == (1, 15)
    g = one_layer((1, 512, 16, 160), lambda b, x: b.conv(x, 16, 3, bias=False, name="c"))
    assert fallback_reasons(g) == {}


def test_resize_needs_an_integer_scale_within_the_limit():
    b = GraphBuilder("t")
    y = b.op("Resize", [b.input("x", (1, 8, 16, 16))], {"scales": [1.0, 1.0, 1.5, 2.0], "mode": "nearest"},
             name="up")
    assert fallback_reasons(b.build([y])) == {"up": "non-integer resize scale 1.5x2"}
    # nearest up to 32x on Xavier, linear up to 4x (resize_*_scale_max)
    near = one_layer((1, 8, 4, 4), lambda b, x: b.resize(x, 32, "nearest", name="up"))
    assert fallback_reasons(near) == {}
    lin = one_layer((1, 8, 4, 4), lambda b, x: b.resize(x, 8, "linear", name="up"))
    assert fallback_reasons(lin) == {"up": "resize scale 8 > 4"}


def test_clip_runs_on_the_dla_only_as_a_relu_clipped_at_most_at_127():
    def clip(hi):
        return one_layer((1, 8, 8, 8), lambda b, x: b.op("Clip", [x], {"min": 0.0, "max": hi}, name="clip"))
    assert fallback_reasons(clip(127.0)) == {}
    assert fallback_reasons(clip(128.0)) == {
        "clip": "Clip is supported on DLA only as a clipped ReLU with max in [1,127]"}


def test_a_dla_only_platform_cannot_fall_back():
    # nvdla-small has no GPU: an unsupported layer fails the build even with fallback on (the default)
    g = one_layer((1, 8, 8, 8), lambda b, x: b.softmax(b.conv(x, 8, 1, name="c"), name="soft"))
    with pytest.raises(BuildError, match="'soft'"):
        build_plan(g, dlasim.hardware("nvdla-small"), BuildOptions.of(device="dla", precision="int8"))


# ---- fusion -------------------------------------------------------------------------------------------------

def test_matrix_transpose_folds_into_the_matmul_and_says_into_which():
    # a 2-D operand transposed (perm [1, 0]) is read transposed by the GEMM: no Transpose step
    b = GraphBuilder("t")
    bt = b.op("Transpose", [b.input("b", (64, 128))], {"perm": [1, 0]}, name="t")
    y = b.matmul(b.input("a", (64, 128)), bt, name="mm")
    p = plan(b.build([y]), H200, device="gpu")
    assert [s.layers for s in p.steps if s.kind == "layer"] == [["mm", "t"]]
    assert any(d.layer == "t" and d.action == "fused into mm" for d in p.decisions)


def test_attention_key_transpose_folds_but_a_head_permute_does_not():
    # K^T of (1, 4, 16, 32): perm [0, 1, 3, 2] swaps only the last two axes -> the MatMul's operand mode;
    # perm [1, 0, 3, 2] also moves the batch/head axes: a real copy that stays a step
    def steps(perm):
        b = GraphBuilder("t")
        kt = b.op("Transpose", [b.input("k", (1, 4, 16, 32))], {"perm": perm}, name="t")
        y = b.matmul(b.input("q", (4, 1, 16, 32) if perm[0] == 1 else (1, 4, 16, 32)), kt, name="mm")
        return [s.layers for s in plan(b.build([y]), H200, device="gpu").steps if s.kind == "layer"]
    assert steps([0, 1, 3, 2]) == [["mm", "t"]]
    assert steps([1, 0, 3, 2]) == [["t"], ["mm"]]


def test_horizontal_fusion_decision_names_the_first_conv():
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 16, 16))
    y = b.concat([b.conv(x, 32, 1, name="a"), b.conv(x, 32, 1, name="b"), b.conv(x, 32, 1, name="c")], name="cat")
    p = plan(b.build([y]), H200, device="gpu")
    fused = {d.layer: d.action for d in p.decisions if d.pass_name == "fuse"}
    assert fused["b"] == fused["c"] == "fused into a"


def test_depsep_pairs_a_depthwise_conv_only_with_a_1x1_reader():
    # TensorRT's DepSepConvolution (gpu_tensorrt.md s5.2): INT8 depthwise + pointwise 1x1, CC >= 7.2
    def pairs(kernel):
        b = GraphBuilder("t")
        y = b.conv(b.input("x", (1, 64, 56, 56)), 64, 3, groups=64, bias=False, name="dw")
        y = b.conv(y, 128, kernel, bias=False, name="pw")
        p = plan(b.build([y]), dlasim.hardware("a100"), device="gpu", precision="int8")
        return [(d.layer, d.action) for d in p.decisions if d.action.startswith("one kernel with")]
    assert pairs(1) == [("pw", "one kernel with dw")]
    assert pairs(3) == []
    # an ONNX Conv without a `group` attribute has one group (ONNX default): still the pointwise half
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (1, 64, 56, 56)), 64, 3, groups=64, bias=False, name="dw")
    y = b.op("Conv", [y, b.const("pw.weight", (128, 64, 1, 1))], {"kernel_shape": [1, 1]}, name="pw")
    p = plan(b.build([y]), dlasim.hardware("a100"), device="gpu", precision="int8")
    assert [(d.layer, d.action) for d in p.decisions if d.action.startswith("one kernel")] == \
        [("pw", "one kernel with dw")]


def _gpu_conv_region(extra_inputs: int):
    """conv -> t = Add(conv, s1[, s2 via Add]) -> Mul(t, conv): a closed pointwise region with 1 or 2 operands
    from outside it."""
    b = GraphBuilder("t")
    c = b.conv(b.input("x", (1, 32, 16, 16)), 32, 3, name="c")
    t = b.add(c, b.input("s1", (1, 32, 16, 16)), name="add1")
    if extra_inputs == 2:
        t = b.add(t, b.input("s2", (1, 32, 16, 16)), name="add2")
    y = b.mul(t, c, name="mul")
    return plan(b.build([y]), H200, device="gpu")


def test_a_closed_pointwise_region_fuses_with_one_operand_from_outside_not_two():
    one = [s.layers for s in _gpu_conv_region(1).steps if s.kind == "layer"]
    assert one == [["c", "add1", "mul"]]
    two = [s.layers for s in _gpu_conv_region(2).steps if s.kind == "layer"]
    assert ["c"] in two and len(two) > 1


# ---- partition ----------------------------------------------------------------------------------------------

def test_a_dla_layer_fed_by_a_region_directly_and_through_the_gpu_starts_a_new_region():
    # conv (DLA, region 0) -> mish (GPU) ; add(conv, mish) on the DLA: joining region 0 would make
    # region 0 -> GPU -> region 0 a cycle, so the add opens region 1
    b = GraphBuilder("t")
    c = b.conv(b.input("x", (1, 16, 16, 16)), 16, 3, name="c")
    y = b.add(c, b.mish(c, name="m"), name="sum")
    p = plan(b.build([y]))
    sub = {s.name: s.subgraph for s in p.steps if s.kind == "layer"}
    assert p.dla_subgraphs == 2 and sub["c"] == 0 and sub["sum"] == 1 and sub["m"] == -1


# ---- placement and formats ------------------------------------------------------------------------------------

def test_fp32_four_channel_image_conv_writes_linear_five_channels_do_not():
    # on a TF32 GPU an FP32 conv of <= 4 input channels is a CUDA-core kernel in the linear format
    # (passes/place.py), so the TF32 conv after it needs a copy to channel-major; a 5-channel conv is a TF32
    # kernel itself, writing channel-major: no copy
    def reformats(c):
        g = one_layer((1, c, 64, 64), lambda b, x: b.conv(b.conv(x, 16, 3, name="c"), 16, 3, name="d"))
        p = plan(g, dlasim.hardware("a100"), device="gpu", precision="fp32")
        return [s.name for s in p.steps if s.kind == "reformat"]
    assert reformats(4) == ["c reformat (fp32:linear -> fp32:hwc)"]
    assert reformats(5) == []


def test_the_last_output_format_given_applies_to_the_remaining_outputs():
    # trtexec: --outputIOFormats lists one format per output; the last one repeats for the rest
    b = GraphBuilder("t")
    x = b.input("x", (1, 16, 8, 8))
    g = b.build([b.conv(x, 16, 1, name="a"), b.conv(x, 16, 1, name="b")])
    p = plan(g, H200, device="gpu", input_formats="fp16:hwc8", output_formats="fp16:hwc8")
    assert [s.name for s in p.steps if s.kind == "reformat"] == []
    p = plan(g, H200, device="gpu", input_formats="fp16:hwc8", output_formats="fp16:hwc8,fp32:linear")
    assert [s.name for s in p.steps if s.kind == "reformat"] == ["b reformat (fp16:hwc8 -> fp32:linear)"]


# ---- more (survivors of the seed-5 sample) ------------------------------------------------------------------

def test_cbuf_weight_banks_round_the_kernel_up_to_128_bytes():
    # dla.md s3.3: ceil(ceil(16385 * 2 / 128) * 128 / 32768) = ceil(32896 / 32768) = 2 weight banks (a kernel of
    # 32770 B, just over one bank); 2048 channels 3x3 FP16: 36864 B -> 2 banks
    assert cbuf_banks_needed(16385, 1, 1, 8, 1, 2, XAVIER.dla)[0] == 2
    assert cbuf_banks_needed(2048, 3, 3, 8, 1, 2, XAVIER.dla)[0] == 2
    assert cbuf_banks_needed(16384, 1, 1, 8, 1, 2, XAVIER.dla)[0] == 1          # exactly one bank


def test_tensor_dimension_at_the_limit_runs_on_the_dla():
    assert fallback_reasons(one_layer((1, 16, 8192, 2), lambda b, x: b.relu(x, name="r"))) == {}


def _with_support(**limits):
    dla = XAVIER.dla
    return XAVIER.model_copy(update={"dla": dla.model_copy(update={"support": dla.support.model_copy(update=limits)})})


def test_conv_groups_and_matmul_width_limits_from_the_spec():
    # on the shipped specs the tensor-dimension limit (8192) comes first; smaller limits make these visible
    plat = _with_support(conv_groups_max=4, conv_out_channels_max=64)
    g = one_layer((1, 16, 8, 8), lambda b, x: b.conv(x, 16, 3, groups=8, name="c"))
    assert fallback_reasons(g, plat) == {"c": "groups 8 > 4"}
    g = one_layer((1, 16, 8, 8), lambda b, x: b.conv(x, 16, 3, groups=4, name="c"))
    assert fallback_reasons(g, plat) == {}
    b = GraphBuilder("t")
    y = b.matmul(b.input("x", (1, 32)), b.const("w", (32, 128)), name="mm")
    assert fallback_reasons(b.build([y]), plat) == {"mm": "output channels 128 > 64"}


def test_undilated_deconvolution_runs_on_the_dla():
    g = one_layer((1, 16, 8, 8), lambda b, x: b.deconv(x, 16, kernel=2, stride=2, name="up"))
    assert fallback_reasons(g) == {}


def test_a_1_channel_conv_is_not_a_depthwise_half():
    b = GraphBuilder("t")
    y = b.conv(b.input("x", (1, 1, 56, 56)), 1, 3, bias=False, name="c1")
    y = b.conv(y, 32, 1, bias=False, name="pw")
    p = plan(b.build([y]), dlasim.hardware("a100"), device="gpu", precision="int8")
    assert [d for d in p.decisions if d.action.startswith("one kernel")] == []


def test_a_tensor_read_by_a_layer_that_cannot_fuse_keeps_its_pointwise_reader_apart():
    # the conv output is read by a ReLU and a MaxPool: it must reach memory, so the ReLU does not fuse into it
    b = GraphBuilder("t")
    c = b.conv(b.input("x", (1, 16, 16, 16)), 16, 3, name="c")
    g = b.build([b.relu(c, name="r"), b.maxpool(c, 2, name="pool")])
    layers = [s.layers for s in plan(g, H200, device="gpu").steps if s.kind == "layer"]
    assert ["c"] in layers and ["r"] in layers


def test_reformat_decisions_say_why():
    # INT8 GPU build: Softmax has no INT8 kernel (FP16), so its input is copied INT8 -> FP16; the network
    # output is copied from the FP16 softmax to the default FP32 linear
    b = GraphBuilder("t")
    y = b.softmax(b.conv(b.input("x", (1, 64, 16, 16)), 64, 3, name="c"), name="soft")
    p = plan(b.build([y]), H200, device="gpu", precision="int8", input_formats="int8:chw32")
    why = {d.layer: d.reason for d in p.decisions if d.pass_name == "reformat"}
    assert why["c"] == "precision change int8 -> fp16"
    assert why["soft"].startswith("network output GPU fp16:") and why["soft"].endswith("-> fp32:linear")
    b = GraphBuilder("t")
    y = b.op("LRN", [b.conv(b.input("x", (1, 64, 16, 16)), 64, 3, name="c")], {"size": 5}, name="norm")
    p = plan(b.build([y]), H200, device="gpu", input_formats="fp16:hwc8")
    assert {d.layer: d.reason for d in p.decisions if d.pass_name == "reformat"}["c"] == \
        "LRN reads linear, Conv wrote hwc8"


def test_copy_bytes_pad_the_channels_of_a_2d_tensor_to_the_format():
    from dlasim.passes.reformat import copy_bytes
    assert copy_bytes((4, 1001), ("fp16", "hwc8"), ("fp32", "linear")) == (4 * 1008 * 2, 4 * 1001 * 4)
    assert copy_bytes((10,), ("fp16", "hwc8"), ("int8", "chw32")) == (20, 10)      # 1-D: no channel axis


def test_the_last_input_format_given_applies_to_the_remaining_inputs():
    b = GraphBuilder("t")
    y = b.add(b.conv(b.input("x", (1, 16, 8, 8)), 16, 1, name="a"), b.conv(b.input("z", (1, 16, 8, 8)), 16, 1,
                                                                           name="b"), name="sum")
    p = plan(b.build([y]), H200, device="gpu", input_formats="fp16:hwc8", output_formats="fp16:hwc8")
    assert [s.name for s in p.steps if s.kind == "reformat"] == []
