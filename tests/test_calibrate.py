"""explain --measured (dlasim.explainer.measured) and calibrate (dlasim.calibrate): joins, fits, spec writing."""
import json
import math
import re
from pathlib import Path

import pytest

import dlasim
from dlasim import calibrate as C
from dlasim.cli import main
from dlasim.errors import DlasimError
from dlasim.explainer.measured import explain_measured, profile_from_rows

ROOT = Path(__file__).resolve().parent.parent
HAX = ROOT / "validation" / "data" / "haxconn"
GOOGLENET = str(HAX / "prototxt" / "googlenet.prototxt")
GPU_PROFILE = str(HAX / "profiles" / "googlenet_gpu_mark_at_-1.profile")
DLA_PROFILE = str(HAX / "profiles" / "googlenet_dla_mark_at_-1.profile")
XAVIER = ROOT / "hardware_specs" / "xavier-agx.toml"
CODES = {"ok", "unmatched", "reformat", "transition", "fallback", "overhead", "memory_bound", "compute_bound",
         "cbuf_refetch", "channel_padding", "tile_quantization", "wave_quantization", "sparse_ineligible",
         "sparse_too_small", "precision_unsupported"}


@pytest.fixture(scope="module")
def gpu_explain():
    return explain_measured(GOOGLENET, "xavier-agx", GPU_PROFILE, device="gpu", precision="fp16")


def test_gpu_profile_matches_most_measured_time(gpu_explain):
    d = gpu_explain.to_dict()
    assert d["matched_share"] >= 0.80
    assert {"model", "hardware", "total_predicted_ms", "total_measured_ms", "matched_share", "rows",
            "causes"} <= set(d)
    assert abs(d["total_measured_ms"] - 1.94) < 0.01
    for r in d["rows"]:
        assert {"name", "predicted_ms", "measured_ms", "cause"} <= set(r)
        assert r["cause"] in CODES
    # horizontal fusion: the measured "a || b || c" row is one predicted step with the same three convs
    fused = next(r for r in d["rows"] if r["name"].startswith("inception_3a/1x1 + inception_3a/relu_1x1 ||")
                 and "reformatter" not in r["name"])
    assert len(fused["steps"]) == 1 and fused["steps"][0].count("||") == 2
    # the network input reformat is matched to the predicted input reformat step
    first = d["rows"][0]
    assert first["steps"] and "reformat" in first["steps"][0] and first["cause"] in CODES
    assert all(c["code"] in CODES for c in d["causes"]) and d["causes"]
    assert "matched to predicted steps" in gpu_explain.render()


def test_dla_profile_joins_subgraph_rows():
    res = explain_measured(GOOGLENET, "xavier-agx", DLA_PROFILE, device="dla", precision="fp16")
    sub = next(r for r in res.rows if r["kind"] == "dla_subgraph")
    # the {..} enqueue row, the output reformatter carrying the DLA time and its finish row
    assert sub["measured_rows"] == 3
    assert any(n.endswith("output reformatter 0") for n in sub["rows"])
    assert sub["measured_ms"] > 3.4
    assert any(s.startswith("DLA loadable") for s in sub["steps"]) and len(sub["steps"]) > 50
    data = next(r for r in res.rows if r["name"] == "data to nvm")
    assert data["measured_rows"] == 2 and "reformat" in data["steps"][0]
    assert res.matched_share > 0.99
    # split for calibration: the {..} row is the launch, the carrying row the layers
    split = explain_measured(GOOGLENET, "xavier-agx", DLA_PROFILE, device="dla", split_dla=True)
    kinds = {r["kind"] for r in split.rows}
    assert {"dla_launch", "dla_body"} <= kinds
    launch = next(r for r in split.rows if r["kind"] == "dla_launch")
    assert launch["steps"] == ["DLA loadable 0 launch"]


def test_foreign_node_and_copynode_rows():
    rows = [("Reformatting CopyNode for Input Tensor 0 to {ForeignNode[conv1/7x7_s2...loss3/classifier]}", 0.041),
            ("{ForeignNode[conv1/7x7_s2...loss3/classifier]}", 1.032), ("prob", 0.0186)]
    res = explain_measured(GOOGLENET, "orin-agx", profile_from_rows(rows), device="dla")
    fn = next(r for r in res.rows if r["name"].startswith("{ForeignNode"))
    assert len(fn["steps"]) > 50
    copy = res.rows[0]
    assert copy["steps"] and "data" in copy["steps"][0]


