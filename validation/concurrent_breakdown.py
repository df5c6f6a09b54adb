#!/usr/bin/env python3
"""Why each concurrent aggregate case misses: the engines' stand-alone error against their contention error.

    python validation/concurrent_breakdown.py [--suite concurrent]

For every `concurrent:aggregate` row of validation/cases.csv (suites `concurrent`, `concurrent-anchored`) it
prints, per engine, the predicted stand-alone img/s, the harness's stand-alone hint where one exists (the
`anchor=` of the row's `_anchored` sibling: MLPerf expected-QPS rows MLP-31.., sizing hints, not audited),
the engine's img/s together and what the contention model added (DRAM, unit sharing, hand-over copies);
then for the case: measured, the sum of the stand-alone predictions (the naive baseline) and the prediction
together, both as errors against the measurement.

Contention in this model only slows engines down, so the prediction together is never faster than the sum
of the stand-alone predictions. When that sum is already slower than the measurement (`stand-alone too
slow`), no contention mechanism can bring the prediction closer than the sum: the miss is a stand-alone
(dlasim/cost, dlasim/passes) error, and the per-engine lines say which engine carries it. For rows with
the engines in separate processes (`processes=each`) it also prints the GPU share a waiting DLA process
would have to hold for the prediction to meet the measurement, the engines' stand-alone times as predicted
(beside the spec's gpu.process_dla_wait_share, fitted on the Orin forum rows by fit_concurrent.py). Reads
held-out rows only to print them; fits nothing, writes nothing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SUITES = ("concurrent", "concurrent-anchored")


def _hints(cases: list[dict]) -> dict[str, dict[str, float]]:
    """case name -> {unit: stand-alone img/s hint} from the anchored sibling rows."""
    from dlasim.concurrent.cases import case_options
    out = {}
    for c in cases:
        anchor = case_options(c.get("options", "")).anchor
        if anchor:
            out[c["name"]] = anchor
            out[c["name"].removesuffix("_anchored")] = anchor
    return out


def verdict(measured_ms: float, sum_ms: float, predicted_ms: float, tol: float = 0.2) -> str:
    """Which side of the model a miss is on (ms per image: larger = slower)."""
    err, base = predicted_ms / measured_ms - 1, sum_ms / measured_ms - 1
    if base > 0:
        return "stand-alone too slow: the sum alone is already slower than measured, contention can only add"
    if abs(err) < abs(base):
        return "closer than the sum" + ("" if abs(err) <= tol else ", but stand-alone too fast beyond contention")
    return "contention overshoots: the model slows the engines more than the measurement allows"


def implied_share(aggregate, measured: float, lo: float = 0.0, hi: float = 2.0, steps: int = 24) -> float | None:
    """The held GPU share at which `aggregate(share)` (img/s, falling as the share grows) meets `measured`,
    by bisection; None when even no held share is slower than measured, `hi` when `hi` is still faster."""
    if aggregate(lo) < measured:
        return None
    if aggregate(hi) >= measured:
        return hi
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if aggregate(mid) >= measured:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def breakdown(case: dict, runner, hints: dict) -> list[str]:
    from dlasim import validate
    from dlasim.concurrent.cases import case_result
    row = validate.run_case(case, runner)
    if row.get("error"):
        return [f"{case['name']}: {row['error']}"]
    r = case_result(case, runner)
    hint = hints.get(case["name"], {})
    lines = [f"{case['name']} ({case['platform']}, {case['device']})"]
    for e in r.engines:
        h = hint.get(e.unit)
        vs = f"hint {h:8.1f} ({e.alone_img_per_s / h - 1:+6.1%})" if h else f"{'no hint':>23}"
        lines.append(f"  {e.unit:<5} b{e.batch:<4} alone {e.alone_img_per_s:8.1f} img/s  {vs}  together "
                     f"{e.together_img_per_s:8.1f} ({1 / e.slowdown - 1:+6.1%}): +DRAM {e.dram_ms:.3f} ms, "
                     f"+share {e.unit_share_ms:.3f} ms, +copies {e.copies_ms:.3f} ms of {e.alone_ms:.3f} ms "
                     f"(GPU alone {e.gpu_ms_alone:.3f} ms)")
    meas = 1e3 / row["measured"]
    lines.append(f"  measured {meas:.1f} img/s; sum alone {r.alone_sum_img_per_s:.1f} "
                 f"({row['sum_alone_error_pct']:+.1f}% in ms/img); together {r.aggregate_img_per_s:.1f} "
                 f"({row['error_pct']:+.1f}%); DRAM {r.mean_dram_use:.0%} of "
                 f"{r.dram_cap_bytes_per_s / 1e9:.1f} GB/s, saturated {r.saturated_share:.0%}")
    if r.processes == "each" and r.dla_wait_share > 0:
        share = implied_share(lambda h: case_result(case, runner, wait_share=h).aggregate_img_per_s, meas)
        lines.append(f"  held GPU share per DLA process (spec {r.dla_wait_share:.3f}, fitted on the Orin forum rows): "
                     + ("none reaches the measurement" if share is None else
                        f"{share:.3f} would meet the measurement, the engines' stand-alone times as predicted"))
    lines.append("  -> " + verdict(row["measured"], row["sum_alone_ms"], row["predicted"]))
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=",".join(SUITES), help="comma-separated suites (default: both)")
    a = ap.parse_args(argv)
    from dlasim import validate
    suites = {s.strip() for s in a.suite.split(",")}
    rows = [c for c in validate.load_cases() if c.get("suite") in SUITES]
    hints = _hints(rows)
    runner = validate._Runner()
    for c in rows:
        if c["suite"] in suites and c.get("metric") == "concurrent:aggregate":
            print("\n".join(breakdown(c, runner, hints)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
