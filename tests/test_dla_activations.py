"""Activations built from a product of the same tensor on the DLA (SiLU, HardSwish, GELU): extra SDP passes
and their DRAM traffic, hand-computed on Xavier (nv_full rates); single-op forms fall back to the GPU."""
from __future__ import annotations

import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.hardware import hardware

XAVIER = hardware("xavier-agx")
DLA = XAVIER.dla
IO16 = dict(device="dla", precision="fp16", input_formats="fp16:chw16", output_formats="fp16:chw16")
N = 64 * 64 * 64                      # elements of the 64 x 64 x 64 activation
FMAP = N * 2                          # FP16 bytes (64 channels = 4 whole 32-byte atoms per pixel)


def _net(act: str):
    """conv 3x3 (64 -> 64, 64x64) + BN + act + conv 3x3."""
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 64, 64))
    y = b.bn(b.conv(x, 64, 3, bias=False, name="c1"), name="bn")
    if act == "relu":
        y = b.relu(y, name="act")
    elif act == "silu":
        y = b.silu(y, name="act")
    elif act == "hardswish":                                  # x * clip(x + 3, 0, 6) * (1/6), as exported
        t = b.add(y, b.const("three", (1,)), name="hs.add")
        t = b.op("Clip", [t], {"min": 0.0, "max": 6.0}, name="hs.clip")
        t = b.mul(y, t, name="hs.mul")
        y = b.mul(t, b.const("sixth", (1,)), name="hs.scale")
    elif act == "gelu_tanh":                                  # 0.5 x (1 + tanh(0.798 (x + 0.0447 x^3)))
        x3 = b.mul(b.mul(y, y, name="g.sq"), y, name="g.cube")
        t = b.add(y, b.mul(x3, b.const("c1k", (1,)), name="g.k1"), name="g.inner")
        t = b.op("Tanh", [b.mul(t, b.const("c2k", (1,)), name="g.k2")], {}, name="g.tanh")
        t = b.add(t, b.const("one", (1,)), name="g.one")
        y = b.mul(b.mul(y, t, name="g.gate"), b.const("half", (1,)), name="g.half")
    else:
        y = b.op(act, [y], {}, name="act")
    return b.build([b.conv(y, 64, 3, bias=False, name="c2")])


def _layers(e):
    return [s for s in e.steps if s.kind == "layer"]


def _ms(cycles_elems: float, nbytes: int) -> float:
    """One standalone SDP pass on Xavier: max(elements over the Y-block rate, bytes over DLA bandwidth) + overhead."""
    compute = cycles_elems / DLA.sdp_eltwise_elems_per_cycle / DLA.clock_hz
    memory = nbytes / (DLA.dram_bytes_per_cycle * DLA.clock_hz)
    return (max(compute, memory) + DLA.layer_overhead_s) * 1e3


def test_silu_costs_a_lut_pass_and_a_multiply_pass_that_reads_x_back():
    relu = dlasim.estimate(_net("relu"), XAVIER, **IO16)
    silu = dlasim.estimate(_net("silu"), XAVIER, **IO16)
    r, s = _layers(relu), _layers(silu)
    assert [x.name for x in r] == ["c1 + bn + act", "c2"]
    assert [x.name for x in s] == ["c1 + bn", "act.sigmoid", "act.mul", "c2"]
    conv_r, conv_s = r[0], s[0]
    assert conv_s.time_ms == pytest.approx(conv_r.time_ms) and conv_s.bytes == conv_r.bytes   # x instead of y
    sig, mul = s[1], s[2]
    # LUT pass: read x, write s (2 fmaps), N elements at 4/cycle; multiply: read s and x, write y (3 fmaps)
    assert sig.bytes == 2 * FMAP and mul.bytes == 3 * FMAP
    assert sig.time_ms == pytest.approx(_ms(N, 2 * FMAP))
    assert mul.time_ms == pytest.approx(_ms(N, 3 * FMAP))
    # 5 extra feature maps of DRAM traffic and two extra hardware layers: measurably slower than ReLU
    assert sum(x.bytes for x in s) - sum(x.bytes for x in r) == 5 * FMAP
    assert silu.total_ms - relu.total_ms == pytest.approx(sig.time_ms + mul.time_ms)
    assert silu.total_ms > 1.3 * relu.total_ms
    why = [d for d in silu.decisions if d.layer == "act.mul" and d.pass_name == "fuse"]
    assert why and "second operand only from memory" in why[0].reason and "LUT" in why[0].reason


def test_silu_on_orin_int8_keeps_the_conv_int8_and_runs_the_lut_in_fp16():
    e = dlasim.estimate(_net("silu"), "orin-agx", device="dla", precision="int8",
                        input_formats="int8:chw32", output_formats="int8:chw32")
    prec = {x.name: x.precision for x in _layers(e)}
    assert prec == {"c1 + bn": "int8", "act.sigmoid": "fp16", "act.mul": "int8", "c2": "int8"}
    assert not e.fallback


