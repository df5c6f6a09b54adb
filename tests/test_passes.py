"""Each build pass on small graphs: fold, DLA support reasons, placement, fusion, partition, reformats."""
from pathlib import Path

import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.errors import BuildError, DlasimError
from dlasim.passes import build_plan
from dlasim.passes.dla_support import cbuf_banks_needed
from dlasim.plan import Fallback, FallbackKind, KernelPair

ROOT = Path(__file__).resolve().parents[1]
XAVIER = dlasim.hardware("xavier-agx")
ORIN = dlasim.hardware("orin-agx")


def plan(g, hw=XAVIER, **kw):
    kw.setdefault("device", "dla")
    kw.setdefault("precision", "fp16")
    return build_plan(g, hw, dlasim.BuildOptions(**kw))


def conv_bn_relu(b, x, k, **kw):
    return b.relu(b.bn(b.conv(x, k, **kw)))


def test_fold_removes_dropout_and_identity_reshape():
    b = GraphBuilder("t")
    x = b.input("x", (1, 16, 8, 8))
    y = b.op("Dropout", [b.conv(x, 16, 3)], name="drop")
    y = b.reshape(y, [1, 16, 8, 8], name="noop_reshape")
    p = plan(b.build([b.relu(y)]))
    folded = {d.layer for d in p.decisions if d.pass_name == "fold"}
    assert folded == {"drop", "noop_reshape"}
    assert all("drop" not in s.layers for s in p.steps)


def test_conv_bn_relu_fuses_into_one_step_on_both_engines():
    b = GraphBuilder("t")
    x = b.input("x", (1, 16, 8, 8))
    g = b.build([conv_bn_relu(b, x, 32, kernel=3)])
    for device in ("dla", "gpu"):
        layers = [s for s in plan(g, device=device).steps if s.kind == "layer"]
        assert len(layers) == 1
        assert layers[0].name == "conv + bn + relu"
        assert layers[0].layers == ["conv", "bn", "relu"]


def test_residual_add_relu_fuses_into_the_conv():
    b = GraphBuilder("t")
    x = b.input("x", (1, 32, 8, 8))
    y = b.bn(b.conv(conv_bn_relu(b, x, 32, kernel=3, name="c1"), 32, 3, name="c2"), name="bn2")
    out = b.relu(b.add(y, x, name="add"), name="out")
    steps = [s for s in plan(b.build([out]), device="gpu").steps if s.kind == "layer"]
    assert [s.name for s in steps] == ["c1 + bn + relu", "c2 + bn2 + add + out"]


def test_silu_sigmoid_mul_fuses_into_the_conv():
    b = GraphBuilder("t")
    x = b.input("x", (1, 16, 8, 8))
    g = b.build([b.silu(b.conv(x, 16, 3, name="c"), name="act")])
    steps = [s for s in plan(g, device="gpu").steps if s.kind == "layer"]
    assert len(steps) == 1 and set(steps[0].layers) == {"c", "act.sigmoid", "act.mul"}


def sibling_1x1_convs():
    """A builder with two 1x1 conv + ReLU branches a (32 ch) and c (48 ch) on one 64x28x28 input x."""
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 28, 28))
    return b, x, b.relu(b.conv(x, 32, 1, name="a"), name="ra"), b.relu(b.conv(x, 48, 1, name="c"), name="rc")


def test_gpu_sibling_convs_fuse_horizontally_into_one_wider_conv():
    # an inception block's 1x1 convs read one tensor with equal parameters: TensorRT runs them as one
    # conv named "a + relu_a || b + relu_b" (Xavier GoogLeNet profile); the 3x3 and the DLA do not merge
    b, x, a, c = sibling_1x1_convs()
    d = b.relu(b.conv(x, 16, 3, name="d"), name="rd")
    g = b.build([b.op("Concat", [a, c, d], {"axis": 1}, name="cat")])
    p = plan(g, device="gpu")
    layers = [s for s in p.steps if s.kind == "layer"]
    merged = next(s for s in layers if "||" in s.name)
    assert merged.name == "a + ra || c + rc" and len(merged.outputs) == 2
    e = dlasim.estimate(g, XAVIER, device="gpu", precision="fp16")
    row = next(r for r in e.steps if r.name == merged.name)
    assert row.macs == 28 * 28 * 64 * (32 + 48)
    assert any(s.name == "d + rd" for s in layers)
    assert not any("||" in s.name for s in plan(g, device="dla").steps)


