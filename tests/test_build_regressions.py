"""Build and import rules checked against what TensorRT, ONNX and Caffe define, each with a case that fails
when the rule is broken."""
from __future__ import annotations

import dlasim
from dlasim.ir import GraphBuilder


def _conv_act(act: str):
    b = GraphBuilder("conv_act")
    x = b.input("x", (1, 64, 56, 56))
    c = b.conv(x, 64, kernel=3, name="c")
    y = b.op(act, [c], name="act")
    return b.build([b.relu(b.conv(y, 64, kernel=3, name="c2"), name="r")])


def _layers(plan):
    return {s.name: s for s in plan.steps if s.kind == "layer"}


def test_gpu_int8_conv_runs_mish_in_its_int8_epilogue():
    # gpu_tensorrt.md s5.2: pointwise layers fuse into the conv epilogue (Conv_0 + PWN(...)), which runs in the
    # conv's precision; Mish has no INT8 kernel of its own (rules/precision.toml) but, fused, it neither makes
    # the step FP16 nor may its text say so
    plan = dlasim.build(_conv_act("Mish"), "orin-agx", device="gpu", precision="int8")
    steps = _layers(plan)
    assert set(steps) == {"c + act", "c2 + r"}
    s = steps["c + act"]
    assert s.precision == "int8" and not s.precision_unsupported and "FP16" not in s.reason
    assert any(d.layer == "act" and d.pass_name == "fuse" and "INT8 epilogue" in d.reason for d in plan.decisions)


def test_gpu_int8_standalone_mish_runs_fp16():
    b = GraphBuilder("mish_alone")
    x = b.input("x", (1, 64, 56, 56))
    y = b.op("Mish", [b.maxpool(b.relu(b.conv(x, 64, kernel=3, name="c"), name="r"), name="p")], name="act")
    steps = _layers(dlasim.build(b.build([y]), "orin-agx", device="gpu", precision="int8"))
    assert steps["act"].precision == "fp16" and steps["act"].precision_unsupported
    assert "Mish" in steps["act"].reason


def test_gpu_int8_conv_still_fuses_an_int8_activation():
    steps = _layers(dlasim.build(_conv_act("LeakyRelu"), "orin-agx", device="gpu", precision="int8"))
    assert set(steps) == {"c + act", "c2 + r"}
    assert steps["c + act"].precision == "int8" and steps["c + act"].reason == ""


def test_gpu_fp16_conv_fuses_mish():
    steps = _layers(dlasim.build(_conv_act("Mish"), "orin-agx", device="gpu", precision="fp16"))
    assert set(steps) == {"c + act", "c2 + r"}


def test_gpu_int8_conv_runs_decomposed_mish_in_its_epilogue():
    b = GraphBuilder("mish3")
    x = b.input("x", (1, 64, 56, 56))
    c = b.conv(x, 64, kernel=3, name="c")
    m = b.mul(c, b.op("Tanh", [b.op("Softplus", [c], name="sp")], name="th"), name="mul")
    steps = _layers(dlasim.build(b.build([m]), "orin-agx", device="gpu", precision="int8"))
    assert set(steps) == {"c + sp + th + mul"}
    s = steps["c + sp + th + mul"]
    assert s.precision == "int8" and not s.precision_unsupported and s.reason == ""


def test_gpu_int8_pointwise_kernel_without_a_conv_runs_as_its_widest_member():
    # a PWN kernel of Tanh -> Softplus (no conv to carry them): Softplus has no INT8 kernel, so the one kernel
    # runs FP16, and says so
    b = GraphBuilder("pwn")
    x = b.input("x", (1, 64, 56, 56))
    p = b.maxpool(b.relu(b.conv(x, 64, kernel=3, name="c"), name="r"), name="p")
    y = b.op("Softplus", [b.op("Tanh", [p], name="th")], name="sp")
    steps = _layers(dlasim.build(b.build([y]), "orin-agx", device="gpu", precision="int8"))
    s = steps["th + sp"]
    assert s.precision == "fp16" and s.precision_unsupported and "Softplus" in s.reason


