"""How fast is `dlasim concurrent` once the stand-alone estimates exist (the contention simulation alone)?

    python benchmarks/bench_concurrent.py [--repeat N]

Estimates are computed once per engine set; each timed call is run_concurrent with a warm estimate cache
(what --advise pays per candidate). Prints the median time per call for three engine sets.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))    # this checkout's dlasim

from dlasim.concurrent import Engine
from dlasim.concurrent.model import run_concurrent

SETS = [  # (label, platform, [(model, device, core, batch)])
    ("resnet50 x3 orin-agx b1", "orin-agx", [("zoo:resnet50", "gpu", 0, 1), ("zoo:resnet50", "dla", 0, 1),
                                            ("zoo:resnet50", "dla", 1, 1)]),
    ("resnet50 xavier-agx gpu64 dla32", "xavier-agx", [("zoo:resnet50", "gpu", 0, 64),
                                                       ("zoo:resnet50", "dla", 0, 32), ("zoo:resnet50", "dla", 1, 32)]),
    ("resnet50 orin-nx gpu256 dla2", "orin-nx-16gb", [("zoo:resnet50", "gpu", 0, 256),
                                                     ("zoo:resnet50", "dla", 0, 2), ("zoo:resnet50", "dla", 1, 2)]),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    for label, hw, spec in SETS:
        engines = [Engine(m, d, c, "int8", b) for m, d, c, b in spec]
        cache: dict = {}
        run_concurrent(engines, hw, cache=cache)
        times = []
        for _ in range(a.repeat):
            t = time.perf_counter()
            run_concurrent(engines, hw, cache=cache)
            times.append(time.perf_counter() - t)
        print(f"{label:<34} median {statistics.median(times) * 1e3:9.1f} ms per simulation ({a.repeat} runs)")


if __name__ == "__main__":
    main()
