"""GPU fusion mechanisms priced by cost/gpu.py: TensorRT's DepSep kernel (INT8 depthwise + pointwise, CC >= 7.2)
and concat copies of a tensor that several concats read (gpu_tensorrt.md s5.2, s4.2). Numbers hand-computed."""
import pytest

import dlasim
from dlasim import GraphBuilder

XAVIER = dlasim.hardware("xavier-agx")


def dw_pw(extra_reader: bool = False):
    b = GraphBuilder("t")
    x = b.input("x", (1, 256, 28, 28))
    d = b.relu(b.conv(x, 256, 3, groups=256, name="dw"), name="rdw")
    y = b.relu(b.conv(d, 128, 1, name="pw"), name="rpw")
    outs = [y, b.maxpool(d, 2, 2, 0, name="pool")] if extra_reader else [y]
    return b.build(outs)


def rows(g, precision, hw=XAVIER):
    e = dlasim.estimate(g, hw, device="gpu", precision=precision)
    return {r.name: r for r in e.steps}


def test_int8_depthwise_then_pointwise_run_as_one_depsep_kernel():
    r = rows(dw_pw(), "int8")
    dw, pw = r["dw + rdw"], r["pw + rpw"]
    # the depthwise half reads its 256x28x28 INT8 input and 256x1x3x3 weights, writes nothing to DRAM
    assert dw.bytes == 256 * 28 * 28 + 256 * 9
    # the pointwise half reads no activation (on chip), its 128x256 weights, writes 128x28x28 INT8
    assert pw.bytes == 128 * 256 + 128 * 28 * 28
    # one kernel: the pointwise half pays no launch and no floor
    assert pw.overhead_ms == 0.0 and pw.parts.fused_with == "dw + rdw" and pw.parts.floor_s == 0.0
    gpu = XAVIER.gpu
    bw = min(XAVIER.memory.dram_bandwidth_bytes_per_s * gpu.depthwise_efficiency,    # DRAM or SM streaming limit
             gpu.depthwise_efficiency / gpu.memory_efficiency * 8 * gpu.clock_hz * gpu.stream_bytes_per_clk_per_sm)
    assert dw.memory_ms == pytest.approx((256 * 28 * 28 + 256 * 9) / bw * 1e3)


def test_depsep_needs_int8_and_a_sole_pointwise_reader():
    for g, p in ((dw_pw(), "fp16"), (dw_pw(extra_reader=True), "int8")):
        r = rows(g, p)
        b = 2 if p == "fp16" else 1
        assert r["dw + rdw"].bytes == b * (2 * 256 * 28 * 28 + 256 * 9)     # the output goes to DRAM
        assert not r["pw + rpw"].parts.fused_with and r["pw + rpw"].overhead_ms > 0


def test_a_tensor_read_by_two_concats_is_copied_into_the_second():
    # a feeds cat1 and cat2: written in place into cat1's buffer, copied into cat2's (DenseNet's pattern)
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 28, 28))
    a = b.relu(b.conv(x, 32, 1, name="a"), name="ra")
    cat1 = b.concat([a, b.conv(x, 16, 3, name="d")], name="cat1")
    cat2 = b.concat([a, b.conv(cat1, 16, 3, name="e")], name="cat2")
    g = b.build([cat2, b.conv(cat1, 8, 1, name="f")])
    r = rows(g, "fp16")
    assert r["cat1"].time_ms == 0 and r["cat1"].bytes == 0
    nbytes = 2 * 32 * 28 * 28 * 2                       # read + write a's 32x28x28 FP16 values
    assert r["cat2"].bytes == nbytes
    cp = XAVIER.copies
    t = max(cp.reformat_floor_s, nbytes / (XAVIER.memory.dram_bandwidth_bytes_per_s * cp.reformat_efficiency))
    assert r["cat2"].time_ms == pytest.approx((t + XAVIER.gpu.launch_overhead_s) * 1e3)


