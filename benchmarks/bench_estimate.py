"""How fast is one in-process estimate (the NAS inner loop of docs/DESIGN.md, user 2)?

    python benchmarks/bench_estimate.py [--repeat N] [--no-profile]

Graphs and platforms are built once; each timed call is `dlasim.estimate(graph, platform, ...)`, the path a
NAS loop takes. Prints the median time per call and estimates/second for ResNet-50 and MobileNetV2 on the
Orin DLA (INT8), the A100 GPU (FP16) and the Orin GPU (FP16); the time to build each graph (zoo /
GraphBuilder); whole candidates (build the graph with GraphBuilder, then estimate it: what a NAS loop pays
per new candidate) per second; then a cProfile of the ResNet-50 Orin DLA estimate (top 10 functions by
cumulative time). The garbage collector stays on, as in a real loop; timings on a shared machine vary by
10-20% from run to run, so compare medians of runs made close together.
"""
from __future__ import annotations

import argparse
import cProfile
import io
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


def timed(fn, repeat: int, warmup: int = 2) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30, help="timed calls per case (median reported)")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile section")
    a = ap.parse_args(argv)

    print(f"dlasim {dlasim.__version__}, Python {sys.version.split()[0]}, {a.repeat} timed calls per row (median)")
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
    hdr = f"{'estimate (graph and platform reused)':<34} {'total ms':>9} {'steps':>6} {'median ms':>10} {'min ms':>8} {'est/s':>8}"
    print(hdr)
    print("-" * len(hdr))
    for label, model, plat, dev, prec in CASES:
        g, hw = graphs[model], platforms[plat]
        e = dlasim.estimate(g, hw, device=dev, precision=prec, batch=1)
        ts = timed(lambda: dlasim.estimate(g, hw, device=dev, precision=prec, batch=1), a.repeat)
        med = statistics.median(ts)
        print(f"{label:<34} {e.total_ms:>9.3f} {len(e.steps):>6} {med * 1e3:>10.2f} {min(ts) * 1e3:>8.2f} "
              f"{1 / med:>8.0f}")

    print()
    hdr = f"{'candidate = build + estimate':<34} {'median ms':>10} {'min ms':>8} {'cand/s':>8}"
    print(hdr)
    print("-" * len(hdr))
    for label, model, plat, dev, prec in CASES[:4]:
        hw = platforms[plat]
        ts = timed(lambda: dlasim.estimate(zoo.build(model), hw, device=dev, precision=prec, batch=1), a.repeat)
        med = statistics.median(ts)
        print(f"{label:<34} {med * 1e3:>10.2f} {min(ts) * 1e3:>8.2f} {1 / med:>8.0f}")

    if not a.no_profile:
        g, hw = graphs["resnet50"], platforms["orin-agx"]
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(20):
            dlasim.estimate(g, hw, device="dla", precision="int8", batch=1)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(10)
        text = buf.getvalue()
        start = text.find("   ncalls")
        print()
        print("cProfile: 20 x estimate(resnet50, orin-agx, dla, int8), top 10 by cumulative time")
        print(text[start:].rstrip() if start >= 0 else text.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
