"""Architecture-search throughput and latency-table fidelity (DESIGN.md user 2; issue: NAS at scale).

    python benchmarks/bench_nas.py [--space mbv3|resnet|both] [--n 1000] [--repeat 5] [--no-ray]

Prints, for the MobileNetV3/OFA space (and the ResNet space with --space both) on the Orin DLA, INT8,
batch 1: candidates/s of (a) the full path (build the candidate's graph + dlasim.estimate), (b)
LatencyTable.predict on 100,000 encoded candidates, (c) estimate_many over prebuilt graphs with 1 and 2
local processes and (d) Ray local with 2 workers; then the table-vs-full error on N random candidates
(median, 95th percentile, worst; separately for the candidates the table flags exact and inexact).
Throughputs are medians of --repeat runs with their spread (min-max over the median) to show the
machine's noise; the load average is printed because other work on a shared machine moves every figure.
"""
from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time

import numpy as np

import dlasim
from dlasim.nas import LatencyTable, mobilenet_v3_space, resnet_space

DEV, PREC = "dla", "int8"


def rate(fn, n_items: int, repeat: int) -> tuple[float, float, float]:
    """(median items/s of wall time, spread = (max - min) / median of the per-run rates, median items per
    CPU-second of this process: on a busy machine the wall rate drops, the CPU rate much less)."""
    rates, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        rates.append(n_items / (time.perf_counter() - t0))
        cpu.append(n_items / max(time.process_time() - c0, 1e-9))
    med = statistics.median(rates)
    return med, (max(rates) - min(rates)) / med, statistics.median(cpu)


def line(label: str, r: tuple[float, float, float], own_cpu: bool = True) -> None:
    extra = f"   {r[2]:>10,.0f} per CPU-s" if own_cpu else "   (work in other processes)"
    print(f"  {label:<44} {r[0]:>10,.0f} cand/s (spread {r[1] * 100:4.0f}%){extra}")


def bench_space(space, hw, a) -> None:
    print(f"\n== {space.name} ({space.n_columns} columns, {len(space.slots())} units) on {hw.label} "
          f"{DEV.upper()} {PREC.upper()}, batch 1")
    t0 = time.perf_counter()
    table = LatencyTable.build(space, hw, DEV, PREC, 1)
    print(f"  LatencyTable.build: {table.builds} full estimates, {time.perf_counter() - t0:.1f} s")

    X = space.sample(a.n, seed=1234)         # the held-out candidates: a seed the table's designs never use
    small = X[:60]
    line("full: build graph + dlasim.estimate (60)",
         rate(lambda: [dlasim.estimate(space.build(r), hw, device=DEV, precision=PREC) for r in small],
              len(small), a.repeat))
    big = space.sample(100_000, seed=99)
    table.predict(big[:10])
    line("LatencyTable.predict (100,000 per call)", rate(lambda: table.predict(big), len(big), a.repeat))
    # what a NAS loop sends: a small builder per candidate, the graph is built where the estimate runs
    graphs = [functools.partial(space.build, r) for r in X[:200]]
    for w in (1, 2):
        line(f"estimate_many, {w} process{'es' if w > 1 else ''} (200 candidates)",
             rate(lambda: dlasim.estimate_many(graphs, hw, workers=w, device=DEV, precision=PREC),
                  len(graphs), max(3, a.repeat // 2)), own_cpu=w == 1)
    if not a.no_ray:
        try:
            import ray
        except ImportError:
            print("  Ray local, 2 workers: ray not installed (pip install dlasim[nas])")
        else:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            dlasim.estimate_many(graphs[:4], hw, workers=2, backend="ray", device=DEV, precision=PREC)  # warm
            line("Ray local, 2 workers (200 candidates)",
                 rate(lambda: dlasim.estimate_many(graphs, hw, workers=2, backend="ray", device=DEV,
                                                   precision=PREC), len(graphs), max(3, a.repeat // 2)),
                 own_cpu=False)
            ray.shutdown()

    pred, exact = table.predict(X, flags=True)
    ref = np.array([dlasim.estimate(space.build(r), hw, device=DEV, precision=PREC).total_ms for r in X])
    err = np.abs(pred - ref) / ref * 100
    loads = table.loadables(X)
    print(f"  table vs full estimate on {a.n} random candidates: median {np.median(err):.4f}%, "
          f"p95 {np.percentile(err, 95):.4f}%, worst {err.max():.4f}%")
    for name, m in (("flagged exact", exact), ("flagged inexact", ~exact)):
        if m.any():
            print(f"    {name:<16} {int(m.sum()):>5} candidates: median {np.median(err[m]):.4f}%, "
                  f"worst {err[m].max():.4f}%")
    print(f"    candidates needing more than {table.limit} loadables (limit sends the rest to the GPU): "
          f"{int((loads > table.limit).sum())} of {a.n}; latency range {ref.min():.3f}-{ref.max():.3f} ms")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--space", choices=["mbv3", "resnet", "both"], default="mbv3")
    ap.add_argument("--n", type=int, default=1000, help="random candidates for the error check")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--hw", default="orin-agx")
    ap.add_argument("--no-ray", action="store_true")
    a = ap.parse_args(argv)
    print(f"dlasim {dlasim.__version__}, Python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    hw = dlasim.hardware(a.hw)
    spaces = {"mbv3": [mobilenet_v3_space()], "resnet": [resnet_space()],
              "both": [mobilenet_v3_space(), resnet_space()]}[a.space]
    for sp in spaces:
        bench_space(sp, hw, a)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