def test_cli_calibrate_json_lowers_error_and_writes_loadable_spec(tmp_path, capsys):
    # start from the first estimates (the shipped spec is already fitted to this profile)
    start = tmp_path / "start.toml"
    C.write_spec(XAVIER, start, {"gpu.tensor_efficiency": 0.6, "gpu.kernel_floor_s": 8e-6,
                                 "gpu.memory_efficiency": 0.6, "copies.reformat_floor_s": 15e-6},
                 {k: "first estimate" for k in ("gpu.tensor_efficiency", "gpu.kernel_floor_s",
                                                "gpu.memory_efficiency", "copies.reformat_floor_s")})
    out = tmp_path / "x.toml"
    rc = main(["calibrate", "--hw", str(start), "--model", GOOGLENET, "--profile", GPU_PROFILE,
               "--device", "gpu", "--precision", "fp16", "-o", str(out), "--format", "json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert {"before", "after", "parameters", "residual_rms_log", "band_pct", "data", "unconstrained"} <= set(d)
    assert d["after"]["median_abs_error_pct"] < d["before"]["median_abs_error_pct"]
    for name, p in d["parameters"].items():
        assert {"before", "after", "band", "constrained"} <= set(p)
    plat = dlasim.hardware(str(out))
    fitted = {k: v for k, v in d["parameters"].items() if v["constrained"]}
    assert fitted
    for name, p in fitted.items():
        assert math.isclose(C.get_param(plat, name), p["after"], rel_tol=1e-3)
        block, key = name.rsplit(".", 1)
        assert getattr(plat, block).sources[key].startswith("fitted by dlasim calibrate from")
    e = dlasim.estimate(GOOGLENET, str(out), device="gpu")
    assert e.total_ms > 0
    assert main(["estimate", GOOGLENET, "--hw", str(out), "--device", "gpu", "--format", "json"]) == 0


def test_refuses_more_parameters_than_observations():
    plat = dlasim.hardware("xavier-agx")
    plan = dlasim.build(str(ROOT / "validation" / "data" / "seeds" / "kernel_1x1.prototxt"), plat, device="dla",
                        precision="int8", batch=32)
    obs = [C.total_observation(plan, 2.07, "k1 int8")]
    with pytest.raises(DlasimError) as e:
        C.fit(obs, plat, ["dla.mac_efficiency", "dla.layer_overhead_s"])
    assert "\n" not in str(e.value) and "observations" in str(e.value)
    with pytest.raises(DlasimError):
        C.fit(obs, plat, ["dla.no_such_field"])


def test_fit_reports_unconstrained_parameter():
    plat = dlasim.hardware("xavier-agx")
    plan = dlasim.build(str(ROOT / "validation" / "data" / "seeds" / "kernel_1x1.prototxt"), plat, device="dla",
                        precision="int8", batch=32)
    obs = [C.total_observation(plan, 2.07, "k1 int8 total"), C.total_observation(plan, 2.08, "again")]
    # the GPU tensor efficiency does not enter an all-DLA plan: reported, kept at its prior
    res = C.fit(obs, plat, ["gpu.tensor_efficiency", "copies.dla_copy_efficiency"])
    assert res["unconstrained"] == ["gpu.tensor_efficiency"]
    assert res["parameters"]["gpu.tensor_efficiency"]["after"] == plat.gpu.tensor_efficiency
    assert res["parameters"]["copies.dla_copy_efficiency"]["constrained"]
    assert res["after"]["median_abs_error_pct"] < 1.0


def test_default_params_per_device_and_precision():
    dla_fp16 = ["dla.mac_efficiency_fp16", "dla.layer_overhead_s", "dla.subgraph_overhead_s",
                "copies.dla_copy_efficiency", "copies.transition_overhead_s"]
    gpu = ["gpu.tensor_efficiency", "gpu.kernel_floor_s", "gpu.memory_kernel_floor_s", "gpu.memory_efficiency",
           "copies.reformat_floor_s"]
    assert C.default_params({"dla"}, "fp16", reformat_rows=True) == dla_fp16
    assert C.default_params({"dla"}, "int8", reformat_rows=False)[0] == "dla.mac_efficiency"
    assert C.default_params({"gpu"}, "fp16", reformat_rows=False) == gpu
    assert C.default_params({"gpu"}, "fp16", reformat_rows=True) == gpu + ["copies.reformat_efficiency"]
    assert C.default_params({"gpu", "dla"}, "fp16", reformat_rows=False) == dla_fp16 + gpu


def test_calibrate_takes_typed_values_and_writes_nothing_on_bad_input(tmp_path):
    out = tmp_path / "x.toml"
    with pytest.raises(DlasimError) as e:
        C.calibrate("xavier-agx", [GOOGLENET, GOOGLENET], [GPU_PROFILE], str(out))
    assert "one per --profile (2 models, 1 profiles)" in str(e.value)
    with pytest.raises(DlasimError) as e:
        C.calibrate("xavier-agx", [GOOGLENET], [GPU_PROFILE], str(out), device="gpu", params=())
    assert "no parameters to fit" in str(e.value)
    assert not out.exists()


def test_write_spec_preserves_comments_and_changes_only_named_values(tmp_path):
    # a source spec without dla.mac_efficiency_fp16, so that the key has to be added
    text = XAVIER.read_text()
    text = re.sub(r"(?m)^mac_efficiency_fp16 = .*\n", "", text)
    src = tmp_path / "src.toml"
    src.write_text(text)
    dst = tmp_path / "xavier.toml"
    C.write_spec(src, dst, {"gpu.kernel_floor_s": 1.25e-5, "dla.mac_efficiency_fp16": 0.7},
                 {"gpu.kernel_floor_s": "fitted by test", "dla.mac_efficiency_fp16": "fitted by test too"})
    new_text = dst.read_text()
    old_lines, new_lines = text.split("\n"), new_text.split("\n")
    assert [l for l in old_lines if l.lstrip().startswith("#")] == [l for l in new_lines if l.lstrip().startswith("#")]
    removed = [l for l in old_lines if l not in new_lines]
    added = [l for l in new_lines if l not in old_lines]
    assert len(removed) == 2 and all("kernel_floor_s" in l for l in removed)
    assert len(added) == 4          # two changed lines, plus the new key and its source line
    assert "kernel_floor_s = 1.25e-05" in new_text and 'kernel_floor_s = "fitted by test"' in new_text
    plat = dlasim.hardware(str(dst))
    assert plat.gpu.kernel_floor_s == 1.25e-5 and plat.dla.mac_efficiency_fp16 == 0.7
    assert plat.dla.sources["mac_efficiency_fp16"] == "fitted by test too"
    assert plat.gpu.tensor_efficiency == dlasim.hardware("xavier-agx").gpu.tensor_efficiency
    assert src.read_text() == text                              # the source is untouched
    # patching in place keeps everything else byte for byte
    C.write_spec(dst, dst, {"gpu.kernel_floor_s": 1.25e-5}, {})
    assert dst.read_text() == new_text


def test_write_spec_refuses_a_spec_that_does_not_load(tmp_path):
    dst = tmp_path / "bad.toml"
    with pytest.raises(DlasimError):
        C.write_spec(XAVIER, dst, {"gpu.tensor_efficiency": 2.0}, {"gpu.tensor_efficiency": "x"})
    assert not dst.exists() and not list(tmp_path.glob(".dlasim-*"))


def test_cli_calibrate_takes_explain_spellings(tmp_path, capsys):
    """`calibrate MODEL --measured P --fp16` is `calibrate --model MODEL --profile P --precision fp16`: the
    same spec comes out; without a model it is one line, exit 2."""
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    assert main(["calibrate", "--hw", "xavier-agx", "--model", GOOGLENET, "--profile", GPU_PROFILE,
                 "--device", "gpu", "--precision", "fp16", "-o", str(a)]) == 0
    assert main(["calibrate", GOOGLENET, "--hw", "xavier-agx", "--measured", GPU_PROFILE,
                 "--device", "gpu", "--fp16", "-o", str(b)]) == 0
    assert a.read_text() == b.read_text()
    capsys.readouterr()
    assert main(["calibrate", "--hw", "xavier-agx", "--measured", GPU_PROFILE, "-o", str(tmp_path / "c.toml")]) == 2
    err = capsys.readouterr().err
    assert "give the model the profile was measured on" in err and err.count("\n") == 1
    assert not (tmp_path / "c.toml").exists()
    assert main(["calibrate", GOOGLENET, "--hw", "xavier-agx", "--measured", GPU_PROFILE, "--precision", "fp16",
                 "--int8", "-o", str(tmp_path / "d.toml")]) == 2
    assert "not both" in capsys.readouterr().err
