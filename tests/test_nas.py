"""Search spaces, latency tables, estimate_many and `dlasim sweep`."""
import csv
import io
import json
import sys

import numpy as np
import pytest

import dlasim
from dlasim.batch import Failed
from dlasim.cli import main
from dlasim.errors import DlasimError
from dlasim.nas import LatencyTable, mobilenet_v3_space, resnet_space, tiny_space
from dlasim.nas.table import _with_limit, unit_keys
from dlasim.sweep import pareto

HW = dlasim.hardware("orin-agx")


def full(space, row, hw=HW, **kw):
    return dlasim.estimate(space.build(row), hw, device=kw.get("device", "dla"),
                           precision=kw.get("precision", "int8"), batch=1)


def with_acts(space, row, act_index):
    row = row.copy()
    for i, c in enumerate(space.columns):
        if c.endswith(".act"):
            row[..., i] = act_index
    return row


@pytest.fixture(scope="module")
def tiny_table():
    return LatencyTable.build(tiny_space(), HW, "dla", "int8", 1)


# ---- spaces --------------------------------------------------------------------------------------------
def test_encoding_columns_and_decode():
    sp = tiny_space()
    # 2 stages x (depth, width) + 4 block slots x (kernel, expand, act)
    assert sp.n_columns == 2 * 2 + 4 * 3
    row = np.zeros(sp.n_columns, np.int64)
    row[sp.column("s0.depth")] = 1           # depth 2 in stage 0
    row[sp.column("s1.width")] = 1           # 40 channels
    row[sp.column("s0.b1.kernel")] = 1       # 5x5
    row[sp.column("s1.b0.act")] = 1          # hswish (stage 1 has depth 1: only b0 exists)
    d = sp.decode(row)
    assert [s["depth"] for s in d["stages"]] == [2, 1]
    assert [s["width"] for s in d["stages"]] == [16, 40]
    assert d["stages"][0]["blocks"][1]["kernel"] == 5
    assert d["stages"][1]["blocks"] == [{"kernel": 3, "expand": 3, "act": "hswish"}]
    g = sp.build(row)
    assert sum(l.op == "HardSwish" for l in g.layers) == 2          # expand and depthwise of that block
    # depthwise conv of s0.b1: hidden = 16 * 3 = 48 channels, 5x5 kernel, groups 48
    dw = g.layer("u2.dw")
    assert dw.attributes["group"] == 48 and dw.attributes["kernel_shape"] == [5, 5]


def test_bad_candidates_are_rejected(tiny_table):
    sp = tiny_space()
    bad = np.zeros(sp.n_columns, np.int64)
    bad[sp.column("s0.b0.kernel")] = 2                     # only two kernel choices
    with pytest.raises(ValueError, match="choice indices"):
        sp.decode(bad)
    with pytest.raises(ValueError, match="columns"):
        tiny_table.predict(np.zeros((3, sp.n_columns + 1), np.int64))


def test_unit_keys_skip_absent_blocks():
    sp = tiny_space()
    row = np.zeros((1, sp.n_columns), np.int64)            # depth 1 in both stages
    keys, present = unit_keys(sp, row)
    # units: stem, s0.b0, s0.b1, s1.b0, s1.b1, head
    assert present.tolist() == [[True, True, False, True, False, True]]
    assert keys[0, 0] == 0 and keys[0, 5] == 0            # head key = width index of the last stage


def test_published_spaces_build():
    for sp in (mobilenet_v3_space(), resnet_space()):
        row = sp.sample(1, seed=3)[0]
        g = sp.build(row)
        assert g.macs > 0 and len(g.layers) > 40


# ---- latency table -------------------------------------------------------------------------------------
def test_table_matches_full_estimates_exactly(tiny_table):
    sp = tiny_space()
    X = sp.sample(8, seed=11)
    X = np.vstack([X, with_acts(sp, X[0], 0), with_acts(sp, X[0], 1)])
    pred, exact = tiny_table.predict(X, flags=True)
    ref = np.array([full(sp, r).total_ms for r in X])
    assert exact.all()
    np.testing.assert_allclose(pred, ref, rtol=1e-9)
    assert tiny_table.predict(X[0]).shape == (1,)


