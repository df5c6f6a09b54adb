"""Tables fit the terminal: dlasim/columns.py's column blocks, and `dlasim validate` / `dlasim concurrent` at
COLUMNS=80, where each row keeps its numbers together (a wrapped table row would split them)."""
import json

import pytest

from dlasim.cli import main
from dlasim.columns import Column, blocks, table

COLS = [Column("name", 6, left=True), Column("a", 5), Column("b", 5), Column("c", 5)]


def test_columns_that_fit_stay_one_table():
    # 6 + 2 + 5 + 2 + 5 + 2 + 5 = 27 columns
    assert blocks(COLS, 1, 27) == [[0, 1, 2, 3]]
    assert table(COLS, [["x", "1", "22", "333"]], 27) == [
        "name        a      b      c",
        "---------------------------",
        "x           1     22    333",
        "---------------------------"]


def test_wider_columns_go_into_blocks_that_repeat_the_name():
    assert blocks(COLS, 1, 26) == [[0, 1, 2], [0, 3]]      # one short of 27: c moves to a second block
    assert blocks(COLS, 1, 20) == [[0, 1, 2], [0, 3]]      # 6 + 2 + 5 + 2 + 5 = 20
    assert blocks(COLS, 1, 19) == [[0, 1], [0, 2], [0, 3]]
    assert blocks(COLS, 1, 5) == [[0, 1], [0, 2], [0, 3]]  # never an empty block, even when nothing fits
    assert blocks(COLS, 2, 19) == [[0, 1, 2], [0, 1, 3]]
    lines = table(COLS, [["x", "1", "22", "333"]], 19)
    assert lines[:4] == ["name        a", "-------------", "x           1", "-------------"]
    assert lines[4] == "" and lines[5] == "name        b" and lines[-2] == "x         333"


def _run(capsys, monkeypatch, cols, *argv):
    monkeypatch.setenv("COLUMNS", str(cols))
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


@pytest.fixture(scope="module")
def cases():
    import dlasim.validate as v
    return v.run(None)["cases"]


def test_validate_at_80_columns_keeps_each_case_on_its_lines(capsys, monkeypatch, cases):
    out = _run(capsys, monkeypatch, 80, "validate")
    lines = out.splitlines()
    assert max(len(l) for l in lines) <= 80
    assert any("predicted ms" in l and "measured ms" in l and "error" in l for l in lines)
    for c in cases:
        i = lines.index(c["name"]) if c["name"] in lines else next(
            n for n, l in enumerate(lines) if l.split()[:1] == [c["name"]])
        row = lines[i] if lines[i] != c["name"] else lines[i + 1]
        assert c["platform"] in row.split(), c["name"]
        assert f"{c['predicted']:.4f}" in row and f"{c['measured']:.4f}" in row, c["name"]
        assert f"{c['error_pct']:+.1f}%" in row, c["name"]


def test_validate_wide_is_one_line_a_case(capsys, monkeypatch, cases):
    lines = _run(capsys, monkeypatch, 200, "validate").splitlines()
    for c in cases[:20]:
        row = next(l for l in lines if l.split()[:1] == [c["name"]])
        assert f"{c['predicted']:.4f}" in row and f"{c['measured']:.4f}" in row


CONCURRENT = (["concurrent", "zoo:resnet50", "--hw", "orin-agx", "--int8"],
              ["concurrent", "zoo:googlenet", "--cut", "inception_4a/output", "--stages", "dla0,gpu",
               "--hw", "xavier-agx", "--fp16"])


@pytest.mark.parametrize("argv", CONCURRENT, ids=["throughput", "pipeline"])
def test_concurrent_at_80_columns_fits_and_keeps_every_number_beside_its_engine(capsys, monkeypatch, argv):
    doc = json.loads(_run(capsys, monkeypatch, 80, *argv, "--format", "json"))
    lines = _run(capsys, monkeypatch, 80, *argv).splitlines()
    assert max(len(l) for l in lines) <= 80
    for e in doc["engines"]:
        rows = [l for l in lines if l.startswith(e["name"] + " ")]
        cells = " ".join(r[len(e["name"]):] for r in rows).split()
        assert cells[:2] == [e["unit"], str(e["batch"])]
        assert cells[2:] == [f"{e['alone_ms']:.3f}", f"{e['together_ms']:.3f}", f"{e['alone_qps']:.1f}",
                             f"{e['together_qps']:.1f}", f"{e['slowdown']:.2f}x", f"{e['added_ms']['dram']:.3f}",
                             f"{e['added_ms']['unit_share']:.3f}", f"{e['added_ms']['copies']:.3f}"]


def test_concurrent_advice_at_80_columns(capsys, monkeypatch):
    out = _run(capsys, monkeypatch, 80, "concurrent", "zoo:resnet18", "zoo:googlenet", "--hw", "orin-agx",
               "--advise", "--batches", "1,8")
    assert max(len(l) for l in out.splitlines()) <= 80 and "best:" in out
