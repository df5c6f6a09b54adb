#!/usr/bin/env python3
"""How the Xavier NX 15 W cases move when one clock of that mode is set lower than the spec says.

    python validation/power_mode_sensitivity.py

The jetson_benchmarks and jkjung-avt rows (public2 JB-, JKJ-; TensorRT 7, a 15 W mode, clocks locked by the
harness or jetson_clocks) are held out, like every Xavier NX case: nothing is fitted and nothing is written.
Several of them are predicted much faster than measured. This script asks whether one clock of the 15 W mode
could be the reason: it reruns every case on `xavier-nx:15w` (and on `xavier-nx`, whose default mode is 15w)
with the GPU, EMC (DRAM) or DLA clock set to each PROBES value and prints the errors, then per probe how many
`estimate` cases are within their tolerance and how many `upper_bound` cases (app-level FPS) still hold. A
clock that explained the misses would move them into tolerance without breaking the cases that hold today.
The probe values are questions, not mode figures: the spec's 15w clocks and their sources are in
hardware_specs/xavier-nx.toml.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PLATFORMS = ("xavier-nx:15w", "xavier-nx")
# (label, field of the power mode, value in Hz); None = the spec as it is
PROBES = (("spec", None, None), ("gpu 900", "gpu_clock_hz", 900e6), ("gpu 780", "gpu_clock_hz", 780e6),
          ("gpu 700", "gpu_clock_hz", 700e6),
          ("emc 1333", "emc_clock_hz", 1333e6), ("emc 1066", "emc_clock_hz", 1066e6),
          ("dla 700", "dla_clock_hz", 700e6))


def probe_platform(plat, field: str | None, hz: float | None):
    """`plat` (a power mode applied) with one of that mode's clocks replaced by `hz`. DRAM bandwidth scales
    with the EMC clock (dlasim.hardware.emc_bandwidth), taken from the mode's own EMC clock and bandwidth."""
    from dlasim.hardware import emc_bandwidth
    if field is None:
        return plat
    if field == "gpu_clock_hz":
        return plat.model_copy(update={"gpu": plat.gpu.model_copy(update={"clock_hz": hz})})
    if field == "dla_clock_hz":
        return plat.model_copy(update={"dla": plat.dla.model_copy(update={"clock_hz": hz})})
    mode_emc = plat.power_modes[plat.mode].emc_clock_hz
    bw = emc_bandwidth(plat.memory.dram_bandwidth_bytes_per_s, mode_emc, hz)
    return plat.model_copy(update={"memory": plat.memory.model_copy(update={"dram_bandwidth_bytes_per_s": bw})})


def _rows(field, hz) -> list[dict]:
    import dlasim
    from dlasim import validate
    cases = validate.load_cases()
    runner = validate._Runner()
    runner.cases = {c["name"]: c for c in cases}
    for name in PLATFORMS:
        runner.platforms[name] = probe_platform(dlasim.hardware(name), field, hz)
    out = []
    for c in cases:
        if c["platform"] not in PLATFORMS:
            continue
        row = validate.run_case(c, runner)
        if row["error"]:
            raise SystemExit(f"{c['name']}: {row['error']}")
        out.append(row)
    return out


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    table = {label: _rows(field, hz) for label, field, hz in PROBES}
    base = table["spec"]
    print(f"{'case':<48}{'kind':<12}" + "".join(f"{label:>10}" for label, _, _ in PROBES))
    for i, row in enumerate(base):
        print(f"{row['name']:<48}{row['kind']:<12}"
              + "".join(f"{table[label][i]['error_pct']:>+9.1f}%" for label, _, _ in PROBES))
    for label, _, _ in PROBES:
        est = [r for r in table[label] if r["kind"] == "estimate"]
        bound = [r for r in table[label] if r["kind"] == "upper_bound"]
        print(f"{label}: estimate cases within tolerance {sum(bool(r['within_tolerance']) for r in est)}/{len(est)}"
              f" (median |error| {statistics.median(abs(r['error_pct']) for r in est):.1f}%), upper bounds held "
              f"{sum(bool(r['within_tolerance']) for r in bound)}/{len(bound)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
