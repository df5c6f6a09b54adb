"""Regressions found running real exported models (tests/fixtures/exports) through the README's flows: each
test is a small graph or a real file with the behaviour computed by hand, and fails without its fix."""
from __future__ import annotations

import dlasim
from dlasim import GraphBuilder


def _squeeze_pair_net():
    """conv -> Unsqueeze(axis 4) -> Squeeze(axis 4) -> conv: the shape ops torch.onnx writes around attention
    (torchvision ViT: Unsqueeze/Squeeze around the q, k, v split)."""
    b = GraphBuilder("sq")
    x = b.input("x", (1, 64, 56, 56))
    y = b.relu(b.conv(x, 64, kernel=3))
    y = b.op("Unsqueeze", [y], {"axes": [4]}, name="unsq")
    y = b.op("Squeeze", [y], {"axes": [4]}, name="sq")
    return b.build([b.relu(b.conv(y, 64, kernel=3))])


def test_squeeze_and_unsqueeze_run_on_the_dla_like_reshape():
    """TensorRT imports Squeeze/Unsqueeze as the Shuffle layer Reshape is (dla.md s3.2 "Shuffle"): on the
    DLA they stay inside the one loadable (they fell back before, splitting it in two with four hand-overs)."""
    e = dlasim.estimate(_squeeze_pair_net(), "orin-agx", device="dla", precision="int8")
    assert e.fallback == []
    assert e.dla_subgraphs == 1 and e.transitions == 0
    assert {s.name: s.device for s in e.steps if s.name in ("unsq", "sq")} == {"unsq": "dla", "sq": "dla"}


def test_squeeze_and_unsqueeze_have_int8_kernels_on_the_gpu():
    """Shuffle layers run INT8 on the GPU (precision.toml lists Reshape): no FP16 island, no precision
    reformat on either side of them (the engine's I/O is INT8 chw32, so the INT8 engine has no copy at all)."""
    e = dlasim.estimate(_squeeze_pair_net(), "orin-agx", device="gpu", precision="int8", batch=8,
                        input_formats="int8:chw32", output_formats="int8:chw32")
    shuffles = [s for s in e.steps if s.name in ("unsq", "sq")]
    assert [s.precision for s in shuffles] == ["int8", "int8"]
    assert [s.name for s in e.steps if s.kind == "reformat"] == []


# ---- ONNX shape arithmetic as torchvision Swin-T exports it --------------------------------------------
def _swin_like_onnx(tmp_path, blocks: int):
    """`blocks` times: pad W up to a multiple of 8 by an amount computed from the input's shape, the way
    torchvision's Swin pads to the window size (Shape -> Gather -> Sub -> Mod -> Concat -> Reshape(-1, 2) ->
    Slice(step -1) -> Transpose -> Reshape(-1) -> Pad), then a 1x3 convolution (W 8 -> 6) and a
    GlobalAveragePool whose (1, 4, 1, 1) output the file declares, as torch.onnx does: its shape is known
    before any inner one."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def const(name, value):
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value, np.int64), name))

    nodes, inits, x = [], [numpy_helper.from_array(np.zeros((4, 4, 1, 3), np.float32), "w")], "x"
    for i in range(blocks):
        p = f"b{i}_"
        nodes += [
            const(p + "three", 3), const(p + "eight", 8), const(p + "zero", [0]), const(p + "zeros", [0] * 6), const(p + "pairs", [-1, 2]),
            const(p + "st", [-1]), const(p + "en", [-(2 ** 62)]), const(p + "ax", [0]), const(p + "step", [-1]),
            const(p + "flat", [-1]), const(p + "axis0", [0]),
            helper.make_node("Shape", [x], [p + "shape"]),
            helper.make_node("Gather", [p + "shape", p + "three"], [p + "w"], axis=0),
            helper.make_node("Sub", [p + "eight", p + "w"], [p + "d"]),
            helper.make_node("Mod", [p + "d", p + "eight"], [p + "pad"]),
            helper.make_node("Unsqueeze", [p + "pad", p + "axis0"], [p + "pad1"]),
            helper.make_node("Concat", [p + "zero", p + "pad1", p + "zeros"], [p + "cat"], axis=0),
            helper.make_node("Reshape", [p + "cat", p + "pairs"], [p + "pr"]),
            helper.make_node("Slice", [p + "pr", p + "st", p + "en", p + "ax", p + "step"], [p + "rev"]),
            helper.make_node("Transpose", [p + "rev"], [p + "tr"], perm=[1, 0]),
            helper.make_node("Reshape", [p + "tr", p + "flat"], [p + "pads"]),
            helper.make_node("Pad", [x, p + "pads"], [p + "padded"], name=f"pad{i}", mode="constant"),
            helper.make_node("Conv", [p + "padded", "w"], [p + "y"], name=f"conv{i}", kernel_shape=[1, 3]),
        ]
        x = p + "y"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["out"]))
    graph = helper.make_graph(nodes, "swinlike", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4, 1, 1])], inits)
    path = tmp_path / "swinlike.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_pads_computed_through_a_transpose_fold_to_constants(tmp_path):
    """A Transpose of a folded constant folds too: the Pad's pads are known ([0,0,0,0,0,0,0,2]: W 6 -> 8)."""
    g = dlasim.load(str(_swin_like_onnx(tmp_path, 1)))
    pad = g.layer("pad0")
    assert pad.attributes["pads"] == [0, 0, 0, 0, 0, 0, 0, 2]
    assert g.tensors[pad.outputs[0]].shape == (1, 4, 6, 8)


