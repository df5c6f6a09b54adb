#!/usr/bin/env python3
"""Candidate mechanisms for the Xavier iGPU cases that are predicted too fast, each checked on every Xavier case.

    python validation/xavier_gpu_mechanisms.py

Several held-out Xavier GPU cases come out much faster than measured: the jetson_benchmarks INT8 rows on
Xavier NX 15 W (VGG-19 bs1, Tiny-YOLOv3 bs8, Lightweight OpenPose bs2) and the torch2trt FP16 rows of AGX
Xavier with many small layers (DenseNet-121, SqueezeNet 1.1, MNASNet 1.0). This script asks whether one
mechanism of the GPU model explains them without breaking the Xavier cases that hold today. Each PROBES entry
changes one GPU spec value on both Xavier specs (in memory; nothing is written, nothing is fitted) and reruns
every case on an xavier-agx or xavier-nx platform whose device list has the GPU; it prints the error of every
case that moves by more than 1% and, per probe, the cases within tolerance (estimate and concurrent kinds) and
the upper bounds held (app-level FPS). A probe value is a question ("what if INT8 ran at the FP16 rate?"), not
a figure for the spec.

The second table is the host-enqueue question for the torch2trt rows (timed from Python around the TensorRT
module, no CUDA graph): kernel i cannot start before the host has enqueued kernels 0..i at ENQUEUE_US each
(reference/gpu_tensorrt.md s5.1: "host enqueue (~3-10 us per kernel) can dominate small-batch CNNs, especially
on Jetson CPUs"), so the engine time is the timeline end of max(previous end, (i + 1) x enqueue) + kernel time.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SPECS = ("xavier-agx", "xavier-nx")
ENQUEUE_US = (0.0, 10.0, 20.0)


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


def _t2t_table() -> None:
    import dlasim
    from dlasim import validate
    print(f"\ntorch2trt rows with a host enqueue per kernel (us): {', '.join(f'{e:g}' for e in ENQUEUE_US)}")
    for c in validate.load_cases():
        if c["suite"] != "torch2trt":
            continue
        est = dlasim.estimate(c["model"], c["platform"], device=c["device"], precision=c["precision"],
                              batch=int(c["batch"]))
        kernels = [s.time_ms for s in est.steps if s.time_ms > 0]
        measured = validate.run_case(c, validate._Runner())["measured"]
        errs = [100 * (enqueue_timeline(kernels, e / 1000) / measured - 1) for e in ENQUEUE_US]
        print(f"{c['name']:<40}{len(kernels):>5} kernels " + "".join(f"{x:>+8.1f}%" for x in errs))


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
