"""End-to-end checks through the CLI: JSON contract, formats, one-line errors with exit status 2."""
import json
import pickle
from dataclasses import asdict
from pathlib import Path

import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.cli import main
from dlasim.cost import CostParts
from dlasim.report import NOT_IN_JSON

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "validation" / "data" / "seeds"


def run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_estimate_json_contract(capsys):
    rc, out, err = run(capsys, "estimate", "zoo:googlenet", "--hw", "xavier-agx", "--device", "dla",
                       "--fp16", "--allowGPUFallback", "--format", "json")
    assert rc == 0, err
    d = json.loads(out)
    for key in ("model", "hardware", "device", "precision", "batch", "total_ms", "steps", "fallback",
                "dla_subgraphs", "transitions"):
        assert key in d
    assert d["total_ms"] == pytest.approx(sum(s["time_ms"] for s in d["steps"]))
    for s in d["steps"]:
        assert s["kind"] in ("layer", "reformat", "transition", "overhead")
        assert s["device"] in ("dla", "gpu") and s["bound"] in ("compute", "memory", "overhead")
        assert isinstance(s["layers"], list)
    assert d["fallback"] == [{"name": "prob", "op": "Softmax", "reason": "Softmax is not supported on DLA v1",
                              "kind": "unsupported_op"}]


def test_trtexec_aliases_and_csv(capsys):
    rc, out, _ = run(capsys, "estimate", "zoo:resnet18", "--hw=orin-agx:30w", "--useDLACore=1", "--int8",
                     "--batch=2", "--format", "csv")
    assert rc == 0
    header, first = out.splitlines()[:2]
    assert header.startswith("name,kind,op,device,precision,time_ms,share,bound")
    rc, out, _ = run(capsys, "estimate", "zoo:resnet18", "--useDLACore=1", "--int8", "--batch=2", "--format", "json")
    d = json.loads(out)
    assert d["batch"] == 2 and d["precision"] == "int8" and d["device"] == "dla"


def test_output_file_is_written(capsys, tmp_path):
    path = tmp_path / "e.json"
    rc, out, _ = run(capsys, "estimate", "zoo:seed000_conv1x1", "--format", "json", "-o", str(path))
    assert rc == 0 and out == "" and json.loads(path.read_text())["model"]


@pytest.mark.parametrize("argv,needle", [
    (["estimate", "zoo:nope"], "unknown"),
    (["estimate", "zoo:resnet18", "--hw", "nope"], "unknown hardware"),
    (["estimate", "zoo:resnet18", "--bogus"], "unrecognized arguments"),
    (["estimate", "zoo:resnet18", "--precision", "int4"], "invalid choice"),
    (["estimate", "/no/such/model.onnx"], "model.onnx"),
    (["estimate", "zoo:resnet18", "--batch", "0"], "batch"),
    (["estimate", "zoo:resnet18", "--hw", "a40", "--device", "dla"], "no DLA"),
    (["estimate", "zoo:resnet18", "--format", "html"], "-o FILE"),
    (["compare", "zoo:resnet18", "--vary", "colour=red,blue"], "--vary"),
    (["compare", "zoo:resnet18", "--vary", "shapes=input:1x3x224x224"], "at least 2 values"),
    (["compare", "zoo:resnet18", "--vary", "shapes=inp:1x3x224x224,inp:1x3x320x320"], "not an input"),
])
def test_bad_input_one_line_exit_2(capsys, argv, needle):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_bad_spec_file_names_file_and_field(capsys, tmp_path):
    text = (ROOT / "hardware_specs" / "xavier-agx.toml").read_text().replace("clock_hz = 1395.2e6", "clock_hz = \"fast\"")
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    rc, _, err = run(capsys, "estimate", "zoo:resnet18", "--hw", str(bad))
    assert rc == 2 and "bad.toml" in err and "dla.clock_hz" in err and err.count("\n") == 1


def test_dla_only_build_with_dynamic_matmul_fails_like_tensorrt(capsys, tmp_path):
    b = GraphBuilder("mm")
    a, c = b.input("matrixA", (128, 1024)), b.input("matrixB", (1024, 128))
    g = b.build([b.matmul(a, c, name="/MatMul")])
    path = tmp_path / "mm.json"
    path.write_text(g.to_json())
    rc, _, err = run(capsys, "estimate", str(path), "--hw", "orin-agx", "--useDLACore=0", "--fp16",
                     "--no-gpu-fallback")
    assert rc == 2 and "/MatMul" in err and "MatMul" in err
    assert "rewrite as a 1x1 convolution with constant weights" in err