def test_horizontally_fused_part_feeding_a_concat_is_copied_in():
    b, x, a, c = sibling_1x1_convs()
    d = b.relu(b.conv(c, 16, 3, name="d"), name="rd")
    g = b.build([b.concat([a, d], name="cat")])
    e = dlasim.estimate(g, XAVIER, device="gpu", precision="fp16")
    cat = next(r for r in e.steps if r.name == "cat")
    # only "a" lives in the fused buffer: read + write its 32x28x28 FP16 values ("a copy" in the profile)
    assert cat.bytes == 2 * 32 * 28 * 28 * 2 and cat.time_ms > 0
    b = GraphBuilder("t1")                                # no horizontal fusion: written in place
    x = b.input("x", (1, 64, 28, 28))
    g1 = b.build([b.concat([b.conv(x, 32, 1, name="a"), b.conv(x, 16, 3, name="d")], name="cat")])
    assert next(r for r in dlasim.estimate(g1, XAVIER, device="gpu").steps if r.name == "cat").time_ms == 0


def test_gpu_lrn_reads_linear_so_reformats_surround_it():
    # conv (hwc8) -> LRN (linear only) -> max pool (keeps linear) -> conv (hwc8): two reformats, the second
    # before the conv, not the pool (Xavier GoogLeNet profile: norm1 input, conv2/3x3_reduce input)
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 56, 56))
    y = b.op("LRN", [b.conv(x, 64, 3, name="c1")], {"size": 5}, name="norm")
    y = b.conv(b.maxpool(y, 3, 1, 1, name="pool"), 64, 1, name="c2")
    e = dlasim.estimate(b.build([y]), XAVIER, device="gpu", precision="fp16",
                        input_formats="fp16:hwc8", output_formats="fp16:hwc8")
    copies = [r.name for r in e.steps if r.kind == "reformat"]
    assert copies == ["c1 reformat (fp16:hwc8 -> fp16:linear)", "pool reformat (fp16:linear -> fp16:hwc8)"]


def test_fp32_image_conv_on_a_tf32_gpu_runs_simt_in_linear_then_reformats():
    # A100 FP32 ResNet-18 (trex graph): Conv_0 is a CUDA-core scudnn kernel on linear FP32, MaxPool keeps
    # linear, then a copy to channel-major for the TF32 convs; Volta (Xavier) has no TF32: no such copy
    g = dlasim.load("zoo:resnet18")
    e = dlasim.estimate(g, "a100", device="gpu", precision="fp32", batch=32)
    conv1 = next(r for r in e.steps if r.name.startswith("conv1"))
    assert conv1.parts.simt
    a100 = dlasim.hardware("a100").gpu
    macs = 32 * 112 * 112 * 64 * 3 * 49
    assert conv1.compute_ms == pytest.approx(
        macs / (a100.sm_count * 64 * a100.clock_hz * a100.tensor_efficiency) * 1e3)
    copies = [r.name for r in e.steps if r.kind == "reformat"]
    assert copies == ["maxpool reformat (fp32:linear -> fp32:hwc)"]
    ex = dlasim.estimate(g, XAVIER, device="gpu", precision="fp32")
    assert not any(r.kind == "reformat" for r in ex.steps)
    assert not next(r for r in ex.steps if r.name.startswith("conv1")).parts.simt


def test_dla_conv_then_pool_runs_fused_in_pdp():
    b = GraphBuilder("t")
    x = b.input("x", (1, 16, 16, 16))
    g = b.build([b.maxpool(b.relu(b.conv(x, 32, 3)), 2)])
    steps = [s for s in plan(g).steps if s.kind == "layer"]
    assert len(steps) == 1 and steps[0].layers == ["conv", "relu", "maxpool"]
    assert steps[0].fused_pool is not None and steps[0].fused_pool.op == "MaxPool"