def _image_net():
    b = GraphBuilder("image")
    x = b.input("x", (1, 3, 224, 224))
    return b.build([b.relu(b.conv(b.relu(b.conv(x, 64, kernel=7, stride=2, name="c1"), name="r1"), 64, kernel=3,
                                  name="c2"), name="r2")])


def _input_copy(plan):
    return [s for s in plan.steps if s.kind == "reformat" and s.inputs[0].name == "x"]


def test_gpu_int8_three_channel_input_is_read_as_chw4():
    # gpu_tensorrt.md s3.3: FP32 NCHW -> Int8 NC/4HW4 for the 3-channel input; 3 channels pad to 4, not 32
    plan = dlasim.build(_image_net(), "orin-agx", device="gpu", precision="int8")
    (copy,) = _input_copy(plan)
    assert copy.copy.dst == ("int8", "chw4")
    assert (copy.copy.bytes_read, copy.copy.bytes_written) == (3 * 224 * 224 * 4, 4 * 224 * 224 * 1)
    # the second conv (64 channels) reads its native chw32: the first conv wrote it so, no copy between
    assert [s for s in plan.steps if s.kind == "reformat" and s.inputs[0].name != "x"][0].copy.src == ("int8", "chw32")


def test_gpu_int8_input_format_given_by_the_user_is_kept():
    for fmt in ("chw32", "chw4"):
        plan = dlasim.build(_image_net(), "orin-agx", device="gpu", precision="int8", input_formats=f"int8:{fmt}")
        assert _input_copy(plan) == []


def test_gpu_fp16_three_channel_input_is_read_as_hwc4():
    # gpu_tensorrt.md s3.3 table: FP32 NCHW -> FP16 NHWC4 for the network input (the trex A100 FP16 engine's
    # Conv_0 reads "Channel major FP16 format where channel % 4 == 0"): 3 channels pad to 4, not 8
    plan = dlasim.build(_image_net(), "orin-agx", device="gpu", precision="fp16")
    (copy,) = _input_copy(plan)
    assert copy.copy.dst == ("fp16", "hwc4")
    assert (copy.copy.bytes_read, copy.copy.bytes_written) == (3 * 224 * 224 * 4, 4 * 224 * 224 * 2)
    # the first conv writes its native hwc8, which the 64-channel second conv reads with no copy between: the
    # one other copy is the engine output's, from hwc8
    assert [s.name for s in plan.steps if s.kind == "reformat" and s.inputs[0].name != "x"] == [
        "r2 reformat (fp16:hwc8 -> fp32:linear)"]


def test_gpu_fp16_image_reformat_matches_the_a100_engine_bytes():
    # the same table's A100 row: 32 x 3 x 224 x 224 FP32 in, FP16 NHWC4 out = 19.27 + 12.85 = 32.1 MB
    g = dlasim.load("zoo:resnet18")
    plan = dlasim.build(g, "a100", device="gpu", precision="fp16", batch=32)
    (copy,) = [s for s in plan.steps if s.kind == "reformat" and s.inputs[0].name == g.inputs[0]]
    assert copy.copy.bytes_read + copy.copy.bytes_written == 32 * 224 * 224 * (3 * 4 + 4 * 2) == 32_112_640


def test_gpu_input_quantize_of_an_image_writes_chw4():
    # the trex A100 qat engine (validation/data/trex/a100-resnet50/qat/resnet-qat.onnx.engine.graph.json):
    # QuantizeLinear_2 writes the 32x3x224x224 input as "Four wide channel vectorized row major Int8 format"
    plan = dlasim.build("zoo:resnet18-qat", "a100", device="gpu", precision="int8", batch=32)
    q = [s for s in plan.steps if s.qdq is not None and s.inputs[0].shape[1] == 3]
    assert len(q) == 1 and q[0].copy.dst == ("int8", "chw4")
    assert q[0].copy.bytes_written == 32 * 4 * 224 * 224
    assert not [s for s in plan.steps if s.kind == "reformat" and s.qdq is None and s.inputs[0].shape[1] == 3]


