"""The held GPU share of a DLA engine's process: the forum GPU-load check of validation/fit_concurrent.py, the
share a measured aggregate implies (validation/concurrent_breakdown.py) and run_concurrent's override; and
validate's count of aggregate rows that no contention can bring closer than the sum; on hand-computed numbers."""
from __future__ import annotations

import importlib.util

import pytest

from dlasim import validate
from dlasim.concurrent.contention import Segment


def _script(name):
    spec = importlib.util.spec_from_file_location(name, validate.ROOT / "validation" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _dla_engine():
    # 0.5 ms reformat (0.1 ms of it fixed, off the GPU), a 4 ms DLA task, 0.5 ms reformat (0.1 fixed): 5 ms
    return [Segment("in", "reformat", "gpu", 0.5e-3, 0.0, 0.1e-3, 0),
            Segment("task", "layer", "dla0", 4.0e-3, 0.0, 0.0, 0),
            Segment("out", "reformat", "gpu", 0.5e-3, 0.0, 0.1e-3, 0)]


def test_busy_alone_is_the_gpu_steps_plus_the_held_share_of_the_dla_time():
    fc = _script("fit_concurrent")
    # GPU steps 0.8 ms (1.0 - 0.2 fixed), held 0.25 x 4 ms = 1 ms: 1.8 ms of 5 ms busy = 36%, 20% held
    busy, held = fc.busy_alone(_dla_engine(), 0.25)
    assert busy == pytest.approx(0.36)
    assert held == pytest.approx(0.20)
    assert fc.busy_alone(_dla_engine(), 0.0) == pytest.approx((0.16, 0.0))


def test_share_from_load_inverts_busy_alone():
    fc = _script("fit_concurrent")
    # 36% of 5 ms = 1.8 ms, minus 0.8 ms of GPU steps = 1 ms over the 4 ms task: 0.25
    assert fc.share_from_load(_dla_engine(), 0.36) == pytest.approx(0.25)
    # a load below the GPU steps' own 16% leaves nothing for a held share
    assert fc.share_from_load(_dla_engine(), 0.10) == 0.0


def test_the_forum_notes_name_the_gpu_load():
    fc = _script("fit_concurrent")
    assert fc.gpu_load_pct({"case_id": "X", "notes": "user saw ~30% GPU load with DLA only"}) == 30.0
    with pytest.raises(SystemExit):
        fc.gpu_load_pct({"case_id": "X", "notes": "no load stated"})


def test_implied_share_bisects_a_falling_aggregate():
    cb = _script("concurrent_breakdown")
    agg = lambda h: 100.0 / (1.0 + h)                  # noqa: E731  100 img/s with no held share
    assert cb.implied_share(agg, 80.0) == pytest.approx(0.25, abs=1e-6)     # 100 / 1.25 = 80
    assert cb.implied_share(agg, 120.0) is None        # faster than the model with no share at all
    assert cb.implied_share(agg, 10.0) == 2.0          # 100 / 3 = 33 still faster than 10: the bound


def test_wait_share_replaces_the_specs_share():
    from dlasim.concurrent import Engine
    from dlasim.concurrent.model import run_concurrent
    engines = [Engine("zoo:resnet18", "gpu", batch=4), Engine("zoo:resnet18", "dla", 0, batch=2)]
    cache: dict = {}
    spec = run_concurrent(engines, "orin-agx", cache=cache)
    same = run_concurrent(engines, "orin-agx", cache=cache, wait_share=spec.dla_wait_share)
    none = run_concurrent(engines, "orin-agx", cache=cache, wait_share=0.0)
    more = run_concurrent(engines, "orin-agx", cache=cache, wait_share=1.0)
    assert spec.dla_wait_share > 0
    assert same.aggregate_img_per_s == pytest.approx(spec.aggregate_img_per_s)
    assert none.dla_wait_share == 0.0 and more.dla_wait_share == 1.0
    assert none.engines[0].together_qps > spec.engines[0].together_qps > more.engines[0].together_qps


def test_validate_counts_the_rows_whose_sum_alone_is_already_slower(tmp_path):
    # ResNet-18 on Orin, GPU + 2 DLA at batch 1 runs far above 1 img/s and far below 1e6 img/s: measured
    # at 1e6 or 2e6 the sum of stand-alone is slower than the measurement (no contention can come closer); at 1 it is not
    from dlasim import validate
    cases = tmp_path / "cases.csv"
    head = ("name,suite,platform,model,device,precision,batch,options,metric,measured,unit,engines,fitted,"
            "tolerance_pct,notes,source\n")
    row = "{n},conc,orin-agx,zoo:resnet18,gpu@1+dla0@1+dla1@1,int8,1,,concurrent:aggregate,{m},img_per_s,,no,20,n,s\n"
    cases.write_text(head + row.format(n="fast", m=1e6) + row.format(n="faster", m=2e6) + row.format(n="slow", m=1))
    res = validate.run(path=cases)
    s = res["summary"]["conc"]
    assert s["n"] == 3 and s["sum_alone_slower"] == 2
    assert s["closer_than_sum_alone"] == pytest.approx(1 / 3)   # the slow one: closer; the fast ones cannot be
    assert "(2 of 3 start from a sum already slower than measured" in validate.render(res, width=400)
