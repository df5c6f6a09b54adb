"""Importers, facts from the format specifications computed by hand: Caffe layer parameters and defaults
(caffe/src/caffe/proto/caffe.proto, the pooling layer's ceil rounding), ONNX attribute defaults and
input forms (onnx/docs/Operators.md), the byte sizes of ONNX tensor types (onnx.proto, as onnx's own numpy
mapping gives them), and the messages for bad input."""
from __future__ import annotations

import json

import numpy as np
import pytest

from dlasim.errors import ModelError
from dlasim.importers import load_model
from dlasim.importers.caffe import parse_prototxt

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    onnx = None
needs_onnx = pytest.mark.skipif(onnx is None, reason="onnx is not installed")


def _caffe(tmp_path, text, name="net"):
    p = tmp_path / f"{name}.prototxt"
    p.write_text(text, encoding="utf-8")
    return load_model(p)


def _out(g, layer):
    return g.tensors[g.layer(layer).outputs[0]].shape


# ---- Caffe -----------------------------------------------------------------------------------------
# two inputs, declared in the header (four input_dim each, in order) or by one Input layer with two tops
_TWO_INPUTS = {
    "header": ('input: "a" input: "b" input_dim: 1 input_dim: 3 input_dim: 8 input_dim: 8 '
               'input_dim: 1 input_dim: 5 input_dim: 4 input_dim: 4\n'),
    "input_layer": ('layer { name: "in" type: "Input" top: "a" top: "b" input_param { '
                    'shape { dim: 1 dim: 3 dim: 8 dim: 8 } shape { dim: 1 dim: 5 dim: 4 dim: 4 } } }\n'),
}


@pytest.mark.parametrize("form", sorted(_TWO_INPUTS))
def test_caffe_two_inputs_get_each_its_own_shape(tmp_path, form):
    g = _caffe(tmp_path, _TWO_INPUTS[form] +
               'layer { name: "ra" type: "ReLU" bottom: "a" top: "ra" }\n'
               'layer { name: "rb" type: "ReLU" bottom: "b" top: "rb" }\n')
    assert g.tensors["a"].shape == (1, 3, 8, 8) and g.tensors["b"].shape == (1, 5, 4, 4)


def test_caffe_pooling_with_its_own_pad_and_stride_per_axis(tmp_path):
    # caffe.proto PoolingParameter: pad_h/pad_w, stride_h/stride_w; round_mode CEIL by default.
    # H: ceil((8 + 2*1 - 3) / 2) + 1 = 5 (the last window starts at 8 < 8 + 1: kept);
    # W: (8 + 0 - 3) / 1 + 1 = 6
    g = _caffe(tmp_path, 'input: "x" input_shape { dim: 1 dim: 1 dim: 8 dim: 8 }\n'
                         'layer { name: "p" type: "Pooling" bottom: "x" top: "p" pooling_param { pool: MAX '
                         'kernel_size: 3 stride_h: 2 stride_w: 1 pad_h: 1 pad_w: 0 } }\n')
    assert _out(g, "p") == (1, 1, 5, 6)
    assert g.layer("p").attributes["pads"] == [1, 0, 1, 0] and g.layer("p").attributes["strides"] == [2, 1]


def test_caffe_scale_bias_has_one_value_per_channel(tmp_path):
    g = _caffe(tmp_path, 'input: "x" input_shape { dim: 1 dim: 4 dim: 2 dim: 3 }\n'
                         'layer { name: "sc" type: "Scale" bottom: "x" top: "y" scale_param { bias_term: true } }\n')
    layer = g.layer("sc")
    assert [g.tensors[t].shape for t in layer.inputs[1:]] == [(4,), (4,)]


def test_caffe_flatten_axis_range(tmp_path):
    # caffe.proto FlattenParameter: axis 1, end_axis -1 by default; axis 1..2 of 1x2x3x4 -> 1x6x4
    net = 'input: "x" input_shape { dim: 1 dim: 2 dim: 3 dim: 4 }\n'
    g = _caffe(tmp_path, net + 'layer { name: "f" type: "Flatten" bottom: "x" top: "f" '
                               'flatten_param { end_axis: 2 } }\n'
                               'layer { name: "g" type: "Flatten" bottom: "x" top: "g" }\n')
    assert _out(g, "f") == (1, 6, 4)
    assert _out(g, "g") == (1, 24) and g.layer("g").op == "Flatten"


