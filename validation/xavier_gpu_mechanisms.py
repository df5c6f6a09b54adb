#!/usr/bin/env python3
"""Candidate mechanisms for the Xavier iGPU cases that are predicted too fast, each checked on every Xavier case.

    python validation/xavier_gpu_mechanisms.py

Several held-out Xavier GPU cases come out much faster than measured: the jetson_benchmarks INT8 rows on
Xavier NX 15 W (VGG-19 bs1, Tiny-YOLOv3 bs8, Lightweight OpenPose bs2) and, among the torch2trt FP16 rows
of AGX Xavier, DenseNet-121 (SqueezeNet 1.1 and MNASNet 1.0 too on the engine time alone; the cases add
torch2trt's per-call harness term, validation/README.md). This script asks whether one
mechanism of the GPU model explains them without breaking the Xavier cases that hold today. Each PROBES entry
changes one GPU spec value on both Xavier specs (in memory; nothing is written, nothing is fitted) and reruns
every case on an xavier-agx or xavier-nx platform whose device list has the GPU; it prints the error of every
case that moves by more than 1% and, per probe, the cases within tolerance (estimate and concurrent kinds) and
the upper bounds held (app-level FPS). A probe value is a question ("what if INT8 ran at the FP16 rate?"), not
a figure for the spec.

The second table is about the torch2trt rows (timed from Python around the TensorRT module, no CUDA graph). It
shows the error against the quoted Latency (one call, then a synchronise), which the cases use, and against
1000 / Throughput (calls back to back) from the same quote. Then it asks the host-enqueue question: kernel i
cannot start before the host has enqueued kernels 0..i at ENQUEUE_US each (reference/gpu_tensorrt.md s5.1:
"host enqueue (~3-10 us per kernel) can dominate small-batch CNNs, especially on Jetson CPUs"), so the
engine time is the end of a timeline where each kernel starts at max(previous end, (i + 1) x enqueue). A
Concat's copies count as one kernel each. 10 us is the top of the reference's range. 18 us is the figure
DenseNet-121 itself implies (13.0 ms / 721 kernels); it is a question, not a value for a spec.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SPECS = ("xavier-agx", "xavier-nx")
ENQUEUE_US = (10.0, 18.0)


def _int8_at_fp16(gpu):
    return {"fma_per_clk_per_sm_int8": gpu.fma_per_clk_per_sm_fp16}


def _half(field):
    return lambda gpu: {field: getattr(gpu, field) * 0.5}


def _no_leaky(gpu):
    return {"fusable_post_ops": tuple(op for op in gpu.fusable_post_ops if op != "LeakyRelu")}


# (label, what it asks, GPU fields to change as a function of the spec's Gpu block; None = the spec as it is)
PROBES = (
    ("spec", "the specs as they are", None),
    ("int8=fp16", "INT8 tensor rate equal to FP16 (no INT8 speed-up on the Volta iGPU)", _int8_at_fp16),
    ("dw x0.5", "depthwise convolutions at half the assumed bandwidth share", _half("depthwise_efficiency")),
    ("gemv x0.5", "FC/GEMV weight streams at half the fitted DRAM share", _half("gemv_efficiency")),
    ("leaky", "LeakyReLU not fused into the conv (its own pointwise kernel)", _no_leaky),
    ("launch 10", "a 10 us GPU-side launch gap per kernel instead of 2 us (no CUDA graph)",
     lambda gpu: {"launch_overhead_s": 10e-6}),
)


def _platform(name: str, change):
    import dlasim
    plat = dlasim.hardware(name)
    if change is None or plat.gpu is None:
        return plat
    return plat.model_copy(update={"gpu": plat.gpu.model_copy(update=change(plat.gpu))})


def _rows(change) -> list[dict]:
    import dlasim
    from dlasim import validate
    dlasim.clear_caches()
    cases = [c for c in validate.load_cases()
             if c["platform"].split(":")[0] in SPECS and "gpu" in c["device"]]
    runner = validate._Runner()
    runner.cases = {c["name"]: c for c in validate.load_cases()}
    for c in runner.cases.values():
        if c["platform"].split(":")[0] in SPECS:
            runner.platforms[c["platform"]] = _platform(c["platform"], change)
    out = []
    for c in cases:
        row = validate.run_case(c, runner)
        if row["error"]:
            raise SystemExit(f"{c['name']}: {row['error']}")
        out.append(row)
    dlasim.clear_caches()
    return out


def _summary(rows: list[dict]) -> str:
    est = [r for r in rows if r["kind"] != "upper_bound" and r["tolerance_pct"] is not None]
    bound = [r for r in rows if r["kind"] == "upper_bound"]
    return (f"within tolerance {sum(bool(r['within_tolerance']) for r in est)}/{len(est)}, "
            f"upper bounds held {sum(bool(r['within_tolerance']) for r in bound)}/{len(bound)}")


def enqueue_timeline(kernel_ms: list[float], enqueue_ms: float) -> float:
    """End of the GPU timeline when kernel i starts at max(end of kernel i-1, (i + 1) x enqueue_ms).
    E.g. kernels [0.005, 0.030, 0.005] ms at 0.010 ms each: 0.010 + 0.005 = 0.015, max(0.015, 0.020) + 0.030
    = 0.050, max(0.050, 0.030) + 0.005 = 0.055 ms."""
    t = 0.0
    for i, k in enumerate(kernel_ms):
        t = max(t, (i + 1) * enqueue_ms) + k
    return t


def gpu_kernels(est) -> list[float]:
    """The engine's GPU kernels in order (ms): one per step with time, except that a Concat step that copies
    n inputs into its buffer is n copy kernels (cost/gpu.py concat_copies), each 1/n of the step's time."""
    out = []
    for s in est.steps:
        if s.time_ms <= 0:
            continue
        n = s.parts.copy_kernels or 1
        out.extend([s.time_ms / n] * n)
    return out


