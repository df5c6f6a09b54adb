#!/usr/bin/env python3
"""torch2trt Jetson AGX Xavier GPU latencies (../shared/data/public2/measurements.csv rows T2T-*) against dlasim.

    python validation/t2t_xavier.py [--format table|json]

Each row is one torchvision classifier, batch 1, FP16, GPU only, timed from Python around the TensorRT module
(the README of the data: launch and synchronisation included). dlasim predicts the engine's GPU time, so the
measured value is an upper bound of what it predicts; the rows are held out (no parameter is fitted to them).
The network is the zoo entry of the same torchvision name (dlasim/zoo/torchvision_nets.py, classifiers.py).
"""
from __future__ import annotations

import argparse
import csv
import json
import math
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


def cases(plat="xavier-agx", path: Path | None = None) -> list[dict]:
    hw = dlasim.hardware(plat)
    out = []
    for r in rows(path):
        net = r["model"].split()[-1]
        e = dlasim.estimate(dlasim.load(f"zoo:{net}", batch=int(r["batch"])), hw, device="gpu", precision="fp16")
        meas = float(r["value"])
        fc = sum(s.time_ms for s in e.steps if s.op in ("Gemm", "MatMul"))
        out.append({"case": r["case_id"], "network": net, "measured_ms": meas, "predicted_ms": e.total_ms,
                    "fc_ms": fc, "error_pct": 100 * (e.total_ms / meas - 1)})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--format", choices=("table", "json"), default="table")
    a = ap.parse_args(argv)
    cs = cases()
    if a.format == "json":
        print(json.dumps(cs, indent=1))
        return 0
    print(f"{'case':<8} {'network':<14} {'measured':>9} {'predicted':>10} {'of it FC':>9} {'error':>8}")
    for c in cs:
        print(f"{c['case']:<8} {c['network']:<14} {c['measured_ms']:>9.3f} {c['predicted_ms']:>10.3f} "
              f"{c['fc_ms']:>9.3f} {c['error_pct']:>+7.1f}%")
    errs = [abs(c["error_pct"]) for c in cs]
    logs = [abs(math.log(c["predicted_ms"] / c["measured_ms"])) for c in cs]
    print(f"median |error| {statistics.median(errs):.1f}%, within 20%: {sum(e <= 20 for e in errs)}/{len(errs)}, "
          f"rms log error {math.sqrt(sum(x * x for x in logs) / len(logs)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