def test_caffe_upsample_default_scale_is_two(tmp_path):
    # UpsampleParameter of the Caffe forks that have the layer (caffe-segnet, the YOLO/SSD forks):
    # optional uint32 scale = 1 [default = 2]
    g = _caffe(tmp_path, 'input: "x" input_shape { dim: 1 dim: 2 dim: 3 dim: 4 }\n'
                         'layer { name: "u" type: "Upsample" bottom: "x" top: "u" }\n')
    assert _out(g, "u") == (1, 2, 6, 8)


def test_caffe_crop_to_a_same_size_reference_keeps_everything(tmp_path):
    # caffe.proto CropParameter: axis 2, offset 0 by default: cropping to a blob of the same size is a copy
    g = _caffe(tmp_path, 'input: "x" input_shape { dim: 1 dim: 3 dim: 10 dim: 10 }\n'
                         'input: "r" input_shape { dim: 1 dim: 3 dim: 10 dim: 10 }\n'
                         'layer { name: "c" type: "Crop" bottom: "x" bottom: "r" top: "c" }\n')
    assert _out(g, "c") == (1, 3, 10, 10)


def test_caffe_train_phase_given_as_its_number_is_skipped(tmp_path):
    # caffe.proto enum Phase { TRAIN = 0; TEST = 1; }: a layer included in phase 0 is not in the deploy net,
    # so its parameters are not checked
    g = _caffe(tmp_path, 'input: "x" input_shape { dim: 1 dim: 1 dim: 4 dim: 4 }\n'
                         'layer { name: "bad" type: "Pooling" bottom: "x" top: "t" include { phase: 0 } '
                         'pooling_param { kernel_size: 0 } }\n'
                         'layer { name: "r" type: "ReLU" bottom: "x" top: "r" }\n')
    assert [l.name for l in g.layers] == ["r"]


def test_caffe_in_place_layers_get_fresh_names_even_when_the_usual_ones_are_taken(tmp_path):
    # an in-place layer's output is named after the layer, else TOP/LAYER, else TOP/LAYER_1 (caffe.py, add):
    # here inputs already hold "r" and "x/r", so ReLU r writes "x/r_1"; the readers after it follow the chain
    g = _caffe(tmp_path, 'input: "x" input_shape { dim: 1 dim: 2 dim: 4 dim: 4 }\n'
                         'input: "r" input_shape { dim: 1 dim: 2 dim: 4 dim: 4 }\n'
                         'input: "x/r" input_shape { dim: 1 dim: 2 dim: 4 dim: 4 }\n'
                         'layer { name: "r" type: "ReLU" bottom: "x" top: "x" }\n'
                         'layer { name: "s" type: "Sigmoid" bottom: "x" top: "x" }\n'
                         'layer { name: "add" type: "Eltwise" bottom: "x" bottom: "r" bottom: "x/r" top: "y" }\n')
    assert [(l.inputs, l.outputs) for l in g.layers] == [(["x"], ["x/r_1"]), (["x/r_1"], ["s"]),
                                                         (["s", "r", "x/r"], ["y"])]


def test_caffe_one_by_one_pooling_with_stride_one_is_accepted(tmp_path):
    # caffe.proto: kernel_size, kernel_h/w, stride, stride_h/w are uint32 >= 1 (pooling_layer.cpp checks > 0)
    g = _caffe(tmp_path, 'input: "x" input_shape { dim: 1 dim: 2 dim: 4 dim: 4 }\n'
                         'layer { name: "p" type: "Pooling" bottom: "x" top: "p" '
                         'pooling_param { kernel_size: 1 stride: 1 } }\n'
                         'layer { name: "q" type: "Pooling" bottom: "x" top: "q" '
                         'pooling_param { kernel_h: 1 kernel_w: 1 stride_h: 1 stride_w: 1 } }\n')
    assert _out(g, "p") == _out(g, "q") == (1, 2, 4, 4)


