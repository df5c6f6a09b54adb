"""Concurrent engines: the contention model on hand-computed cases, the API, the CLI and the case kind."""
import json

import pytest

from dlasim.cli import main
from dlasim.concurrent import Engine, concurrent, parse_engine
from dlasim.concurrent.cases import engine_set
from dlasim.concurrent.contention import Segment, dram_factor, simulate
from dlasim.concurrent.engines import load_engines
from dlasim.errors import DlasimError

MB = 1_000_000


def seg(unit, time_ms, memory_ms, mbytes, overhead_ms=0.0, kind="layer"):
    return Segment("s", kind, unit, time_ms * 1e-3, memory_ms * 1e-3, overhead_ms * 1e-3, int(mbytes * MB))


def test_two_memory_bound_engines_over_the_bandwidth_share_it_in_proportion():
    # each alone moves 60 MB in 1 ms (60 GB/s); together they ask 120 GB/s of a 100 GB/s system:
    # both streams run at 100/120 of their rate, so each step takes 1 ms * 120/100 = 1.2 ms
    a, b = [seg("dla0", 1.0, 1.0, 60)], [seg("dla1", 1.0, 1.0, 60)]
    r = simulate([a, b], 100e9)
    for run in r.runs:
        assert run.period_s == pytest.approx(1.2e-3, rel=1e-6)
        assert run.share.dram_s == pytest.approx(0.2e-3, rel=1e-5)
        assert run.share.unit_s == 0.0
    assert r.saturated_share == pytest.approx(1.0)


def test_demand_under_the_bandwidth_slows_nothing():
    a, b = [seg("dla0", 1.0, 1.0, 40)], [seg("dla1", 1.0, 1.0, 40)]
    r = simulate([a, b], 100e9)
    assert [run.period_s for run in r.runs] == pytest.approx([1e-3, 1e-3])


def test_compute_bound_engine_beside_a_memory_bound_one():
    # memory-bound A: 60 MB in 1 ms; compute-bound C: 1 ms of compute, 12 MB whose stream alone takes 0.2 ms.
    # Cap 50 GB/s. C keeps 1 ms while its stream needs <= 1 ms (f >= 0.2), drawing 12 GB/s; A gets the rest:
    # 60 f + 12 = 50 -> f = 38/60, A takes 1 ms / f = 60/38 ms = 1.5789 ms
    a, c = [seg("dla0", 1.0, 1.0, 60)], [seg("gpu", 1.0, 0.2, 12)]
    r = simulate([a, c], 50e9)
    assert r.runs[0].period_s == pytest.approx(60 / 38 * 1e-3, rel=1e-6)
    assert r.runs[1].period_s == pytest.approx(1e-3, rel=1e-9)
    assert r.runs[1].share.dram_s == pytest.approx(0.0, abs=1e-12)
    assert dram_factor([(a[0], 1), (c[0], 1)], 50e9) == pytest.approx(38 / 60, rel=1e-6)


def test_gpu_steps_of_two_engines_take_turns():
    # a GPU engine's 1 ms kernel and a DLA engine's 1 ms GPU reformat run at once: each gets half the GPU
    g = [seg("gpu", 1.0, 0.0, 0)]
    d = [seg("gpu", 1.0, 0.0, 0, kind="reformat")]
    r = simulate([g, d], 100e9)
    assert r.runs[0].period_s == pytest.approx(2e-3)
    assert r.runs[0].share.unit_s == pytest.approx(1e-3)
    assert r.runs[1].share.copies_unit_s == pytest.approx(1e-3)


def test_pipeline_period_is_the_slowest_stage_and_latency_the_sum():
    s1, s2 = [seg("dla0", 1.0, 0.0, 0)], [seg("gpu", 2.0, 0.0, 0)]
    r = simulate([s1, s2], 100e9, mode="pipeline", iterations=6)
    assert r.runs[1].period_s == pytest.approx(2e-3)
    # frame n enters stage 1 when stage 2 frees the buffer; in steady state it waits there one extra ms
    assert 3e-3 <= r.runs[1].latency_s <= 5e-3 + 1e-12


