#!/usr/bin/env python3
"""Fit gpu.process_dla_wait_share (GPU time slices a DLA engine's process holds while its DLA task runs).

    python validation/fit_concurrent.py            # fit, print the held-out checks
    python validation/fit_concurrent.py --write    # and write the value into the Jetson specs

Data: the forum thread of validation/data/public2/measurements.csv rows FOR-01..05 (AGX Orin MAXN, one
INT8 Conv2d ONNX, three trtexec processes at once; one user, low-medium trust). Fit row: FOR-03 (the GPU
engine's qps while both DLA engines run), given FOR-01 and FOR-02 (each engine alone) and the DLA task
time the user read in Nsight (6.934 ms, quoted in the rows' notes). Held out: FOR-04 (each DLA engine's
qps together) and FOR-05 (the aggregate), printed beside the fit; no validate case reads FOR rows.

The conv's shape is only in an image of the post, so the engines are not built from a network: each is
the measured stand-alone time cut into the steps the contention model needs (dlasim/concurrent/contention.py):
- GPU engine: one GPU step of 1/FOR-01 s (its kernels and I/O reformats, back to back).
- DLA engine: the Nsight DLA task on its core, and the rest of 1/FOR-02 s (1/132.7 - 6.934 ms = 0.60 ms)
  as two GPU reformat steps (into and out of the DLA formats: trtexec's default FP32 linear I/O), whose
  fixed part is the orin-agx spec's loadable launch (dla.subgraph_overhead_s) plus two hand-overs
  (copies.transition_overhead_s), which do not occupy the GPU.
No DRAM traffic is given to the engines (the bytes depend on the unknown shape), so the fitted share also
absorbs whatever DRAM contention the forum run had: it is an upper bound on the time-slicing part. The
bound over shapes: the same fit with every non-DLA millisecond on the GPU, and with half of it as fixed
cost, is printed as the range. The value is fitted on Orin and written to the other Jetson specs as an
assumption (the same GPU driver time-slicing; their sources say so).
"""
from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "validation" / "data" / "public2" / "measurements.csv"
SPECS = ("orin-agx", "orin-nx-16gb", "xavier-agx", "xavier-nx")
FIT_ROWS = ("FOR-01", "FOR-02", "FOR-03")
HELD_OUT = ("FOR-04", "FOR-05")
XAVIER_NOTE = ("; the held-out Xavier NX jetson_benchmarks rows imply other shares with their stand-alone "
               "predictions (validation/concurrent_breakdown.py prints them; validation/README.md)")


def forum_rows() -> dict[str, dict]:
    with open(DATA, newline="") as f:
        rows = {r["case_id"]: r for r in csv.DictReader(f) if r["case_id"].startswith("FOR-")}
    missing = [k for k in FIT_ROWS + HELD_OUT if k not in rows]
    if missing:
        raise SystemExit(f"{DATA}: no row {missing[0]}")
    return rows


def dla_task_ms(row: dict) -> float:
    m = re.search(r"Task ([0-9.]+) ?ms", row["notes"])
    if not m:
        raise SystemExit(f"{DATA}: row {row['case_id']} notes name no Nsight 'Task N ms'")
    return float(m.group(1))


def gpu_load_pct(row: dict) -> float:
    m = re.search(r"~?([0-9.]+)% GPU load", row["notes"])
    if not m:
        raise SystemExit(f"{DATA}: row {row['case_id']} notes name no 'N% GPU load'")
    return float(m.group(1))


def _times(engine) -> tuple[float, float, float]:
    """(period, GPU work, DLA time) of one DLA engine running alone: all its steps, its GPU steps without their
    launch overhead, its DLA steps."""
    period = sum(s.time_s for s in engine)
    gpu = sum(s.time_s - s.overhead_s for s in engine if s.unit == "gpu")
    dla = sum(s.time_s for s in engine if s.unit.startswith("dla"))
    return period, gpu, dla


def busy_alone(engine, share: float) -> tuple[float, float]:
    """(GPU busy share, of which held) of one DLA engine running alone: its GPU steps' time plus `share` of
    its DLA steps' time (the time slices its context holds while it waits), over its period."""
    period, gpu, dla = _times(engine)
    held = share * dla
    return (gpu + held) / period, held / period


def share_from_load(engine, load: float) -> float:
    """The held share at which busy_alone(engine, share) is `load` (the inverse of busy_alone)."""
    period, gpu, dla = _times(engine)
    return max(load * period - gpu, 0.0) / dla


def forum_engines(gpu_qps: float, dla_qps: float, task_ms: float, fixed_ms: float):
    """The three engines as contention segments (seconds), from the measured stand-alone times."""
    from dlasim.concurrent.contention import Segment
    rest = 1e3 / dla_qps - task_ms
    if rest <= fixed_ms:
        raise SystemExit(f"DLA engine: {rest:.3f} ms beside the task leaves no GPU time after {fixed_ms:.3f} ms fixed")
    half, fix = rest / 2 * 1e-3, fixed_ms / 2 * 1e-3
    gpu = [Segment("conv (GPU engine)", "layer", "gpu", 1.0 / gpu_qps, 0.0, 0.0, 0)]

    def dla(core: int):
        return [Segment("input reformat", "reformat", "gpu", half, 0.0, fix, 0),
                Segment("DLA task", "layer", f"dla{core}", task_ms * 1e-3, 0.0, 0.0, 0),
                Segment("output reformat", "reformat", "gpu", half, 0.0, fix, 0)]
    return [gpu, dla(0), dla(1)]


