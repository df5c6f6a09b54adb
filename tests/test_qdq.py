"""Explicit quantization: Q/DQ import, TensorRT's propagation and fusion rules, and the reformats they cause."""
from __future__ import annotations

import pytest

import dlasim
from dlasim import BuildOptions
from dlasim import GraphBuilder, ModelError
from dlasim.zoo.quantized import qdq

onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")


def _qdq_conv_onnx(path, opset: int = 13, weight_scales: int = 32, weight_qdq: bool = True):
    """x (1,16,32,32) -> Q/DQ -> Conv 3x3 16->32 (DQ'd INT8 weights, per-channel scale) -> Relu -> y."""
    from onnx import TensorProto as T
    from onnx import helper, numpy_helper

    x = helper.make_tensor_value_info("x", T.FLOAT, [1, 16, 32, 32])
    y = helper.make_tensor_value_info("y", T.FLOAT, None)
    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "s"),
             numpy_helper.from_array(np.array(0, np.int8), "z"),
             numpy_helper.from_array(np.full((weight_scales,), 0.01, np.float32), "ws"),
             numpy_helper.from_array(np.zeros((weight_scales,), np.int8), "wz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q0"),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq0")]
    if weight_qdq:
        inits.append(numpy_helper.from_array(np.zeros((32, 16, 3, 3), np.int8), "wq"))
        dq_attrs = {"axis": 0} if opset >= 13 else {}
        nodes.append(helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], name="dqw", **dq_attrs))
    else:
        inits.append(numpy_helper.from_array(np.zeros((32, 16, 3, 3), np.float32), "w"))
    nodes += [helper.make_node("Conv", ["xd", "w"], ["c"], name="conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
              helper.make_node("Relu", ["c"], ["y"], name="relu")]
    model = helper.make_model(helper.make_graph(nodes, "qdq", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, str(path))
    return str(path)


def test_onnx_qdq_imports_as_known_ops_and_conv_runs_int8(tmp_path):
    path = _qdq_conv_onnx(tmp_path / "qdq.onnx")
    g = dlasim.load(path)
    q, dq = g.layer("q0"), g.layer("dq0")
    assert (q.op, dq.op) == ("QuantizeLinear", "DequantizeLinear")
    assert not q.flags and not dq.flags                      # shape known: no "unknown_op"
    assert q.attributes["per_channel"] is False and q.attributes["qtype"] == "int8"
    assert g.tensors["w"].const and g.tensors["w"].dtype == "int8"   # the weight DQ folded into INT8 weights
    e = dlasim.estimate(path, "a100", device="gpu", precision="int8")
    assert not any("not model" in w or "does not model" in w for w in e.warnings)
    conv = next(r for r in e.steps if "conv" in r.layers)
    assert conv.precision == "int8" and conv.kind == "layer"
    assert "dq0" not in [n for r in e.steps for n in r.layers]   # the DQ fused into the conv


def test_onnx_qdq_opset10_rejects_per_channel_scale(tmp_path):
    path = _qdq_conv_onnx(tmp_path / "qdq10.onnx", opset=10, weight_scales=32)
    # the weight DQ is folded into a constant, so make an activation DQ per-channel instead
    from onnx import numpy_helper
    m = onnx.load(path)
    m.graph.initializer.append(numpy_helper.from_array(np.full((16,), 0.1, np.float32), "s16"))
    m.graph.initializer.append(numpy_helper.from_array(np.zeros((16,), np.int8), "z16"))
    m.graph.node[1].input[1], m.graph.node[1].input[2] = "s16", "z16"
    onnx.save(m, path)
    with pytest.raises(ModelError, match="per-channel scale.*opset 13"):
        dlasim.load(path)


def test_conv_with_float_weights_runs_fp16(tmp_path):
    """Rule 3: a convolution needs INT8 weights too; with FP32 weights it runs in the higher precision."""
    e = dlasim.estimate(_qdq_conv_onnx(tmp_path / "fw.onnx", weight_qdq=False), "a100", device="gpu",
                        precision="int8")
    conv = next(r for r in e.steps if "conv" in r.layers)
    assert conv.precision == "fp16" and "weights are not quantized" in conv.reason


def test_qdq_reformat_and_output_bytes_hand_computed(tmp_path):
    """The input Q cannot fuse (no layer writes the network input in INT8): a FP32 linear -> INT8 chw32
    copy reading 16*32*32*4 = 65536 B and writing 32 (padded) *32*32*1 = 32768 B. The conv (INT8 in, network
    output: FP32 out) moves 16*32*32*1 + 32*32*32*4 + 32*16*3*3*1 = 16384 + 131072 + 4608 = 152064 B."""
    e = dlasim.estimate(_qdq_conv_onnx(tmp_path / "b.onnx"), "a100", device="gpu", precision="int8")
    q = next(r for r in e.steps if r.name == "q0")
    assert q.kind == "reformat" and q.bytes == 65536 + 32768
    conv = next(r for r in e.steps if "conv" in r.layers)
    assert conv.bytes == 152064
    assert not [r for r in e.steps if r.kind == "reformat" and r.name != "q0"]   # FP32 out: no output copy


def _block(residual_q: bool, pool_between: bool = False):
    """conv_a -> relu -> [maxpool] -> {Q/DQ -> conv_b, skip} ; conv_b + skip -> relu -> Q/DQ -> conv_c."""
    from dlasim.zoo.quantized import qconv
    b = GraphBuilder("blk")
    x = b.input("input", (8, 64, 56, 56))
    y = b.relu(qconv(b, x, 64, 3, 1, "a"), name="a.relu")
    if pool_between:
        y = b.maxpool(y, 3, 1, pad=1, name="pool")
    skip = qdq(b, y, "skip") if residual_q else y
    z = b.relu(b.add(qconv(b, y, 64, 3, 1, "b"), skip, name="add"), name="b.relu")
    return b.build([qconv(b, z, 64, 3, 1, "c")])


def _rows(g):
    e = dlasim.estimate(g, "a100", device="gpu", precision="int8")
    return {n: r for r in e.steps for n in (r.layers or [r.name])}, e


def test_naive_residual_add_runs_fp16_and_its_q_becomes_a_reformat():
    rows, e = _rows(_block(residual_q=False, pool_between=True))
    # the pool's output feeds the unquantized skip: Q cannot move before the pool, conv a writes FP16
    assert rows["pool"].precision == "fp16"
    assert rows["b.input.quantize"].kind == "reformat"           # FP16 -> INT8 copy before conv b
    add = rows["add"]
    assert add.precision == "int8" and "residual input is not quantized" in add.reason
    assert rows["c.input.quantize"].kind == "reformat"           # the FP16 add output, quantized by a copy
    # the FP16 skip is read as FP16 by the INT8 conv's fused add: no copy for it, only the three Q copies
    assert sorted(r.name for r in e.steps if r.kind == "reformat") == \
        ["a.input.quantize", "b.input.quantize", "c.input.quantize"]


def test_residual_qdq_fuses_the_add_and_the_q_moves_before_the_pool():
    rows, e = _rows(_block(residual_q=True, pool_between=True))
    assert rows["pool"].precision == "int8"                       # rule 2: the Q moved before the max-pool
    assert rows["a"].precision == "int8" and "Q after it" in rows["a"].reason
    assert rows["add"].precision == "int8" and "Q after it" in rows["add"].reason
    assert [r.name for r in e.steps if r.kind == "reformat" and r.name.endswith("quantize")] == \
        ["a.input.quantize"]                                      # only the network input is copied


def test_zoo_qat_variants_order_and_reformat_counts():
    """The three trex placements: naive has an explicit Q copy before every block input, the residual ones
    none; naive is the slowest and the quantized GAP the fastest (trex: 0.883 / 0.546 / 0.500 ms)."""
    t, n = {}, {}
    for v in ("qat", "qat-residual", "qat-residual-qgap"):
        e = dlasim.estimate(f"zoo:resnet18-{v}", "a100", device="gpu", precision="int8", batch=32)
        t[v] = e.total_ms
        n[v] = sum(r.kind == "reformat" and r.name.endswith(".quantize") for r in e.steps)
    assert n["qat"] == 10          # as the trex qat engine: the network input, 8 block inputs, the FC input
    assert n["qat-residual"] == 2 and n["qat-residual-qgap"] == 1
    # qat-residual's last Add has a DQ'd skip input but no Q after it (the pool is not quantized): its DQ
    # cannot fuse and is the one INT8 -> FP16 copy, as the engine's "DequantizeLinear_291"
    e = dlasim.estimate("zoo:resnet18-qat-residual", "a100", device="gpu", precision="int8", batch=32)
    dq = [r for r in e.steps if r.kind == "reformat" and r.name.endswith(".dequantize")]
    assert [r.name for r in dq] == ["layer4.1.residual.dequantize"] and dq[0].precision == "fp16"
    assert t["qat"] > 1.3 * t["qat-residual"] and t["qat-residual-qgap"] < t["qat-residual"]


def test_graph_without_qdq_is_unchanged_by_the_pass():
    from dlasim.passes import build_plan
    from dlasim.passes.qdq import quantize
    g = dlasim.load("zoo:resnet18")
    plan = build_plan(g, dlasim.hardware("a100"), BuildOptions("gpu", "int8"))
    before = [(s.name, s.precision, s.out_precision) for s in plan.steps]
    quantize(plan)
    assert [(s.name, s.precision, s.out_precision) for s in plan.steps] == before


def test_compare_naive_against_residual_qat_names_reformats_and_fp16_residuals():
    """Same network, same MACs: the naive expectation is 1x, and the gap is the naive engine's extra Q
    copies (reformat: its reformat time minus the residual engine's) and the FP16 layers and FP16 outputs /
    residual inputs of its INT8 layers (precision_unsupported)."""
    r = dlasim.compare("zoo:resnet18-qat", "a100", vary={"model": ["zoo:resnet18-qat-residual", "zoo:resnet18-qat"]},
                       device="gpu", precision="int8", batch=32)
    assert r.ideal_speedup == pytest.approx(1.0)
    assert r.speedup < 0.8
    by = {c["code"]: c for c in r.causes}
    fast, slow = (v.by_kind()["reformat"] for v in r.variants)
    assert by["reformat"]["ms"] == pytest.approx(slow - fast)
    assert [c["code"] for c in r.causes[:2]] == ["reformat", "precision_unsupported"]
    assert "residual input is not quantized" in by["precision_unsupported"]["text"]
    assert abs(r.unexplained_ms) < 1e-6


def test_cli_compare_vary_model(capsys):
    from dlasim.cli import main
    rc = main(["compare", "zoo:resnet18-qat", "--hw", "a100", "--device", "gpu", "--int8", "--batch", "8",
               "--vary", "model=zoo:resnet18-qat-residual,zoo:resnet18-qat", "--format", "json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    import json
    d = json.loads(out.out)
    assert [v["label"] for v in d["variants"]] == ["resnet18-qat-residual", "resnet18-qat"]
    assert d["causes"][0]["code"] == "reformat"
    from dlasim import schema
    schema.DOCUMENTS["compare"].model_validate(d)             # vary "model" is part of the contract


def test_onnx_weight_quantize_dequantize_of_float_weights_folds_to_int8(tmp_path):
    """pytorch-quantization exports FP32 weights -> QuantizeLinear -> DequantizeLinear (axis 0) -> Conv: both
    fold into a constant at import, which counts as INT8 weights (the conv runs INT8)."""
    from onnx import TensorProto as T
    from onnx import helper, numpy_helper

    x = helper.make_tensor_value_info("x", T.FLOAT, [2, 8, 16, 16])
    y = helper.make_tensor_value_info("y", T.FLOAT, None)
    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "s"),
             numpy_helper.from_array(np.array(0, np.int8), "z"),
             numpy_helper.from_array(np.ones((16, 8, 1, 1), np.float32), "wf"),
             numpy_helper.from_array(np.full((16,), 0.01, np.float32), "ws"),
             numpy_helper.from_array(np.zeros((16,), np.int8), "wz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="QuantizeLinear_0"),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="DequantizeLinear_1"),
             helper.make_node("QuantizeLinear", ["wf", "ws", "wz"], ["wq"], name="QuantizeLinear_2", axis=0),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], name="DequantizeLinear_3", axis=0),
             helper.make_node("Conv", ["xd", "w"], ["y"], name="Conv_4", kernel_shape=[1, 1])]
    path = str(tmp_path / "wq.onnx")
    onnx.save(helper.make_model(helper.make_graph(nodes, "wq", [x], [y], inits),
                                opset_imports=[helper.make_opsetid("", 13)]), path)
    g = dlasim.load(path)
    assert [l.op for l in g.layers] == ["QuantizeLinear", "DequantizeLinear", "Conv"]
    assert g.tensors["w"].dtype == "int8"
    e = dlasim.estimate(path, "a100", device="gpu", precision="int8")
    assert next(r for r in e.steps if "Conv_4" in r.layers).precision == "int8"


def test_dla_only_build_of_a_qdq_network_names_the_rewrite():
    with pytest.raises(dlasim.BuildError, match="QuantizeLinear.*INT8 scales"):
        dlasim.estimate("zoo:resnet18-qat", "orin-agx", device="dla", precision="int8", gpu_fallback=False)


def test_advice_quantizes_the_residuals_and_gap_of_naive_qat():
    """The rewrite adds exactly the pairs the trex residual + qgap engine has: re-estimated, it predicts
    what the qat-residual-qgap network predicts."""
    opts = dict(device="gpu", precision="int8", batch=32)
    r = dlasim.explain("zoo:resnet18-qat", "a100", **opts)
    item = next(a for a in r.advice if a["change"] == "quantize_residuals")
    qgap = dlasim.estimate("zoo:resnet18-qat-residual-qgap", "a100", **opts).total_ms
    assert item["predicted_ms"] == pytest.approx(qgap, rel=1e-9)
    from dlasim.explainer.advice_qdq import quantize_residuals
    _, names = quantize_residuals(dlasim.load("zoo:resnet18-qat"))
    assert names == [f"layer{i}.{j}.add" for i in (1, 2, 3, 4) for j in (0, 1)] + ["avgpool"]
    none = dlasim.explain("zoo:resnet18-qat-residual-qgap", "a100", **opts)
    assert not [a for a in none.advice if a["change"] == "quantize_residuals"]