def test_hardswish_built_from_clip_and_mul_reads_x_twice_in_one_pass():
    relu = _layers(dlasim.estimate(_net("relu"), XAVIER, **IO16))
    est = dlasim.estimate(_net("hardswish"), XAVIER, **IO16)
    hs = _layers(est)
    why = next(d.reason for d in est.decisions if d.layer == "hs.mul" and d.pass_name == "fuse")
    assert "second operand only from memory" in why and "LUT" not in why
    assert [x.name for x in hs] == ["c1 + bn", "hs.add + hs.clip + hs.mul + hs.scale", "c2"]
    # conv writes x; one SDP pass reads x as its stream and again as the multiply's operand, writes y
    sdp = hs[1]
    assert sdp.bytes == 3 * FMAP and sdp.time_ms == pytest.approx(_ms(N, 3 * FMAP))
    assert sum(x.bytes for x in hs) - sum(x.bytes for x in relu) == 3 * FMAP


def test_gelu_from_elementwise_ops_needs_passes_around_its_tanh():
    e = dlasim.estimate(_net("gelu_tanh"), XAVIER, **IO16)
    names = [x.name for x in _layers(e)]
    assert names[0] == "c1 + bn" and names[-1] == "c2" and not e.fallback
    lut = next(x for x in _layers(e) if "g.tanh" in x.layers)
    assert lut.layers[-1] == "g.tanh"                     # nothing after the LUT in its pass
    relu = dlasim.estimate(_net("relu"), XAVIER, **IO16)
    assert e.total_ms > relu.total_ms + 2 * DLA.layer_overhead_s * 1e3


@pytest.mark.parametrize("hw", ["xavier-agx", "orin-agx"])
@pytest.mark.parametrize("op", ["Mish", "HardSwish", "Gelu", "Swish"])
def test_single_op_activations_fall_back_to_the_gpu(hw, op):
    e = dlasim.estimate(_net(op), hw, device="dla", precision="fp16")
    assert [f.name for f in e.fallback] == ["act"]
    assert "not supported on DLA" in e.fallback[0].reason


def test_gpu_still_fuses_silu_into_the_conv_epilogue():
    e = dlasim.estimate(_net("silu"), "orin-agx", device="gpu", precision="fp16")
    assert [x.name for x in _layers(e)][0] == "c1 + bn + act.sigmoid + act.mul"


def test_gating_by_another_tensor_after_a_lut_is_a_separate_pass():
    # a gated conv: y = x * sigmoid(conv(x)) with x in memory; the multiply reads the LUT output, so it
    # cannot join the conv's SDP pass: conv + sigmoid writes s, the multiply pass reads s and x, writes y
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 64, 64))
    s = b.sigmoid(b.conv(x, 64, 1, bias=False, name="cg"), name="sg")
    g = b.build([b.conv(b.mul(x, s, name="gate"), 64, 3, bias=False, name="c2")])
    e = dlasim.estimate(g, XAVIER, **IO16)
    assert [x.name for x in _layers(e)] == ["cg + sg", "gate", "c2"]
    gate = _layers(e)[1]
    assert gate.bytes == 3 * FMAP and gate.time_ms == pytest.approx(_ms(N, 3 * FMAP))
    # the GPU runs the multiply in the conv's epilogue
    gpu = dlasim.estimate(g, "orin-agx", device="gpu", precision="fp16")
    assert "gate" not in [x.name for x in _layers(gpu)]


def test_dla_only_build_names_a_rewrite_for_single_op_silu_and_gelu():
    for op, words in (("Swish", "Sigmoid and Mul"), ("Gelu", "Mul, Add and Tanh")):
        with pytest.raises(dlasim.errors.BuildError, match=words):
            dlasim.estimate(_net(op), XAVIER, device="dla", precision="fp16", gpu_fallback=False)