def test_caffe_relu6_is_a_clip_to_0_6(tmp_path):
    g = _caffe(tmp_path, 'input: "x" input_shape { dim: 1 dim: 2 dim: 4 dim: 4 }\n'
                         'layer { name: "r" type: "ReLU6" bottom: "x" top: "r" }\n')
    assert g.layer("r").op == "Clip" and g.layer("r").attributes == {"min": 0.0, "max": 6.0}


def test_caffe_reshape_axis_and_num_axes(tmp_path):
    # caffe.proto ReshapeParameter: `shape` replaces num_axes axes from `axis` on (num_axes -1: all the rest).
    # 1x2x3x4, axis 1, num_axes 2, shape [6]: 1x6x4; axis 2, shape [12] (num_axes -1): 1x2x12
    net = 'input: "x" input_shape { dim: 1 dim: 2 dim: 3 dim: 4 }\n'
    g = _caffe(tmp_path, net + 'layer { name: "a" type: "Reshape" bottom: "x" top: "a" reshape_param { '
                               'shape { dim: 6 } axis: 1 num_axes: 2 } }\n'
                               'layer { name: "b" type: "Reshape" bottom: "x" top: "b" reshape_param { '
                               'shape { dim: 12 } axis: 2 } }\n'
                               'layer { name: "c" type: "Reshape" bottom: "x" top: "c" reshape_param { '
                               'shape { dim: 2 dim: 1 } axis: 1 num_axes: 1 } }\n')
    assert _out(g, "a") == (1, 6, 4) and _out(g, "b") == (1, 2, 12) and _out(g, "c") == (1, 2, 1, 3, 4)


def test_prototxt_list_with_a_block_inside_names_the_token_and_line():
    with pytest.raises(ModelError) as e:
        parse_prototxt('a: 1\nshape: [1, {]\n', "t.prototxt")
    assert str(e.value) == "t.prototxt:2: unexpected '{' in the list of 'shape'"


def test_graph_json_is_strict_about_types(tmp_path):
    g = _caffe(tmp_path, 'input: "x" input_shape { dim: 1 dim: 3 dim: 4 dim: 4 }\n'
                         'layer { name: "r" type: "ReLU" bottom: "x" top: "r" }\n')
    d = json.loads(g.to_json())
    good = tmp_path / "g.json"
    good.write_text(json.dumps(d))
    assert load_model(good).tensors["x"].shape == (1, 3, 4, 4)
    x = next(t for t in d["tensors"] if t["name"] == "x")
    x["shape"] = [1, "3", 4, 4]                      # a string where an integer belongs: refused, not coerced
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(ModelError, match="shape"):
        load_model(bad)
    x["shape"] = [1 << 20, 1 << 20]                  # exactly MAX_ELEMENTS (2**40) elements: the limit is allowed
    from dlasim.importers.graph_json import MAX_ELEMENTS, TensorRecord
    assert TensorRecord(name="x", shape=x["shape"]).shape == [1 << 20, 1 << 20] and MAX_ELEMENTS == 1 << 40
    with pytest.raises(ValueError):
        TensorRecord(name="x", shape=[1 << 20, (1 << 20) + 1])


# ---- ONNX ------------------------------------------------------------------------------------------
def _model(nodes, inputs, outputs, inits=(), opset=13, value_info=()):
    vi = [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs]
    vo = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs]
    graph = helper.make_graph(nodes, "m", vi, vo, list(inits),
                              value_info=[helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                          for n, s in value_info])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _save(tmp_path, model):
    p = tmp_path / "m.onnx"
    onnx.save(model, str(p))
    return p


def _f(name, shape):
    return (name, TensorProto.FLOAT, shape)


def _init(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


@needs_onnx
def test_an_in_memory_model_proto_loads():
    m = _model([helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3])], [_f("x", [1, 2, 8, 8])],
               [("y", None)], [_init("w", np.zeros((4, 2, 3, 3)))])
    assert load_model(m).tensors["y"].shape == (1, 4, 6, 6)


