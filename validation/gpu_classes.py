"""GPU kernel classes fitted on the H200 kernel grid, with a leave-out report per class (used by fit_specs.py).

The grid is validation/h200/gpu_grid_results.json (validation/h200/gpu_grid.py, cuDNN/cuBLAS through PyTorch on
the lent H200, CUDA-graph replay, fp16 channels-last). Each row becomes an Observation of one layer step: the
kernel time against dlasim's step time for the same layer (dlasim/cost/gpu.py kernel_class decides the class).

Held-out rule, fixed before any fit (HELD_OUT_EVERY): within each class the grid's shapes keep the order of
gpu_grid.py's tables, and every third shape (index 2, 5, 8, ...) is held out with all its batches. A class is
fitted on the other shapes only; its held-out error is reported apart from its fit error.

Classes and their parameters (hardware_specs/h200.toml [gpu]):
  eltwise    ReLU / residual Add (grid eltwise + validation/h200/h200_kernels.json memory):
             memory_efficiency, memory_kernel_floor_s, l2_bandwidth_bytes_per_s
  reduce     global average pool (grid pool): reduce_efficiency, reduce_floor_s
  depthwise  3x3 depthwise convs (grid depthwise): depthwise_efficiency, depthwise_floor_s
  conv1x1    1x1 convs (grid conv1x1): conv1x1_efficiency, conv1x1_floor_s
  gemv       FC at batch 1-32 (fewer rows than a CTA tile; grid fc): gemv_efficiency, gemv_floor_s
  conv       3x3 convs (grid conv3x3, with the cuDNN conv micro-benchmarks F_conv that fit_specs.py passes in):
             kernel_floor_s, conv_tensor_efficiency (the tensor-core share of its tiles; cuDNN convs gain less
             per MAC than cuBLAS GEMMs). The GEMMs' share (tensor_efficiency) and the fixed ramp of a tensor-core
             kernel (tensor_latency_s) are fitted by fit_specs.py on the cuBLAS GEMMs (the gemm class,
             gemm_floor_s).
The int8 rows (torch._int_mm) are not TensorRT INT8 tactics (validation/h200/README.md) and are not used.
"""
from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import dlasim
from dlasim import calibrate as C

ROOT = Path(__file__).resolve().parent.parent
GRID = ROOT / "validation" / "h200" / "gpu_grid_results.json"
KERNELS = ROOT / "validation" / "h200" / "h200_kernels.json"
HELD_OUT_EVERY = 3          # shape index % 3 == 2 is held out (decided before fitting)

CLASS_PARAMS = {
    "eltwise": ["gpu.memory_efficiency", "gpu.memory_kernel_floor_s", "gpu.l2_bandwidth_bytes_per_s"],
    "reduce": ["gpu.reduce_efficiency", "gpu.reduce_floor_s"],
    "depthwise": ["gpu.depthwise_efficiency", "gpu.depthwise_floor_s"],
    "conv1x1": ["gpu.conv1x1_efficiency", "gpu.conv1x1_floor_s"],
    "gemv": ["gpu.gemv_efficiency", "gpu.gemv_floor_s"],
    "conv": ["gpu.kernel_floor_s", "gpu.conv_tensor_efficiency"],
}
GRID_KIND = {"eltwise": "eltwise", "reduce": "pool", "depthwise": "depthwise", "conv1x1": "conv1x1", "gemv": "fc",
             "conv": "conv3x3"}


def rel(p: Path) -> str:
    return str(Path(p).resolve().relative_to(ROOT))


def _shape_key(r: dict) -> tuple:
    return (r.get("op"), r["cin"], r.get("cout"), r.get("h"), r.get("stride"))


def _layer_step(plan) -> int:
    return next(i for i, s in enumerate(plan.steps) if s.kind == "layer")


def _plan(plat, r: dict, kind: str):
    """The one-layer network of a grid row, fp16, channels-last in and out (no reformats)."""
    b = dlasim.GraphBuilder(f"{kind}_{r['n']}x{r['cin']}")
    if kind == "fc":
        x = b.input("x", (r["n"], r["cin"]))
        y = b.fc(x, r["cout"], bias=False, name="fc")
        return dlasim.build(b.build([y]), plat, device="gpu", precision="fp16")
    x = b.input("x", (r["n"], r["cin"], r["h"], r["w"]))
    if kind in ("conv1x1", "conv3x3"):
        y = b.conv(x, r["cout"], kernel=r["k"], stride=r["stride"], bias=False, name="conv")
    elif kind == "depthwise":
        y = b.conv(x, r["cin"], kernel=3, stride=r["stride"], groups=r["cin"], bias=False, name="dw")
    elif r["op"] == "relu":
        y = b.relu(x)
    elif r["op"] == "add":
        y = b.add(x, b.input("y", (r["n"], r["cin"], r["h"], r["w"])))
    else:
        y = b.global_avgpool(x)
    return dlasim.build(b.build([y]), plat, device="gpu", precision="fp16", input_formats="fp16:hwc8",
                        output_formats="fp16:hwc8")