def predict(engines, share: float) -> list[float]:
    """qps of each engine together with the DLA engines' processes holding `share` of the GPU (the DLA
    engines' phases spread as dlasim/concurrent/model.py does)."""
    from dlasim.concurrent.contention import simulate, spread_phases
    r = simulate(engines, 0.0, iterations=24, holds=[0.0, share, share], phases=spread_phases(engines))
    return [1.0 / run.period_s for run in r.runs]


def fit(engines, target_gpu_qps: float) -> float:
    """The share at which the GPU engine runs at the measured qps (its qps falls as the share grows)."""
    lo, hi = 0.0, 4.0
    if predict(engines, lo)[0] <= target_gpu_qps:
        return 0.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if predict(engines, mid)[0] > target_gpu_qps:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def write(share: float, text: str) -> None:
    done = []
    for name in SPECS:
        path = ROOT / "hardware_specs" / f"{name}.toml"
        spec = path.read_text()
        src = (f'process_dla_wait_share = "{text}"' if name == "orin-agx" else
               f'process_dla_wait_share = "{text}; fitted on orin-agx, assumed for {name} (the same '
               f'Jetson GPU driver time-slicing between process contexts)'
               + (XAVIER_NOTE if name.startswith("xavier") else "") + '"')
        line = f"process_dla_wait_share = {share:.4g}"
        if re.search(r"^process_dla_wait_share = [0-9.e+-]+$", spec, re.M):
            spec = re.sub(r"^process_dla_wait_share = [0-9.e+-]+$", line, spec, flags=re.M)
            spec = re.sub(r'^process_dla_wait_share = ".*"$', lambda _: src, spec, flags=re.M)
        else:
            spec = spec.replace("\n[gpu]\n", f"\n[gpu]\n{line}\n", 1)
            spec = spec.replace("\n[gpu.sources]\n", f"\n[gpu.sources]\n{src}\n", 1)
        path.write_text(spec)
        done.append(f"wrote {path.relative_to(ROOT)}: {line}")
    print("\n".join(done))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write the fitted share into the Jetson specs")
    a = ap.parse_args(argv)
    from dlasim.hardware import hardware
    rows = forum_rows()
    gpu_qps, dla_qps, gpu_together = (float(rows[k]["value"]) for k in FIT_ROWS)
    dla_together, agg_together = (float(rows[k]["value"]) for k in HELD_OUT)
    task = dla_task_ms(rows["FOR-02"])
    plat = hardware("orin-agx")
    fixed = (plat.dla.subgraph_overhead_s + 2 * plat.copies.transition_overhead_s) * 1e3
    rest = 1e3 / dla_qps - task
    print(f"forum engines (orin-agx MAXN): GPU {1e3 / gpu_qps:.3f} ms; DLA {task:.3f} ms task + {rest:.3f} ms "
          f"({rest - fixed:.3f} on the GPU, {fixed:.3f} fixed)")
    results = {}
    for label, fx in (("spec fixed part", fixed), ("all on the GPU", 0.0), ("half fixed", rest / 2)):
        eng = forum_engines(gpu_qps, dla_qps, task, fx)
        share = fit(eng, gpu_together)
        g, d0, d1 = predict(eng, share)
        results[label] = share
        print(f"  {label:<16} share {share:.3f}: GPU {g:.1f} qps (FOR-03 {gpu_together}, fitted); held out: "
              f"DLA {d0:.1f} qps ({d0 / dla_together - 1:+.1%} vs FOR-04 {dla_together}), aggregate "
              f"{g + d0 + d1:.1f} ({(g + d0 + d1) / agg_together - 1:+.1%} vs FOR-05 {agg_together})")
    eng = forum_engines(gpu_qps, dla_qps, task, fixed)
    load = gpu_load_pct(rows["FOR-02"]) / 100
    busy, held = busy_alone(eng[1], results["spec fixed part"])
    print(f"  held out: the GPU load the user saw with the DLA engine alone ({load:.0%}, FOR rows' notes); the model's "
          f"DLA engine alone keeps the GPU {busy:.0%} busy ({busy - held:.1%} reformats, {held:.1%} its held share); "
          f"the load alone implies a share of {share_from_load(eng[1], load):.3f}")
    g0, d0, _ = predict(eng, 0.0)
    print(f"  without the held share: GPU {g0:.1f} qps ({g0 / gpu_together - 1:+.1%} vs FOR-03), DLA {d0:.1f}")
    share = results["spec fixed part"]
    lo, hi = min(results.values()), max(results.values())
    if a.write:
        write(share, f"fitted by validation/fit_concurrent.py on validation/data/public2/measurements.csv "
                     f"FOR-01..03 (forum thread 219770, AGX Orin MAXN, one INT8 conv, 3 trtexec processes; "
                     f"engines from the measured stand-alone times, no DRAM traffic, so an upper bound on "
                     f"the time-slicing part); range {lo:.3f}-{hi:.3f} over how the DLA engine's non-DLA "
                     f"time splits into GPU and fixed cost; FOR-04/05 held out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
