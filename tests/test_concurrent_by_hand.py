"""Concurrent engines, facts computed by hand: a pipeline stage's busy time under DRAM contention, the timeline
SVG's geometry, the advice's batch choice without a latency bound, and the engines file's one-line errors."""
from __future__ import annotations

import inspect
import re

import pytest

from dlasim.concurrent.contention import Segment, simulate
from dlasim.errors import DlasimError

MB = 1_000_000


def seg(unit, time_ms, memory_ms, mbytes, kind="layer", name="s"):
    return Segment(name, kind, unit, time_ms * 1e-3, memory_ms * 1e-3, 0.0, int(mbytes * MB))


def test_pipeline_stage_busy_time_counts_a_contended_copy_once():
    # stage 1: a 1 ms memory-bound reformat (60 MB) on the GPU; stage 2: a 1 ms memory-bound DLA layer (60 MB).
    # From frame 1 on, stage 1 works on frame n+1 while stage 2 works on frame n: together they ask 120 GB/s
    # of 100 GB/s, so both streams run at 100/120 and each takes 1.2 ms. Stage 1's busy time per frame is
    # 1 ms alone + 0.2 ms DRAM (of which the whole 0.2 ms is in a copy, counted once, not twice)
    s1 = [seg("gpu", 1.0, 1.0, 60, kind="reformat")]
    s2 = [seg("dla0", 1.0, 1.0, 60)]
    r = simulate([s1, s2], 100e9, mode="pipeline", iterations=4)
    first = r.runs[0]
    assert first.share.dram_s == pytest.approx(0.2e-3, rel=1e-6)
    assert first.share.copies_dram_s == pytest.approx(0.2e-3, rel=1e-6)
    assert first.latency_s == pytest.approx(1.2e-3, rel=1e-6)
    assert r.runs[1].period_s == pytest.approx(1.2e-3, rel=1e-6)


class _Engine:
    def __init__(self, name):
        self.name = name


class _Result:
    def __init__(self, spans, names):
        self.spans, self.engines = spans, [_Engine(n) for n in names]


