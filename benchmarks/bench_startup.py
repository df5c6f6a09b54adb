"""How long does dlasim take to start (what every CLI call and a notebook's first import pay)?

    python benchmarks/bench_startup.py [--repeat N] [--root DIR [--root DIR2 ...]]

Each measurement runs a fresh interpreter (sys.executable) in DIR (default: this repository), so `import
dlasim` finds DIR's package first; with several --root the checkouts are measured in turn, run by run, so
that load from other processes falls on all of them alike. Prints, per checkout, the median over N runs of:
  - `python -X importtime -c "import dlasim"`: the cumulative import time the interpreter reports for the
    package, and the same for `import dlasim.explainer.compare` (the package plus what `explain` and `compare` add),
    beside the CPU time of that import alone (time.process_time around it; other processes disturb it less);
  - the wall time and the CPU time (user + system, which other processes disturb less) of `python -c "import
    dlasim"` and of `python -m dlasim explain zoo:resnet50` (output discarded), interpreter start included.
Compare two checkouts in one run (--root OLD --root NEW); a shared machine varies by 10-20% from run to run.
"""
from __future__ import annotations

import argparse
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def import_us(root: Path, module: str) -> float:
    """Cumulative microseconds `-X importtime` reports for `module` (its top-level entry, which includes
    the parent packages and everything they import)."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], cwd=root,
                       capture_output=True, text=True, check=True)
    m = re.search(rf"^import time:\s+\d+ \|\s+(\d+) \| {re.escape(module)}$", r.stderr, flags=re.M)
    if not m:
        raise SystemExit(f"bench_startup: no importtime line for {module!r} (is {root} a dlasim checkout?)")
    return float(m.group(1))


def import_cpu_s(root: Path, module: str) -> float:
    """CPU seconds of `import module` in a fresh interpreter (the interpreter's own start-up excluded)."""
    code = f"import time; t = time.process_time(); import {module}; print(time.process_time() - t)"
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    return float(r.stdout)


def run_s(root: Path, *args: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one run of `python ARGS`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


MEASURES = [  # (label, what it reports, function of the checkout)
    ("import dlasim", "-X importtime cumulative / CPU",
     lambda root: (import_us(root, "dlasim") / 1e6, import_cpu_s(root, "dlasim"))),
    ("import dlasim.explainer.compare", "-X importtime cumulative / CPU",
     lambda root: (import_us(root, "dlasim.explainer.compare") / 1e6, import_cpu_s(root, "dlasim.explainer.compare"))),
    ("python -c 'import dlasim'", "wall / CPU", lambda root: run_s(root, "-c", "import dlasim")),
    ("dlasim explain zoo:resnet50", "wall / CPU", lambda root: run_s(root, "-m", "dlasim", "explain", "zoo:resnet50")),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="runs per measurement (default 7)")
    ap.add_argument("--root", type=Path, action="append",
                    help="a dlasim checkout to measure; repeat to compare (default: this repository)")
    args = ap.parse_args(argv)
    roots = [r.resolve() for r in (args.root or [Path(__file__).resolve().parents[1]])]
    print(f"dlasim start-up, Python {sys.version.split()[0]}, median of {args.repeat} runs")
    for label, what, fn in MEASURES:
        samples = {r: [] for r in roots}
        for _ in range(args.repeat):
            for r in roots:              # in turn, run by run
                samples[r].append(fn(r))
        for r in roots:
            med = [statistics.median(x) * 1000 for x in zip(*samples[r])]
            print(f"  {label:<33} {' / '.join(f'{m:7.1f}' for m in med):>17} ms  ({what})  {r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