def test_three_resnet50_int8_engines_on_orin_agx_each_slower_with_dram_and_gpu_named():
    r = concurrent([Engine("zoo:resnet50", "gpu"), Engine("zoo:resnet50", "dla", 0),
                    Engine("zoo:resnet50", "dla", 1)], "orin-agx")
    assert len(r.engines) == 3
    for e in r.engines:
        assert e.together_qps < e.alone_qps
        assert e.slowdown > 1.0
    codes = {c.code for e in r.engines for c in e.causes}
    assert {"dram", "gpu_share"} <= codes
    dram_text = next(c.text for c in r.engines[0].causes if c.code == "dram")
    assert "GB/s" in dram_text and "ms" in dram_text
    assert r.aggregate_img_per_s < r.alone_sum_img_per_s
    d = r.to_dict()
    assert d["engines"][1]["unit"] == "dla0" and d["timeline"]


def test_engine_text_and_file(tmp_path):
    e = parse_engine("zoo:resnet18,device=dla1,batch=4", {"precision": "fp16"})
    assert (e.device, e.dla_core, e.batch, e.precision, e.unit) == ("dla", 1, 4, "fp16", "dla1")
    with pytest.raises(DlasimError, match="device"):
        parse_engine("zoo:resnet18,device=npu")
    with pytest.raises(DlasimError, match="unknown key"):
        parse_engine("zoo:resnet18,cores=2")
    f = tmp_path / "set.toml"
    f.write_text('hw = "orin-agx"\n[[engine]]\nmodel = "zoo:resnet18"\ndevice = "gpu"\nbatch = 2\n'
                 '[[engine]]\nmodel = "zoo:resnet18"\ndevice = "dla0"\n')
    engines, top = load_engines(str(f))
    assert top["hw"] == "orin-agx" and [x.unit for x in engines] == ["gpu", "dla0"]
    assert engine_set("gpu@64+dla0@32", "zoo:resnet50", "int8", {})[1].batch == 32


