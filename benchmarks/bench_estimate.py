"""How fast is one in-process estimate (the NAS inner loop of docs/DESIGN.md, user 2)?

    python benchmarks/bench_estimate.py [--repeat N] [--no-profile]

Graphs and platforms are built once; each timed call is `dlasim.estimate(graph, platform, ...)`. Prints, for
ResNet-50 and MobileNetV2 on the Orin DLA (INT8), the A100 GPU (FP16) and the Orin GPU (FP16), the median
time per call warm (graph reused: estimate reuses the Plan built for that graph and options), with a new
Graph of the same network each call (every pass runs; per-layer conv costs are reused) and cold (caches
cleared and a new Graph before each call: nothing is reused), each as wall time, CPU time
(time.process_time, steadier under load) and Python function calls (cProfile's count, unaffected by load);
the time to build each graph (zoo / GraphBuilder); whole candidates (build the graph, then estimate it with
caches cleared: what a NAS loop pays per new candidate) per second; a NAS loop over the candidates of the
dlasim.nas search spaces (a different GraphBuilder network each call: build and estimate times, candidates
per second) on the Orin DLA (INT8) and the A100 (FP16); then a cProfile of the cold ResNet-50
Orin DLA estimate (top 10 functions by cumulative time). The load average is printed. The garbage
collector stays on, as in a real loop; timings on a shared machine vary by 10-20% from run to run, so
compare medians of runs made close together.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

import dlasim
from dlasim import zoo

CASES = [  # (label, zoo model, platform, device, precision)
    ("resnet50 orin-agx dla int8", "resnet50", "orin-agx", "dla", "int8"),
    ("mobilenet_v2 orin-agx dla int8", "mobilenet_v2", "orin-agx", "dla", "int8"),
    ("resnet50 a100 gpu fp16", "resnet50", "a100", "gpu", "fp16"),
    ("mobilenet_v2 a100 gpu fp16", "mobilenet_v2", "a100", "gpu", "fp16"),
    ("resnet50 orin-agx gpu fp16", "resnet50", "orin-agx", "gpu", "fp16"),
    ("mobilenet_v2 orin-agx gpu fp16", "mobilenet_v2", "orin-agx", "gpu", "fp16"),
]


def timed(fn, repeat: int, warmup: int = 2, clock=time.perf_counter, before=None) -> list[float]:
    """Seconds per call of `fn` (`before`, untimed, runs ahead of each call)."""
    for _ in range(warmup):
        if before:
            before()
        fn()
    out = []
    for _ in range(repeat):
        if before:
            before()
        t0 = clock()
        fn()
        out.append(clock() - t0)
    return out


def calls(fn) -> int:
    """Python function calls one call of `fn` makes (cProfile's count): a measure of work that load on the
    machine does not change."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    return sum(s[1] for s in pstats.Stats(prof).stats.values())


def nas_loop(platforms: dict, repeat: int) -> None:
    """A NAS inner loop: each call builds a different candidate of a dlasim.nas search space (space.build of
    an encoded row, GraphBuilder) and estimates it; the candidates are sampled once, the same for every run.
    Prints the median per candidate of the graph construction and of the estimate, and candidates/s."""
    from dlasim.nas import mobilenet_v3_space, resnet_space
    print()
    hdr = (f"{'NAS loop: build + estimate':<34} {'layers':>6} {'build ms':>9} {'est ms':>8} {'est cpu':>8} "
           f"{'cand/s':>7}")
    print(hdr)
    print("-" * len(hdr))
    for space in (mobilenet_v3_space(), resnet_space()):
        rows = space.sample(repeat + 2, seed=11)
        for plat, dev, prec in (("orin-agx", "dla", "int8"), ("a100", "gpu", "fp16")):
            hw = platforms[plat]
            build, est, cpu, total, layers = [], [], [], [], 0
            for r in rows:
                t0 = time.perf_counter()
                g = space.build(r)
                t1, c1 = time.perf_counter(), time.process_time()
                dlasim.estimate(g, hw, device=dev, precision=prec, batch=1)
                t2, c2 = time.perf_counter(), time.process_time()
                build.append(t1 - t0)
                est.append(t2 - t1)
                cpu.append(c2 - c1)
                total.append(t2 - t0)
                layers = max(layers, len(g.layers))
            k = slice(2, None)                   # the first two warm the conv-cost cache
            label = f"{space.name} {plat} {dev} {prec}"
            print(f"{label:<34} {layers:>6} {statistics.median(build[k]) * 1e3:>9.2f} "
                  f"{statistics.median(est[k]) * 1e3:>8.3f} {statistics.median(cpu[k]) * 1e3:>8.3f} "
                  f"{1 / statistics.median(total[k]):>7.0f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30, help="timed calls per case (median reported)")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile section")
    a = ap.parse_args(argv)

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"dlasim {dlasim.__version__}, Python {sys.version.split()[0]}, {a.repeat} timed calls per row (median)"
          + (f", load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs" if load else ""))
    print()
    print(f"{'graph construction':<34} {'layers':>6} {'build ms':>9}")
    graphs = {}
    for name in dict.fromkeys(c[1] for c in CASES):
        t = statistics.median(timed(lambda: zoo.build(name), max(5, a.repeat // 3)))
        graphs[name] = zoo.build(name)
        print(f"{'zoo.build(' + repr(name) + ')':<34} {len(graphs[name].layers):>6} {t * 1e3:>9.2f}")
    platforms = {p: dlasim.hardware(p) for p in dict.fromkeys(c[2] for c in CASES)}
    t_hw = statistics.median(timed(lambda: dlasim.hardware("orin-agx"), a.repeat))
    print(f"{'dlasim.hardware(orin-agx) (cached)':<34} {'':>6} {t_hw * 1e3:>9.3f}")

    print()
    print("warm: graph and platform reused (estimate reuses the Plan of the graph estimated last: passes.cached_plan);")
    print("new graph: a new Graph of the same network (zoo.build, untimed) before each call: every pass runs, conv")
    print("costs are reused (cost/dla.py); cold: dlasim.clear_caches() too, nothing is reused. cpu: time.process_time")
    print("per call (steadier under load); calls: Python function calls per estimate (cProfile, unaffected by load).")
    hdr = (f"{'estimate':<34} {'total ms':>9} {'steps':>6} {'warm ms':>8} {'min ms':>7} {'cpu ms':>7} "
           f"{'calls':>6} {'est/s':>6} | {'new ms':>7} {'cpu ms':>7} | {'cold ms':>8} {'cpu ms':>7} {'calls':>6}")
    print(hdr)
    print("-" * len(hdr))
    for label, model, plat, dev, prec in CASES:
        g, hw = graphs[model], platforms[plat]
        e = dlasim.estimate(g, hw, device=dev, precision=prec, batch=1)
        warm = lambda: dlasim.estimate(g, hw, device=dev, precision=prec, batch=1)  # noqa: E731
        ts = timed(warm, a.repeat)
        cpu = timed(warm, a.repeat, clock=time.process_time)
        n_warm = calls(warm)
        new = []

        def other():
            new[:] = [zoo.build(model)]

        def fresh():
            dlasim.clear_caches()
            other()

        call = lambda: dlasim.estimate(new[0], hw, device=dev, precision=prec, batch=1)  # noqa: E731
        tn = timed(call, a.repeat, before=other)
        cn = timed(call, a.repeat, clock=time.process_time, before=other)
        tc = timed(call, a.repeat, before=fresh)
        cc = timed(call, a.repeat, clock=time.process_time, before=fresh)
        fresh()
        n_cold = calls(call)
        med = statistics.median(ts)
        print(f"{label:<34} {e.total_ms:>9.3f} {len(e.steps):>6} {med * 1e3:>8.3f} {min(ts) * 1e3:>7.3f} "
              f"{statistics.median(cpu) * 1e3:>7.3f} {n_warm:>6} {1 / med:>6.0f} | "
              f"{statistics.median(tn) * 1e3:>7.3f} {statistics.median(cn) * 1e3:>7.3f} | "
              f"{statistics.median(tc) * 1e3:>8.3f} {statistics.median(cc) * 1e3:>7.3f} {n_cold:>6}")

    print()
    hdr = f"{'candidate = build + estimate':<34} {'median ms':>10} {'min ms':>8} {'cand/s':>8}"
    print(hdr)
    print("-" * len(hdr))
    for label, model, plat, dev, prec in CASES[:4]:
        hw = platforms[plat]
        ts = timed(lambda: dlasim.estimate(zoo.build(model), hw, device=dev, precision=prec, batch=1), a.repeat,
                   before=dlasim.clear_caches)   # a new candidate: no reused Plan or conv cost
        med = statistics.median(ts)
        print(f"{label:<34} {med * 1e3:>10.2f} {min(ts) * 1e3:>8.2f} {1 / med:>8.0f}")
    nas_loop(platforms, a.repeat)

    if not a.no_profile:
        g, hw = graphs["resnet50"], platforms["orin-agx"]
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(20):
            dlasim.clear_caches()    # the cold path: every pass and cost runs
            dlasim.estimate(g, hw, device="dla", precision="int8", batch=1)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(10)
        text = buf.getvalue()
        start = text.find("   ncalls")
        print()
        print("cProfile: 20 x cold estimate(resnet50, orin-agx, dla, int8), top 10 by cumulative time")
        print(text[start:].rstrip() if start >= 0 else text.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
