"""Validation harness: the case file, the JSON shape (DESIGN.md 'Validation folder'), error arithmetic, CLI."""
from __future__ import annotations

import csv
import json

import pytest

from dlasim import cli, validate


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
    assert s["all"]["n"] == len(result["cases"])
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
