"""Every input boundary: malformed, hostile and odd-but-valid models, profiles, specs, special files, flags.

Each negative case goes through the CLI with `-o FILE`: exit status 2, one line on stderr naming the
file/field/layer, no traceback, and nothing written to FILE. Real files of every kind still load.
"""
import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest

from dlasim.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
DATA_DIRS = [d for d in (SHARED, ROOT / "validation" / "data") if d.is_dir()]


@pytest.fixture(autouse=True)
def _no_hang():
    """A case that blocks (a FIFO read, an endless file) fails after 20 s instead of hanging the suite."""
    def _alarm(*_):
        raise TimeoutError("input case hung")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def reject(capsys, tmp_path, argv, *expect):
    """Run the CLI expecting a clean rejection; returns the message."""
    out = tmp_path / "out.txt"
    rc = main([*map(str, argv), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("dlasim: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert not out.exists(), "a failed run must not write -o"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".dlasim-")], "temporary file left behind"
    for text in expect:
        assert text in err, err
    return err


# ---- ONNX ----------------------------------------------------------------------------------------------
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F = TensorProto.FLOAT


def _w(name, shape):
    return numpy_helper.from_array(np.zeros(shape, np.float32), name)


def _conv_model(**over):
    """x[1,3,8,8] -> Conv(w[4,3,3,3]) -> y; `over` replaces nodes/inputs/outputs/inits/attrs."""
    attrs = over.pop("attrs", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})
    nodes = over.pop("nodes", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)])
    inputs = over.pop("inputs", [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])])
    outputs = over.pop("outputs", [helper.make_tensor_value_info("y", F, [1, 4, 8, 8])])
    inits = over.pop("inits", [_w("w", (4, 3, 3, 3))])
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _save(tmp_path, model, name="m.onnx"):
    p = tmp_path / name
    p.write_bytes(model.SerializeToString())
    return p


def _short_raw():
    t = _w("w", (4, 3, 3, 3))
    t.raw_data = t.raw_data[:10]
    return _conv_model(inits=[t])


def _short_raw_large():
    t = _w("w", (512, 1024))                   # 2 MiB: the checker sees it as a typed input
    t.raw_data = t.raw_data[: 1 << 20]
    nodes = [helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)]
    return _conv_model(nodes=nodes, inits=[t], inputs=[helper.make_tensor_value_info("x", F, [1, 1024])],
                       outputs=[helper.make_tensor_value_info("y", F, [1, 512])])


def _external(location):
    t = _w("w", (4, 3, 3, 3))
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", location
    return _conv_model(inits=[t])


ONNX_BAD = {
    "output produced by nothing": (lambda: _conv_model(outputs=[helper.make_tensor_value_info("z", F, [1])]),
                                   "'z' is produced by no node"),
    "no outputs": (lambda: _conv_model(outputs=[]), "no outputs"),
    "empty op type": (lambda: _conv_model(nodes=[helper.make_node("", ["x"], ["y"], name="n")]), "empty op_type"),
    "unknown op": (lambda: _conv_model(nodes=[helper.make_node("Convolve", ["x", "w"], ["y"], name="n")]),
                   "'Convolve' is no operator"),
    "negative dim": (lambda: _conv_model(inputs=[helper.make_tensor_value_info("x", F, [1, -3, 8, 8])]),
                     "negative dimension"),
    "absurd dims": (lambda: _conv_model(inputs=[helper.make_tensor_value_info("x", F, [1 << 30, 3, 1 << 20, 8])]),
                    "elements"),
    "int64 dims": (lambda: _conv_model(inputs=[helper.make_tensor_value_info("x", F, [2**63 - 1, 3, 8, 8])]),
                   "elements"),
    "raw data short": (_short_raw, "raw_data holds 10 bytes"),
    "large raw data short": (_short_raw_large, "raw_data holds 1048576 bytes"),
    "attribute wrong type": (lambda: _conv_model(attrs={"kernel_shape": [3, 3], "group": 1.5}), "'conv'"),
    "kernel vs weight": (lambda: _conv_model(attrs={"kernel_shape": [5, 5]}), "disagrees with the weight shape"),
    "negative pads": (lambda: _conv_model(attrs={"kernel_shape": [3, 3], "pads": [-1, 0, 0, 0]}), "pads"),
    "zero dilations": (lambda: _conv_model(attrs={"kernel_shape": [3, 3], "dilations": [0, 0]}), "dilations"),
    "zero strides": (lambda: _conv_model(attrs={"kernel_shape": [3, 3], "strides": [0, 1]}), "strides"),
    "string into conv": (lambda: _conv_model(inputs=[helper.make_tensor_value_info("x", TensorProto.STRING,
                                                                                   [1, 3, 8, 8])]), "onnx.checker"),
    "external absolute": (lambda: _external("/etc/passwd"), "is absolute"),
    "external escapes": (lambda: _external("../../w.bin"), "leaves the model's folder"),
    "external empty": (lambda: _external(""), "no location"),
}


