"""Orin DLA 2:4 structured sparsity: eligibility, MAC cycles, compressed weight bytes (hand-computed)."""
from __future__ import annotations

import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.cost.dla import conv_cycles
from dlasim.cost.geometry import ConvShape, sparse_weight_bytes
from dlasim.hardware import hardware

ORIN = hardware("orin-agx:maxn")
IO8 = dict(device="dla", precision="int8", input_formats="int8:chw32", output_formats="int8:chw32")


def _step(e, name):
    return next(s for s in e.steps if s.kind == "layer" and s.layers[0] == name)


def _one_conv(c=128, k=128, hw=32, kernel=3, groups=1, pool=False):
    b = GraphBuilder("t")
    x = b.input("x", (1, c, hw, hw))
    y = b.conv(x, k, kernel, groups=groups, bias=False, name="c")
    if pool:
        y = b.maxpool(y, 2)
    return b.build([y])


def test_sparse_metadata_is_one_bit_per_dense_weight_whatever_the_precision():
    # 4096 weights, half kept, 2 bits of index per kept value = 4096 bits = 512 B
    assert sparse_weight_bytes(4096, 1) == 2048 + 512          # INT8 (w_bytes // 16 would give 256)
    assert sparse_weight_bytes(4096, 2) == 4096 + 512          # FP16
    assert sparse_weight_bytes(1152, 1) == 576 + 144           # one 128-channel 3x3 INT8 kernel


def test_sparse_atomic_op_covers_twice_the_input_channels():
    # 96 -> 128 channels, 3x3, 32x32: dense ceil(96/64)=2 channel atoms, sparse ceil(96/128)=1; K 128/128=1;
    # 1024 output pixels per block (full stripes); 64 channels: one atom either way (why the DLA needs C > 64)
    cs = ConvShape(1, 96, 32, 32, 128, 32, 32, 3, 3)
    dense, ideal = conv_cycles(cs, ORIN.dla, "int8", False)
    sparse, ideal_s = conv_cycles(cs, ORIN.dla, "int8", False, sparse=True)
    assert (dense, sparse) == (2 * 1 * 9 * 1024, 1 * 1 * 9 * 1024) and ideal == ideal_s
    cs64 = ConvShape(1, 64, 32, 32, 128, 32, 32, 3, 3)
    assert conv_cycles(cs64, ORIN.dla, "int8", False)[0] == conv_cycles(cs64, ORIN.dla, "int8", False, True)[0]


def test_eligible_conv_halves_its_mac_time_and_reads_compressed_weights():
    # 128 -> 128, 3x3, 32x32 INT8 on Orin (64 x 128 atom, 1.6 GHz): dense 2*1*9*1024 = 18432 cycles, sparse 9216;
    # SDP 128*1024/64 = 2048 cycles. Everything fits the 512 KB CBUF: bytes = input 128*1024 + weights + output
    # 128*1024; weights dense 128*1152 = 147456 B, 2:4 128 * (576 + 144) = 92160 B.
    g = _one_conv()
    dense = _step(dlasim.estimate(g, ORIN, **IO8), "c")
    sparse = _step(dlasim.estimate(g, ORIN, sparsity="force", **IO8), "c")
    hz, eff = ORIN.dla.clock_hz, ORIN.dla.mac_eff("int8")
    assert dense.compute_ms == pytest.approx(18432 / hz / eff * 1e3)
    assert sparse.compute_ms == pytest.approx(9216 / hz / eff * 1e3)
    assert dense.bytes == 131072 + 147456 + 131072 and sparse.bytes == 131072 + 92160 + 131072
    # the bound is the largest part: 5.8 us of sparse MACs against the spec's per-layer overhead
    overhead = ORIN.dla.layer_overhead_s
    assert sparse.parts.sparse == "used" and sparse.bound == ("compute" if 9216 / hz / eff > overhead else "overhead")
    assert sparse.parts.dense_s * 1e3 == pytest.approx(dense.time_ms)
    assert sparse.time_ms == pytest.approx((9216 / hz / eff + overhead) * 1e3)


