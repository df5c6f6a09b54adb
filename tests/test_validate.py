"""Validation harness: the case file, the JSON shape (DESIGN.md 'Validation folder'), error arithmetic, CLI."""
from __future__ import annotations

import csv
import json

import pytest

from dlasim import cli, validate
from dlasim.errors import DlasimError


@pytest.fixture(scope="module")
def result():
    return validate.run()


def test_cases_file_has_sourced_rows():
    rows = validate.load_cases()
    assert len(rows) >= 16
    assert all(r["source"] for r in rows), [r["name"] for r in rows if not r["source"]]
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names))


def test_every_case_runs(result):
    errors = [(r["name"], r["error"]) for r in result["cases"] if r["error"]]
    assert not errors
    for r in result["cases"]:
        assert r["measured"] > 0 and r["predicted"] is not None


def test_json_shape(result):
    for r in result["cases"]:
        for key in ("name", "suite", "platform", "measured", "predicted", "error_pct", "source"):
            assert key in r
    s = result["summary"]
    for key in ("median_abs_error_pct", "within_10pct", "within_20pct", "within_30pct"):
        assert key in s and key in s["all"]
    platforms = {validate.platform_key(r["platform"]) for r in result["cases"]}
    assert platforms <= set(s) and {"xavier-agx", "orin-agx", "a100", "h200"} <= platforms
    estimates = [r for r in result["cases"] if r["kind"] == "estimate"]
    assert s["all"]["n"] == len(estimates) and s["all"]["n_bounds"] == len(result["cases"]) - len(estimates)
    for plat in platforms:                                   # held-out summary per platform
        held = [r for r in estimates if not r["fitted"] and validate.platform_key(r["platform"]) == plat]
        assert s[f"held_out:{plat}"]["n"] == len(held)
    assert 0 <= s["within_10pct"] <= s["within_20pct"] <= s["within_30pct"] <= 1
    json.dumps(result)  # plain data