def _t2t_quote_ms(case_id: str) -> tuple[float, float]:
    """(Latency ms, 1000 / Throughput) of a torch2trt row, read from its quote in measurements.csv."""
    import csv
    import re
    with open(ROOT / "validation" / "data" / "public2" / "measurements.csv", newline="", encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["case_id"] == case_id)
    m = re.search(r"Throughput \(TensorRT\) ([0-9.e+]+) \| Latency \(TensorRT\) ([0-9.]+)", row["quote"])
    return float(m.group(2)), 1000.0 / float(m.group(1))


def _t2t_table() -> None:
    import dlasim
    from dlasim import validate
    print("\ntorch2trt rows: the error against the timed latency and against 1000 / throughput (back-to-back "
          "calls, no sync in between),\nthen against the latency with a host enqueue per kernel (us): "
          + ", ".join(f"{e:g}" for e in ENQUEUE_US))
    print(f"{'case':<40}{'kernels':>8}{'lat ms':>8}{'1/tput':>8}{'vs lat':>9}{'vs tput':>9}"
          + "".join(f"{f'enq {e:g}':>9}" for e in ENQUEUE_US))
    for c in validate.load_cases():
        if c["suite"] != "torch2trt":
            continue
        est = dlasim.estimate(c["model"], c["platform"], device=c["device"], precision=c["precision"],
                              batch=int(c["batch"]))
        kernels = gpu_kernels(est)
        lat, tput = _t2t_quote_ms(c["source"].split(" row ")[1].split()[0])
        errs = [100 * (enqueue_timeline(kernels, e / 1000) / lat - 1) for e in ENQUEUE_US]
        print(f"{c['name']:<40}{len(kernels):>8}{lat:>8.3f}{tput:>8.3f}{100 * (est.total_ms / lat - 1):>+8.1f}%"
              f"{100 * (est.total_ms / tput - 1):>+8.1f}%" + "".join(f"{x:>+8.1f}%" for x in errs))


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    table = {label: _rows(change) for label, _, change in PROBES}
    base = table["spec"]
    print(f"{'case':<48}" + "".join(f"{label:>11}" for label, _, _ in PROBES))
    for i, row in enumerate(base):
        errs = [table[label][i]["error_pct"] for label, _, _ in PROBES]
        if any(abs((table[label][i]["predicted"] or 0) / (row["predicted"] or 1) - 1) > 0.01
               for label, _, _ in PROBES):
            print(f"{row['name']:<48}" + "".join(f"{e:>+10.1f}%" for e in errs))
    for label, what, _ in PROBES:
        print(f"{label:<10} {what}: {_summary(table[label])}")
    _t2t_table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