def test_missing_price_is_flagged_inexact(tiny_table):
    import copy
    sp = tiny_space()
    X = sp.sample(5, seed=3)
    tab = copy.deepcopy(tiny_table)
    tab.known[1][:] = False                 # unit 1 (stage 0, block 0, always present): no observed price
    tab._flat_cache = None
    pred, exact = tab.predict(X, flags=True)
    assert not exact.any()
    _, exact_before = tiny_table.predict(X, flags=True)
    assert exact_before.all()


def test_fallback_choice_changes_placement_in_both(tiny_table):
    sp = tiny_space()
    relu = with_acts(sp, np.ones(sp.n_columns, np.int64), 0)
    island = relu.copy()
    island[sp.column("s1.b0.act")] = 1                       # HardSwish in one block: a GPU island
    e0, e1 = full(sp, relu), full(sp, island)
    assert not any(f.op == "HardSwish" for f in e0.fallback)
    assert {f.name for f in e1.fallback if f.op == "HardSwish"} == {"u3.expand.act", "u3.dw.act"}
    assert e1.dla_subgraphs > e0.dla_subgraphs
    n0, n1 = tiny_table.loadables(np.vstack([relu, island]))
    assert (n0, n1) == (e0.dla_subgraphs, e1.dla_subgraphs)
    p = tiny_table.predict(np.vstack([relu, island]))
    np.testing.assert_allclose(p, [e0.total_ms, e1.total_ms], rtol=1e-9)
    assert p[1] > p[0]


def test_loadable_limit_is_carried_along_the_chain():
    sp = tiny_space()
    small = _with_limit(HW, 3)                                # 3 loadables per core: HardSwish blocks exceed it
    tab = LatencyTable.build(sp, small, "dla", "int8", 1)
    X = with_acts(sp, sp.sample(6, seed=5), 1)
    X[:, [sp.column("s0.depth"), sp.column("s1.depth")]] = 1
    ref = [full(sp, r, hw=small) for r in X]
    assert all(e.dla_subgraphs == 3 for e in ref)
    assert all(any("past the 3th DLA loadable" in f.reason for f in e.fallback) for e in ref)
    assert (tab.loadables(X) > 3).all()
    pred, exact = tab.predict(X, flags=True)
    ok = np.array([e.total_ms for e in ref])
    np.testing.assert_allclose(pred[exact], ok[exact], rtol=1e-9)
    assert np.all(np.abs(pred - ok) / ok < 0.05)


def test_table_keeps_the_faster_of_the_builds_tensorrt_times():
    """2 loadables per core: the convs past the limit run INT8 on the GPU between FP16 HardSwish layers, and many
    candidates' builds keep their GPU layers in FP16 (builder.py). The table prices both builds and keeps the
    faster per candidate, so it still matches the full estimate, switched or not."""
    import dataclasses
    sp = tiny_space()
    small = _with_limit(HW, 2)
    tab = LatencyTable.build(sp, small, "dla", "int8", 1)
    assert tab.alternative is not None and tab.alternative.precision == "int8"
    X = sp.sample(30, seed=21)
    ref = [full(sp, r, hw=small) for r in X]
    switched = np.array([any(w.startswith("TensorRT would run this engine's GPU layers in FP16") for w in e.warnings)
                         for e in ref])
    assert 0 < switched.sum() < len(X)
    pred, exact = tab.predict(X, flags=True)
    ok = np.array([e.total_ms for e in ref])
    assert exact[switched].any()
    np.testing.assert_allclose(pred[exact], ok[exact], rtol=1e-9)
    # the INT8 chain alone is slower than the full estimate exactly where the build switched
    alone = dataclasses.replace(tab, alternative=None, _flat_cache=None).predict(X)
    assert np.all(alone[switched & exact] > ok[switched & exact] * (1 + 1e-9))
    np.testing.assert_allclose(alone[~switched & exact], ok[~switched & exact], rtol=1e-9)


def test_gpu_table_has_no_loadables():
    sp = tiny_space()
    tab = LatencyTable.build(sp, "a100", "gpu", "fp16", 1)
    X = sp.sample(4, seed=2)
    ref = [dlasim.estimate(sp.build(r), "a100", device="gpu", precision="fp16").total_ms for r in X]
    np.testing.assert_allclose(tab.predict(X), ref, rtol=1e-9)
    assert (tab.loadables(X) == 0).all()