def _token_model(dims):
    import numpy as np
    import pytest
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.zeros((768, 3072), np.float32), "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "tokens", [x], [y], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_batch_of_a_token_input_scales_dimension_0():
    b = GraphBuilder("tokens")
    x = b.input("x", (1, 197, 768))
    g = b.build([b.matmul(x, b.const("w", (768, 3072)), name="mm")])
    e = dlasim.estimate(g, "orin-agx", device="gpu", precision="fp16", batch=4)
    assert e.batch == 4 and e.macs == 4 * 197 * 768 * 3072
    # ONNX with a symbolic batch first: --batch fills it
    g = dlasim.load(_token_model(["batch", 197, 768]), batch=4)
    assert g.tensors["x"].shape == (4, 197, 768) and g.tensors["y"].shape == (4, 197, 3072)


def test_batch_of_a_sequence_first_input_is_refused():
    import pytest
    with pytest.raises(dlasim.DlasimError, match=r"batch dimension \(batch_size\) at axis 1.*--shapes x:197x4x768"):
        dlasim.load(_token_model([197, "batch_size", 768]), batch=4)
    g = dlasim.load(_token_model([197, "batch_size", 768]), shapes={"x": (197, 4, 768)})
    assert g.tensors["y"].shape == (197, 4, 3072)


def test_gpu_int8_gather_between_int8_convs_runs_int8_without_copies():
    b = GraphBuilder("gather")
    x = b.input("x", (1, 64, 56, 56))
    c = b.relu(b.conv(x, 64, kernel=3, name="c"), name="r")
    gt = b.op("Gather", [c, b.const("idx", (32,), "int64")], {"axis": 1}, name="gather")
    plan = dlasim.build(b.build([b.relu(b.conv(gt, 64, kernel=3, name="c2"), name="r2")]), "orin-agx",
                        device="gpu", precision="int8")
    steps = _layers(plan)
    assert steps["gather"].precision == "int8" and steps["gather"].reason == ""
    assert [s.name for s in plan.steps if s.kind == "reformat"] == ["x reformat (fp32:linear -> int8:chw32)",
                                                                    "r2 reformat (int8:chw32 -> fp32:linear)"]


def test_compare_varies_input_shapes():
    b = GraphBuilder("one_conv")
    x = b.input("x", (1, 64, 56, 56))
    g = b.build([b.conv(x, 64, kernel=3, pad=1, name="c")])
    r = dlasim.compare(g, "orin-agx", vary={"shapes": [{"x": (1, 64, 56, 56)}, {"x": (1, 64, 112, 112)}]},
                       device="gpu", precision="fp16")
    assert [v.label for v in r.variants] == ["x:1x64x56x56", "x:1x64x112x112"]
    assert [v.macs for v in r.variants] == [56 * 56 * 64 * 64 * 9, 112 * 112 * 64 * 64 * 9]
    assert abs(r.ideal_speedup - 0.25) < 1e-12         # 4x the MACs at the same rate
    assert r.to_dict()["vary"] == "shapes"


def test_vary_shapes_groups_items_into_variants():
    from dlasim.sweep import parse_vary
    from dlasim.explainer.compare import VARY_KEYS
    got = parse_vary(["shapes=a:1x3x8x8,b:1x4,a:1x3x16x16,b:1x8"], VARY_KEYS, min_values=2, one_key=True)
    assert got == {"shapes": [{"a": (1, 3, 8, 8), "b": (1, 4)}, {"a": (1, 3, 16, 16), "b": (1, 8)}]}


def test_vary_choice_values_take_any_case():
    from dlasim.sweep import parse_vary
    got = parse_vary(["precision=FP16,Int8", "device=GPU,dla", "sparsity=Disable,FORCE", "hw=Orin-AGX"])
    assert got == {"precision": ["fp16", "int8"], "device": ["gpu", "dla"], "sparsity": ["disable", "force"],
                   "hw": ["Orin-AGX"]}                  # a spec path keeps its case