def test_error_pct_for_a_fake_case(tmp_path):
    assert validate.error_pct(1.2, 1.0) == pytest.approx(20.0)
    assert validate.error_pct(0.5, 1.0) == pytest.approx(-50.0)
    path = tmp_path / "cases.csv"
    fields = ["name", "suite", "platform", "model", "device", "precision", "batch", "options", "metric",
              "measured", "unit", "engines", "tolerance_pct", "notes", "source"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        base = {"suite": "fake", "platform": "orin-agx", "model": "zoo:seed000_conv1x1", "device": "dla",
                "precision": "int8", "batch": "1", "metric": "total_ms", "unit": "ms", "source": "test"}
        w.writerow({**base, "name": "ok", "measured": "1.0", "tolerance_pct": "10"})
        w.writerow({**base, "name": "qps", "measured": "500", "unit": "qps", "engines": "2"})
        w.writerow({**base, "name": "broken", "model": "zoo:no_such_model", "measured": "1.0"})
    res = validate.run(path=path)
    rows = {r["name"]: r for r in res["cases"]}
    pred = rows["ok"]["predicted"]
    assert rows["ok"]["error_pct"] == pytest.approx((pred - 1.0) / 1.0 * 100)
    assert rows["qps"]["measured"] == pytest.approx(4.0)  # 2 engines / 500 qps
    assert rows["qps"]["error_pct"] == pytest.approx((pred - 4.0) / 4.0 * 100)
    assert rows["broken"]["error"] and rows["broken"]["predicted"] is None
    assert res["summary"]["n"] == 2 and res["summary"]["n_errors"] == 1
    assert "broken" in validate.render(res)


def test_metric_and_measured_helpers():
    import dlasim
    e = dlasim.estimate("zoo:seed000_conv1x1", "xavier-agx", device="dla", precision="int8", batch=32)
    g = dlasim.load("zoo:seed000_conv1x1")
    layer, _ = validate.predicted_value(e, g, "steps_ms:kind=layer")
    assert layer == pytest.approx(sum(s.time_ms for s in e.steps if s.kind == "layer"))
    rest, _ = validate.predicted_value(e, g, "steps_ms:name!^=input")
    first, _ = validate.predicted_value(e, g, "steps_ms:name^=input")
    assert rest + first == pytest.approx(e.total_ms)
    assert validate.measured_value(
        "median(validation/data/seeds/xavier_dla_conv_trtexec.csv:k1_int8_ms)") == pytest.approx(2.0737)
    assert validate.to_ms(2037, "img_per_s", 2, 2) == pytest.approx(1000 * 4 / 2037)


def test_suite_filter_and_cli_json(capsys):
    res = validate.run("trex")
    assert res["cases"] and {r["suite"] for r in res["cases"]} == {"trex"}
    assert cli.main(["validate", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cases"] and "median_abs_error_pct" in out["summary"]
    assert cli.main(["validate", "--suite", "no-such-suite"]) == 2


def test_bound_kinds():
    assert validate.bound_holds("upper_bound", 9.9, 10.0) and not validate.bound_holds("upper_bound", 10.1, 10.0)
    assert validate.bound_holds("magnitude", 5.0, 10.0) and validate.bound_holds("magnitude", 20.0, 10.0)
    assert not validate.bound_holds("magnitude", 4.9, 10.0) and not validate.bound_holds("magnitude", 20.1, 10.0)
    assert validate.bound_holds("estimate", 1.0, 1.0) is None
    rows = [{"kind": "estimate", "error_pct": 10.0, "within_tolerance": True, "fitted": False},
            {"kind": "estimate", "error_pct": -30.0, "within_tolerance": False, "fitted": False},
            {"kind": "upper_bound", "error_pct": -80.0, "within_tolerance": True, "fitted": False},
            {"kind": "magnitude", "error_pct": 150.0, "within_tolerance": False, "fitted": False}]
    s = validate.summarize(rows)                              # bounds are not in the shares
    assert s["n"] == 2 and s["within_20pct"] == 0.5 and s["median_abs_error_pct"] == 20.0
    assert s["n_bounds"] == 2 and s["bounds_held"] == 1
    line = validate.held_out_line({"held_out": s, "held_out:xavier-nx": s})
    assert line.startswith("held-out within 20%: 50% of 2 (xavier-nx 50% of 2)") and "1/2" in line


def test_bad_kind_is_rejected(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text("name,suite,kind,source\nx,s,lower,test\n")
    with pytest.raises(validate.DlasimError, match="kind 'lower'"):
        validate.load_cases(path)


def test_every_case_names_its_family_and_public2_rows_are_held_out():
    rows = validate.load_cases()
    assert all(r["family"] for r in rows), [r["name"] for r in rows if not r["family"]]
    with open(validate.ROOT / "validation/data/public2/measurements.csv", newline="") as f:
        public2 = {r["case_id"]: r for r in csv.DictReader(f)}
    p2 = [r for r in rows if "public2" in r["measured"]]
    assert len(p2) >= 45
    for r in p2:
        if r["measured"].startswith("fps_gap_ms("):           # a gap of two app-level rows: host work cancels
            a, b = r["measured"].rsplit("case_id=", 1)[1].rstrip(")").split("|")
            assert r["fitted"] == "no" and a in r["source"] and b in r["source"]
            assert validate.measured_value(r["measured"]) == pytest.approx(
                1e3 / float(public2[a]["value"]) - 1e3 / float(public2[b]["value"]))
            continue
        assert r["fitted"] == "no", r["name"]
        cid = r["measured"].rsplit("case_id=", 1)[1].rstrip(")")
        assert cid in r["source"] and public2[cid]["quote"].strip() in r["source"]
        assert validate.measured_value(r["measured"]) == float(public2[cid]["value"])
        if cid.startswith("JKJ-"):                            # app-level FPS includes host work
            assert r["kind"] == "upper_bound"


def test_fps_gap_and_minus_case(tmp_path):
    data = tmp_path / "fps.csv"
    data.write_text("case_id,value\nA,40\nB,50\n")
    # 1000/40 - 1000/50 = 25 - 20 = 5 ms
    assert validate.measured_value(f"fps_gap_ms({data}:value:case_id=A|B)") == pytest.approx(5.0)
    with pytest.raises(validate.DlasimError, match="no row with case_id='C'"):
        validate.measured_value(f"fps_gap_ms({data}:value:case_id=A|C)")
    path = tmp_path / "cases.csv"
    fields = ["name", "suite", "platform", "model", "device", "precision", "batch", "metric", "measured",
              "unit", "source"]
    base = {"suite": "fake", "platform": "xavier-agx", "model": "zoo:seed000_conv1x1", "precision": "int8",
            "batch": "32", "unit": "ms", "source": "test"}
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerow({**base, "name": "gpu", "device": "gpu", "metric": "total_ms", "measured": "1"})
        w.writerow({**base, "name": "gap", "device": "dla", "metric": "minus_case:gpu",
                    "measured": f"fps_gap_ms({data}:value:case_id=A|B)"})
        w.writerow({**base, "name": "bad", "device": "dla", "metric": "minus_case:nope", "measured": "1"})
    rows = {r["name"]: r for r in validate.run(path=path)["cases"]}
    import dlasim
    dla = dlasim.estimate("zoo:seed000_conv1x1", "xavier-agx", device="dla", precision="int8", batch=32).total_ms
    assert rows["gap"]["predicted"] == pytest.approx(dla - rows["gpu"]["predicted"])
    assert rows["gap"]["measured"] == pytest.approx(5.0)
    assert "no such case" in rows["bad"]["error"]


def test_dla_gap_reads_the_dla_carrying_rows_of_real_profiles(tmp_path):
    # googlenet_gpu_transition_at_10: "prob input reformatter 0" 2.42572 ms carries DLA layers 10-140;
    # at_24: the same row, 2.21434 ms, layers 24-140; the difference is the DLA time of layers 10-23
    prof = "validation/data/haxconn/profiles/googlenet_gpu_transition_at_{}.profile"
    gap = validate.measured_value(f"dla_gap_ms({prof.format(10)}|{prof.format(24)})")
    assert gap == pytest.approx(2.42572 - 2.21434)
    # at_124: the carrying row is the subgraph's own brace row, 0.393088 ms
    assert validate.measured_value(f"dla_gap_ms({prof.format(124)})") == pytest.approx(0.393088)
    # an all-GPU profile has no row carrying DLA time: one line naming the file
    with pytest.raises(DlasimError, match="googlenet_gpu_mark_at_-1.profile: expected one row"):
        validate.measured_value("dla_gap_ms(validation/data/haxconn/profiles/googlenet_gpu_mark_at_-1.profile)")