def test_fallback_reason_for_mish_and_two_transitions():
    b = GraphBuilder("t")
    x = b.input("x", (1, 16, 16, 16))
    y = b.mish(b.conv(x, 16, 3, name="c1"), name="m")
    g = b.build([b.conv(y, 16, 3, name="c2")])
    p = plan(g)
    assert p.fallback == [Fallback("m", "Mish", "Mish is not supported on DLA v1", FallbackKind.UNSUPPORTED_OP)]
    assert p.dla_subgraphs == 2 and p.transitions == 2
    assert [s.kind for s in p.steps].count("transition") == 2


@pytest.mark.parametrize("attrs,reason", [
    (dict(kernel=35, pad=0), "kernel 35 > 32"),
    (dict(kernel=3, stride=9, pad=1), "stride 9 > 8"),
    (dict(kernel=3, pad=3), "padding 3 >= kernel 3"),
])
def test_conv_parameter_limits(attrs, reason):
    b = GraphBuilder("t")
    x = b.input("x", (1, 8, 64, 64))
    g = b.build([b.conv(x, 8, **attrs)])
    assert plan(g).fallback[0].reason == reason


def test_concat_on_width_falls_back():
    b = GraphBuilder("t")
    x = b.input("x", (1, 8, 8, 8))
    g = b.build([b.concat([b.relu(x), b.sigmoid(x)], axis=3)])
    assert plan(g).fallback[0].reason == "concat axis is not channels"


def test_pool_window_limit_and_softmax_only_on_orin():
    b = GraphBuilder("t")
    x = b.input("x", (1, 8, 32, 32))
    g = b.build([b.softmax(b.maxpool(x, 13, 1, 6))])
    reasons = {f.op: f.reason for f in plan(g).fallback}
    assert reasons["MaxPool"] == "pooling window 13 > 8"
    assert "Softmax" in reasons
    assert "Softmax" not in {f.op for f in plan(g, ORIN).fallback}


def test_cbuf_check_formula_and_rejection():
    # dla.md s3.3 worked by hand: C=512, 3x3, FP16: ceil(roundup(9216,128)/32768)=1 weight bank;
    # entries per slice = ceil(ceil(1024/32)*160/4) = 1280; x3 rows / 256 = 15 data banks -> 16 (fits, boundary)
    assert cbuf_banks_needed(512, 3, 3, 160, 1, 2, XAVIER.dla) == (1, 15)
    b = GraphBuilder("t")
    x = b.input("x", (1, 1024, 8, 1024))
    g = b.build([b.conv(x, 16, 3)])
    assert plan(g).fallback[0].reason.startswith("CBUF check failed")


def test_matmul_constant_on_dla_dynamic_fails_without_fallback():
    b = GraphBuilder("mm")
    a = b.input("a", (128, 1024))
    w = b.const("w", (1024, 128))
    g = b.build([b.matmul(a, w)])
    layers = [s for s in plan(g, ORIN, precision="int8", gpu_fallback=False).steps if s.kind == "layer"]
    assert [s.device for s in layers] == ["dla"]
    b = GraphBuilder("mm2")
    a, c = b.input("a", (128, 1024)), b.input("b", (1024, 128))
    g = b.build([b.matmul(a, c, name="/MatMul")])
    with pytest.raises(BuildError) as e:
        plan(g, ORIN, gpu_fallback=False)
    msg = str(e.value)
    assert "'/MatMul' (MatMul)" in msg and "1x1 convolution with constant weights" in msg and "\n" not in msg
    assert msg.count("1x1 convolution with constant weights") == 1             # said once, by the rule


def test_parameter_fallback_has_its_kind_and_no_op_rewrite_hint():
    # a constant-weight MatMul with 8200 output channels: the op is a DLA layer, its tensor is past the
    # 8192 dimension limit (dla.md s3.2), so the rewrite into a 1x1 conv (the same limit) is not offered
    b = GraphBuilder("wide")
    g = b.build([b.matmul(b.input("a", (128, 1024)), b.const("w", (1024, 8200)), name="fc")])
    assert plan(g, ORIN).fallback == [Fallback("fc", "MatMul", "tensor dimension 8200 > 8192",
                                               FallbackKind.UNSUPPORTED_PARAMS)]
    with pytest.raises(BuildError) as e:
        plan(g, ORIN, gpu_fallback=False)
    assert str(e.value).endswith("tensor dimension 8200 > 8192; GPU fallback is off (gpu_fallback=False; "
                                 "trtexec: no --allowGPUFallback)")


