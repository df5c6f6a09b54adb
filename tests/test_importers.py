"""Importers: Caffe prototxt (shared reference networks and hand-written fixtures), ONNX models built with
onnx.helper in the test, load_model dispatch and errors, and the trtexec --shapes parser."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dlasim.errors import ModelError
from dlasim.importers import load_model, parse_shapes
from dlasim.importers.caffe import parse_prototxt
from dlasim.ir import GraphBuilder

# validation/data holds the shared reference data (../shared/data) copied with their sources
DATA = Path(__file__).resolve().parents[1] / "validation" / "data"
PROTOTXTS = sorted((DATA / "haxconn" / "prototxt").glob("*.prototxt")) + sorted((DATA / "seeds").glob("*.prototxt"))


def _data(*parts: str) -> Path:
    p = DATA.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared data not available: {p}")
    return p


def _one_line_error(fn, *args, **kwargs) -> str:
    with pytest.raises(ModelError) as e:
        fn(*args, **kwargs)
    msg = str(e.value)
    assert "\n" not in msg and msg
    return msg


def _out(g, layer_name: str):
    return g.tensors[g.layer(layer_name).outputs[0]].shape


# ---- Caffe: the shared reference networks ----------------------------------------------------------
@pytest.mark.parametrize("path", PROTOTXTS, ids=lambda p: p.name)
def test_every_shared_prototxt_imports(path):
    g = load_model(path, batch=1)
    assert g.layers and g.outputs and g.macs > 0
    assert all(g.tensors[t].shape for l in g.layers for t in l.outputs)
    assert not [l.name for l in g.layers if "unknown_op" in l.flags]
    assert g.batch == 1


def test_resnet50_macs():
    g = load_model(_data("haxconn", "prototxt", "resnet50.prototxt"), batch=1)
    # Caffe ResNet-50 (He et al.'s deploy file) strides the first 1x1 conv of a stage, which gives 3.86 GMAC;
    # the 4.1 G usually quoted is torchvision's v1.5, which strides the 3x3 instead.
    assert 3.85e9 < g.macs < 3.87e9
    assert g.layer("res3a_branch2a").attributes["strides"] == [2, 2]
    assert _out(g, "fc1000") == (1, 1000)


def test_googlenet_macs_and_caffe_ceil_pooling():
    g = load_model(_data("haxconn", "prototxt", "googlenet.prototxt"), batch=1)
    assert 1.4e9 < g.macs < 1.65e9
    assert _out(g, "pool1/3x3_s2") == (1, 64, 56, 56)  # (112 - 3) / 2 rounded up, + 1
    assert _out(g, "pool5/7x7_s1") == (1, 1024, 1, 1)
    assert g.layer("pool1/3x3_s2").attributes["ceil_mode"] == 1


def test_seed_single_conv_macs():
    g3 = load_model(_data("seeds", "kernel_3x3.prototxt"))
    g1 = load_model(_data("seeds", "kernel_1x1.prototxt"))
    assert g3.macs == 528 * 256 * 9 * 14 * 14 == 238_436_352
    assert g1.macs == 528 * 256 * 196
    conv = g3.layer("conv1")
    assert conv.op == "Conv" and len(conv.inputs) == 2  # bias_term: false
    assert g3.tensors[conv.inputs[1]].shape == (256, 528, 3, 3)


def test_in_place_layers_become_ssa():
    g = load_model(_data("haxconn", "prototxt", "resnet50.prototxt"))
    bn, scale, relu = g.layer("bn_conv1"), g.layer("scale_conv1"), g.layer("conv1_relu")
    assert bn.inputs[0] == "conv1"
    assert scale.inputs[0] == bn.outputs[0] != "conv1"
    assert relu.inputs[0] == scale.outputs[0]
    assert g.layer("pool1").inputs[0] == relu.outputs[0]
    assert len({t for l in g.layers for t in l.outputs}) == sum(len(l.outputs) for l in g.layers)


def test_header_batch_is_overridable():
    path = _data("haxconn", "prototxt", "vgg16.prototxt")
    assert load_model(path).batch == 2  # input_dim: 2
    g = load_model(path, batch=1)
    assert g.batch == 1 and _out(g, "fc8") == (1, 1000)


# ---- Caffe: hand-written fixtures --------------------------------------------------------------------
NET = """
name: "tiny"   # comment
input: “data”
input_shape { dim: 1 dim: 3 dim: 16 dim: 16 }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 8 kernel_h: 3 kernel_w: 1 pad_h: 1 stride: 1 group: 1 } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" relu_param { negative_slope: 0.1 } }
layer { name: "prelu" type: "PReLU" bottom: "conv" top: "p" }
layer { name: "split" type: "Split" bottom: "p" top: "a" top: "b" top: "c" }
layer { name: "sum" type: "Eltwise" bottom: "a" bottom: "b" bottom: "c" top: "sum" }
layer { name: "max" type: "Eltwise" bottom: "a" bottom: "b" top: "max" eltwise_param { operation: MAX } }
layer { name: "cat" type: "Concat" bottom: "sum" bottom: "max" top: "cat" concat_param { concat_dim: 1 } }
layer { name: "up" type: "Upsample" bottom: "cat" top: "up" upsample_param { scale: 2 } }
layer { name: "pool" type: "Pooling" bottom: "up" top: "pool"
  pooling_param { pool: AVE kernel_size: 3 stride: 2 } }