@pytest.mark.parametrize("case", sorted(ONNX_BAD))
def test_onnx_rejected(capsys, tmp_path, case):
    make, expect = ONNX_BAD[case]
    p = _save(tmp_path, make())
    reject(capsys, tmp_path, ["estimate", p], str(p), expect)


@pytest.mark.parametrize("data, expect", [(b"", "no graph"), (b"\x00garbage\xff" * 10, "not a valid ONNX"),
                                          (b"\n\x0b" * 5000, "not a valid ONNX")])
def test_onnx_bytes_rejected(capsys, tmp_path, data, expect):
    p = tmp_path / "m.onnx"
    p.write_bytes(data)
    reject(capsys, tmp_path, ["inspect", p], expect)


def test_external_link_out_of_folder_rejected(capsys, tmp_path):
    """A symlink inside the folder that points outside counts as outside: nothing there is opened."""
    (tmp_path / "w.bin").symlink_to("/etc/hostname")
    p = _save(tmp_path, _external("w.bin"))
    reject(capsys, tmp_path, ["estimate", p], "leaves the model's folder")


@pytest.mark.parametrize("make_dir", [False, True])
def test_missing_external_weights_warn(tmp_path, make_dir):
    import dlasim
    if make_dir:
        (tmp_path / "w.bin").mkdir()
    p = _save(tmp_path, _external("w.bin"))
    dense = dlasim.estimate(str(p), "orin-agx", device="gpu")
    assert any("w.bin" in w and "does not need them" in w for w in dense.warnings)
    sparse = dlasim.estimate(str(p), "orin-agx", device="gpu", sparsity="enable")
    assert any("--sparsity=enable needs them" in w for w in sparse.warnings)


def test_present_external_weights_no_warning(tmp_path):
    import dlasim
    (tmp_path / "w.bin").write_bytes(b"\0" * 432)
    p = _save(tmp_path, _external("w.bin"))
    assert not [w for w in dlasim.estimate(str(p), "orin-agx", device="gpu").warnings if "external" in w]


def test_custom_domain_op_is_odd_but_valid(tmp_path):
    import dlasim
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("MyPlugin", ["c"], ["y"], name="plug", domain="com.example")]
    g = dlasim.load(_save(tmp_path, _conv_model(nodes=nodes)))
    assert "unknown_op" in g.layer("plug").flags