def _label(r: dict, kind: str) -> str:
    if kind == "fc":
        return f"fc {r['cin']}->{r['cout']} n={r['n']}"
    if kind in ("eltwise", "pool"):
        return f"{r['op']} {r['n']}x{r['cin']}x{r['h']}x{r['w']}"
    return f"{kind} {r['cin']}->{r['cout']} {r['h']}x{r['w']} s{r['stride']} n={r['n']}"


def grid_observations(plat, cls: str) -> tuple[list, list]:
    """(fit, held-out) Observations of one class from the grid (the HELD_OUT_EVERY rule)."""
    kind = GRID_KIND[cls]
    rows = [r for r in json.loads(GRID.read_text())["rows"] if r["kind"] == kind and "ms" in r]
    shapes = list(dict.fromkeys(_shape_key(r) for r in rows))
    fit, held = [], []
    for r in rows:
        plan = _plan(plat, r, kind)
        o = C.Observation(_label(r, kind), r["ms"], plan=plan, steps=(_layer_step(plan),),
                          dataset=f"{rel(GRID)} {kind}")
        (held if shapes.index(_shape_key(r)) % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 else fit).append(o)
    return fit, held


def kernels_memory_observations(plat) -> list:
    """ReLU / Add rows of validation/h200/h200_kernels.json (an earlier run, all sizes): more eltwise fit rows."""
    obs = []
    for r in json.loads(KERNELS.read_text())["memory"]:
        if r["op"] not in ("relu", "add"):
            continue
        n, c, h, w = r["shape"]
        row = {"op": r["op"], "n": n, "cin": c, "h": h, "w": w}
        plan = _plan(plat, row, "eltwise")
        obs.append(C.Observation(_label(row, "eltwise") + " (kernels.json)", r["ms"], plan=plan,
                                 steps=(_layer_step(plan),), dataset=f"{rel(KERNELS)} memory"))
    return obs


def errors(obs, plat) -> list[float]:
    pred = C.predict_all(obs, plat)
    return [100 * (p / o.measured - 1) for o, p in zip(obs, pred)]


def summary(errs: list[float]) -> str:
    if not errs:
        return "n=0"
    a = [abs(e) for e in errs]
    return (f"n={len(a):>3} median |err| {statistics.median(a):5.1f}%  within 20% {sum(x <= 20 for x in a):>3}/"
            f"{len(a):<3} rms log {math.sqrt(sum(math.log(1 + e / 100) ** 2 for e in errs) / len(errs)):.3f}")


def fit_classes(plat, conv_obs=()) -> tuple[object, dict, list[dict]]:
    """Fit every class in CLASS_PARAMS order on its fit shapes; returns (platform, {class: fit result},
    leave-out report rows: class, fit and held-out errors before and after). A class without parameters
    (conv) is predicted on all its rows, which are then all held out."""
    results, report = {}, []
    p = plat
    for cls, params in CLASS_PARAMS.items():
        fit_obs, held = grid_observations(p, cls)
        if cls == "eltwise":
            fit_obs = fit_obs + kernels_memory_observations(p)
        if cls == "conv":
            fit_obs = fit_obs + list(conv_obs)
        if not params:
            fit_obs, held = [], fit_obs + held
        before_fit, before_held = errors(fit_obs, p), errors(held, p)
        if params:
            res = C.fit(fit_obs, p, params)
            p = res["platform"]
            results[cls] = res
        report.append({"class": cls, "params": {k: d["after"] for k, d in res["parameters"].items()} if params else {},
                       "fit_before": before_fit, "fit_after": errors(fit_obs, p),
                       "held_before": before_held, "held_after": errors(held, p),
                       "held_rows": [(o.label, o.measured, pr) for o, pr in zip(held, C.predict_all(held, p))]})
    return p, results, report


def print_report(report: list[dict], say=print, verbose: bool = False) -> None:
    say("\n-- h200 kernel classes: fit on 2 of every 3 grid shapes, held out the third (before -> after)")
    for r in report:
        say(f"   {r['class']:<10} fit     before {summary(r['fit_before'])}")
        say(f"   {'':<10}         after  {summary(r['fit_after'])}")
        say(f"   {'':<10} held-out before {summary(r['held_before'])}")
        say(f"   {'':<10}         after  {summary(r['held_after'])}")
        say("   " + " " * 11 + ", ".join(f"{k.split('.')[1]}={v:.4g}" for k, v in r["params"].items()))
        if verbose:
            for lab, m, pr in r["held_rows"]:
                say(f"      held {lab:<44} {m * 1e3:8.2f} us  predicted {pr * 1e3:8.2f} us {100 * (pr / m - 1):+6.0f}%")