def test_gpu_fallback_text_is_parsed_by_one_rule():
    import pytest
    from dlasim.concurrent.engines import make_engine
    from dlasim.measures import parse_options
    for text, want in (("true", True), ("On", True), ("1", True), ("no", False), ("FALSE", False), ("0", False)):
        assert parse_options(f"gpu_fallback={text}") == {"gpu_fallback": want}
        assert make_engine({"model": "zoo:resnet18", "gpu_fallback": text}, "engine a").gpu_fallback is want
    assert make_engine({"model": "zoo:resnet18", "gpu_fallback": False}, "engine a").gpu_fallback is False
    for bad in ("treu", "", "2"):
        with pytest.raises(dlasim.DlasimError, match="gpu_fallback: expected true or false"):
            parse_options(f"gpu_fallback={bad}")
        with pytest.raises(dlasim.DlasimError, match="engine a: gpu_fallback: expected true or false"):
            make_engine({"model": "zoo:resnet18", "gpu_fallback": bad}, "engine a")


def test_loadable_limit_fallback_that_runs_wider_says_why():
    # 20 DLA regions (LRN, each cut off by a Mish the DLA lacks) on a core that holds 16 loadables
    # (orin-agx.toml max_loadables_per_core): LRN 16-19 go to the GPU, where LRN has no INT8 kernel
    b = GraphBuilder("many")
    x = b.input("x", (1, 16, 32, 32))
    for i in range(20):
        x = b.op("LRN", [x], {"size": 5, "alpha": 1e-4, "beta": 0.75, "bias": 1.0}, name=f"lrn{i}")
        x = b.conv(b.op("Mish", [x], name=f"m{i}"), 16, kernel=1, name=f"c{i}")
    plan = dlasim.build(b.build([x]), "orin-agx", device="dla", precision="int8")
    moved = {f.name for f in plan.fallback if f.kind.value == "loadable_limit"}
    assert {"lrn16", "lrn19"} <= moved and "lrn15" not in moved
    steps = _layers(plan)
    lrn = steps["lrn19"]
    assert lrn.device == "gpu" and lrn.precision == "fp16" and lrn.precision_unsupported
    assert "16th DLA loadable" in lrn.reason and "LRN has no INT8 kernel" in lrn.reason
    assert [d.action for d in plan.decisions if d.layer == "lrn19" and d.pass_name == "precision"] == ["fp16"]
    conv = steps["c19"]             # a conv past the limit runs INT8 on the GPU: no precision record
    assert conv.device == "gpu" and conv.precision == "int8" and not conv.precision_unsupported
    assert not [d for d in plan.decisions if d.layer == "c19" and d.pass_name == "precision"]


def test_changing_a_result_does_not_change_a_later_estimate():
    import dataclasses
    import pytest
    g = dlasim.load("zoo:resnet18")
    hw = dlasim.hardware("orin-agx")
    want = [dlasim.estimate(g, hw, device="gpu", precision="int8") for _ in range(3)][-1]   # the Plan is cached
    ref, ref_peaks = want.to_dict(parts=True), dict(want.peaks)
    for e in (want, dlasim.estimate(g, hw, device="gpu", precision="int8")):
        e.peaks.clear()
        e.decisions.clear()
        e.fallback.append(None)
        e.warnings.append("x")
        for row in e.steps:
            row.layers.append("x")
            row.time_ms = -1.0
            with pytest.raises(dataclasses.FrozenInstanceError):
                row.parts.floor_s = 1.0          # shared between estimates, so it cannot change
            if row.parts.tiling is not None:
                with pytest.raises(dataclasses.FrozenInstanceError):
                    row.parts.tiling.tile_eff = 0.0
    again = dlasim.estimate(g, hw, device="gpu", precision="int8")
    assert again.to_dict(parts=True) == ref and again.peaks == ref_peaks and again.decisions