@needs_onnx
def test_a_dynamic_input_message_gives_the_python_spelling(tmp_path):
    p = _save(tmp_path, _model([helper.make_node("Relu", ["x"], ["y"])], [_f("x", ["N", 3, 32, 32])],
                               [("y", None)]))
    with pytest.raises(ModelError) as e:
        load_model(p)
    assert "shapes={'x': (1, 3, 32, 32)} (--shapes x:1x3x32x32)" in str(e.value)


@needs_onnx
def test_conv_auto_pad_without_strides_uses_stride_one(tmp_path):
    # Operators.md Conv: strides default to 1 along each spatial axis; SAME_UPPER with a 3x3 kernel pads 1 each side
    p = _save(tmp_path, _model([helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER")],
                               [_f("x", [1, 2, 8, 8])], [("y", None)], [_init("w", np.zeros((4, 2, 3, 3)))]))
    g = load_model(p)
    assert g.layers[0].attributes["pads"] == [1, 1, 1, 1] and g.tensors["y"].shape == (1, 4, 8, 8)


@needs_onnx
def test_resize_at_opset_11_reads_scales_from_input_2(tmp_path):
    # Operators.md Resize-11: inputs X, roi, scales, sizes (Resize-10: X, scales)
    node = helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="nearest")
    p = _save(tmp_path, _model([node], [_f("x", [1, 3, 8, 8])], [("y", None)],
                               [_init("roi", []), _init("scales", [1, 1, 2, 2])], opset=11))
    g = load_model(p)
    assert g.layers[0].attributes["scales"] == [1.0, 1.0, 2.0, 2.0] and g.tensors["y"].shape == (1, 3, 16, 16)


@needs_onnx
def test_pad_with_axes_expands_to_every_axis(tmp_path):
    # Operators.md Pad-18: `axes` names the axes `pads` ([begin..., end...]) applies to: H 1+3, W 2+4
    node = helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"])
    p = _save(tmp_path, _model([node], [_f("x", [1, 3, 8, 8])], [("y", None)],
                               [_init("pads", [1, 2, 3, 4], np.int64), _init("axes", [2, 3], np.int64)], opset=18))
    g = load_model(p)
    assert g.layers[0].attributes["pads"] == [0, 0, 1, 2, 0, 0, 3, 4] and g.tensors["y"].shape == (1, 3, 12, 14)


@needs_onnx
def test_per_channel_dequantize_of_two_channels_takes_the_default_axis(tmp_path):
    # Operators.md DequantizeLinear-13: a 1-D scale is per axis, `axis` defaults to 1
    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq")]
    m = _model(nodes, [("q", TensorProto.INT8, [1, 2, 4, 4])], [("y", None)],
               [_init("s", [0.1, 0.2]), _init("z", [0, 0], np.int8)])
    a = load_model(m).layer("dq").attributes
    assert a["per_channel"] is True and a["axis"] == 1 and a["qtype"] == "int8"


@needs_onnx
def test_split_sizes_rebuilt_from_the_files_output_shapes(tmp_path):
    # the split sizes come in at run time (a graph input): the importer takes them from the shapes the file
    # declares for the outputs (2 and 6 of 8 channels), not an even split
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1)
    m = _model([node], [_f("x", [1, 8, 4, 4]), ("sizes", TensorProto.INT64, [2])],
               [("a", [1, 2, 4, 4]), ("b", [1, 6, 4, 4])])
    g = load_model(m)
    split = g.layers[0]
    assert split.attributes["split"] == [2, 6] and split.inputs == ["x"]
    assert g.tensors["a"].shape == (1, 2, 4, 4) and g.tensors["b"].shape == (1, 6, 4, 4)


@needs_onnx
def test_split_output_of_unknown_shape_takes_the_rest_of_the_axis():
    # sizes at run time, the file declares output a (2 of 8 channels) and leaves b's shape out: b is 8 - 2 = 6
    # channels (an even split, 4 and 4, would contradict the declared shape of a)
    def model(a_shape):
        node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1)
        return _model([node], [_f("x", [1, 8, 4, 4]), ("sizes", TensorProto.INT64, [2])],
                      [("a", a_shape), ("b", None)])
    g = load_model(model([1, 2, 4, 4]))
    assert g.layers[0].attributes["split"] == [2, 6]
    assert g.tensors["a"].shape == (1, 2, 4, 4) and g.tensors["b"].shape == (1, 6, 4, 4)
    with pytest.raises(ModelError, match=r"Split_0.*empty output shape \(1, 0, 4, 4\)"):
        load_model(model([1, 8, 4, 4]))                  # nothing left for b: one line, no traceback