def test_memory_bound_layer_gains_only_its_weight_bytes():
    # 1x1 128 -> 128 on 128x128: 2 x 2 MiB of activations over 102.4 GB/s (41 us) vs 20 us of MACs
    g = _one_conv(hw=128, kernel=1)
    dense = _step(dlasim.estimate(g, ORIN, **IO8), "c")
    sparse = _step(dlasim.estimate(g, ORIN, sparsity="force", **IO8), "c")
    assert dense.bound == sparse.bound == "memory" and sparse.parts.sparse == "used"
    bw = ORIN.dla.dram_bytes_per_cycle * ORIN.dla.clock_hz           # 102.4 GB/s, below the DRAM peak
    saved = 128 * 128 - 128 * sparse_weight_bytes(128, 1)           # 16384 - 10240 B
    assert dense.time_ms - sparse.time_ms == pytest.approx(saved / bw * 1e3)
    assert sparse.time_ms / dense.time_ms > 0.99


def test_output_bound_layer_gains_nothing_and_says_why():
    # 1x1 128 -> 128 + fused 2x2 max pool: PDP 128*4096/32 = 16384 cycles > dense MACs 2*4096 = 8192
    g = _one_conv(hw=64, kernel=1, pool=True)
    row = _step(dlasim.estimate(g, ORIN, sparsity="force", **IO8), "c")
    assert row.parts.sparse == "too_small" and "SDP/PDP" in row.parts.sparse_reason
    assert row.compute_ms == pytest.approx(16384 / ORIN.dla.clock_hz / ORIN.dla.mac_eff("int8") * 1e3)


@pytest.mark.parametrize("graph,hw,precision,words", [
    (_one_conv(c=64), "orin-agx", "int8", "needs C > 64"),
    (_one_conv(c=3, k=64, kernel=7), "orin-agx", "int8", "3 input channels"),
    (_one_conv(c=256, k=256, groups=256), "orin-agx", "int8", "depthwise"),
    (_one_conv(groups=2), "orin-agx", "int8", "64 input channels per kernel"),
    (_one_conv(), "orin-agx", "fp16", "INT8 only"),
    (_one_conv(), "xavier-agx", "int8", "DLA v1 has no 2:4"),
])
def test_ineligible_layers_say_why_and_nothing_eligible_warns(graph, hw, precision, words):
    e = dlasim.estimate(graph, hw, device="dla", precision=precision, sparsity="force")
    row = _step(e, "c")
    assert row.parts.sparse == "ineligible" and words in row.parts.sparse_reason
    assert any("--sparsity=force has no effect" in w and words in w for w in e.warnings)


def test_fc_stays_dense_and_dense_build_has_no_sparse_state():
    b = GraphBuilder("t")
    x = b.input("x", (1, 512, 1, 1))
    g = b.build([b.fc(b.flatten(x), 1000, name="fc")])
    row = _step(dlasim.estimate(g, ORIN, sparsity="force", **IO8), "fc")
    assert row.parts.sparse == "ineligible" and "convolutions only" in row.parts.sparse_reason
    e = dlasim.estimate(_one_conv(), ORIN, **IO8)
    assert _step(e, "c").parts.sparse == "off" and not e.warnings


def test_explain_names_the_layers_that_gain_and_why_others_do_not():
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 32, 32))
    y = b.conv(x, 128, 3, bias=False, name="narrow")          # C = 64: ineligible
    y = b.conv(y, 128, 3, bias=False, name="wide")            # C = 128: gains
    g = b.build([y])
    r = dlasim.explain(g, "orin-agx", sparsity="force", **IO8)
    assert [d["name"] for d in r.sparse_gains] == ["wide"] and r.sparse_gains[0]["channels"] == "128->128"
    assert r.sparse_gains[0]["sparse_ms"] < r.sparse_gains[0]["dense_ms"]
    inel = next(c for c in r.causes if c["code"] == "sparse_ineligible")
    assert "narrow" in inel["text"] and "needs C > 64" in inel["text"]
    text = r.render()
    assert "2:4 sparse weights: 1 layer(s) gain" in text and "wide (128->128 ch)" in text
    c = dlasim.compare(g, "orin-agx", vary={"sparsity": ["disable", "force"]}, **IO8)
    assert c.speedup > 1.0 and c.diff[0]["name"].startswith("wide")
    assert "needs C > 64" in next(x for x in c.causes if x["code"] == "sparse_ineligible")["text"]


def test_resnet34_backbone_is_faster_with_sparsity_on_orin_dla():
    kw = dict(device="dla", precision="int8", shapes={"input": (1, 3, 768, 1280)})
    dense = dlasim.estimate("zoo:resnet34", "orin-agx", sparsity="disable", **kw)
    sparse = dlasim.estimate("zoo:resnet34", "orin-agx", sparsity="force", **kw)
    assert sparse.total_ms < 0.8 * dense.total_ms
