"""The Python API a NAS loop or a notebook uses: ModelProto in, ONNX out, readable results, parameter-named errors."""
import inspect
import re

import onnx
import pytest

import dlasim
from dlasim import DlasimError, GraphBuilder, ModelError
from dlasim.hardware import hardware


def _candidate(mish: bool = False):
    """A candidate using most builder ops, including those whose ONNX form takes inputs (Clip, Resize, Split)."""
    b = GraphBuilder("cand")
    x = b.input("x", (1, 3, 64, 64))
    y = b.maxpool(b.relu(b.bn(b.conv(x, 32, kernel=3, stride=2))), 2)
    z = b.relu6(b.conv(y, 16, kernel=1))
    w = b.conv(y, 16, kernel=3)
    w = b.mish(w) if mish else b.leaky_relu(w)
    a, c = b.split(b.concat([z, w]), [8, 24])
    r = b.avgpool(b.resize(c, 2), 2)
    d = b.sigmoid(b.deconv(r, 8))
    f = b.softmax(b.fc(b.flatten(b.global_avgpool(d)), 10))
    return b.build([a, f])


def test_load_accepts_an_in_memory_model_proto():
    g = _candidate()
    proto = g.to_onnx()
    assert isinstance(proto, onnx.ModelProto)
    loaded = dlasim.load(proto)
    assert loaded.name == "cand" and loaded.inputs == ["x"]
    e = dlasim.estimate(proto, "orin-agx", device="dla", precision="int8")
    assert e.total_ms == pytest.approx(dlasim.estimate(g, "orin-agx", device="dla", precision="int8").total_ms)


def test_load_of_a_model_proto_with_dynamic_batch_names_the_shapes_parameter():
    b = GraphBuilder("dyn")
    x = b.input("x", (1, 3, 8, 8))
    proto = b.build([b.relu(x)]).to_onnx()
    proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    with pytest.raises(ModelError, match=r"ModelProto 'dyn': input 'x' has a dynamic dimension; give its shape "
                                         r"with shapes=\{'x': \(1, 3, 8, 8\)\}"):
        dlasim.load(proto)
    assert dlasim.load(proto, shapes={"x": (4, 3, 8, 8)}).batch == 4


def test_load_of_something_else_is_one_short_line():
    with pytest.raises(ModelError) as err:
        dlasim.load({"graph": list(range(10000))})
    assert str(err.value) == "model: expected a path, 'zoo:NAME', a Graph or an onnx.ModelProto, got dict"


@pytest.mark.parametrize("mish, opset", [(False, 17), (True, 18)])
def test_to_onnx_round_trips_through_load(tmp_path, mish, opset):
    g = _candidate(mish)
    path = tmp_path / "cand.onnx"
    g.to_onnx(path)
    onnx.checker.check_model(str(path))
    m = onnx.load(str(path))
    assert [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] == [opset]
    back = dlasim.load(path)
    assert back.macs == g.macs and len(back.layers) == len(g.layers)
    assert [(l.op, l.attributes, l.inputs, l.outputs) for l in back.layers] == \
        [(l.op, l.attributes, l.inputs, l.outputs) for l in g.layers]
    # the attribute-as-input ops carry their values as initializers: Clip 0..6, Resize x2, Split 8/24
    inits = {t.name: onnx.numpy_helper.to_array(t).tolist() for t in m.graph.initializer}
    assert inits["clip.min"] == 0.0 and inits["clip.max"] == 6.0
    assert inits["resize.scales"] == [1.0, 1.0, 2.0, 2.0] and inits["split.split"] == [8, 24]


def test_to_onnx_writes_dense_weights_and_a_zoo_network_round_trips():
    g = dlasim.load("zoo:googlenet")                   # Dropout's ratio becomes an input too
    m = g.to_onnx(weights="zeros")
    back = dlasim.load(m)
    assert back.macs == g.macs and len(back.layers) == len(g.layers)
    w = onnx.numpy_helper.to_array(next(t for t in _candidate().to_onnx().graph.initializer
                                        if t.name == "conv.weight"))
    assert w.shape == (32, 3, 3, 3) and (w > 0).all()   # no zero: TensorRT would see 2:4 sparse weights
    with pytest.raises(ModelError, match=r"weights='ones': expected one of random, zeros"):
        g.to_onnx(weights="ones")
    with pytest.raises(ModelError, match=r"opset=17: the graph uses ops of opset 18"):
        _candidate(mish=True).to_onnx(opset=17)


def test_estimate_repr_is_one_line_and_html_shows_the_steps():
    e = dlasim.estimate("zoo:resnet50")
    text = repr(e)
    assert "\n" not in text and len(text) < 200
    assert text.startswith("Estimate(resnet50 on xavier-agx, dla fp16 batch 1: ")
    assert f"{e.total_ms:.4f} ms; {len(e.steps)} steps, {e.dla_subgraphs} DLA subgraphs" in text
    html = e._repr_html_()
    assert html.count("<tr") == len(e.steps) + 2         # header, one per step, total
    assert "<th>time ms</th>" in html and e.steps[0].name in html
    assert "GlobalAveragePool is not supported on DLA v1" in html


def test_platform_repr_is_one_line():
    assert repr(hardware("orin-agx:15w")) == f"Platform('orin-agx:15w': {hardware('orin-agx').description})"


@pytest.mark.parametrize("kw, message", [
    (dict(precision="fp64"), "precision='fp64': expected one of fp32, fp16, int8, best"),
    (dict(device="cpu"), "device='cpu': expected one of dla, gpu"),
    (dict(sparsity="on"), "sparsity='on': expected one of disable, enable, force"),
    (dict(batch=0), "batch=0 (--batch): expected an integer from 1 to 2147483647"),
    (dict(dla_core=2), "dla_core=2 (--dla-core, --useDLACore): xavier-agx has 2 DLA core(s), numbered from 0: expected 0..1, got 2"),
    (dict(hw="nvdla-small", device="gpu"), "nvdla-small has no GPU; use device='dla' (--device dla)"),
    (dict(shapes={"data": (1, 3, 8, 8)}), "shapes (--shapes): 'data' is not an input of resnet18"),
    (dict(input_formats="bogus"), "input_formats (--inputIOFormats): bad format 'bogus'"),
])
def test_api_errors_name_the_parameter(kw, message):
    with pytest.raises(DlasimError) as err:
        dlasim.estimate("zoo:resnet18", **kw)
    assert str(err.value).startswith(message)
    assert not str(err.value).startswith("-")


def test_builder_unknown_tensor_is_a_model_error_naming_it():
    b = GraphBuilder("cand")
    x = b.input("x", (1, 3, 16, 16))
    y = b.conv(x, 8)
    with pytest.raises(ModelError, match=r"cand: unknown tensor 'conv1' \(input of layer 'sum'\)"):
        b.add(y, "conv1", name="sum")
    with pytest.raises(ModelError, match=r"cand: unknown tensor 'y'"):
        b.relu("y")
    assert b.relu(y) == "relu"                           # a failed call leaves the builder usable


@pytest.mark.parametrize("fn", [dlasim.estimate, dlasim.build, dlasim.load, hardware, dlasim.compare,
                                dlasim.explain])
def test_help_documents_every_parameter(fn):
    doc = inspect.getdoc(fn)
    for name, p in inspect.signature(fn).parameters.items():
        key = "options" if p.kind is p.VAR_KEYWORD else name
        assert re.search(rf"^\s*{key}(, \w+)*:", doc, flags=re.M) or re.search(rf"^\s*\w+, {key}:", doc, flags=re.M), \
            f"{fn.__name__}: parameter {name} is not documented"
