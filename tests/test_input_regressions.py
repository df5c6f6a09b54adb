"""Bad inputs found by benchmarks/fuzz.py: each is a one-line DlasimError (exit 2 on the CLI), not a traceback."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from dlasim import DlasimError
from dlasim.concurrent.engines import load_engines, parse_engine
from dlasim.measures import measured_value, to_ms
from dlasim.measures import parse_options
from cli_errors import one_line_error

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "hardware_specs"
SMALL = str(ROOT / "validation" / "data" / "seeds" / "kernel_1x1.prototxt")


@pytest.mark.parametrize("expr", ["json(a)", "json(:x=1)", "median(nope.csv:value)", "1|2", ":",
                                  "csvsum(x)", "fps_gap_ms(])", "json(/etc/hostname)",
                                  "csvsum(validation/data/public_measurements.csv:value:name=nope)"])
def test_bad_measured_expression_isone_line_error(expr):
    with pytest.raises(DlasimError) as e:
        measured_value(expr, ROOT)
    assert "\n" not in str(e.value) and "measured" in str(e.value)


def test_measured_missing_column_names_it(tmp_path):
    (tmp_path / "m.csv").write_text("name,value\na,2\nb,4\n")
    assert measured_value("median(m.csv:value)", tmp_path) == 3.0       # the well-formed case still reads
    with pytest.raises(DlasimError, match="'fps'"):
        measured_value("median(m.csv:fps)", tmp_path)


@pytest.mark.parametrize("unit", ["qps", "img_per_s"])
def test_zero_rate_is_refused(unit):
    with pytest.raises(DlasimError, match="positive"):
        to_ms(0.0, unit, 1, 2)
    assert to_ms(500.0, "qps", 1, 2) == pytest.approx(4.0)              # 1000 * 2 engines / 500 qps


@pytest.mark.parametrize("text", ["dla_core=NaN", "dla_core=-1", "dla_core=data:1x3"])
def test_options_dla_core_must_be_integer(text):
    with pytest.raises(DlasimError, match="dla_core"):
        parse_options(text)
    assert parse_options("dla_core=1") == {"dla_core": 1}


@pytest.mark.parametrize("value", ["inf", "nan", "2.5", "true", '"x"'])
def test_engine_file_batch_must_be_integer(tmp_path, value):
    p = tmp_path / "e.toml"
    p.write_text(f'[[engine]]\nmodel = "zoo:resnet18"\nbatch = {value}\n')
    with pytest.raises(DlasimError, match="batch must be an integer"):
        load_engines(str(p))
    p.write_text('[[engine]]\nmodel = "zoo:resnet18"\nbatch = 4\n')
    assert load_engines(str(p))[0][0].batch == 4


def test_engine_text_dla_core_refuses_float():
    with pytest.raises(DlasimError, match="dla_core must be an integer"):
        parse_engine("zoo:resnet18,device=dla,dla_core=1.5")
    assert parse_engine("zoo:resnet18,device=dla,dla_core=1").dla_core == 1


def test_engine_file_inf_batch_cli(tmp_path, capsys):
    p = tmp_path / "e.toml"
    p.write_text('[[engine]]\nmodel = "zoo:resnet18"\nbatch = inf\n')
    assert "engine 1: batch" in one_line_error(["concurrent", "--engines", str(p)], capsys)


def _edit(src: str, pattern: str, repl: str, tmp_path) -> str:
    text = (SPECS / src).read_text()
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    assert n == 1
    out = tmp_path / src
    out.write_text(new)
    return str(out)


def test_spec_empty_dla_precisions(tmp_path, capsys):
    hw = _edit("nvdla-small.toml", r"^precisions = .*$", "precisions = []", tmp_path)
    assert "dla.precisions" in one_line_error(["estimate", SMALL, "--hw", hw], capsys)


def test_spec_bad_compute_capability(tmp_path, capsys):
    hw = _edit("orin-agx.toml", r"^compute_capability = .*$", 'compute_capability = "ref/dla"', tmp_path)
    assert "gpu.compute_capability" in one_line_error(["estimate", "zoo:resnet18", "--hw", hw], capsys)


def _graph_json_with(tmp_path, **attrs) -> str:
    """zoo:resnet18 as a graph JSON (Graph.to_json) with layer4.0.downsample.0's attributes changed."""
    import json
    import dlasim
    g = json.loads(dlasim.load("zoo:resnet18").to_json())
    layer = next(l for l in g["layers"] if l["name"] == "layer4.0.downsample.0")
    layer["attrs"].update(attrs)
    p = tmp_path / "g.json"
    p.write_text(json.dumps(g))          # json writes inf / nan as Infinity / NaN, which it reads back
    return str(p)