layer { name: "gpool" type: "Pooling" bottom: "pool" top: "gpool" pooling_param { pool: MAX global_pooling: true } }
layer { name: "weird" type: "MyPlugin" bottom: "gpool" top: "weird" }
layer { name: "fc" type: "InnerProduct" bottom: "weird" top: "fc" inner_product_param { num_output: 10 } }
layer { name: "prob" type: "Softmax" bottom: "fc" top: "prob" }
"""


def test_prototxt_fixture(tmp_path):
    p = tmp_path / "tiny.prototxt"
    p.write_text(NET, encoding="utf-8")
    g = load_model(p)
    assert g.name == "tiny" and g.inputs == ["data"] and g.outputs == [g.layer("prob").outputs[0]]
    assert g.layer("conv").attributes["kernel_shape"] == [3, 1] and g.layer("conv").attributes["pads"] == [1, 0, 1, 0]
    assert _out(g, "conv") == (1, 8, 16, 16)
    assert g.layer("relu").op == "LeakyRelu" and g.layer("relu").attributes["alpha"] == pytest.approx(0.1)
    assert g.tensors[g.layer("prelu").inputs[1]].shape == (8,)
    assert [g.layer(f"split_{i}").op for i in range(3)] == ["Identity"] * 3
    assert g.layer("sum").op == "Sum" and g.layer("max").op == "Max"
    assert _out(g, "cat") == (1, 16, 16, 16)
    assert g.layer("up").op == "Resize" and _out(g, "up") == (1, 16, 32, 32)
    assert _out(g, "pool") == (1, 16, 16, 16)  # ceil((32 - 3) / 2) + 1
    assert g.layer("gpool").op == "GlobalMaxPool"
    assert "unknown_op" in g.layer("weird").flags and _out(g, "weird") == (1, 16, 1, 1)
    fc = g.layer("fc")
    assert fc.op == "Gemm" and fc.attributes["transB"] == 1 and g.tensors[fc.inputs[1]].shape == (10, 16)
    assert _out(g, "prob") == (1, 10)


def test_prototxt_crop_to_a_reference_blob_and_crop_without_one(tmp_path):
    p = tmp_path / "crop.prototxt"
    p.write_text('input: "data"\ninput_shape { dim: 1 dim: 4 dim: 10 dim: 12 }\n'
                 'input: "ref"\ninput_shape { dim: 1 dim: 4 dim: 6 dim: 8 }\n'
                 'layer { name: "crop" type: "Crop" bottom: "data" bottom: "ref" top: "c"\n'
                 '  crop_param { axis: 2 offset: 1 offset: 2 } }\n'
                 'layer { name: "alone" type: "Crop" bottom: "c" top: "d" }\n')
    g = load_model(p)
    crop = g.layer("crop")
    # axes 2, 3 from crop_param.axis; ends = offset + the reference blob's size on that axis (6, 8)
    assert crop.op == "Slice" and crop.attributes == {"starts": [1, 2], "ends": [7, 10], "axes": [2, 3]}
    assert crop.inputs == ["data"] and _out(g, "crop") == (1, 4, 6, 8)
    alone = g.layer("alone")       # one bottom: no handler applies, the unknown-op path keeps it
    assert alone.op == "Crop" and "unknown_op" in alone.flags and _out(g, "alone") == (1, 4, 6, 8)


def test_caffe_handler_table_covers_only_caffe_types():
    from dlasim.importers.caffe_checks import CAFFE_TYPES
    from dlasim.importers.caffe_layers import HANDLERS, V1_TYPES
    assert set(HANDLERS) <= set(CAFFE_TYPES)
    assert {"Convolution", "Deconvolution", "Pooling", "InnerProduct", "TanH"} <= set(HANDLERS)
    assert "MyPlugin" not in HANDLERS and "" not in HANDLERS
    assert set(V1_TYPES.values()) <= set(CAFFE_TYPES)


def test_prototxt_v1_layers_and_input_dim(tmp_path):
    p = tmp_path / "v1.prototxt"
    p.write_text('input: "data"\ninput_dim: 1\ninput_dim: 3\ninput_dim: 8\ninput_dim: 8\n'
                 'layers { name: "conv1" type: CONVOLUTION bottom: "data" top: "conv1"\n'
                 '  convolution_param { num_output: 4 kernel_size: 3 pad: 1 } }\n'
                 'layers { name: "relu1" type: RELU bottom: "conv1" top: "conv1" }\n')
    g = load_model(p)
    assert [l.op for l in g.layers] == ["Conv", "Relu"] and _out(g, "relu1") == (1, 4, 8, 8)


def test_parse_prototxt_forms():
    msg = parse_prototxt('a: 1 b: "x y" c { d: [1, 2] } c: { d: 3 } e: MAX f: 1e-5 g: ‘q’', "t")
    assert msg == {"a": [1], "b": ["x y"], "c": [{"d": [1, 2]}, {"d": [3]}], "e": ["MAX"], "f": [1e-5],
                   "g": ["q"]}


@pytest.mark.parametrize("text, where", [
    ("layer {\n  name: \"x\"\n", ":1: '{' is never closed"),
    ("layer { }\n}\n", ":2: unexpected '}'"),
    ("layer { name \"x\" }", ":1: expected ':' or '{'"),
    ("layer { name: \"x }", ":1: unterminated string"),
    ("a: 1 $", ":1: unexpected character"),
])
def test_malformed_prototxt(tmp_path, text, where):
    p = tmp_path / "bad.prototxt"
    p.write_text(text)
    msg = _one_line_error(load_model, p)
    assert str(p) + where in msg


def test_prototxt_dangling_bottom(tmp_path):
    p = tmp_path / "dangling.prototxt"
    p.write_text('input: "data" input_shape { dim: 1 dim: 3 dim: 8 dim: 8 }\n'
                 'layer { name: "relu" type: "ReLU" bottom: "nothere" top: "r" }\n')
    msg = _one_line_error(load_model, p)
    assert "'relu'" in msg and "'nothere'" in msg


def test_prototxt_reshape_with_written_batch_follows_batch(tmp_path):
    p = tmp_path / "reshape.prototxt"
    p.write_text('input: "data" input_shape { dim: 1 dim: 8 dim: 4 dim: 4 }\n'
                 'layer { name: "r" type: "Reshape" bottom: "data" top: "r"\n'
                 '  reshape_param { shape { dim: 1 dim: -1 } } }\n')
    assert load_model(p).layer("r").attributes["shape"] == [0, -1]
    assert load_model(p, batch=3).tensors["r"].shape == (3, 128)


def test_prototxt_missing_input_shape_asks_for_shapes(tmp_path):
    p = tmp_path / "noshape.prototxt"
    p.write_text('input: "data"\nlayer { name: "relu" type: "ReLU" bottom: "data" top: "r" }\n')
    assert "--shapes data:" in _one_line_error(load_model, p)
    assert load_model(p, shapes={"data": (1, 3, 4, 4)}).tensors["r"].shape == (1, 3, 4, 4)


# ---- ONNX ---------------------------------------------------------------------------------------------
try:                                  # only the ONNX tests need onnx: the Caffe and load_model tests run without it
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    onnx = None
needs_onnx = pytest.mark.skipif(onnx is None, reason="onnx is not installed")


def _init(name: str, shape, dtype=np.float32, value=None):
    arr = np.asarray(value, dtype=dtype) if value is not None else np.zeros(shape, dtype)
    return numpy_helper.from_array(arr, name)


def _save(tmp_path, nodes, inputs, outputs, inits=(), opset=13, name="m"):
    """Write a model; inputs/outputs are (name, shape) pairs (shape None: let inference find it)."""
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs]
    vo = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs]
    model = helper.make_model(helper.make_graph(nodes, name, vi, vo, list(inits)),
                              opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


@needs_onnx
def test_onnx_conv(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                              strides=[2, 2])]
    p = _save(tmp_path, nodes, [("x", [1, 3, 32, 32])], [("y", None)], [_init("w", (16, 3, 3, 3)), _init("b", (16,))])
    g = load_model(p)
    conv = g.layer("conv")
    assert conv.op == "Conv" and g.tensors["y"].shape == (1, 16, 16, 16)
    assert g.tensors["w"].const and g.tensors["w"].shape == (16, 3, 3, 3)
    assert g.macs == 16 * 16 * 16 * 3 * 9 and g.params == 16 * 27 + 16


@needs_onnx
def test_onnx_auto_pad_same_upper(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2])]
    p = _save(tmp_path, nodes, [("x", [1, 3, 32, 32])], [("y", None)], [_init("w", (8, 3, 3, 3))])
    conv = load_model(p).layers[0]
    assert conv.name == "Conv_0" and conv.attributes["pads"] == [0, 0, 1, 1] and conv.attributes["kernel_shape"] == [3, 3]


@needs_onnx
def test_onnx_gemm_and_matmul_with_constant_weights(tmp_path):
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
             helper.make_node("MatMul", ["h", "w2"], ["y"], name="fc2")]
    p = _save(tmp_path, nodes, [("x", [4, 64])], [("y", None)],
              [_init("w1", (32, 64)), _init("b1", (32,)), _init("w2", (32, 10))])
    g = load_model(p)
    assert g.tensors["h"].shape == (4, 32) and g.tensors["y"].shape == (4, 10)
    assert g.layer_macs(g.layer("fc1")) == 4 * 32 * 64 and g.layer_macs(g.layer("fc2")) == 4 * 10 * 32
    assert [t.name for t in g.const_inputs(g.layer("fc2"))] == ["w2"]


@needs_onnx
def test_onnx_dynamic_matmul_of_two_inputs(tmp_path):
    nodes = [helper.make_node("MatMul", ["q", "k"], ["y"], name="qk")]
    p = _save(tmp_path, nodes, [("q", [1, 8, 128, 64]), ("k", [1, 8, 64, 128])], [("y", None)])
    g = load_model(p)
    assert g.inputs == ["q", "k"] and g.tensors["y"].shape == (1, 8, 128, 128)
    assert g.macs == 8 * 128 * 128 * 64 and g.params == 0


@needs_onnx
def test_onnx_concat(tmp_path):
    nodes = [helper.make_node("Concat", ["a", "b"], ["y"], axis=1)]
    p = _save(tmp_path, nodes, [("a", [1, 3, 8, 8]), ("b", [1, 5, 8, 8])], [("y", None)])
    assert load_model(p).tensors["y"].shape == (1, 8, 8, 8)


@needs_onnx
def test_onnx_resize_scales_initializer(tmp_path):
    nodes = [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")]
    p = _save(tmp_path, nodes, [("x", [1, 4, 10, 10])], [("y", None)],
              [_init("scales", None, value=[1, 1, 2, 2])], opset=13)
    g = load_model(p)
    layer = g.layers[0]
    assert layer.inputs == ["x"] and layer.attributes["scales"] == [1.0, 1.0, 2.0, 2.0] and layer.attributes["mode"] == "nearest"
    assert g.tensors["y"].shape == (1, 4, 20, 20) and "scales" not in g.tensors


@needs_onnx
def test_onnx_mish_op_and_softplus_tanh_mul(tmp_path):
    p1 = _save(tmp_path, [helper.make_node("Mish", ["x"], ["y"])], [("x", [1, 8, 4, 4])], [("y", None)],
               opset=18, name="mish")
    g1 = load_model(p1)
    assert [l.op for l in g1.layers] == ["Mish"] and not g1.layers[0].flags
    nodes = [helper.make_node("Softplus", ["x"], ["sp"]), helper.make_node("Tanh", ["sp"], ["t"]),
             helper.make_node("Mul", ["x", "t"], ["y"])]
    g2 = load_model(_save(tmp_path, nodes, [("x", [1, 8, 4, 4])], [("y", None)], name="mish3"))
    assert [l.op for l in g2.layers] == ["Softplus", "Tanh", "Mul"]
    assert g2.tensors["y"].shape == (1, 8, 4, 4) and not any(l.flags for l in g2.layers)


@needs_onnx
def test_onnx_reshape_shape_initializer_follows_batch(tmp_path):
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="flat")]
    p = _save(tmp_path, nodes, [("x", [1, 8, 4, 4])], [("y", None)],
              [_init("shape", None, np.int64, [1, 128])])
    g = load_model(p)
    flat = g.layer("flat")
    assert flat.inputs == ["x"] and flat.attributes["shape"] == [0, 128] and g.tensors["y"].shape == (1, 128)
    assert load_model(p, batch=4).tensors["y"].shape == (4, 128)


@needs_onnx
def test_onnx_shape_arithmetic_is_folded(tmp_path):
    """x.view(x.size(0), -1) as torch.onnx writes it at opset 13: Shape -> Gather -> Unsqueeze -> Concat."""
    nodes = [helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.int64))),
             helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["f"], name="view"),
             helper.make_node("Gemm", ["f", "w"], ["y"], name="fc", transB=1)]
    p = _save(tmp_path, nodes, [("x", ["N", 8, 2, 2])], [("y", None)],
              [_init("axes", None, np.int64, [0]), _init("minus1", None, np.int64, [-1]), _init("w", (10, 32))])
    g = load_model(p, shapes={"x": (2, 8, 2, 2)})
    assert [l.name for l in g.layers] == ["view", "fc"]
    assert g.layer("view").attributes["shape"] == [0, -1] and g.tensors["y"].shape == (2, 10)
    assert set(g.tensors) == {"x", "f", "w", "y"}


@needs_onnx
def test_onnx_resize_sizes_from_shape_chain_and_split_clip_params(tmp_path):
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Slice", ["s", "st", "en"], ["nc"]),
             helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0),
             helper.make_node("Resize", ["x", "", "", "sizes"], ["up"], name="up", mode="nearest"),
             helper.make_node("Split", ["up", "split"], ["a", "b"], name="split", axis=1),
             helper.make_node("Clip", ["a", "lo", "hi"], ["y"], name="relu6")]
    inits = [_init("st", None, np.int64, [0]), _init("en", None, np.int64, [2]), _init("hw", None, np.int64, [40, 40]),
             _init("split", None, np.int64, [1, 3]), _init("lo", None, value=0.0), _init("hi", None, value=6.0)]
    p = _save(tmp_path, nodes, [("x", [1, 4, 20, 20])], [("y", None), ("b", None)], inits, opset=13)
    g = load_model(p)
    assert [l.name for l in g.layers] == ["up", "split", "relu6"]
    assert g.layer("up").attributes["scales"] == [1.0, 1.0, 2.0, 2.0] and g.layer("up").inputs == ["x"]
    assert g.layer("split").attributes["split"] == [1, 3] and g.tensors["b"].shape == (1, 3, 40, 40)
    assert g.layer("relu6").attributes == {"min": 0.0, "max": 6.0} and g.layer("relu6").inputs == ["a"]
    assert load_model(p, batch=2).tensors["b"].shape == (2, 3, 40, 40)


@needs_onnx
def test_onnx_exported_resnet50():
    """onnx ships Caffe2's ResNet-50 with ConstantOfShape weights; they fold into constants."""
    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"
    if not path.exists():
        pytest.skip("onnx test data not installed")
    g = load_model(path)
    assert 4.08e9 < g.macs < 4.10e9 and 25.5e6 < g.params < 25.7e6
    assert not any(l.flags for l in g.layers) and g.tensors[g.outputs[0]].shape == (1, 1000)
    assert load_model(path, batch=2).macs == 2 * g.macs


