"""The golden JSON outputs (tests/golden/, benchmarks/golden_outputs.py) are what the code gives now: a guard
for refactors, not accuracy evidence. After a deliberate model change: `python benchmarks/golden_outputs.py
write` and a commit message naming what moved and why."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("golden_outputs", ROOT / "benchmarks" / "golden_outputs.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


@pytest.mark.parametrize("name", list(golden.CASES))
def test_golden_output_unchanged(name):
    diffs = golden.check(name)
    assert not diffs, (f"{name} differs from tests/golden/{name}.json ({len(diffs)} values; if the change is "
                       f"deliberate: python benchmarks/golden_outputs.py write {name}):\n  "
                       + "\n  ".join(diffs[:10]))


def test_every_golden_file_is_a_case():
    assert sorted(p.stem for p in golden.GOLDEN.glob("*.json")) == sorted(golden.CASES)


def test_rounding_keeps_four_significant_digits():
    assert golden.round_sig(0.63188054) == 0.6319
    assert golden.round_sig(1582.5777) == 1583.0
    assert golden.round_sig(-0.00012344) == -0.0001234
    assert golden.round_sig(-5.551115123125783e-17) == 0.0      # float noise of a difference is zero
    assert golden.round_sig(0.0) == 0.0


def test_normalise_drops_noise_and_paths_but_keeps_integers():
    root = "/some/checkout"
    doc = {"total_ms": 1.23456, "macs": 1814073344, "ok": True, "measured": f"{root}/validation/p.json",
           "version": "9.9", "rows": [{"x": 2.0000001}]}
    assert golden.normalise(doc, root) == {"total_ms": 1.235, "macs": 1814073344, "ok": True,
                                           "measured": "validation/p.json", "rows": [{"x": 2.0}]}


def test_differences_find_a_change_in_the_fourth_digit_only():
    want = golden.normalise({"steps": [{"time_ms": 0.12341}], "n": 3})
    assert golden.differences(want, golden.normalise({"steps": [{"time_ms": 0.123412}], "n": 3})) == []
    assert golden.differences(want, golden.normalise({"steps": [{"time_ms": 0.1236}], "n": 3})) == \
        [".steps[0].time_ms: 0.1234 -> 0.1236"]
    assert golden.differences(want, golden.normalise({"steps": [], "n": 3, "new": 1})) == \
        [".new: added", ".steps: 1 items -> 0"]
    assert golden.differences({"a": True}, {"a": 1}) == [".a: true -> 1"]


def test_check_reports_a_changed_number(monkeypatch):
    name = next(iter(golden.CASES))
    real = golden.run_case
    def shifted(argv):
        doc = real(argv)
        return {**doc, "total_ms": doc["total_ms"] * 1.01} if "total_ms" in doc else doc
    monkeypatch.setattr(golden, "run_case", shifted)
    assert any(d.startswith(".total_ms:") for d in golden.check(name))