@needs_onnx
def test_split_with_no_output_shape_keeps_its_sizes_input(tmp_path):
    # nothing to rebuild the run-time sizes from: the sizes stay an input of the layer (no guessed split)
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1)
    m = _model([node], [_f("x", [1, 8, 4, 4]), ("sizes", TensorProto.INT64, [2])], [("a", None), ("b", None)])
    split = load_model(m).layers[0]
    assert split.inputs == ["x", "sizes"] and "split" not in split.attributes


@needs_onnx
def test_conv_transpose_same_upper_pads_by_hand(tmp_path):
    # Operators.md ConvTranspose: output = input x stride for SAME_*; total padding = stride x (in - 1) +
    # output_padding + ((k - 1) x d + 1) - out = 2 x 3 + 0 + 5 - 8 = 3; SAME_UPPER: 1 in front, 2 at the end
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2])
    p = _save(tmp_path, _model([node], [_f("x", [1, 2, 4, 4])], [("y", None)], [_init("w", np.zeros((2, 3, 5, 5)))]))
    g = load_model(p)
    assert g.layers[0].attributes["pads"] == [1, 1, 2, 2] and g.tensors["y"].shape == (1, 3, 8, 8)


@needs_onnx
def test_conv_group_message_names_the_output_channels(tmp_path):
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=3, name="c")
    p = _save(tmp_path, _model([node], [_f("x", [1, 3, 8, 8])], [("y", None)], [_init("w", np.zeros((4, 1, 3, 3)))]))
    with pytest.raises(ModelError, match="group 3 does not divide the 4 output channels of 'w'"):
        load_model(p)


@needs_onnx
def test_folding_a_range():
    # Operators.md Range: ceil((limit - start) / delta) elements from start: 2, 8, 3 -> [2, 5]
    from dlasim.importers.onnx_fold import FOLDERS
    node = helper.make_node("Range", ["a", "b", "c"], ["o"])
    assert FOLDERS["Range"](lambda t: None, node, [np.array(2), np.array(8), np.array(3)], {}).tolist() == [2, 5]


@needs_onnx
def test_folding_a_slice_with_steps():
    # Operators.md Slice-13: starts 0, ends 4, axes 0, steps 2 of [1, 3, 8, 8] -> elements 0 and 2: [1, 8]
    from dlasim.importers.onnx_fold import FOLDERS
    node = helper.make_node("Slice", ["v", "st", "en", "ax", "sp"], ["o"])
    vals = [np.array([1, 3, 8, 8]), np.array([0]), np.array([4]), np.array([0]), np.array([2])]
    assert FOLDERS["Slice"](lambda t: None, node, vals, {}).tolist() == [1, 8]


@needs_onnx
def test_raw_data_length_is_checked_at_each_types_size():
    # bytes per element of each fixed-size TensorProto type, as onnx's own numpy mapping gives them: raw_data
    # one byte short of the shape's need is refused, the exact length passes
    from dlasim.importers.onnx_checks import _tensors
    types = [v for k, v in TensorProto.DataType.items() if k not in ("UNDEFINED", "STRING")]
    checked = 0
    for dt in types:
        try:
            size = np.dtype(helper.tensor_dtype_to_np_dtype(dt)).itemsize
        except Exception:
            continue
        if dt > 20:                  # the sub-byte and newer types (21 on) are not sized by the checks
            continue
        t = TensorProto(name="w", data_type=dt, dims=[3], raw_data=b"\0" * (3 * size))
        _tensors(helper.make_graph([], "m", [], [], [t]), "m.onnx")
        t.raw_data = b"\0" * (3 * size - 1)
        g = helper.make_graph([], "m", [], [], [t])
        with pytest.raises(ModelError, match=f"holds {3 * size - 1} bytes, its shape \\[3\\] needs {3 * size}"):
            _tensors(g, "m.onnx")
        checked += 1
    assert checked >= 16