def _rects(svg):
    return [tuple(float(v) for v in m) for m in
            re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="#(?!fff)', svg)]


def test_dram_use_is_the_drawn_share_of_the_cap_and_never_above_it():
    # 2 x 40 GB/s of 100: 80% used, never saturated; 2 x 60 GB/s of 100: the cap is drawn in full (100%), not 120%
    under = simulate([[seg("dla0", 1.0, 1.0, 40)], [seg("dla1", 1.0, 1.0, 40)]], 100e9)
    assert under.mean_dram_use == pytest.approx(0.8) and under.saturated_share == 0.0
    over = simulate([[seg("dla0", 1.0, 1.0, 60)], [seg("dla1", 1.0, 1.0, 60)]], 100e9)
    assert over.mean_dram_use == pytest.approx(1.0)


def test_two_engines_on_one_dla_core_share_its_time_but_not_their_fixed_parts():
    # each step: 0.2 ms fixed (synchronisation) + 1 ms on dla0; together the 1 ms bodies take turns (2 ms),
    # the fixed parts do not: 0.2 + 2 x 1.0 = 2.2 ms per step for both
    a = [Segment("a", "layer", "dla0", 1.2e-3, 0.0, 0.2e-3, 0)]
    b = [Segment("b", "layer", "dla0", 1.2e-3, 0.0, 0.2e-3, 0)]
    r = simulate([a, b], 100e9)
    assert [run.period_s for run in r.runs] == pytest.approx([2.2e-3, 2.2e-3])
    assert r.runs[0].share.unit_s == pytest.approx(1.0e-3)


def test_a_fixed_part_is_left_out_of_the_slowed_memory_stream():
    # A on dla0: 0.2 ms fixed + a 1 ms body whose 60 MB stream alone takes 1 ms; B on dla1: 60 MB in 1 ms.
    # Cap 100 GB/s: A draws 60 / (0.2 + 1/f), B 60 f (GB/s, times in ms): 60f/(1 + 0.2f) + 60f = 100
    # -> 12 f^2 + 100 f - 100 = 0, f = (-100 + sqrt(100^2 + 4 x 12 x 100)) / 24 = 0.90230
    f = (-100 + (100 ** 2 + 4 * 12 * 100) ** 0.5) / 24
    a = [Segment("a", "layer", "dla0", 1.2e-3, 1.0e-3, 0.2e-3, 60 * MB)]
    b = [seg("dla1", 1.0, 1.0, 60)]
    r = simulate([a, b], 100e9)
    assert r.runs[0].period_s == pytest.approx((0.2 + 1 / f) * 1e-3, rel=1e-6)
    assert r.runs[1].period_s == pytest.approx(1 / f * 1e-3, rel=1e-6)


def test_simulate_refuses_no_engine_and_an_empty_one():
    with pytest.raises(ValueError, match="at least one step"):
        simulate([], 100e9)
    with pytest.raises(ValueError, match="at least one step"):
        simulate([[seg("gpu", 1.0, 0.0, 0)], []], 100e9)


class _Run:
    def __init__(self, name, together_ms, alone_ms):
        self.name, self.together_ms, self.alone_ms = name, together_ms, alone_ms


class _Concurrent:
    aggregate_img_per_s, alone_sum_img_per_s, pipeline_latency_ms, warnings = 500.0, 800.0, None, ["w"]
    engines = [_Run("a", 4.0, 3.0), _Run("b", 9.0, 6.0)]


def test_case_prediction_per_metric(monkeypatch):
    # aggregate 500 img/s -> 2 ms per image (naive baseline: 800 img/s -> 1.25 ms); engine=N -> its time together
    from dlasim.concurrent import cases
    monkeypatch.setattr(cases, "case_result", lambda case, runner: _Concurrent())
    assert cases.predict_case({"metric": "concurrent:aggregate"}, None) == (2.0, ["w"], 1.25)
    assert cases.predict_case({"metric": "concurrent:engine=0"}, None) == (4.0, ["w"], 3.0)
    assert cases.predict_case({"metric": "concurrent:engine=1"}, None) == (9.0, ["w"], 6.0)
    for bad in ("concurrent:engine=2", "concurrent:engine=-1", "concurrent:latency"):
        with pytest.raises(DlasimError):
            cases.predict_case({"metric": bad}, None)


def test_timeline_svg_geometry_by_hand():
    # width 1300, 230 px of labels on the left, 20 on the right: 1050 px for 2 ms. Lanes of 26 px, 8 apart,
    # from y = 30: engine 0 at y 30, engine 1 at y 64. Engine 0: 0-1 ms (x 230, 525 px wide); engine 1: 1-2 ms
    from dlasim.concurrent.contention import Span
    from dlasim.concurrent.page import timeline_svg
    spans = [Span(0, "a", "layer", "gpu", 0.0, 1e-3, 0), Span(1, "b", "layer", "dla0", 1e-3, 2e-3, 0)]
    svg = timeline_svg(_Result(spans, ["e0", "e1"]))
    assert svg.startswith('<svg viewBox="0 0 1300 148"')      # 40 + 2 lanes x 34 + 40
    steps = [r for r in _rects(svg) if r[3] == 26]
    assert steps == [(230.0, 30.0, 525.0, 26.0), (755.0, 64.0, 525.0, 26.0)]
    # engine labels: baseline at 70% of the lane (30 + 18.2, 64 + 18.2)
    assert re.findall(r'<text x="4" y="([\d.]+)"', svg) == ["48.2", "82.2"]
    # 11 ticks from x 230 to 1280, every 105 px; their labels below the lanes at 30 + 2 * 34 + 14 = 112
    assert re.findall(r'text-anchor="middle">([^<]*)</text>', svg) == [f"{0.2 * t:.3g} ms" for t in range(11)]
    assert "<title>a (layer on gpu, iteration 0): 0.0000-1.0000 ms</title>" in svg
    ticks = [float(x) for x in re.findall(r'<line x1="([\d.]+)"', svg)]
    assert ticks == pytest.approx([230 + 105 * t for t in range(11)])
    assert set(re.findall(r'text-anchor="middle">', svg)) and \
        set(re.findall(r'<text x="[\d.]+" y="(\d+)" font-size="11" text-anchor', svg)) == {"112"}
    # the legend: a 12 px swatch at y 120 and its label 16 px to its right; the next entry 40 + 7 per letter on
    legend = re.findall(r'<rect x="(\d+)" y="120" width="12" height="12"[^>]*/><text x="(\d+)" y="130"', svg)
    assert legend[0] == ("230", "246")
    assert legend[1] == (str(230 + 40 + 7 * len("GPU step")), str(230 + 40 + 7 * len("GPU step") + 16))


def test_advice_without_a_latency_bound_takes_the_largest_batch():
    # on a GPU-only platform there is one assignment; with no bound, every batch is allowed and the largest
    # one (the best throughput, as the docstring says: batches start at the largest that meets the bound) is kept
    from dlasim.concurrent import advise
    r = advise(["zoo:resnet18"], "a100", batches=(1, 2))
    assert [c.engines for c in r.candidates] == [(("gpu", "zoo:resnet18", 2),)]


def test_advice_defaults_agree_between_the_package_and_its_module():
    # dlasim.concurrent.advise forwards to concurrent.advice.advise: the same default batches (1 to 32, doubling)
    from dlasim.concurrent import advise
    from dlasim.concurrent.advice import advise as inner
    batches = inspect.signature(advise).parameters["batches"].default
    assert batches == inspect.signature(inner).parameters["batches"].default
    assert batches == tuple(2 ** i for i in range(6))


def test_advice_render_lists_its_warnings():
    from dlasim.concurrent.advice import AdviceResult
    text = AdviceResult("orin-agx", None, [], None, ["spec has no value"]).render()
    assert text.splitlines()[-1] == "warning: spec has no value"


def test_engines_file_errors_name_the_key_and_the_engine(tmp_path):
    from dlasim.concurrent.engines import load_engines
    f = tmp_path / "set.toml"
    f.write_text('hw = "orin-agx"\nthreads = 2\n[[engine]]\nmodel = "zoo:resnet18"\n')
    with pytest.raises(DlasimError, match="unknown top-level key 'threads'"):
        load_engines(str(f))
    f.write_text('[[engine]]\nmodel = "zoo:resnet18"\n[[engine]]\nmodel = "zoo:resnet18"\nbatch = 0\n')
    with pytest.raises(DlasimError, match=r"engine 2: batch must be from 1 to 2147483647"):
        load_engines(str(f))
    f.write_text('[[engine]]\nmodel = "zoo:resnet18"\nbatch = ' + "9" * 48 + '\n')     # was accepted and costed
    with pytest.raises(DlasimError, match=r"engine 1: batch must be from 1 to 2147483647"):
        load_engines(str(f))