def test_loadable_limit_sends_later_regions_to_gpu():
    b = GraphBuilder("chain")
    y = b.input("x", (1, 16, 16, 16))
    for i in range(20):
        y = b.mish(b.conv(y, 16, 3, name=f"c{i}"), name=f"m{i}")
    p = plan(b.build([y]))
    assert p.dla_subgraphs == 16
    limited = [f for f in p.fallback if f.kind is FallbackKind.LOADABLE_LIMIT]
    assert {f.name for f in limited} == {"c16", "c17", "c18", "c19"}      # the Mish layers: unsupported_op
    assert all("past the 16th DLA loadable" in f.reason for f in limited)
    assert {f.kind for f in p.fallback} == {FallbackKind.UNSUPPORTED_OP, FallbackKind.LOADABLE_LIMIT}
    assert all(s.subgraph < 16 for s in p.steps)


def test_a_dla_step_past_the_loadable_limit_runs_in_the_gpu_precision():
    """INT8: conv + Sigmoid runs FP16 on the DLA (its LUT), but moved to the GPU by the loadable limit it runs
    INT8 as a GPU conv + Sigmoid does, with nothing left saying it runs wider than asked."""
    b = GraphBuilder("chain")
    y = b.input("x", (1, 16, 16, 16))
    for i in range(18):
        y = b.mish(b.sigmoid(b.conv(y, 16, 3, name=f"c{i}"), name=f"s{i}"), name=f"m{i}")
    steps = {s.name: s for s in plan(b.build([y]), ORIN, precision="int8").steps if s.kind == "layer"}
    on_dla, moved = steps["c0 + s0"], steps["c17 + s17"]
    assert (on_dla.device, on_dla.precision, on_dla.precision_unsupported) == ("dla", "fp16", True)
    assert "INT8 Sigmoid runs in FP16 on DLA" in on_dla.reason
    assert (moved.device, moved.precision, moved.precision_unsupported) == ("gpu", "int8", False)
    assert "past the 16th DLA loadable" in moved.reason


def test_boundary_reformats_and_io_formats_remove_them():
    b = GraphBuilder("t")
    x = b.input("x", (1, 3, 32, 32))
    g = b.build([b.relu(b.conv(x, 16, 3))])
    p = plan(g, precision="int8")
    kinds = [(s.kind, s.copy.src, s.copy.dst, s.copy.from_device, s.copy.to_device)
             for s in p.steps if s.kind == "reformat"]
    assert kinds == [("reformat", ("fp32", "linear"), ("int8", "dla_hwc4"), "host", "dla"),
                     ("reformat", ("int8", "chw32"), ("fp32", "linear"), "dla", "host")]
    # a 3-channel input into the first DLA conv is copied into the image format (image-input mode):
    # 1x3x32x32 FP32 linear in (12288 B); INT8 kDLA_HWC4 pads the 3 channels to 4 (4096 B)
    first = next(s for s in p.steps if s.kind == "reformat")
    assert (first.copy.bytes_read, first.copy.bytes_written) == (3 * 32 * 32 * 4, 4 * 32 * 32)
    p = plan(g, precision="int8", input_formats="int8:dla_hwc4", output_formats="int8:chw32")
    assert [s.kind for s in p.steps if s.kind == "reformat"] == []
    with pytest.raises(DlasimError):
        plan(g, input_formats="int8:nonsense")


def test_int8_sigmoid_runs_fp16_on_dla_with_reason():
    b = GraphBuilder("t")
    x = b.input("x", (1, 16, 8, 8))
    g = b.build([b.sigmoid(b.conv(x, 16, 3)), b.sigmoid(x, name="alone")])
    fused, alone = [s for s in plan(g, precision="int8").steps if s.kind == "layer"]
    assert fused.precision == "fp16" and "INT8 Sigmoid runs in FP16" in fused.reason
    assert fused.precision_unsupported
    assert alone.precision == "fp16" and alone.precision_unsupported