def conv_pool():
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 56, 56))
    y = b.maxpool(b.relu(b.conv(x, 64, 3, name="c"), name="r"), 2, 2, 0, name="pool")
    return b.build([b.conv(y, 64, 1, name="c2")])


def test_int8_conv_then_pooling_run_as_one_convactpool_kernel():
    r = rows(conv_pool(), "int8")
    conv, pool = r["c + r"], r["pool"]
    # the conv writes nothing (its 64x56x56 output stays on chip); the pooling half reads nothing from DRAM,
    # writes its 64x28x28 INT8 output, and pays no launch and no floor (the same kernel as the conv)
    assert conv.bytes == 64 * 56 * 56 + 64 * 64 * 9
    assert pool.bytes == 64 * 28 * 28 and pool.overhead_ms == 0.0 and pool.parts.floor_s == 0.0 and pool.parts.fused_with == "c + r"
    g = XAVIER.gpu
    bw = min(XAVIER.memory.dram_bandwidth_bytes_per_s * g.memory_efficiency,    # DRAM or SM streaming limit
             8 * g.clock_hz * g.stream_bytes_per_clk_per_sm)
    assert pool.time_ms == pytest.approx(64 * 28 * 28 / bw * 1e3)


def test_fp16_conv_and_pooling_stay_two_kernels():
    # the trex A100 FP16 engine and the Xavier FP16 GoogLeNet profile run the pooling as its own layer
    r = rows(conv_pool(), "fp16")
    assert r["c + r"].bytes == 2 * (2 * 64 * 56 * 56 + 64 * 64 * 9)
    assert r["pool"].bytes == 2 * (64 * 56 * 56 + 64 * 28 * 28) and r["pool"].overhead_ms > 0


def test_gpu_fusion_takes_its_ops_from_the_spec(tmp_path):
    # conv -> BN -> ReLU on the GPU: with the shipped gpu.fusable_post_ops one kernel; with the list emptied
    # in a copied spec file nothing joins the conv, so three steps
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 28, 28))
    y = b.relu(b.bn(b.conv(x, 64, 3, name="c"), name="bn"), name="r")
    g = b.build([y])
    spec = dlasim.hardware("a100").path
    text = open(spec).read()
    start = text.index("\nfusable_post_ops = [", text.index("[gpu]"))
    end = text.index("]", start)
    p = tmp_path / "a100-nofuse.toml"
    p.write_text(text[:start] + "\nfusable_post_ops = [" + text[end:])
    layers = lambda hw: [s.name for s in dlasim.estimate(g, hw, device="gpu", precision="fp16").steps
                         if s.kind == "layer"]
    assert layers("a100") == ["c + bn + r"]
    assert layers(str(p)) == ["c", "bn", "r"]


def test_a_pointwise_chain_starts_only_at_an_op_the_spec_lets_fuse(tmp_path):
    # a GPU PWN region starts at a conv/GEMM or at one of the spec's fusable post-ops: with the list cut to
    # ReLU, Relu -> Relu still runs as one kernel, and Sigmoid -> Relu (Sigmoid no longer listed) as two
    b = GraphBuilder("pw")
    x = b.input("x", (1, 64, 28, 28))
    c = b.conv(x, 64, 3, name="c")
    g = b.build([b.relu(b.relu(b.op("Add", [c, x], name="add"), name="r1"), name="r2"),
                 b.relu(b.sigmoid(c, name="s"), name="r3")])
    text = open(dlasim.hardware("a100").path).read()
    start = text.index("\nfusable_post_ops = [", text.index("[gpu]"))
    end = text.index("]", start)
    p = tmp_path / "a100-relu-only.toml"
    p.write_text(text[:start] + '\nfusable_post_ops = ["Relu"' + text[end:])
    layers = [s.name for s in dlasim.estimate(g, str(p), device="gpu", precision="fp16").steps if s.kind == "layer"]
    assert "r1 + r2" in layers and "s" in layers and "r3" in layers
    shipped = [s.name for s in dlasim.estimate(g, "a100", device="gpu", precision="fp16").steps if s.kind == "layer"]
    assert "s + r3" in shipped