@pytest.mark.parametrize("pads, words", [
    ([0, float("inf"), 0, 0], "pads must be integers >= 0, got [0, inf, 0, 0]"),   # an OverflowError traceback
    ([0, float("nan"), 0, 0], "pads must be integers >= 0"),
    ([0, 0.5, 0, 0], "pads must be integers >= 0, got [0, 0.5, 0, 0]"),           # was truncated to 0
    ([0, -5, 0, 0], "pads must be integers >= 0, got [0, -5, 0, 0]"),
    ([0, 1e300, 0, 0], "gives an output dimension past 2147483647"),               # a 300-digit shape in the error
])
def test_graph_json_window_attributes_are_checked(tmp_path, capsys, pads, words):
    path = _graph_json_with(tmp_path, pads=pads)
    for cmd in (["inspect", path], ["estimate", path, "--hw", "orin-agx", "--int8"]):
        err = one_line_error(cmd, capsys)
        assert "layer 'layer4.0.downsample.0' (Conv)" in err and words in err, err


@pytest.mark.parametrize("key, value", [("strides", [0, 2]), ("kernel_shape", [1, 1.5]), ("dilations", [True, 1])])
def test_graph_json_kernel_stride_dilation_are_checked(tmp_path, capsys, key, value):
    err = one_line_error(["inspect", _graph_json_with(tmp_path, **{key: value})], capsys)
    assert f"{key} must be integers >= 1" in err, err


def test_graph_json_integral_float_attributes_still_read(tmp_path, capsys):
    # 1.0 is an integer value: read as 1, as before
    from dlasim.cli import main
    assert main(["inspect", _graph_json_with(tmp_path, strides=[2.0, 2.0])]) == 0


def test_graph_json_group_is_checked(tmp_path, capsys):
    err = one_line_error(["inspect", _graph_json_with(tmp_path, group=1.5)], capsys)
    assert "group must be an integer >= 1, got 1.5" in err, err


@pytest.mark.parametrize("pad", [0.5, float("nan"), float("inf")])
def test_graph_json_pad_op_that_gives_no_whole_shape_is_one_line(tmp_path, capsys, pad):
    """A Pad layer's pads flow straight into its output shape: 17.5 was truncated to 17, NaN and inf raised a
    ValueError / OverflowError traceback where the shape was stored."""
    import json
    from dlasim import GraphBuilder
    b = GraphBuilder("p")
    y = b.op("Pad", [b.input("x", (1, 8, 16, 16))], {"pads": [0, 0, 1, 1, 0, 0, 1, 1]}, name="pad")
    g = json.loads(b.build([b.relu(b.conv(y, 8, kernel=3, name="c"), name="r")]).to_json())
    next(l for l in g["layers"] if l["name"] == "pad")["attrs"]["pads"] = [0, 0, pad, 1, 0, 0, 1, 1]
    p = tmp_path / "p.json"
    p.write_text(json.dumps(g))
    err = one_line_error(["inspect", str(p)], capsys)
    assert "layer 'pad' (Pad) gives an output shape that is not whole numbers" in err, err


def test_builder_op_with_a_shape_of_no_whole_numbers_is_a_model_error():
    """GraphBuilder.op takes any attributes: a NaN pad raised a ValueError deep in the estimate."""
    from dlasim import GraphBuilder, ModelError
    b = GraphBuilder("p")
    with pytest.raises(ModelError, match="layer 'pad' \\(Pad\\) gives an output shape that is not whole numbers"):
        b.op("Pad", [b.input("x", (1, 8, 16, 16))], {"pads": [0, 0, float("nan"), 1, 0, 0, 1, 1]}, name="pad")
    assert b.op("Pad", ["x"], {"pads": [0, 0, 1, 1, 0, 0, 1, 1]}, name="pad2")      # whole numbers still build


def test_window_attributes_accept_numpy_whole_numbers():
    """numpy integers and whole numpy floats are integers too (an importer may hand them on)."""
    import numpy as np
    from dlasim import GraphBuilder
    b = GraphBuilder("n")
    x = b.input("x", (1, 8, 16, 16))
    y = b.op("Conv", [x, b.const("w", (8, 8, 3, 3))], {"kernel_shape": [np.int64(3)] * 2, "pads": [np.int64(1)] * 4,
                                                       "strides": [np.float32(2.0)] * 2})
    assert b.build([y]).tensors[y].shape == (1, 8, 8, 8)