def test_gpu_device_puts_everything_on_gpu():
    p = plan(dlasim.load("zoo:resnet18"), device="gpu")
    assert {s.device for s in p.steps} == {"gpu"} and p.dla_subgraphs == 0 and p.fallback == []


def test_googlenet_prototxt_one_subgraph_only_softmax_on_gpu():
    proto = ROOT / "validation" / "data" / "haxconn" / "prototxt" / "googlenet.prototxt"
    p = plan(dlasim.load(str(proto)))
    assert p.dla_subgraphs == 1
    assert [f.op for f in p.fallback] == ["Softmax"]


def test_yolov4_mish_falls_back_with_transitions():
    p = plan(dlasim.load("zoo:yolov4"), gpu_fallback=True)
    mish = [f for f in p.fallback if f.op == "Mish"]
    assert mish and mish[0].reason == "Mish is not supported on DLA v1"
    assert p.dla_subgraphs >= 2 and p.transitions >= 2
    assert max(s.subgraph for s in p.steps) < 16


def test_gpu_kernel_pairs_link_both_halves_by_name():
    # INT8 depthwise -> 1x1 conv (DepSep, CC >= 7.2) and INT8 conv -> pooling (ConvActPool): each half names
    # the other and the kernel they form (passes/fuse.py pair_kernels); FP16 pairs nothing
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 28, 28))
    y = b.conv(b.conv(x, 64, 3, groups=64, name="dw"), 128, 1, name="pw")
    g = b.build([b.maxpool(b.conv(y, 128, 3, name="c"), 2, name="pool")])
    steps = {s.name: s for s in plan(g, XAVIER, device="gpu", precision="int8", input_formats="int8:chw32",
                                     output_formats="int8:chw32").steps if s.kind == "layer"}
    assert steps["dw"].output_on_chip == KernelPair("DepSep", "pw") and steps["dw"].input_on_chip is None
    assert steps["pw"].input_on_chip == KernelPair("DepSep", "dw") and steps["pw"].output_on_chip is None
    assert steps["c"].output_on_chip == KernelPair("ConvActPool", "pool")
    assert steps["pool"].input_on_chip == KernelPair("ConvActPool", "c")
    fp16 = plan(g, XAVIER, device="gpu", precision="fp16").steps
    assert all(s.output_on_chip is None and s.input_on_chip is None for s in fp16)


def test_dla_image_input_copy_writes_hwc4_not_chw16():
    # dla.md s1.2 / s3.4: a 1-4 channel network input into a DLA conv runs in image-input mode (kDLA_HWC4,
    # C' = 4), so the copy into DLA memory writes 4 channels, not the 16 of kCHW16: for 3x224x224 FP32 ->
    # FP16 it reads 150528 x 4 B and writes 224 x 224 x 4 x 2 B (the GoogLeNet "data to nvm" row, 0.053 ms)
    import dlasim
    from dlasim import GraphBuilder
    b = GraphBuilder("t")
    x = b.input("data", (1, 3, 224, 224))
    g = b.build([b.conv(x, 64, kernel=7, stride=2, pad=3, name="conv1")])
    plan = dlasim.build(g, dlasim.hardware("xavier-agx"), device="dla", precision="fp16")
    copy = next(s for s in plan.steps if s.kind == "reformat" and s.copy.to_device == "dla")
    assert copy.copy.dst == ("fp16", "dla_hwc4")
    assert (copy.copy.bytes_read, copy.copy.bytes_written) == (602112, 401408)
    # a 16-channel input is no image: the copy writes kCHW16
    b = GraphBuilder("t")
    x = b.input("data", (1, 16, 56, 56))
    g = b.build([b.conv(x, 64, kernel=3, pad=1, name="conv1")])
    plan = dlasim.build(g, dlasim.hardware("xavier-agx"), device="dla", precision="fp16")
    copy = next(s for s in plan.steps if s.kind == "reformat" and s.copy.to_device == "dla")
    assert copy.copy.dst == ("fp16", "chw16")
