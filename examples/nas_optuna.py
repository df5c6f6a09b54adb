"""Hardware-aware NAS in a minute: Optuna (NSGA-II) over the MobileNetV3 / Once-for-All space, minimising the
latency dlasim's LatencyTable predicts on the Orin DLA (INT8, batch 1) and maximising MACs as a crude
accuracy proxy. Prints the Pareto front and, for the best candidate under a latency budget, its DLA
placement from a full dlasim.estimate (loadables, GPU fallback, transitions) next to the table's number.

    pip install dlasim[nas]          # optuna (and ray, tqdm)
    python examples/nas_optuna.py [--trials 1500] [--budget-ms 2.0] [--hw orin-agx]

MACs stand in for accuracy only to keep the example self-contained; plug in your supernet's accuracy
predictor as the second objective.
"""
from __future__ import annotations

import argparse
import sys
import time

import dlasim
from dlasim.nas import LatencyTable, mobilenet_v3_space


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1500)
    ap.add_argument("--budget-ms", type=float, default=2.0, help="latency budget for the 'best' candidate")
    ap.add_argument("--hw", default="orin-agx")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    try:
        import optuna
    except ImportError:
        print("this example needs optuna: pip install dlasim[nas]", file=sys.stderr)
        return 2
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    space = mobilenet_v3_space()
    t0 = time.perf_counter()
    table = LatencyTable.build(space, a.hw, device="dla", precision="int8", batch=1)
    t_build = time.perf_counter() - t0
    print(f"LatencyTable for {space.name} on {table.hardware} DLA INT8: {table.builds} full estimates, "
          f"{t_build:.1f} s")

    card = space.cardinalities()
    macs_cache: dict[tuple, int] = {}

    def objective(trial):
        row = [trial.suggest_int(c, 0, int(n) - 1) for c, n in zip(space.columns, card)]
        key = tuple(row)
        if key not in macs_cache:
            macs_cache[key] = space.macs(row)
        lat = float(table.predict(row)[0])
        return lat, macs_cache[key] / 1e6

    study = optuna.create_study(directions=["minimize", "maximize"],
                                sampler=optuna.samplers.NSGAIISampler(seed=a.seed, population_size=60))
    t0 = time.perf_counter()
    study.optimize(objective, n_trials=a.trials)
    t_search = time.perf_counter() - t0
    print(f"{a.trials} Optuna trials in {t_search:.1f} s")

    front = sorted(study.best_trials, key=lambda t: t.values[0])
    print(f"\nPareto front ({len(front)} candidates): latency (ms, LatencyTable) vs MMACs")
    print(f"{'latency ms':>10} {'MMACs':>8}  depths / widths")
    for t in front:
        d = space.decode([t.params[c] for c in space.columns])
        desc = " ".join(f"{s['depth']}x{s['width']}" for s in d["stages"])
        print(f"{t.values[0]:>10.4f} {t.values[1]:>8.1f}  {desc}")

    within = [t for t in front if t.values[0] <= a.budget_ms] or front[:1]
    best = max(within, key=lambda t: t.values[1])
    row = [best.params[c] for c in space.columns]
    e = dlasim.estimate(space.build(row, name="best"), a.hw, device="dla", precision="int8", batch=1)
    print(f"\nbest under {a.budget_ms} ms: {best.values[1]:.1f} MMACs, table {best.values[0]:.4f} ms, "
          f"full estimate {e.total_ms:.4f} ms")
    acts = [b["act"] for s in space.decode(row)["stages"] for b in s["blocks"]]
    print(f"activations: {acts.count('relu')} ReLU, {acts.count('hswish')} HardSwish blocks; "
          f"{e.dla_subgraphs} DLA loadables, {e.transitions} GPU<->DLA transitions, "
          f"{len(e.fallback)} layers on the GPU")
    dla_ms = sum(s.time_ms for s in e.steps if s.device == "dla")
    print(f"time on DLA {dla_ms:.4f} ms, on GPU (incl. copies) {e.total_ms - dla_ms:.4f} ms")
    for f in e.fallback[:8]:
        print(f"  GPU: {f['name']:<22} {f['op']:<10} {f['reason']}")
    if len(e.fallback) > 8:
        print(f"  ... and {len(e.fallback) - 8} more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