def test_cli_json_and_bad_input(capsys, tmp_path):
    assert main(["concurrent", "zoo:resnet18", "--hw", "orin-agx", "--int8", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [e["unit"] for e in d["engines"]] == ["gpu", "dla0", "dla1"]
    assert d["aggregate_img_per_s"] == pytest.approx(sum(e["together_img_per_s"] for e in d["engines"]))
    assert main(["concurrent", "--hw", "orin-agx", "--engine", "zoo:resnet18,device=dla2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "DLA core 2" in err
    assert main(["concurrent", "--hw", "a100", "--engine", "zoo:resnet18,device=dla0"]) == 2
    assert "no DLA" in capsys.readouterr().err


def test_validate_runs_a_concurrent_case(tmp_path):
    from dlasim import validate
    cases = tmp_path / "cases.csv"
    cases.write_text(
        "name,suite,platform,model,device,precision,batch,options,metric,measured,unit,engines,fitted,"
        "tolerance_pct,notes,source\n"
        "c1,conc,orin-agx,zoo:resnet18,gpu@1+dla0@1+dla1@1,int8,1,,concurrent:aggregate,2000,img_per_s,,no,20,n,s\n")
    res = validate.run(path=cases)
    row = res["cases"][0]
    assert row["error"] is None
    assert row["measured"] == pytest.approx(0.5)
    assert row["predicted"] > row["sum_alone_ms"]          # together is slower per image than the naive sum
    assert "closer_than_sum_alone" in res["summary"]["conc"]


def test_advice_meets_the_bound_together_and_ranks_by_aggregate():
    from dlasim.concurrent import advise
    r = advise(["zoo:resnet18", "zoo:mobilenet_v1"], "orin-agx", latency_ms=4.0, batches=(1, 2, 4, 8))
    best = r.candidates[0]
    assert best.feasible
    assert all(e.together_ms <= 4.0 for e in r.best_result.engines)      # re-simulated, not stand-alone
    feasible = [c.aggregate_img_per_s for c in r.candidates if c.feasible]
    assert feasible == sorted(feasible, reverse=True)
    # two DLA cores are alike: no assignment appears twice with only the cores swapped
    keys = [tuple(sorted((u[:3], m, b) for u, m, b in c.engines)) for c in r.candidates]
    assert len(keys) == len(set(keys))
    none = advise(["zoo:resnet18"], "orin-agx", latency_ms=0.01, batches=(1,))
    assert not none.candidates[0].feasible and "no assignment" in none.summary()


def test_fixed_overhead_does_not_take_turns_on_the_unit():
    # two GPU steps of 0.2 ms launch/sync + 1 ms kernel: the kernels share the GPU (2 ms), the fixed parts do not
    g1 = [seg("gpu", 1.2, 0.0, 0, overhead_ms=0.2)]
    g2 = [seg("gpu", 1.2, 0.0, 0, overhead_ms=0.2)]
    r = simulate([g1, g2], 100e9)
    assert r.runs[0].period_s == pytest.approx(2.2e-3)
    assert r.runs[0].share.unit_s == pytest.approx(1.0e-3)


def test_html_page_has_one_lane_per_engine(tmp_path):
    out = tmp_path / "c.html"
    assert main(["concurrent", "zoo:resnet18", "--hw", "orin-agx", "--int8", "--format", "html", "-o", str(out)]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    for lane in ("zoo:resnet18@gpu", "zoo:resnet18@dla0", "zoo:resnet18@dla1"):
        assert lane in page
    assert main(["concurrent", "zoo:resnet18", "--format", "html"]) == 2      # needs -o


def test_split_graph_keeps_every_layer_once_and_hands_over_the_cut_tensor():
    import dlasim
    from dlasim.concurrent.split import split_graph
    g = dlasim.load("zoo:googlenet")
    head, tail = split_graph(g, ["inception_4a/output"])
    assert len(head.layers) + len(tail.layers) == len(g.layers)
    assert head.macs + tail.macs == g.macs
    assert head.outputs == ["inception_4a/output"] and tail.inputs == ["inception_4a/output"]
    with pytest.raises(DlasimError, match="no layer"):
        split_graph(g, ["nope"])


def test_pipeline_cli_runs_a_cut_network(capsys):
    assert main(["concurrent", "zoo:googlenet", "--cut", "inception_4a/output", "--stages", "dla0,gpu",
                 "--hw", "xavier-agx", "--fp16", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["mode"] == "pipeline" and [e["unit"] for e in d["engines"]] == ["dla0", "gpu"]
    alone = [e["alone_ms"] for e in d["engines"]]
    # frames overlap: throughput is bounded by the slowest stage, the frame latency by at least the sum
    assert d["aggregate_img_per_s"] <= 1e3 / max(alone) + 1e-9
    assert d["pipeline_latency_ms"] >= sum(alone) - 1e-9
    assert main(["concurrent", "zoo:googlenet", "--cut", "inception_4a/output", "--stages", "dla0"]) == 2


def test_engines_of_very_different_periods_are_measured_within_the_event_budget():
    fast = [seg("dla0", 0.001, 0.0, 0)] * 5
    slow = [seg("gpu", 10.0, 0.0, 0)]
    r = simulate([fast, slow], 100e9, iterations=4, max_events=20_000)
    assert r.runs[1].iterations >= 1 and r.runs[1].period_s == pytest.approx(10e-3)
    assert r.runs[0].period_s == pytest.approx(5e-6)
    with pytest.raises(RuntimeError):
        simulate([fast, [seg("gpu", 1000.0, 0.0, 0)]], 100e9, max_events=20_000)


def test_a_shared_estimate_cache_keeps_platforms_apart():
    # validate shares one cache over every concurrent case: the same model, device and batch on Xavier NX
    # must not reuse the AGX Xavier estimate (NX has 6 of AGX's 8 SMs and a slower clock: its GPU is slower)
    from dlasim.concurrent.model import estimate_engines
    from dlasim.hardware import hardware
    cache: dict = {}
    e = [Engine("zoo:resnet18", "gpu", batch=4)]
    agx = estimate_engines(e, hardware("xavier-agx"), cache)[0]
    nx = estimate_engines(e, hardware("xavier-nx"), cache)[0]
    assert nx.total_ms > 1.2 * agx.total_ms
    assert estimate_engines(e, hardware("xavier-agx"), cache)[0] is agx


def test_a_dla_engines_process_holding_gpu_time_slices_slows_the_gpu_engine():
    # GPU engine: 1 ms kernels back to back; DLA engine in its own process: a 4 ms DLA step, its context
    # holding half a GPU share meanwhile (holds 0.5): the kernels share the GPU with 0.5 of a step, so each
    # takes 1.5 ms, 0.5 ms of it charged to unit sharing; the DLA engine itself is not slowed
    g = [seg("gpu", 1.0, 0.0, 0)]
    d = [seg("dla0", 4.0, 0.0, 0)]
    r = simulate([g, d], 100e9, iterations=6, holds=[0.0, 0.5])
    assert r.runs[0].period_s == pytest.approx(1.5e-3)
    assert r.runs[0].share.unit_s == pytest.approx(0.5e-3)
    assert r.runs[1].period_s == pytest.approx(4.0e-3)
    assert simulate([g, d], 100e9, iterations=6).runs[0].period_s == pytest.approx(1.0e-3)
    with pytest.raises(ValueError):
        simulate([g, d], 100e9, holds=[0.5])


def test_the_hold_lasts_only_while_the_dla_step_runs():
    # DLA engine: a 1 ms reformat on the GPU, then 2 ms on dla0, holding a whole GPU share (holds 1.0)
    # during the DLA step only. GPU engine: 1 ms kernels.
    # t=0-2: reformat and kernel share the GPU (n=2): the reformat ends at 2 ms, the kernel too.
    # t=2-4: DLA step, the hold makes n=2 for the kernels: one kernel (1 ms work) takes 2 ms, ends at 4.
    # period 4 ms for the DLA engine, 2 kernels per 4 ms for the GPU engine: 2 ms each
    g = [seg("gpu", 1.0, 0.0, 0)]
    d = [seg("gpu", 1.0, 0.0, 0, kind="reformat"), seg("dla0", 2.0, 0.0, 0)]
    r = simulate([g, d], 100e9, iterations=6, holds=[0.0, 1.0])
    assert r.runs[1].period_s == pytest.approx(4.0e-3)
    assert r.runs[0].period_s == pytest.approx(2.0e-3)


def test_separate_processes_slow_the_gpu_engine_more_than_one_process():
    engines = [Engine("zoo:resnet18", "gpu", batch=4), Engine("zoo:resnet18", "dla", 0, batch=2),
               Engine("zoo:resnet18", "dla", 1, batch=2)]
    each = concurrent(engines, "orin-agx", processes="each")
    one = concurrent(engines, "orin-agx", processes="one")
    assert each.processes == "each" and one.processes == "one"
    assert each.engines[0].together_ms > one.engines[0].together_ms
    assert each.dla_wait_share > 0 and one.dla_wait_share == 0.0
    assert any("time-slices" in c.text for c in each.engines[0].causes if c.code == "gpu_share")
    assert each.to_dict()["processes"] == "each"
    with pytest.raises(DlasimError):
        concurrent(engines, "orin-agx", processes="some")


def test_cli_processes_flag_and_bad_value(capsys):
    assert main(["concurrent", "zoo:resnet18", "--hw", "orin-agx", "--processes", "one", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["processes"] == "one"
    assert main(["concurrent", "zoo:resnet18", "--processes", "many"]) == 2
    assert "--processes" in capsys.readouterr().err


def test_alike_engines_start_out_of_phase():
    # two alike engines, 1 ms on the GPU then 1 ms on their own DLA core. Started together they share the GPU
    # (0-2 ms at half rate) and then idle it (2-3): period 3 ms. Spread half an iteration apart, one is on
    # its DLA while the other is on the GPU: 2 ms each, no sharing
    from dlasim.concurrent.contention import spread_phases, start_step
    a = [seg("gpu", 1.0, 0.0, 0), seg("dla0", 1.0, 0.0, 0)]
    b = [seg("gpu", 1.0, 0.0, 0), seg("dla1", 1.0, 0.0, 0)]
    c = [seg("gpu", 2.0, 0.0, 0)]
    assert spread_phases([a, b]) == [0.0, 0.5]
    assert spread_phases([c, a, b]) == [0.0, 0.0, 0.5]
    assert start_step(a, 0.5) == 1 and start_step(a, 0.0) == 0
    assert [r.period_s for r in simulate([a, b], 100e9).runs] == pytest.approx([3e-3, 3e-3])
    spread = simulate([a, b], 100e9, phases=[0.0, 0.5])
    assert [r.period_s for r in spread.runs] == pytest.approx([2e-3, 2e-3])
    assert all(r.share.unit_s == pytest.approx(0.0, abs=1e-12) for r in spread.runs)
    with pytest.raises(ValueError):
        simulate([a, b], 100e9, phases=[0.0, 1.0])


def test_a_gpu_steps_fixed_part_leaves_the_gpu_to_the_other_engine():
    # DLA engine: a reformat of 0.4 ms synchronisation + 0.1 ms kernel, then 2 ms on dla0; GPU engine: 1 ms
    # kernels. The sync runs on the DLA engine's host thread (the GPU engine has the GPU), the 0.1 ms kernel
    # shares the GPU (0.2 ms): DLA period 0.4 + 0.2 + 2 = 2.6 ms, in which the GPU engine gets 2.5 ms of GPU:
    # 2.6 / 2.5 = 1.04 ms per kernel (counting the sync as GPU time would give 2.6 / 2.3 = 1.13 ms)
    g = [seg("gpu", 1.0, 0.0, 0)]
    d = [seg("gpu", 0.5, 0.0, 0, overhead_ms=0.4, kind="reformat"), seg("dla0", 2.0, 0.0, 0)]
    r = simulate([g, d], 100e9, iterations=20)
    assert r.runs[1].period_s == pytest.approx(2.6e-3)
    assert r.runs[0].period_s == pytest.approx(1.04e-3, rel=0.01)
    assert {s.unit for s in r.spans} == {"gpu", "dla0", "host"}


def test_case_options_parse_and_reject():
    from dlasim.concurrent.cases import case_options
    co = case_options("processes=one;input_formats=int8:chw;cut=a,b;buffers=0;anchor=gpu:100|dla0:20")
    assert co.rest == "input_formats=int8:chw" and co.processes == "one" and co.cuts == ("a", "b")
    assert co.buffers == 0 and co.anchor == {"gpu": 100.0, "dla0": 20.0}
    assert case_options("").processes == "each" and case_options("").buffers == 1
    for bad in ("processes=all", "buffers=-1", "buffers=two"):
        with pytest.raises(DlasimError):
            case_options(bad)


def test_profile_total_reads_a_real_trtexec_profile():
    from dlasim import validate
    path = "validation/data/haxconn/profiles/googlenet_gpu_transition_at_53.profile"
    rows = json.loads((validate.ROOT / path).read_text())[1:]
    assert validate.measured_value(f"profile_total({path})") == pytest.approx(sum(r["averageMs"] for r in rows))
    assert 2.5 < validate.measured_value(f"profile_total({path})") < 2.6      # 2.553 ms, the rows summed


def test_pipeline_case_one_frame_in_flight_is_the_stage_sum_and_overlap_is_faster():
    from dlasim import validate
    from dlasim.concurrent.cases import case_result
    case = {"name": "p", "suite": "concurrent-pipeline", "platform": "xavier-agx", "precision": "fp16",
            "model": "validation/data/haxconn/prototxt/googlenet.prototxt", "device": "gpu+dla0",
            "options": "processes=one;cut=inception_4a/output;buffers=0", "metric": "concurrent:frame_ms"}
    runner = validate._Runner()
    seq = case_result(case, runner)
    assert [e.unit for e in seq.engines] == ["gpu", "dla0"]
    assert [e.name for e in seq.engines] == ["stage 1@gpu", "stage 2@dla0"]
    assert seq.pipeline_latency_ms == pytest.approx(sum(e.alone_ms for e in seq.engines), rel=1e-6)
    over = case_result({**case, "options": "processes=one;cut=inception_4a/output;buffers=1"}, runner)
    # frames overlapping: more frames per second than one at a time, never more than the slower stage allows
    assert over.aggregate_img_per_s > seq.aggregate_img_per_s
    assert over.aggregate_img_per_s <= 1e3 / max(e.alone_ms for e in over.engines) + 1e-9
    with pytest.raises(DlasimError):
        case_result({**case, "options": "buffers=0"}, runner)              # no cut
    with pytest.raises(DlasimError):
        case_result({**case, "device": "gpu+dla0+dla1"}, runner)           # 2 stages, 3 units


@pytest.mark.in_sample
def test_in_sample_specs_hold_the_fitted_process_dla_wait_share():
    # validation/fit_concurrent.py fits the share on FOR-03; every Jetson spec carries that value (a guard on
    # the fit's reproducibility, not accuracy evidence), and the fit reproduces FOR-03
    import importlib.util
    from dlasim import validate
    from dlasim.hardware import hardware
    spec = importlib.util.spec_from_file_location("fit_concurrent", validate.ROOT / "validation" / "fit_concurrent.py")
    fc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fc)
    rows = fc.forum_rows()
    plat = hardware("orin-agx")
    fixed = (plat.dla.subgraph_overhead_s + 2 * plat.copies.transition_overhead_s) * 1e3
    engines = fc.forum_engines(float(rows["FOR-01"]["value"]), float(rows["FOR-02"]["value"]),
                               fc.dla_task_ms(rows["FOR-02"]), fixed)
    share = fc.fit(engines, float(rows["FOR-03"]["value"]))
    assert fc.predict(engines, share)[0] == pytest.approx(float(rows["FOR-03"]["value"]), rel=1e-3)
    for name in fc.SPECS:
        assert hardware(name).gpu.process_dla_wait_share == pytest.approx(share, abs=5e-4), name


def test_engines_file_sets_processes(tmp_path, capsys):
    f = tmp_path / "set.toml"
    f.write_text('hw = "orin-agx"\nprocesses = "one"\n[[engine]]\nmodel = "zoo:resnet18"\ndevice = "gpu"\n'
                 '[[engine]]\nmodel = "zoo:resnet18"\ndevice = "dla0"\n')
    assert main(["concurrent", "--engines", str(f), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["processes"] == "one" and d["dla_wait_gpu_share"] == 0.0
    f.write_text(f.read_text().replace('"one"', '"several"'))
    assert main(["concurrent", "--engines", str(f)]) == 2
    assert "processes must be each or one" in capsys.readouterr().err


def test_engines_file_that_is_no_regular_file_or_nests_too_deeply_is_one_line(tmp_path, capsys):
    import os
    fifo = tmp_path / "set.toml"
    os.mkfifo(fifo)                      # opened plainly, a FIFO blocks until a writer appears
    assert main(["concurrent", "--engines", str(fifo)]) == 2
    assert capsys.readouterr().err.strip().endswith("cannot read engines file (a FIFO, expected a regular file)")
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["concurrent", "--engines", str(deep)]) == 2
    err = capsys.readouterr().err
    assert "not valid TOML (arrays or tables nest too deeply)" in err and len(err.strip().splitlines()) == 1
