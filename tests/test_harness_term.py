"""The harness term of a validation case (`METRIC + harness(EXPR)`): torch2trt's per-call host and sync time."""
from __future__ import annotations

import csv

import pytest

from dlasim import validate
from dlasim.errors import DlasimError
from dlasim.measures import measured_value

P2 = "validation/data/public2/measurements.csv"


def test_sync_gap_of_one_row_is_latency_minus_the_throughput_period():
    # T2T-01 alexnet: Latency 2.02 ms, Throughput 565 -> 2.02 - 1000/565 = 0.25009 ms
    assert measured_value(f"t2t_sync_gap_ms({P2}:case_id=T2T-01)") == pytest.approx(2.02 - 1000 / 565)
    assert measured_value(f"t2t_sync_gap_ms({P2}:case_id=T2T-01)") == pytest.approx(0.25009, abs=1e-5)


def test_sync_gap_of_several_rows_is_their_median():
    # T2T-01 0.25009, T2T-02 squeezenet 1.02 - 1000/1290 = 0.24481, T2T-08 densenet 13 - 1000/76.6 = -0.05483
    three = measured_value(f"t2t_sync_gap_ms({P2}:case_id=T2T-01|T2T-02|T2T-08)")
    assert three == pytest.approx(1.02 - 1000 / 1290)
    two = measured_value(f"t2t_sync_gap_ms({P2}:case_id=T2T-01|T2T-02)")
    assert two == pytest.approx((0.25009 + 0.24481) / 2, abs=1e-5)


def test_sync_gap_rejects_a_missing_row_and_a_row_without_throughput(tmp_path):
    with pytest.raises(DlasimError, match="no row 'T2T-99'"):
        measured_value(f"t2t_sync_gap_ms({P2}:case_id=T2T-01|T2T-99)")
    (tmp_path / "m.csv").write_text("case_id,value,quote\nX,2.0,| Latency (TensorRT) 2.0 |\n")
    with pytest.raises(DlasimError, match="quotes no 'Throughput"):
        measured_value("t2t_sync_gap_ms(m.csv:case_id=X)", tmp_path)


def test_split_harness():
    assert validate.split_harness("total_ms") == ("total_ms", None)
    assert validate.split_harness("total_ms + harness(0.25)") == ("total_ms", "0.25")
    assert validate.split_harness("steps_ms:kind=layer+harness(f(a:b=c|d))") == ("steps_ms:kind=layer",
                                                                                 "f(a:b=c|d)")


def test_harness_term_is_added_to_the_prediction(tmp_path):
    base = {"name": "c", "suite": "s", "family": "f", "platform": "xavier-agx", "model": "zoo:resnet18",
            "device": "gpu", "precision": "fp16", "batch": "1", "measured": "2.0", "unit": "ms"}
    plain = validate.run_case({**base, "metric": "total_ms"})
    plus = validate.run_case({**base, "metric": "total_ms+harness(0.5)"})
    assert plain["error"] is None and plus["error"] is None
    assert plus["harness_ms"] == 0.5 and "harness_ms" not in plain
    assert plus["predicted"] == pytest.approx(plain["predicted"] + 0.5)
    # the table says the prediction holds the term
    text = validate.render({"cases": [plain, plus], "summary": {}})
    assert text.count("(incl. harness 0.500 ms)") == 1


def test_no_torch2trt_case_reads_a_row_of_its_own_family():
    """Held-out protocol: a case's harness term comes from other network families' rows only."""
    cases = [c for c in validate.load_cases() if c["suite"] == "torch2trt"]
    assert len(cases) == 12
    family_of = {c["measured"].rsplit("case_id=", 1)[1].rstrip(")"): c["family"] for c in cases}
    with open(validate.ROOT / P2, newline="") as f:
        t2t = [r["case_id"] for r in csv.DictReader(f) if r["case_id"].startswith("T2T-")]
    assert sorted(family_of) == sorted(t2t)
    for c in cases:
        metric, harness = validate.split_harness(c["metric"])
        assert metric == "total_ms" and harness.startswith("t2t_sync_gap_ms(")
        read = harness.rsplit("case_id=", 1)[1].rstrip(")").split("|")
        assert read and all(family_of[r] != c["family"] for r in read), c["name"]
        # every other family's rows are read: the term is not a hand-picked subset
        assert sorted(read) == sorted(r for r in t2t if family_of[r] != c["family"]), c["name"]


def _case(metric, measured="2.0"):
    return {"name": "c", "suite": "s", "family": "f", "platform": "xavier-agx", "model": "zoo:resnet18",
            "device": "gpu", "precision": "fp16", "batch": "1", "measured": measured, "unit": "ms", "metric": metric}


@pytest.mark.parametrize("term, words", [("-5", "expected a finite time >= 0 ms, got -5.0"),
                                         ("nan", "expected a finite time >= 0 ms, got nan"),
                                         ("abc", "metric harness(abc): measured 'abc'")])
def test_a_harness_term_must_be_a_time(term, words):
    row = validate.run_case(_case(f"total_ms+harness({term})"))
    assert row["predicted"] is None and words in row["error"]


def test_a_harness_term_may_not_read_the_cases_own_row():
    own = f"csvsum({P2}:value:case_id=T2T-02)"
    row = validate.run_case(_case(f"total_ms+harness(t2t_sync_gap_ms({P2}:case_id=T2T-01|T2T-02))", own))
    assert row["predicted"] is None and "reads the case's own row(s) T2T-02" in row["error"]
    ok = validate.run_case(_case(f"total_ms+harness(t2t_sync_gap_ms({P2}:case_id=T2T-01|T2T-03))", own))
    assert ok["error"] is None and ok["harness_ms"] == pytest.approx(
        ((2.02 - 1000 / 565) + (1.64 - 1000 / 722)) / 2)          # T2T-01 and T2T-03 (resnet18: 1.64 ms, 722/s)


def test_zero_throughput_is_a_one_line_error(tmp_path):
    (tmp_path / "m.csv").write_text("case_id,value,quote\nX,2.0,| Throughput (TensorRT) 0 | Latency 2.0 |\n")
    with pytest.raises(DlasimError) as e:
        measured_value("t2t_sync_gap_ms(m.csv:case_id=X)", tmp_path)
    assert "\n" not in str(e.value) and "t2t_sync_gap_ms" in str(e.value)


def test_validate_reports_the_held_out_shares_without_the_harness_terms_too():
    res = validate.run(suite="torch2trt")
    rows = res["cases"]
    assert all("harness_ms" in r and r["harness_ms"] > 0.2 for r in rows)
    alone = [abs(r["predicted"] - r["harness_ms"] - r["measured"]) / r["measured"] * 100 for r in rows]
    eo = res["summary"]["held_out_engine_only"]
    assert eo["n"] == 12 and eo["within_20pct"] == sum(e <= 20 for e in alone) / 12
    assert eo["within_20pct"] < res["summary"]["held_out"]["within_20pct"]
    assert "with the engine time alone (no harness terms)" in validate.held_out_line(res["summary"])