@pytest.mark.parametrize("act", ["Sigmoid", "Tanh"])
def test_int8_conv_with_a_fused_lut_activation_runs_fp16_as_its_reason_says(act):
    """Orin DLA INT8: Sigmoid/Tanh run by auto-upgrading to FP16 (dla.md s3.2), and the conv that carries one
    through its SDP is one hardware layer: its precision, bytes and MAC cycles are FP16, as the reason says."""
    orin = hardware("orin-agx")
    dla = orin.dla
    b = GraphBuilder("lut")
    x = b.input("x", (1, 64, 56, 56))
    g = b.build([b.op(act, [b.conv(x, 64, 3, name="c")], {}, name="a")])
    e = dlasim.estimate(g, orin, device="dla", precision="int8")
    (step,) = _layers(e)
    assert step.name == "c + a" and step.reason == f"INT8 {act} runs in FP16 on DLA"
    assert step.precision == "fp16"
    plan = dlasim.build(g, orin, device="dla", precision="int8")
    assert next(s for s in plan.steps if s.kind == "layer").precision == "fp16"
    fmap = 64 * 56 * 56
    assert step.bytes == 2 * fmap + 64 * 64 * 9 * 2 + 2 * fmap == 876544     # FP16 in, weights, out
    # MAC cycles: ceil(64 / 64) x ceil(64 / 8 FP16 kernels) atoms x 9 taps x 3136 pixels (stripes of 32 take
    # 16-cycle weight loads: 1568 < 3136); the LUT's 200704 elements at 16/cycle (12544) are fewer
    assert dla.atomic_k("fp16") == 8 and dla.sdp_eltwise_elems_per_cycle == 16
    assert step.compute_ms == pytest.approx(8 * 9 * 3136 / dla.clock_hz * 1e3)        # 0.14112 ms
    assert step.time_ms == pytest.approx(8 * 9 * 3136 / dla.clock_hz * 1e3 + dla.layer_overhead_s * 1e3)
    copies = [s for s in e.steps if s.kind == "reformat"]
    assert [s.copy.dst[0] for s in copies] == ["fp16", "fp32"]       # the input is copied in as FP16
    # the same conv with ReLU stays INT8: half the bytes, 128 INT8 kernels per atom
    b = GraphBuilder("relu")
    x = b.input("x", (1, 64, 56, 56))
    relu = _layers(dlasim.estimate(b.build([b.relu(b.conv(x, 64, 3))]), orin, device="dla", precision="int8"))
    assert [(s.precision, s.reason, s.bytes) for s in relu] == [("int8", "", fmap + 64 * 64 * 9 + fmap)]


# ---- advice: SiLU -> ReLU on the DLA (dlasim/explainer/advice.py advise_dla_silu) -------------------------

def test_silu_pairs_finds_x_times_sigmoid_x_only():
    from dlasim.explainer.rewrites import relu_for_silu, silu_pairs
    assert silu_pairs(_net("silu")) == [("act.sigmoid", "act.mul")]
    b = GraphBuilder("t")
    x = b.input("x", (1, 8, 4, 4))
    y = b.input("y", (1, 8, 4, 4))
    gate = b.mul(x, b.op("Sigmoid", [y], {}, name="sy"), name="gate")        # x * sigmoid(y): a gate, not SiLU
    s = b.op("Sigmoid", [x], {}, name="sx")
    both = b.add(b.mul(x, s, name="m1"), s, name="reuse")                    # sigmoid(x) also read by the Add
    assert silu_pairs(b.build([gate, both])) == []
    # sigmoid(x) * x (Sigmoid first) is SiLU; a Sigmoid that is also a network output is not rewritten
    b = GraphBuilder("t")
    x = b.input("x", (1, 8, 4, 4))
    s = b.op("Sigmoid", [x], {}, name="s")
    assert silu_pairs(b.build([b.mul(s, x, name="m")])) == [("s", "m")]
    b = GraphBuilder("t")
    x = b.input("x", (1, 8, 4, 4))
    s = b.op("Sigmoid", [x], {}, name="s")
    assert silu_pairs(b.build([b.mul(x, s, name="m"), s])) == []
    # a network without SiLU has nothing to rewrite
    g = _net("relu")
    assert silu_pairs(g) == [] and [l.op for l in relu_for_silu(g, set()).layers] == [l.op for l in g.layers]


def test_silu_rewrite_gives_the_relu_network():
    from dlasim.explainer.rewrites import relu_for_silu, silu_pairs
    g = _net("silu")
    r = relu_for_silu(g, {mul for _, mul in silu_pairs(g)})
    assert [l.op for l in r.layers] == [l.op for l in _net("relu").layers]      # Conv, BN, Relu, Conv
    e_r = dlasim.estimate(r, XAVIER, **IO16)
    assert e_r.total_ms == pytest.approx(dlasim.estimate(_net("relu"), XAVIER, **IO16).total_ms)


def test_explain_on_the_dla_offers_relu_for_silu_with_its_re_estimate():
    g = _net("silu")
    base = dlasim.estimate(g, XAVIER, **IO16).total_ms
    relu = dlasim.estimate(_net("relu"), XAVIER, **IO16).total_ms
    assert relu < base                              # the SiLU's LUT and element-wise passes cost DLA time
    ex = dlasim.explain(g, XAVIER, **IO16)
    item = next(a for a in ex.advice if a["change"] == "silu_to_relu")
    assert item["predicted_ms"] == pytest.approx(relu) and item["gain_ms"] == pytest.approx(base - relu)
    assert "replace the 1 SiLU activations on the DLA" in item["text"]
    # on the GPU the SiLU is a fused pointwise epilogue: no such advice
    gpu = dlasim.explain(g, XAVIER, device="gpu", precision="fp16")
    assert all(a["change"] != "silu_to_relu" for a in gpu.advice)