# ---- dlasim graph JSON --------------------------------------------------------------------------------
GOOD_GRAPH = {"name": "g", "inputs": ["x"], "outputs": ["r"],
              "tensors": [{"name": "x", "shape": [1, 3, 8, 8], "dtype": "float32", "const": False}],
              "layers": [{"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["r"]}]}


def _graph(**over):
    d = json.loads(json.dumps(GOOD_GRAPH))
    for key, value in over.items():
        target, _, field = key.partition("__")
        if field:
            d[target][0][field] = value
        else:
            d[key] = value
    return json.dumps(d)


@pytest.mark.parametrize("text, expect", [
    ("[" * 100000 + "]" * 100000, "nests too deeply"), ("[1]", "(top level)"),
    (_graph(tensors__shape=[1, -3, 8, 8]), "tensors.0.shape"), (_graph(tensors__shape=[1, 3.5, 8, 8]), "shape"),
    (_graph(tensors__shape=[1 << 40, 1 << 40]), "tensors.0.shape"), (_graph(layers__op=""), "layers.0.op"),
    (_graph(layers__inputs="x"), "layers.0.inputs"), (_graph(name=None), "field name"),
])
def test_graph_json_rejected(capsys, tmp_path, text, expect):
    p = tmp_path / "g.json"
    p.write_text(text)
    reject(capsys, tmp_path, ["inspect", p], str(p), expect)


def test_graph_json_round_trip(tmp_path):
    import dlasim
    p = tmp_path / "g.json"
    p.write_text(_graph())
    assert dlasim.load(p).tensors["r"].shape == (1, 3, 8, 8)
    p.write_text(dlasim.load("zoo:resnet18").to_json())
    assert len(dlasim.load(p).layers) == len(dlasim.load("zoo:resnet18").layers)


# ---- Caffe prototxt ------------------------------------------------------------------------------------
HEAD = 'name: "n"\ninput: "data"\ninput_shape { dim: 1 dim: 3 dim: 16 dim: 16 }\n'


def _conv(param):
    return HEAD + f'layer {{ name: "c" type: "Convolution" bottom: "data" top: "c" convolution_param {{ {param} }} }}\n'


CAFFE_BAD = {
    "typo type": (HEAD + 'layer { name: "c" type: "Convolutoin" bottom: "data" top: "c" }', "did you mean"),
    "case type": (HEAD + 'layer { name: "r" type: "relu" bottom: "data" top: "r" }', "'ReLU'"),
    "no type": (HEAD + 'layer { name: "r" bottom: "data" top: "r" }', "has no type"),
    "duplicate top": (HEAD + 'layer { name: "a" type: "ReLU" bottom: "data" top: "x" }\n'
                      'layer { name: "b" type: "Sigmoid" bottom: "data" top: "x" }', "already produces"),
    "kernel 0": (_conv("num_output: 4 kernel_size: 0"), "kernel_size must be in 1.."),
    "negative pad": (_conv("num_output: 4 kernel_size: 3 pad: -1"), "pad must be in 0.."),
    "stride 0": (_conv("num_output: 4 kernel_size: 3 stride: 0"), "stride must be in 1.."),
    "group 0": (_conv("num_output: 4 kernel_size: 3 group: 0"), "group must be in 1.."),
    "absurd num_output": (_conv("num_output: 1000000000000 kernel_size: 3"), "num_output must be in 1.."),
    "float kernel": (_conv("num_output: 4 kernel_size: 3.5"), "must be an integer, got 3.5"),
    "string kernel": (_conv('num_output: 4 kernel_size: "3"'), "must be an integer"),
    "nan eps": (HEAD + 'layer { name: "bn" type: "BatchNorm" bottom: "data" top: "bn" '
                'batch_norm_param { eps: nan } }', "batch_norm_param.eps must be a finite number"),
    "word slope": (HEAD + 'layer { name: "r" type: "ReLU" bottom: "data" top: "r" relu_param { negative_slope: NaNe-5 } }',
                   "negative_slope must be a finite number"),
    "no top": (HEAD + 'layer { name: "c" type: "Convolution" bottom: "data" '
               'convolution_param { num_output: 4 kernel_size: 3 } }', "has no top"),
    "two tops one output": (HEAD + 'layer { name: "c" type: "Convolution" bottom: "data" top: "c" top: "d" '
                            'convolution_param { num_output: 4 kernel_size: 3 } }', "has 2 top(s); it produces 1"),
    "empty": ("", "no layers"),
    "comment only": ("# nothing here\n# still nothing\n", "no layers"),
    "name only": ('name: "net"\n', "no layers"),
    "deep braces": ("a " + "{ b " * 100000 + "}" * 100000, "nest deeper than"),
    "float input dim": ('input: "data"\ninput_shape { dim: 1 dim: 3.5 dim: 8 dim: 8 }\n'
                        'layer { name: "r" type: "ReLU" bottom: "data" top: "r" }', "positive integers"),
    "not utf8": ("\udcff", "not UTF"),
}


@pytest.mark.parametrize("case", sorted(CAFFE_BAD))
def test_prototxt_rejected(capsys, tmp_path, case):
    text, expect = CAFFE_BAD[case]
    p = tmp_path / "net.prototxt"
    p.write_bytes(text.encode("utf-8", "surrogateescape"))
    reject(capsys, tmp_path, ["estimate", p], str(p), expect)


def test_prototxt_in_place_and_plugin_are_valid(tmp_path):
    import dlasim
    p = tmp_path / "ok.prototxt"
    p.write_text(HEAD + 'layer { name: "r" type: "ReLU" bottom: "data" top: "data" }\n'
                 'layer { name: "p" type: "MyPluginLayer" bottom: "data" top: "p" }\n')
    g = dlasim.load(p)
    assert [l.name for l in g.layers] == ["r", "p"] and "unknown_op" in g.layer("p").flags


# ---- trtexec JSON ----------------------------------------------------------------------------------------
PROFILE_BAD = {
    "list of numbers": ("[1, 2, 3]", "record 0 is int"),
    "null record": ('[{"count": 10}, null]', "record 1 is null"),
    "no name": ('[{"averageMs": 0.1}]', "field name: required"),
    "empty name": ('[{"name": "", "averageMs": 0.1}]', "field name"),
    "no time": ('[{"name": "conv1"}]', "no averageMs or timeMs"),
    "timeMs without count": ('[{"name": "conv1", "timeMs": 1.0}]', "without a leading"),
    "negative": ('[{"name": "conv1", "averageMs": -0.5}]', "field averageMs"),
    "nan": ('[{"name": "conv1", "averageMs": NaN}]', "field averageMs"),
    "infinity": ('[{"name": "conv1", "averageMs": Infinity}]', "field averageMs"),
    "1e400": ('[{"name": "conv1", "averageMs": 1e400}]', "field averageMs"),
    "string time": ('[{"name": "conv1", "averageMs": "0.5"}]', "field averageMs"),
    "bool time": ('[{"name": "conv1", "averageMs": true}]', "field averageMs"),
    "negative median": ('[{"name": "conv1", "averageMs": 0.5, "medianMs": -1}]', "field medianMs"),
    "overflowing sum": ('[{"name": "a", "averageMs": 1e308}, {"name": "b", "averageMs": 1e308}]', "overflow"),
    "bad count": ('[{"count": -4}, {"name": "a", "averageMs": 0.1}]', "field count"),
    "deep nesting": ("[" * 100000 + "]" * 100000, "nests too deeply"),
    "object": ('{"name": "a"}', "expected a JSON list"),
    "malformed": ('[{"name": "a", ', "malformed JSON"),
}


@pytest.mark.parametrize("case", sorted(PROFILE_BAD))
def test_profile_rejected(capsys, tmp_path, case):
    text, expect = PROFILE_BAD[case]
    p = tmp_path / "prof.json"
    p.write_text(text)
    reject(capsys, tmp_path, ["profile", p, "--format", "json"], str(p), expect)


def test_measured_profile_rejected_by_explain(capsys, tmp_path):
    p = tmp_path / "prof.json"
    p.write_text('[{"name": "conv1", "averageMs": NaN}]')
    reject(capsys, tmp_path, ["explain", "zoo:resnet18", "--measured", p], "field averageMs")


@pytest.mark.parametrize("text, expect", [('{"Layers": [null]}', "Layers[0] is null"),
                                          ('{"Layers": [{"Name": 5}]}', "field Name"),
                                          ('{"Layers": [{"Name": "a", "Inputs": 3}]}', "field Inputs"),
                                          ('{"Bindings": []}', "'Layers'")])
def test_layer_info_rejected(capsys, tmp_path, text, expect):
    prof = tmp_path / "prof.json"
    prof.write_text('[{"count": 1}, {"name": "a", "averageMs": 0.1}]')
    info = tmp_path / "info.json"
    info.write_text(text)
    reject(capsys, tmp_path, ["profile", prof, "--layer-info", info], str(info), expect)


# ---- spec TOML -------------------------------------------------------------------------------------------
SPEC = (ROOT / "hardware_specs" / "orin-agx.toml").read_text()
BW = "dram_bandwidth_bytes_per_s = 204.8e9"


@pytest.mark.parametrize("value, expect", [("inf", "memory.dram_bandwidth_bytes_per_s"),
                                           ("nan", "memory.dram_bandwidth_bytes_per_s"),
                                           ("-inf", "memory.dram_bandwidth_bytes_per_s"),
                                           ("0", "greater than 0"), ("-1.0", "greater than 0"),
                                           ("'fast'", "memory.dram_bandwidth_bytes_per_s")])
def test_spec_rate_rejected(capsys, tmp_path, value, expect):
    assert BW in SPEC
    p = tmp_path / "my.toml"
    p.write_text(SPEC.replace(BW, f"dram_bandwidth_bytes_per_s = {value}", 1))
    reject(capsys, tmp_path, ["estimate", "zoo:resnet18", "--hw", p], str(p), expect)


def test_spec_clock_inf_rejected(capsys, tmp_path):
    p = tmp_path / "my.toml"
    p.write_text(SPEC.replace("[dla]\n", "[dla]\n", 1).replace("clock_hz = 1.6e9", "clock_hz = inf", 1)
                 if "clock_hz = 1.6e9" in SPEC else SPEC.replace(BW, "dram_bandwidth_bytes_per_s = inf"))
    reject(capsys, tmp_path, ["estimate", "zoo:resnet18", "--hw", p], "should be a finite number")


def test_spec_deep_nesting_rejected(capsys, tmp_path):
    p = tmp_path / "deep.toml"
    p.write_text("x = " + "[" * 100000 + "]" * 100000 + "\n")
    reject(capsys, tmp_path, ["estimate", "zoo:resnet18", "--hw", p], "nest too deeply")


# ---- special files ----------------------------------------------------------------------------------------
def _fifo(tmp_path, name):
    p = tmp_path / name
    os.mkfifo(p)
    return p


def _zero_link(tmp_path, name):
    p = tmp_path / name
    p.symlink_to("/dev/zero")
    return p


@pytest.mark.parametrize("make", [_fifo, _zero_link])
@pytest.mark.parametrize("name, argv", [
    ("m.onnx", lambda p: ["estimate", p]), ("m.prototxt", lambda p: ["inspect", p]),
    ("m.json", lambda p: ["inspect", p]), ("hw.toml", lambda p: ["estimate", "zoo:resnet18", "--hw", p]),
    ("prof.json", lambda p: ["profile", p]),
    ("prof.json", lambda p: ["explain", "zoo:resnet18", "--measured", p]),
])
def test_special_files_rejected(capsys, tmp_path, make, name, argv):
    if make is _zero_link and not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    p = make(tmp_path, name)
    reject(capsys, tmp_path, argv(p), str(p), "expected a regular file")


def test_directory_as_model_rejected(capsys, tmp_path):
    p = tmp_path / "m.prototxt"
    p.mkdir()
    reject(capsys, tmp_path, ["inspect", p], "directory")


def test_onnx_over_2gib_stops_with_one_line(capsys, tmp_path):
    p = tmp_path / "huge.onnx"
    with open(p, "wb") as f:
        f.truncate((2 << 30) + 4096)          # sparse: no disk or memory used
    reject(capsys, tmp_path, ["estimate", p], "(2,147,487,744 bytes), more than the 2,147,483,647 bytes dlasim reads")


def test_size_cap(tmp_path):
    from dlasim.errors import ModelError
    from dlasim.safeio import read_bytes
    p = tmp_path / "big.json"
    p.write_bytes(b" " * 2000)
    assert len(read_bytes(p, limit=2000)) == 2000
    with pytest.raises(ModelError, match="more than the 1,000 bytes"):
        read_bytes(p, limit=1000)


# ---- flags ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, expect", [
    (["--hw", "orin-agx:"], "empty power mode"),
    (["--hw", "orin-agx:  "], "empty power mode"),
    (["--hw", "orin-agx:99w"], "unknown power mode"),
    (["--dla-core", "-1"], "--dla-core"),
    (["--useDLACore=2", "--hw", "orin-agx"], "expected 0..1, got 2"),
    (["--batch", "0"], "--batch"),
    (["--batch", "-3"], "--batch"),
    (["--shapes", "data:1x0x8x8"], "--shapes"),
    (["--shapes", "data"], "--shapes"),
])
def test_flags_rejected(capsys, tmp_path, argv, expect):
    reject(capsys, tmp_path, ["estimate", "zoo:resnet18", *argv], expect)


# ---- real files still load -------------------------------------------------------------------------------
def _real(pattern):
    return sorted({p.resolve() for d in DATA_DIRS for p in d.rglob(pattern)})


def test_real_prototxts_load():
    import dlasim
    files = _real("*.prototxt")
    assert len(files) >= 10
    for f in files:
        assert dlasim.load(f).layers, f


def test_real_profiles_parse():
    from dlasim.trtexec import parse_profile
    files = _real("*.profile") + _real("*.profile.json") + _real("*_filtered.json")
    assert len(files) >= 40
    for f in files:
        prof = parse_profile(f)
        assert prof.rows and np.isfinite(prof.total_ms), f


def test_real_layer_info_and_metadata_parse():
    from dlasim.trtexec import parse_layer_info, parse_metadata
    graphs, metas = _real("*.graph.json"), _real("*metadata.json")
    assert graphs and metas
    for f in graphs:
        assert parse_layer_info(f), f
    for f in metas:
        parse_metadata(f)


def test_real_specs_load():
    import dlasim
    from dlasim.hardware import spec_names
    for name in spec_names():
        plat = dlasim.hardware(name)
        for mode in plat.power_modes:
            dlasim.hardware(f"{name}:{mode}")
