#!/usr/bin/env python3
"""AGX Orin DLA <-> GPU round trips: the toy CNN's measured gap against two independent bounds.

    python validation/orin_roundtrip.py

The jetson_dla_tutorial toy CNN engines (cases orin_toy_cnn_groupnorm_int8_bs32 and
orin_toy_cnn_batchnorm_int8_bs32, INT8, batch 32, held out) differ in where the norm runs: the GroupNorm
engine has 5 DLA subgraphs with GPU InstanceNorm/Shuffle/Scale layers between them, the BatchNorm engine
one (reference/dla.md s5.3). Their measured gap, spread over the 4 extra round trips, is set against the
predicted one, and the extra fixed cost per DLA loadable that would close it against what two independent
Orin measurements allow such a cost to be:
- the HaX-CoNN GoogLeNet log (dla.md s5.1, TRT 8.5.2, one loadable, FP16 per the builder script): the
  ForeignNode row holds the loadable's fixed cost and all its layers (dlasim places prob on the DLA, so
  that row joins it, as validation/fit_specs.py fits it). The layers take at least their predicted MAC /
  DRAM time with no per-layer overhead, so the fixed cost is at most the rest (an upper bound that rests on
  the spec's FP16 rate: a faster FP16 array would loosen it);
- forum thread 219770 (public2 FOR-02, one conv, one loadable, TRT 8.4 era): 1/qps minus the Nsight DLA
  task holds the fixed cost and two GPU reformats of unknown size, so the fixed cost is at most that.
It also prints what the closing cost would do to every orin-agx case. Fits nothing, writes nothing; reads
held-out rows only to print them.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "validation"))

from dlasim import validate  # noqa: E402
from fit_concurrent import dla_task_ms, forum_rows  # noqa: E402
from fit_specs import ORIN_FN, ORIN_ROWS  # noqa: E402

GN, BN = "orin_toy_cnn_groupnorm_int8_bs32", "orin_toy_cnn_batchnorm_int8_bs32"
GOOGLENET_CASE = "orin_googlenet_dla_int8"
# DLA subgraphs of the measured engines (dla.md s5.3: "5 DLA subgraphs + GPU InstanceNorm/Shuffle/Scale",
# "one DLA subgraph + GPU GlobalAvgPool")
MEASURED_LOADABLES = {GN: 5, BN: 1}
# GPU kernels in one GroupNorm round trip: the DLA -> GPU and GPU -> DLA copies and the InstanceNorm, Shuffle
# (reshape before and after) and Scale layers dla.md s5.3 lists
GPU_KERNELS_PER_TRIP = 6
# the GoogLeNet log's GPU rows on a 1000-element tensor: a copy and a softmax, each a tiny kernel's time
TINY_GPU_ROWS = ("Reformatting CopyNode for Input Tensor 0 to prob", "prob")


@dataclass(frozen=True)
class Gap:
    """Measured and predicted GN - BN gap per extra round trip, and the extra fixed cost per loadable
    that would close it (ms)."""
    measured_ms: float
    predicted_ms: float
    measured_per_trip_ms: float
    predicted_per_trip_ms: float
    closing_ms: float


def per_trip_gap(meas_gn: float, meas_bn: float, loadables_meas: tuple[int, int],
                 pred_gn: float, pred_bn: float, loadables_pred: tuple[int, int]) -> Gap:
    """The gap between two engines of one network that differ in their DLA loadables, per extra loadable
    (each extra loadable is one extra DLA -> GPU -> DLA round trip), measured and predicted."""
    m_extra, p_extra = loadables_meas[0] - loadables_meas[1], loadables_pred[0] - loadables_pred[1]
    if m_extra <= 0 or p_extra <= 0:
        raise ValueError("the first engine must have more DLA loadables than the second")
    mg, pg = meas_gn - meas_bn, pred_gn - pred_bn
    return Gap(mg, pg, mg / m_extra, pg / p_extra, (mg - pg) / p_extra)


def googlenet_bound_ms(foreign_node_ms: float, dla_layers_min_ms: float) -> float:
    """Most a fixed per-loadable cost can be in a one-loadable engine: its ForeignNode row less the least
    time its layers can take."""
    return foreign_node_ms - dla_layers_min_ms


def forum_bound_ms(dla_qps: float, task_ms: float) -> float:
    """Most the fixed cost of a one-loadable engine can be: 1/qps less the DLA task (the rest also holds
    the GPU reformats around it)."""
    return 1e3 / dla_qps - task_ms


def _steps_by_kind(est) -> dict[str, float]:
    out: dict[str, float] = {}
    for s in est.steps:
        key = "DLA launch" if s.kind == "overhead" else f"{s.device.upper()} {s.kind}"
        out[key] = out.get(key, 0.0) + s.time_ms
    return out


def _toy(cases: dict, runner) -> tuple[Gap, dict]:
    rows = {n: validate.run_case(cases[n], runner) for n in (GN, BN)}
    ests = {n: runner.estimate(cases[n]) for n in (GN, BN)}
    gap = per_trip_gap(rows[GN]["measured"], rows[BN]["measured"], (MEASURED_LOADABLES[GN], MEASURED_LOADABLES[BN]),
                       rows[GN]["predicted"], rows[BN]["predicted"],
                       (ests[GN].dla_subgraphs, ests[BN].dla_subgraphs))
    print("toy CNN (jetson_dla_tutorial, AGX Orin, INT8, batch 32; held out):")
    for n in (GN, BN):
        print(f"  {n}: measured {rows[n]['measured']:.3f} ms (DLA subgraphs: {MEASURED_LOADABLES[n]}, dla.md s5.3), "
              f"predicted {rows[n]['predicted']:.3f} ms (loadables: {ests[n].dla_subgraphs}), "
              f"{rows[n]['error_pct']:+.1f}%")
    print(f"  gap: measured {gap.measured_ms:.3f} ms = {gap.measured_per_trip_ms:.3f} ms per round trip; "
          f"predicted {gap.predicted_ms:.3f} ms = {gap.predicted_per_trip_ms:.3f} ms per round trip")
    a, b = _steps_by_kind(ests[GN]), _steps_by_kind(ests[BN])
    extra = ests[GN].dla_subgraphs - ests[BN].dla_subgraphs
    print("  predicted per round trip: " + ", ".join(
        f"{k} {(a.get(k, 0.0) - b.get(k, 0.0)) / extra:.3f}" for k in sorted(set(a) | set(b))))
    now = runner.platform("orin-agx").dla.subgraph_overhead_s * 1e3
    print(f"  closing it takes +{gap.closing_ms:.3f} ms per DLA loadable (a fixed loadable cost of "
          f"{now + gap.closing_ms:.3f} ms; the spec has {now:.3f})")
    tiny = max(dict(ORIN_ROWS)[n] for n in TINY_GPU_ROWS)
    gpu_now = sum((a.get(k, 0.0) - b.get(k, 0.0)) / extra for k in ("GPU layer", "GPU transition"))
    print(f"  GPU side per round trip if its {GPU_KERNELS_PER_TRIP} kernels each took the Orin log's tiny-kernel "
          f"time ({tiny} ms): {GPU_KERNELS_PER_TRIP * tiny:.3f} ms, against {gpu_now:.3f} predicted and "
          f"{gpu_now + gap.closing_ms:.3f} needed")
    return gap, rows


def _bounds(cases: dict, runner, gap: Gap, bn_row: dict) -> None:
    fn_ms = dict(ORIN_ROWS)[ORIN_FN]
    with_prob = fn_ms + dict(ORIN_ROWS)["prob"]
    layers_min = {}
    for precision in ("fp16", "int8"):
        g = runner.estimate({**cases[GOOGLENET_CASE], "precision": precision})
        layers_min[precision] = sum(s.time_ms - s.overhead_ms for s in g.steps
                                    if s.kind == "layer" and s.device == "dla")
    gb = googlenet_bound_ms(with_prob, layers_min["fp16"])
    forum = forum_rows()["FOR-02"]
    fb = forum_bound_ms(float(forum["value"]), dla_task_ms(forum))
    print("bounds on a fixed cost per DLA loadable (AGX Orin, one-loadable engines, not the toy CNN):")
    print(f"  HaX-CoNN GoogLeNet log (TRT 8.5.2): ForeignNode + prob {with_prob:.4f} ms, its DLA layers with no "
          f"per-layer overhead {layers_min['fp16']:.3f} ms (predicted, FP16 rate as the spec) -> at most {gb:.3f} ms"
          f"; had the engine run INT8 (the log does not say; the builder script sets FP16): "
          f"{layers_min['int8']:.3f} ms -> at most {googlenet_bound_ms(with_prob, layers_min['int8']):.3f} ms")
    xav = runner.platform("xavier-agx").dla
    macs = runner.graph(cases[GOOGLENET_CASE]["model"]).macs
    at_xavier = macs / (xav.macs_per_cycle("fp16") * xav.clock_hz) * 1e3
    print(f"    (its {macs / 1e9:.2f} GMAC at Xavier's FP16 DLA peak take {at_xavier:.3f} ms, "
          f"{'more' if at_xavier > fn_ms else 'less'} than the {fn_ms} ms ForeignNode: if the engine ran FP16, "
          f"Orin's FP16 DLA rate is above Xavier's and the DLA-SW FAQ's 'lower FP16 convolution compute' is "
          f"relative, not absolute)")
    print(f"  forum 219770 FOR-02 (TRT 8.4 era): 1/{float(forum['value'])} qps - {dla_task_ms(forum)} ms DLA task "
          f"-> at most {fb:.3f} ms, GPU reformats of unknown size included")
    need = runner.platform("orin-agx").dla.subgraph_overhead_s * 1e3 + gap.closing_ms
    print(f"  -> a {need:.3f} ms loadable cost is {'above' if need > gb else 'within'} the GoogLeNet bound and "
          f"{'above' if need > fb else 'within'} the forum bound")
    bn_miss = bn_row["measured"] - bn_row["predicted"]
    print(f"  the one-subgraph BatchNorm engine alone misses by {bn_miss:.3f} ms: "
          f"{'more' if bn_miss > gb else 'less'} than the GoogLeNet bound allows a loadable cost to explain")


def _sensitivity(runner, gap: Gap) -> None:
    plat = runner.platform("orin-agx")
    trial = plat.model_copy(update={"dla": plat.dla.model_copy(
        update={"subgraph_overhead_s": plat.dla.subgraph_overhead_s + gap.closing_ms / 1e3})})
    res = validate.run(platforms={"orin-agx": trial, "orin-agx:maxn": trial})
    base = {r["name"]: r for r in validate.run()["cases"]}
    print(f"every orin-agx case with +{gap.closing_ms:.3f} ms per loadable (nothing refitted):")
    for r in res["cases"]:
        if validate.platform_key(r["platform"]) == "orin-agx" and r.get("error_pct") is not None:
            print(f"  {r['name']:<42} {'fit ' if r['fitted'] else 'held'} {base[r['name']]['error_pct']:+7.1f}% "
                  f"-> {r['error_pct']:+7.1f}%")


def main() -> int:
    cases = {c["name"]: c for c in validate.load_cases()}
    runner = validate._Runner()
    runner.cases = cases
    gap, rows = _toy(cases, runner)
    _bounds(cases, runner, gap, rows[BN])
    _sensitivity(runner, gap)
    return 0


if __name__ == "__main__":
    sys.exit(main())