@needs_onnx
def test_onnx_constant_node_parameter_is_dropped(tmp_path):
    nodes = [helper.make_node("Constant", [], ["axes"], value=numpy_helper.from_array(np.array([2, 3], np.int64))),
             helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=1)]
    p = _save(tmp_path, nodes, [("x", [1, 8, 4, 4])], [("y", None)], opset=18)
    g = load_model(p)
    assert [l.op for l in g.layers] == ["ReduceMean"] and g.layers[0].attributes["axes"] == [2, 3]
    assert g.tensors["y"].shape == (1, 8, 1, 1) and "axes" not in g.tensors


@needs_onnx
def test_onnx_unknown_op_keeps_onnx_inferred_shape(tmp_path):
    nodes = [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2)]
    g = load_model(_save(tmp_path, nodes, [("x", [1, 16, 8, 8])], [("y", None)]))
    assert "unknown_op" in g.layer("d2s").flags and g.tensors["y"].shape == (1, 4, 16, 16)


@needs_onnx
def test_onnx_symbolic_batch_needs_shapes(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    p = _save(tmp_path, nodes, [("x", ["N", 3, 32, 32])], [("y", None)])
    msg = _one_line_error(load_model, p)
    assert "input 'x' has a dynamic dimension" in msg and "--shapes x:1x3x32x32" in msg
    g = load_model(p, shapes={"x": (2, 3, 32, 32)})
    assert g.tensors["y"].shape == (2, 3, 32, 32)
    assert load_model(p, batch=3).tensors["y"].shape == (3, 3, 32, 32)
    assert "'z'" in _one_line_error(load_model, p, shapes={"z": (1, 3, 32, 32)})


@needs_onnx
def test_onnx_dangling_tensor(tmp_path):
    nodes = [helper.make_node("Add", ["x", "ghost"], ["y"], name="add")]
    p = _save(tmp_path, nodes, [("x", [1, 4])], [("y", None)])
    msg = _one_line_error(load_model, p)
    assert "'add'" in msg and "'ghost'" in msg


@needs_onnx
def test_onnx_garbage_bytes(tmp_path):
    p = tmp_path / "garbage.onnx"
    p.write_bytes(b"\x00\xffthis is not an onnx model\x12\x99" * 10)
    assert "not a valid ONNX model" in _one_line_error(load_model, p)


# ---- load_model and parse_shapes ------------------------------------------------------------------------
@needs_onnx
def test_unreadable_onnx_path(tmp_path):
    assert "cannot read" in _one_line_error(load_model, tmp_path / "missing.onnx")


def test_unreadable_path_and_unknown_suffix(tmp_path):
    assert "cannot read" in _one_line_error(load_model, tmp_path / "missing.prototxt")
    (tmp_path / "model.pb").write_text("x")
    assert "unknown model format '.pb'" in _one_line_error(load_model, tmp_path / "model.pb")


def test_graph_and_json_models(tmp_path):
    b = GraphBuilder("tiny")
    x = b.input("x", (1, 3, 16, 16))
    g = b.build([b.relu(b.conv(x, 8, kernel=3))])
    assert load_model(g) is g
    g4 = load_model(g, batch=4)
    assert g4.batch == 4 and g.batch == 1
    p = tmp_path / "tiny.json"
    p.write_text(g.to_json())
    assert load_model(p).macs == g.macs
    assert load_model(p, shapes={"x": (2, 3, 16, 16)}).macs == 2 * g.macs


def test_zoo_dispatch():
    zoo = pytest.importorskip("dlasim.zoo")
    name = zoo.names()[0]
    assert load_model(f"zoo:{name}", batch=2).batch == 2
    _one_line_error(load_model, "zoo:no-such-network")


def test_parse_shapes():
    assert parse_shapes("input:1x3x224x224") == {"input": (1, 3, 224, 224)}
    assert parse_shapes("a:1x3,b:2x4x5") == {"a": (1, 3), "b": (2, 4, 5)}
    assert parse_shapes("input:0:1x3x8x8") == {"input:0": (1, 3, 8, 8)}
    assert parse_shapes("'in:0':1X3") == {"in:0": (1, 3)}
    for bad in ("", "input", "input:", "input:1x0", "input:1xa", ":1x3", "a:1,a:2"):
        assert "--shapes" in _one_line_error(parse_shapes, bad)
