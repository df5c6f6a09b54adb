#!/usr/bin/env python3
"""torch2trt Jetson AGX Xavier GPU latencies (../shared/data/public2/measurements.csv rows T2T-*) against dlasim.

    python validation/t2t_xavier.py [--format table|json]

Each row is one torchvision classifier, batch 1, FP16, GPU only, timed from Python around the TensorRT module
(the README of the data: launch and synchronisation included). dlasim predicts the engine's GPU time, so the
measured value is an upper bound of what it predicts; the rows are held out (no parameter is fitted to them).
The network is the zoo entry of the same torchvision name (dlasim/zoo/torchvision_nets.py, classifiers.py).

Each row's quote also gives torch2trt's throughput column, timed over back-to-back calls with one
synchronisation at the end: there the host work of one call overlaps the GPU work of the previous one, so
1000 / throughput is the engine time when the GPU, not the host, is the bottleneck, and the host time per call
when the host is. The report prints the prediction against both (nothing is fitted to either).
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import dlasim  # noqa: E402

CSV_CANDIDATES = (ROOT.parent / "shared" / "data" / "public2" / "measurements.csv",
                  ROOT / "validation" / "data" / "public2" / "measurements.csv")


def rows(path: Path | None = None) -> list[dict]:
    path = path or next((p for p in CSV_CANDIDATES if p.exists()), None)
    if path is None:
        raise SystemExit("t2t_xavier: public2/measurements.csv not found (looked in "
                         + ", ".join(map(str, CSV_CANDIDATES)) + ")")
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["case_id"].startswith("T2T-")]


def throughput_ms(quote: str) -> float | None:
    """1000 / the 'Throughput (TensorRT)' figure of a T2T row's quote (e.g. '... Throughput (TensorRT) 1.29e+03
    | Latency ...' -> 0.775 ms), None if the quote has none."""
    m = re.search(r"Throughput \(TensorRT\) ([0-9.]+(?:e[+-]?[0-9]+)?)", quote)
    return 1000.0 / float(m.group(1)) if m else None


def cases(plat="xavier-agx", path: Path | None = None) -> list[dict]:
    hw = dlasim.hardware(plat)
    out = []
    for r in rows(path):
        net = r["model"].split()[-1]
        e = dlasim.estimate(dlasim.load(f"zoo:{net}", batch=int(r["batch"])), hw, device="gpu", precision="fp16")
        meas = float(r["value"])
        fc = sum(s.time_ms for s in e.steps if s.op in ("Gemm", "MatMul"))
        thr = throughput_ms(r["quote"])
        out.append({"case": r["case_id"], "network": net, "measured_ms": meas, "predicted_ms": e.total_ms,
                    "fc_ms": fc, "error_pct": 100 * (e.total_ms / meas - 1), "throughput_ms": thr,
                    "error_vs_throughput_pct": None if thr is None else 100 * (e.total_ms / thr - 1)})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--format", choices=("table", "json"), default="table")
    a = ap.parse_args(argv)
    cs = cases()
    if a.format == "json":
        print(json.dumps(cs, indent=1))
        return 0
    print(f"{'case':<8} {'network':<14} {'latency':>9} {'1000/thr':>9} {'predicted':>10} {'of it FC':>9} "
          f"{'vs latency':>11} {'vs 1000/thr':>12}")
    for c in cs:
        thr = "-" if c["throughput_ms"] is None else f"{c['throughput_ms']:.3f}"
        ethr = "-" if c["error_vs_throughput_pct"] is None else f"{c['error_vs_throughput_pct']:+.1f}%"
        print(f"{c['case']:<8} {c['network']:<14} {c['measured_ms']:>9.3f} {thr:>9} {c['predicted_ms']:>10.3f} "
              f"{c['fc_ms']:>9.3f} {c['error_pct']:>+10.1f}% {ethr:>12}")
    errs = [abs(c["error_pct"]) for c in cs]
    logs = [abs(math.log(c["predicted_ms"] / c["measured_ms"])) for c in cs]
    print(f"median |error| {statistics.median(errs):.1f}%, within 20%: {sum(e <= 20 for e in errs)}/{len(errs)}, "
          f"rms log error {math.sqrt(sum(x * x for x in logs) / len(logs)):.3f} (against the latency column)")
    et = [abs(c["error_vs_throughput_pct"]) for c in cs if c["error_vs_throughput_pct"] is not None]
    if et:
        print(f"against 1000 / throughput: median |error| {statistics.median(et):.1f}%, within 20%: "
              f"{sum(e <= 20 for e in et)}/{len(et)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