def test_inspect_json_contract(capsys):
    rc, out, _ = run(capsys, "inspect", "zoo:resnet50", "--format", "json")
    d = json.loads(out)
    assert set(("nodes", "macs", "params")) <= set(d)
    assert 3.9e9 <= d["macs"] <= 4.2e9 and d["macs"] == sum(n["macs"] for n in d["nodes"])
    rc, out, _ = run(capsys, "inspect", "zoo:resnet50", "--shapes", "input:2x3x224x224", "--format", "json")
    assert json.loads(out)["macs"] == 2 * d["macs"]


def test_specs_and_zoo_lists(capsys):
    rc, out, _ = run(capsys, "specs", "list")
    assert rc == 0 and "orin-agx" in out and "15w" in out
    rc, out, _ = run(capsys, "specs", "show", "a100")
    assert "[gpu]" in out
    rc, out, _ = run(capsys, "zoo")
    assert "zoo:yolov4_relu" in out


def test_api_results_are_picklable_and_side_effect_free():
    g = dlasim.load("zoo:mobilenet_v2")
    before = g.to_json()
    e1 = dlasim.estimate(g, "orin-agx", device="dla", precision="int8", batch=4)
    e2 = dlasim.estimate(g, "orin-agx", device="dla", precision="int8", batch=4)
    assert g.to_json() == before and e1.total_ms == e2.total_ms
    assert pickle.loads(pickle.dumps(e1)).to_dict() == e1.to_dict()


def _asdict_row(s) -> dict:
    """asdict of a row, its parts as the fields that differ from their defaults (a dataclass tiling as a dict)."""
    defaults = CostParts()
    row = {k: v for k, v in asdict(s).items() if k not in NOT_IN_JSON}
    row["parts"] = {k: v for k, v in row["parts"].items() if v != getattr(defaults, k)}
    return row


def test_estimate_to_dict_rows_are_asdict_copies():
    e = dlasim.estimate("zoo:googlenet", "a100", device="gpu", precision="int8", sparsity="force")
    d = e.to_dict(parts=True)
    assert d["steps"] == [_asdict_row(s) for s in e.steps]
    assert e.to_dict()["steps"] == [{k: v for k, v in asdict(s).items() if k != "parts" and k not in NOT_IN_JSON}
                                    for s in e.steps]
    conv = next(r for r in d["steps"] if "tiling" in r["parts"])
    assert set(conv["parts"]["tiling"]) == {"tile_eff", "wave_eff", "k_eff", "rate_eff"}
    assert "sparse" not in next(r for r in d["steps"] if r["kind"] == "reformat")["parts"]   # "off": the default
    d["steps"][0]["layers"].append("x")
    conv["parts"]["tiling"]["tile_eff"] = -1.0
    assert e.to_dict(parts=True)["steps"] == [_asdict_row(s) for s in e.steps] != d["steps"]


def test_choice_options_take_any_case_and_device_takes_a_core(capsys):
    """--device DLA / --precision INT8 / --format JSON as people type them; --device dla1 is the DLA, core 1
    (as `dlasim concurrent` names the units): nvdla-small has one core, so it refuses core 1."""
    base = ["estimate", "zoo:resnet18", "--hw", "orin-agx"]
    rc, want, _ = run(capsys, *base, "--device", "dla", "--precision", "int8", "--format", "json")
    rc2, got, _ = run(capsys, *base, "--device", "DLA", "--precision", "INT8", "--format", "JSON")
    assert rc == rc2 == 0 and got == want
    rc, core1, _ = run(capsys, *base, "--device", "dla1", "--format", "json")
    rc2, flag1, _ = run(capsys, *base, "--useDLACore", "1", "--format", "json")
    assert rc == rc2 == 0 and core1 == flag1
    small = str(ROOT / "validation" / "data" / "seeds" / "kernel_1x1.prototxt")
    rc, _, err = run(capsys, "estimate", small, "--hw", "nvdla-small", "--device", "dla1")
    assert rc == 2 and "nvdla-small has 1 DLA core(s)" in err
    rc, _, err = run(capsys, *base, "--device", "dla0", "--useDLACore", "1")
    assert rc == 2 and "--device dla0 and --useDLACore=1 conflict" in err
    rc, _, err = run(capsys, *base, "--device", "npu")
    assert rc == 2 and "expected dla, dla0, dla1 or gpu" in err