def test_shape_arithmetic_that_needs_many_rounds_is_followed_to_the_end(tmp_path):
    """Twelve blocks, each needing one more round of inference and folding (the old loop stopped after 8,
    or as soon as the graph output's shape was known): every Pad writes (1, 4, 6, 8), every conv (1, 4, 6, 6);
    MACs by hand: 12 convs x 4 out x 4 in x 1x3 kernel x 6x6 outputs = 12 x 1728."""
    g = dlasim.load(str(_swin_like_onnx(tmp_path, 12)))
    assert [g.tensors[g.layer(f"pad{i}").outputs[0]].shape for i in range(12)] == [(1, 4, 6, 8)] * 12
    assert g.macs == 12 * 4 * 4 * 3 * 36


def test_shape_of_a_value_folded_in_the_same_round(tmp_path):
    """Shape(Range(0, W, 1)): the Range folds to [0..5] before ONNX inference knows its length, so its Shape
    must be read from the folded value (Swin-T's attention-mask arithmetic); the amount padded is 8 - 6."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def const(name, value, dtype=np.int64):
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value, dtype), name))

    nodes = [
        const("three", 3), const("zero", 0), const("one", 1), const("eight", [8]), const("zeros", [0] * 7),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "three"], ["w"], axis=0),
        helper.make_node("Range", ["zero", "w", "one"], ["r"]),
        helper.make_node("Shape", ["r"], ["n"]),
        helper.make_node("Sub", ["eight", "n"], ["amount"]),
        helper.make_node("Concat", ["zeros", "amount"], ["pads"], axis=0),
        helper.make_node("Pad", ["x", "pads"], ["y"], name="pad", mode="constant"),
        helper.make_node("Relu", ["y"], ["out"]),
    ]
    graph = helper.make_graph(nodes, "rng", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)])
    path = tmp_path / "rng.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    g = dlasim.load(str(path))
    assert g.layer("pad").attributes["pads"] == [0, 0, 0, 0, 0, 0, 0, 2]
    assert g.tensors["out"].shape == (1, 4, 6, 8)


def test_dynamic_height_and_width_are_named_not_filled_with_1(tmp_path):
    """An Ultralytics `dynamic=True` export has inputs (batch, 3, height, width): the error named the
    example shape 1x3x1x1 (a 1x1 image); it names the dynamic dimensions and leaves them to be chosen."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Relu", ["images"], ["y"])], "dyn",
                              [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    try:
        dlasim.load(str(path))
    except dlasim.DlasimError as e:
        msg = str(e)
    assert "\n" not in msg
    assert "input 'images' has dynamic dimensions (batch, height, width)" in msg
    assert "--shapes images:1x3xHEIGHTxWIDTH" in msg and "1x3x1x1" not in msg
    assert dlasim.load(str(path), shapes={"images": (1, 3, 480, 640)}).tensors["y"].shape == (1, 3, 480, 640)


# ---- Einsum (torchvision MaxViT exports its attention as torch.einsum) ----------------------------------
def _attention_scores(einsum: bool):
    b = GraphBuilder("qk")
    q = b.input("q", (1, 64, 2, 49, 32))
    k = b.input("k", (1, 64, 2, 49, 32))
    if einsum:
        y = b.op("Einsum", [q, k], {"equation": "B G H I D, B G H J D -> B G H I J"}, name="scores")
    else:
        y = b.op("MatMul", [q, b.op("Transpose", [k], {"perm": [0, 1, 2, 4, 3]})], name="scores")
    return b.build([y])


def test_einsum_has_its_shape_and_macs():
    """MaxViT-T's Q.K^T: 1 x 64 x 2 x 49 x 49 scores, each a sum over D = 32: 9,834,496 MACs; the
    implicit form ("ij,jk") outputs the letters used once, alphabetically (ik)."""
    g = _attention_scores(einsum=True)
    assert g.tensors[g.layer("scores").outputs[0]].shape == (1, 64, 2, 49, 49)
    assert g.macs == 64 * 2 * 49 * 49 * 32 == 9_834_496
    b = GraphBuilder("mm")
    y = b.op("Einsum", [b.input("a", (3, 5)), b.input("c", (5, 7))], {"equation": "ij,jk"})
    assert b.build([y]).tensors[y].shape == (3, 7)


def test_einsum_costs_what_the_same_batched_matmul_costs():
    """An Einsum of two activations is the GEMM of the equivalent MatMul (Q times K transposed, whose
    transpose folds into the MatMul): same MACs, same GPU time; it was an unknown op, priced as two passes
    over its bytes with no MACs."""
    est = {m: dlasim.estimate(_attention_scores(m), "a100", device="gpu", precision="fp16") for m in (True, False)}
    step = {m: next(s for s in e.steps if s.name.startswith("scores")) for m, e in est.items()}
    assert step[True].macs == step[False].macs == 9_834_496
    assert step[True].time_ms == step[False].time_ms > 0
    assert step[True].parts.kernel_class == "gemm"


def test_einsum_falls_back_from_the_dla_as_an_unsupported_op():
    e = dlasim.estimate(_attention_scores(True), "orin-agx", device="dla", precision="int8")
    assert [(f.name, f.kind.value) for f in e.fallback] == [("scores", "unsupported_op")]


def test_einsum_forms_dlasim_does_not_model_stay_flagged_unknown():
    b = GraphBuilder("e")
    y = b.op("Einsum", [b.input("a", (2, 3, 4))], {"equation": "...ij->...ji"}, name="t")
    g = b.build([y])
    assert "unknown_op" in g.layer("t").flags


# ---- dlasim concurrent with a dynamic-axes export -------------------------------------------------------
def _dynamic_onnx(tmp_path):
    b = GraphBuilder("dyn")
    x = b.input("images", (1, 3, 64, 64))
    proto = b.build([b.relu(b.conv(x, 32, kernel=3, stride=2))]).to_onnx()
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    for i, name in ((0, "batch"), (2, "height"), (3, "width")):
        dims[i].dim_param = name
    import onnx
    path = tmp_path / "dyn.onnx"
    onnx.save(proto, str(path))
    return path


def test_concurrent_takes_the_shapes_of_a_dynamic_model(tmp_path, capsys):
    """`dlasim concurrent MODEL --shapes ...` (and shapes= per --engine) estimates each engine at those
    shapes, as `dlasim estimate --shapes` does; without them it stops with the one-line dynamic-input error
    (--shapes was an unknown option of concurrent, so a dynamic export could not run there at all)."""
    import json
    from dlasim.cli import main
    m = str(_dynamic_onnx(tmp_path))
    alone = dlasim.estimate(m, "orin-agx", device="dla", precision="int8", shapes={"images": (1, 3, 64, 64)})
    assert main(["concurrent", m, "--shapes", "images:1x3x64x64", "--hw", "orin-agx", "--int8",
                 "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    dla0 = next(e for e in d["engines"] if e["unit"] == "dla0")
    assert dla0["alone_ms"] == alone.total_ms
    assert main(["concurrent", "--hw", "orin-agx", "--engine", f"{m},device=dla1,shapes=images:1x3x64x64",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["engines"][0]["alone_ms"] == alone.total_ms
    assert main(["concurrent", m, "--hw", "orin-agx"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has dynamic dimensions (batch, height, width)" in err


def test_a_pad_of_zeros_is_removed_like_an_identity():
    """Swin-T at 224 pads every window partition by 0: such a Pad is the identity and is folded (it fell
    back from the DLA, "Pad is not supported", splitting the loadable); a real pad stays."""
    def net(pads):
        b = GraphBuilder("p")
        x = b.relu(b.conv(b.input("x", (1, 16, 14, 14)), 16, kernel=3))
        y = b.op("Pad", [x], {"pads": pads, "mode": "constant"}, name="pad")
        return b.build([b.relu(b.conv(y, 16, kernel=3))])
    zero = dlasim.estimate(net([0] * 8), "orin-agx", device="dla", precision="int8")
    assert zero.fallback == [] and zero.dla_subgraphs == 1
    assert all("pad" not in s.layers for s in zero.steps)
    real = dlasim.estimate(net([0, 0, 1, 1, 0, 0, 1, 1]), "orin-agx", device="dla", precision="int8")
    assert [f.name for f in real.fallback] == ["pad"]


def test_run_on_gpu_advice_calls_only_a_one_loadable_network_tiny():
    """Swin-T (4.49 G MACs) on the Orin DLA was 'tiny' in explain's advice because launches and hand-overs
    of its 16 DLA subgraphs dominate; the advice now names that cause. A small one-loadable network keeps
    'the network is tiny'."""
    b = GraphBuilder("islands")
    y = b.input("x", (1, 64, 28, 28))
    for i in range(6):      # each GlobalAveragePool falls back, cutting the DLA work
        y = b.relu(b.conv(y, 64, kernel=3, name=f"c{i}"))
        y = b.mul(y, b.op("GlobalAveragePool", [y], name=f"gap{i}"))
    frag = dlasim.explain(b.build([y]), "orin-agx", device="dla", precision="int8")
    text = next(a["text"] for a in frag.advice if a["change"] == "run_on_gpu")
    assert frag.estimate.dla_subgraphs > 1
    assert "tiny" not in text and f"splitting the DLA work into {frag.estimate.dla_subgraphs} DLA subgraphs" in text
    tiny = dlasim.explain("zoo:seed000_conv1x1", "xavier-agx", device="dla", precision="int8", batch=32)
    assert tiny.estimate.dla_subgraphs == 1
    assert next(a["text"] for a in tiny.advice if a["change"] == "run_on_gpu").startswith("the network is tiny")