def _one_initializer(tmp_path, dtype: int, nbytes: int):
    import pytest
    pytest.importorskip("onnx")
    import onnx
    from onnx import TensorProto, helper
    t = TensorProto(name="w", data_type=dtype, dims=[5, 3], raw_data=bytes(nbytes))
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "t",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], [t])
    path = tmp_path / f"w{dtype}_{nbytes}.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]), path)
    return str(path)


# 15 elements, onnx.proto's packing: FLOAT8E8M0 1 byte each; INT4/UINT4/FLOAT4E2M1 two per byte, ceil(15/2) = 8;
# INT2/UINT2 four per byte, ceil(15/4) = 4; FLOAT6 four per 3 bytes, ceil(6 * 15 / 8) = 12
RAW_BYTES = {24: 15, 17: 15, 21: 8, 22: 8, 23: 8, 25: 4, 26: 4, 27: 12, 28: 12, 16: 30, 1: 60}


def test_onnx_initializer_sizes_of_every_onnx_type(tmp_path):
    import pytest
    for dtype, nbytes in RAW_BYTES.items():
        dlasim.load(_one_initializer(tmp_path, dtype, nbytes))
        with pytest.raises(dlasim.DlasimError, match=f"raw_data holds {nbytes + 1} bytes.*needs {nbytes}"):
            dlasim.load(_one_initializer(tmp_path, dtype, nbytes + 1))