# ---- estimate_many -------------------------------------------------------------------------------------
def test_estimate_many_keeps_order_and_per_slot_errors():
    sp = tiny_space()
    g1, g2 = sp.build(sp.sample(1, seed=1)[0]), sp.build(sp.sample(1, seed=2)[0])
    seen = []
    models = [g1, "does/not/exist.onnx", g2, "zoo:no_such_net"]
    out = dlasim.estimate_many(models, HW, device="dla", precision="int8", progress=lambda d, t: seen.append((d, t)))
    assert [r.ok for r in out] == [True, False, True, False]
    assert isinstance(out[1], Failed) and out[1].error == "ModelError" and "exist.onnx" in out[1].message
    assert out[0].total_ms == dlasim.estimate(g1, HW, device="dla", precision="int8").total_ms
    assert out[2].total_ms == dlasim.estimate(g2, HW, device="dla", precision="int8").total_ms
    assert seen[-1] == (4, 4)
    par = dlasim.estimate_many(models, HW, workers=2, device="dla", precision="int8")
    assert [getattr(r, "total_ms", None) for r in par] == [getattr(r, "total_ms", None) for r in out]


def test_estimate_many_bad_arguments(monkeypatch):
    with pytest.raises(DlasimError, match="backend"):
        dlasim.estimate_many(["zoo:resnet18"], HW, backend="dask")
    with pytest.raises(DlasimError, match="workers"):
        dlasim.estimate_many(["zoo:resnet18"], HW, workers=0)
    monkeypatch.setitem(sys.modules, "ray", None)            # as if ray were not installed
    with pytest.raises(DlasimError, match="needs the ray package"):
        dlasim.estimate_many(["zoo:resnet18"], HW, backend="ray")


# ---- sweep ---------------------------------------------------------------------------------------------
def test_pareto_hand_points():
    # (latency ms, throughput/s): 1 is beaten by 0 (slower, less throughput); 3 failed
    pts = [(1.0, 1000.0), (2.0, 900.0), (3.0, 1500.0), (None, None), (1.0, 1000.0)]
    assert pareto(pts) == {0, 2, 4}


def test_sweep_writes_csv_json_html(tmp_path, capsys):
    args = ["sweep", "zoo:resnet18", "--hw", "orin-agx", "--vary", "precision=fp16,int8", "--vary", "batch=1,2",
            "--vary", "hw=orin-agx:15w,orin-agx", "--no-progress"]
    for fmt in ("csv", "json", "html"):
        assert main(args + ["--format", fmt, "-o", str(tmp_path / f"s.{fmt}")]) == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "s.csv").read_text())))
    assert len(rows) == 8
    assert {r["hw"] for r in rows} == {"orin-agx:15w", "orin-agx:maxn"}
    d = json.loads((tmp_path / "s.json").read_text())
    assert d["varied"] == ["precision", "batch", "hw"]
    one = next(p for p in d["points"] if p["precision"] == "int8" and p["batch"] == 2 and p["hw"] == "orin-agx:15w")
    ref = dlasim.estimate("zoo:resnet18", "orin-agx:15w", device="dla", precision="int8", batch=2).total_ms
    assert one["total_ms"] == pytest.approx(ref)
    assert one["throughput_per_s"] == pytest.approx(2e3 / ref)
    lat_thr = [(p["total_ms"], p["throughput_per_s"]) for p in d["points"]]
    assert sorted(d["pareto"]) == sorted(pareto(lat_thr))
    page = (tmp_path / "s.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="latency"' in page and 'id="throughput"' in page
    assert "Pareto set" in page


def test_sweep_bad_input_exit_2(tmp_path, capsys):
    assert main(["sweep", "zoo:resnet18", "--vary", "batch=1,x", "--no-progress"]) == 2
    assert main(["sweep", "zoo:resnet18", "--vary", "hw=orin-agx,nope", "--no-progress"]) == 2
    assert main(["sweep", "zoo:resnet18", "--vary", "colour=red", "--no-progress"]) == 2
    assert main(["sweep", "zoo:resnet18", "--vary", "batch=1,2", "--format", "html", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(l.startswith("dlasim: error:") for l in err)


def test_sweep_failed_point_is_reported_not_fatal(capsys):
    rc = main(["sweep", "zoo:yolov4", "--hw", "orin-agx", "--no-gpu-fallback", "--vary", "device=dla,gpu",
               "--format", "json", "--no-progress"])
    assert rc == 0
    pts = json.loads(capsys.readouterr().out)["points"]
    assert pts[0]["total_ms"] is None and "Mish" in pts[0]["error"]
    assert pts[1]["total_ms"] > 0 and pts[1]["pareto"]
