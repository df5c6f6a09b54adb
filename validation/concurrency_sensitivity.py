#!/usr/bin/env python3
"""How the concurrent cases depend on memory.concurrent_efficiency (the DRAM share all engines draw together).

    python validation/concurrency_sensitivity.py

Every GPU + 2 DLA aggregate row is a public2 row and so held out (validation/README.md, held-out protocol):
nothing is fitted and nothing is written. The specs carry concurrent_efficiency = 1.0 (the DRAM peak, the
physical upper bound) as an assumption. This script reruns the concurrent rows of validation/cases.csv
(suites `concurrent`, `concurrent-anchored`) with the value set to each of GRID and prints the errors, so a
reader sees how much that assumption matters.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SUITES = ("concurrent", "concurrent-anchored")
GRID = (0.6, 0.8, 1.0)


def _rows():
    from dlasim import validate
    return [c for c in validate.load_cases() if c.get("suite") in SUITES]


def _errors(cases, eff: float) -> list[tuple[dict, float, float]]:
    """(case, error %, sum-alone error %) with every spec's concurrent_efficiency set to `eff`."""
    import dlasim
    from dlasim import validate
    runner = validate._Runner()
    for name in {c["platform"] for c in cases}:
        plat = dlasim.hardware(name)
        runner.platforms[name] = plat.model_copy(
            update={"memory": plat.memory.model_copy(update={"concurrent_efficiency": eff})})
    out = []
    for c in cases:
        row = validate.run_case(c, runner)
        if row["error"]:
            raise SystemExit(f"{c['name']}: {row['error']}")
        out.append((c, row["error_pct"], row["sum_alone_error_pct"]))
    return out


def _score(errs) -> float:
    return sum(abs(math.log(1 + e / 100)) for _, e, _ in errs) / len(errs)


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    cases = _rows()
    print(f"{'case':<48}" + "".join(f"{'eff ' + str(e):>10}" for e in GRID) + f"{'sum alone':>11}")
    table = {e: _errors(cases, e) for e in GRID}
    for i, c in enumerate(cases):
        base = table[GRID[-1]][i][2]
        print(f"{c['name']:<48}" + "".join(f"{table[e][i][1]:>+9.1f}%" for e in GRID) + f"{base:>+10.1f}%")
    for e in GRID:
        print(f"eff {e}: mean |log(predicted/measured)| {_score(table[e]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