def test_onnx_initializer_of_an_unknown_type_is_one_line(tmp_path, capsys):
    from dlasim.cli import main
    assert main(["inspect", _one_initializer(tmp_path, 99, 15)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "data type 99 is not an ONNX tensor type" in err


def test_pipeline_cuts_single_repeated_and_out_of_order():
    import pytest
    from dlasim.concurrent.split import split_graph
    b = GraphBuilder("chain")
    x = b.input("x", (1, 16, 8, 8))
    y = b.relu(b.conv(x, 16, name="c1"), name="r1")
    z = b.relu(b.conv(y, 16, name="c2"), name="r2")
    g = b.build([b.conv(z, 16, name="c3")])
    first, second = split_graph(g, ["r1"])                  # one cut: two stages meeting at r1's output
    assert [l.name for l in first.layers] == ["c1", "r1"] and first.outputs == ["r1"]
    assert second.inputs == ["r1"] and [l.name for l in second.layers] == ["c2", "r2", "c3"]
    assert len(split_graph(g, ["r1", "r2"])) == 3
    with pytest.raises(dlasim.DlasimError, match="'r1' is given twice"):
        split_graph(g, ["r1", "r1"])
    with pytest.raises(dlasim.DlasimError, match="graph's order: 'r1' comes before 'r2'"):
        split_graph(g, ["r2", "r1"])
    with pytest.raises(dlasim.DlasimError, match="'c3' is the last layer"):
        split_graph(g, ["r1", "c3"])


def test_concurrent_repeated_cut_is_one_line(capsys):
    from dlasim.cli import main
    rc = main(["concurrent", "zoo:resnet18", "--hw", "orin-agx", "--cut", "layer1.0.conv1,layer1.0.conv1",
               "--stages", "dla0,gpu"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "given twice" in err


_CAFFE_AB = ('name: "n"\ninput: "a"\ninput_shape { dim: 1 dim: 4 dim: 8 dim: 8 }\n'
             'input: "b"\ninput_shape { dim: 1 dim: 4 dim: 8 dim: 8 }\n')


def _caffe_net(tmp_path, body: str):
    p = tmp_path / "n.prototxt"
    p.write_text(_CAFFE_AB + body + "\n", encoding="utf-8")
    return dlasim.load(str(p))


def test_caffe_pooling_stride_defaults_to_one(tmp_path):
    # caffe.proto PoolingParameter: stride default 1; round_mode CEIL: ceil((8 - 3) / 1) + 1 = 6
    g = _caffe_net(tmp_path, 'layer { name: "p" type: "Pooling" bottom: "a" top: "p" '
                             'pooling_param { pool: MAX kernel_size: 3 } }')
    assert g.layer("p").attributes["strides"] == [1, 1] and g.tensors["p"].shape == (1, 4, 6, 6)
    g = _caffe_net(tmp_path, 'layer { name: "p" type: "Pooling" bottom: "a" top: "p" '
                             'pooling_param { pool: AVE kernel_size: 3 stride: 2 } }')
    assert g.tensors["p"].shape == (1, 4, 4, 4)            # ceil((8 - 3) / 2) + 1 = 4


def _eltwise(coeff: str, operation: str = "SUM") -> str:
    return (f'layer {{ name: "e" type: "Eltwise" bottom: "a" bottom: "b" top: "e" '
            f'eltwise_param {{ operation: {operation} {coeff} }} }}')


def test_caffe_eltwise_coefficients(tmp_path):
    import pytest
    # caffe.proto EltwiseParameter coeff: one per bottom, for SUM; (1, -1) is a - b, (-1, 1) is b - a
    for coeff, op, ins, attrs in (("", "Add", ["a", "b"], {}), ("coeff: 1 coeff: -1", "Sub", ["a", "b"], {}),
                                  ("coeff: -1 coeff: 1", "Sub", ["b", "a"], {}),
                                  ("coeff: 0.5 coeff: 0.5", "Add", ["a", "b"], {"coeff": [0.5, 0.5]})):
        e = _caffe_net(tmp_path, _eltwise(coeff)).layer("e")
        assert (e.op, e.inputs, e.attributes) == (op, ins, attrs), coeff
    with pytest.raises(dlasim.DlasimError, match="1 coeff for 2 bottoms"):
        _caffe_net(tmp_path, _eltwise("coeff: 1"))
    with pytest.raises(dlasim.DlasimError, match="coeff is for operation SUM only"):
        _caffe_net(tmp_path, _eltwise("coeff: 1 coeff: -1", "PROD"))


def _fixed_reshape(tmp_path) -> str:
    """x[N,3,8,8] -> Reshape to the constant [2, 96]: a target written for batch 1 (2 x 96 = 1 x 3 x 8 x 8)."""
    import onnx
    from onnx import TensorProto, helper as h
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, None)
    target = h.make_tensor("target", TensorProto.INT64, [2], [2, 96])
    g = h.make_graph([h.make_node("Reshape", ["x", "target"], ["y"], name="flatten")], "g", [x], [y], [target])
    path = str(tmp_path / "fixed_reshape.onnx")
    onnx.save(h.make_model(g), path)
    return path


def test_batch_that_a_fixed_reshape_cannot_take_names_the_file_and_layer(tmp_path, capsys):
    from dlasim.cli import main
    path = _fixed_reshape(tmp_path)
    assert main(["estimate", path, "--device", "gpu", "--batch", "1"]) == 0
    capsys.readouterr()
    assert main(["estimate", path, "--device", "gpu", "--batch", "4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{path}: layer 'flatten': cannot reshape (4, 3, 8, 8) to [2, 96]" in err


def test_a_view_from_the_input_binding_to_the_output_binding_is_a_copy():
    """Input and output are separate buffers, so a Reshape between them cannot alias: a copy kernel reads and
    writes 1x3x8x8 = 192 FP32 values (2 x 768 bytes); the same Reshape between two convs stays free."""
    b = GraphBuilder("view")
    y = b.flatten(b.input("x", (1, 3, 8, 8)), name="flat")
    est = dlasim.estimate(b.build([y]), "xavier-agx", device="gpu", precision="fp32")
    (step,) = [s for s in est.steps if s.name == "flat"]
    assert step.bytes == 2 * 192 * 4 and step.time_ms > 0 and est.total_ms > 0

    b = GraphBuilder("inner")
    x = b.conv(b.input("x", (1, 8, 8, 8)), 8, 1, name="c1")
    x = b.reshape(x, [1, 8, 64], name="flat")
    x = b.reshape(x, [1, 8, 8, 8], name="back")
    est = dlasim.estimate(b.build([b.conv(x, 8, 1, name="c2")]), "xavier-agx", device="gpu", precision="fp32")
    views = [s for s in est.steps if s.name in ("flat", "back")]
    assert len(views) == 2 and all(s.bytes == 0 and s.time_ms == 0 for s in views)


def test_an_identity_from_the_input_binding_to_the_output_binding_is_a_copy():
    """Folding it would leave an engine of no steps and 0 ms (and 0 qps, which the JSON schema forbids)."""
    b = GraphBuilder("identity")
    y = b.op("Identity", [b.input("x", (1, 3, 8, 8))], name="same")
    est = dlasim.estimate(b.build([y]), "xavier-agx", device="gpu", precision="fp32")
    assert [s.name for s in est.steps] == ["same"] and est.steps[0].bytes == 2 * 192 * 4
    assert est.total_ms > 0 and est.to_dict()["throughput_qps"] > 0


def test_an_engine_internal_layout_is_not_an_io_format(capsys):
    # hwc4 is what the FP16 first-layer kernel reads (formats.toml [internal_formats]); TensorFormat has no kHWC4
    from cli_errors import one_line_error
    err = one_line_error(["estimate", "zoo:resnet18", "--hw", "orin-agx", "--fp16", "--device", "gpu",
                          "--inputIOFormats", "fp16:hwc4"], capsys)
    assert "'fp16:hwc4' is a layout TensorRT uses inside an engine" in err
    import pytest
    from dlasim.errors import DlasimError
    with pytest.raises(DlasimError, match="not an I/O format"):
        dlasim.estimate(_image_net(), "orin-agx", device="gpu", precision="fp16", input_formats="fp16:hwc4")
    # the I/O formats TensorRT has still read
    assert dlasim.estimate(_image_net(), "orin-agx", device="gpu", precision="fp16", input_formats="fp16:hwc8")


def test_the_image_format_is_for_the_network_input_only():
    # formats.toml [gpu_image_formats] is sourced by the network-input copy (gpu_tensorrt.md s3.3, trex Conv_0):
    # a 3-channel tensor inside the engine (conv 64 -> 3 -> 64) and a <= 4-head attention MatMul keep hwc8
    b = GraphBuilder("inner")
    x = b.input("x", (1, 64, 32, 32))
    y = b.conv(b.relu(b.conv(x, 3, kernel=3, name="to3"), name="r"), 64, kernel=3, name="from3")
    plan = dlasim.build(b.build([y]), "orin-agx", device="gpu", precision="fp16")
    assert not [s for s in plan.steps if s.kind == "reformat" and "hwc4" in s.name], [s.name for s in plan.steps]
    b = GraphBuilder("heads")
    q = b.input("q", (1, 4, 64, 32))
    k = b.input("k", (1, 4, 32, 64))
    plan = dlasim.build(b.build([b.matmul(q, k, name="qk")]), "orin-agx", device="gpu", precision="fp16")
    assert [s.copy.dst for s in plan.steps if s.kind == "reformat" and s.inputs[0].name == "q"] == [("fp16", "hwc8")]


def test_io_format_advice_for_a_gpu_fp16_image_network_names_a_real_io_format():
    # the image input's copy writes the internal hwc4; the advice gives the native I/O format, which parses
    from dlasim.build_options import io_formats
    ex = dlasim.explain(dlasim.load("zoo:super_resolution"), "xavier-agx", device="gpu", precision="fp16")
    item = next(a for a in ex.advice if a["change"] == "io_formats")
    assert "--inputIOFormats=fp16:hwc8" in item["text"] and item["gain_ms"] > 0
    fmt = item["text"].split("--inputIOFormats=")[1].split()[0]
    assert io_formats(fmt, "--inputIOFormats") == (("fp16", "hwc8"),)
