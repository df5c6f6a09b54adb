#!/usr/bin/env python3
"""Regenerate every fitted value in hardware_specs/ from the measured data in validation/data/.

    python validation/fit_specs.py            # fit, print before/after and leave-one-out, write the specs
    python validation/fit_specs.py --check    # fit and print only; nothing is written
    python validation/fit_specs.py -v         # also print every observation
    python validation/fit_specs.py --leave-one-network-out   # refit without each network family and
                                              # predict its cases (validation/lono.py); nothing is written

Fits (dlasim.calibrate: bounded soft_l1 least squares on log(predicted/measured); parameters the data
cannot determine are reported and kept at their prior values):

- xavier-agx GPU: per-row GoogLeNet FP16 profile (HaX-CoNN googlenet_gpu_mark_at_-1.profile, TRT 7.1.3,
  batch 1) -> gpu.tensor_efficiency, gpu.tensor_latency_s (the fixed ramp/tail of a tensor-core kernel),
  gpu.kernel_floor_s (conv kernels), gpu.memory_kernel_floor_s (pools, LRN, prob),
  gpu.stream_bytes_per_clk_per_sm (the per-SM streaming rate that limits memory-bound kernels and copies on
  Xavier; memory_efficiency there is the DRAM-side share, an assumption taken from the H200 fit, which the
  SM rate stays under; cross-check printed: the H200's DRAM-limited streaming rate per SM), gpu.gemv_efficiency (the one FC row, loss3/classifier at batch 1), copies.reformat_efficiency,
  copies.reformat_floor_s, gpu.operand_bytes_per_clk_per_sm (the operand loads per SM clock that limit a CTA tile:
  the profile's small convs run on narrow tiles below the rate of its large ones, cost/gpu.py tile_rate_share;
  the H200 GEMMs and convs do not constrain it, one-sided upward, so h200.toml leaves it unset). The torch2trt Xavier rows (validation/t2t_xavier.py) are held out.
- xavier-agx DLA + copies: seed 000 (4 trtexec medians, batch 32, 1x1/3x3, INT8/FP16, and the per-step
  breakdown of the 1x1 engine) + the all-DLA GoogLeNet FP16 profile (googlenet_dla_mark_at_-1.profile,
  rows and the 3.656 ms trtexec mean) -> dla.mac_efficiency, dla.mac_efficiency_fp16,
  dla.layer_overhead_s, dla.subgraph_overhead_s, copies.dla_copy_efficiency,
  copies.transition_overhead_s, copies.reformat_floor_s. dla.dram_bytes_per_cycle (the bytes per DLA
  clock its DMA sustains) is fitted first on seed 000 alone: its 3x3 FP16 engine re-reads 79 MB of weights that the
  MAC array waits for, the only measured engine that bandwidth decides; the joint fit's GoogLeNet rows
  (47% rms) would leave it unconstrained. The two Xavier fits share the copies block and the GPU prob
  layer, so they alternate twice.
- h200 GPU: H200 micro-benchmarks (cuBLAS GEMMs, cuDNN convs: kernel time vs the predicted layer step)
  -> gpu.tensor_efficiency, gpu.kernel_floor_s; 2:4 sparse/dense time ratios -> gpu.sparse_efficiency,
  gpu.sparse_k_half; NCHW->NHWC copies -> copies.reformat_efficiency, copies.reformat_floor_s; the kernel
  classes on the H200 grid (validation/gpu_classes.py: eltwise -> gpu.memory_efficiency,
  gpu.memory_kernel_floor_s, gpu.l2_bandwidth_bytes_per_s; pool, depthwise, conv1x1, gemv -> their own
  efficiency and floor; conv3x3 -> gpu.kernel_floor_s and gpu.conv_tensor_efficiency), every third grid shape
  held out and reported per class. The Jetson iGPUs take
  their depthwise_efficiency from it as an assumption (memory_efficiency x the H200 depthwise/eltwise ratio).
- a100 GPU: trex A100 ResNet-18 FP16 engine, per row, corrected to the 0.862 ms GPU compute median
  (dlasim zoo:resnet18 at batch 32) -> gpu.tensor_efficiency, gpu.kernel_floor_s, gpu.memory_kernel_floor_s,
  gpu.memory_efficiency; then FP32 and INT8 engines predicted without refitting.
- orin-agx DLA: the one Orin GoogLeNet log (ForeignNode 1.032 ms, ..., read as INT8: ORIN_PRECISION) ->
  dla.layer_overhead_s (also orin-nx-16gb, same DLA 2.0 cores); the DLA-SW
  SSD-MobileNetV1 throughput -> dla.depthwise_macs_per_cycle (Orin's depthwise processor; also orin-nx-16gb).
- orin-agx, orin-nx-16gb GPU: no per-layer GPU data; the Xavier-fitted gpu.memory_kernel_floor_s and the
  A100-fitted gpu.tensor_efficiency (GA10B has the A100-class SM), said so.
- a40: no data; the H200-fitted sparse parameters and the A100-fitted efficiencies and floors, said so.
- titan-rtx: no data fitted (its two trex MobileNetV2 QAT engines are held-out cases); the A100-fitted
  efficiencies and floors and the H200-fitted reformat floor, said so.
- a100, a40, titan-rtx: the H200 grid's conv1x1 and depthwise floors (classes their data leave open), said so.
- leave-one-out: Xavier GPU fitted on mark_at_-1 predicts the other googlenet_gpu_mark_at_* totals;
  Xavier DLA fitted on seed 000 only predicts the GoogLeNet DLA total.
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
sys.path.insert(0, str(ROOT / "validation"))

import dlasim  # noqa: E402
from dlasim import calibrate as C  # noqa: E402
from dlasim.cost import cost_step  # noqa: E402
from dlasim.cost.copies import copy_cost  # noqa: E402
from dlasim.cost.gpu import class_floor  # noqa: E402
from dlasim.ir import Graph  # noqa: E402
from dlasim.explainer.measured import profile_from_rows  # noqa: E402
from dlasim.plan import Copy, Step  # noqa: E402

DATA = ROOT / "validation" / "data"
SPECS = ROOT / "hardware_specs"
HAX = DATA / "haxconn"
GOOGLENET = HAX / "prototxt" / "googlenet.prototxt"
SEEDS = DATA / "seeds"
TREX = DATA / "trex" / "a100-resnet50"
H200_JSON = DATA / "h200" / "h200_microbench_results.json"
TOOL = "validation/fit_specs.py"

XAVIER_GPU_PARAMS = ["gpu.tensor_efficiency", "gpu.kernel_floor_s", "gpu.memory_kernel_floor_s",
                     "gpu.stream_bytes_per_clk_per_sm", "copies.reformat_efficiency", "copies.reformat_floor_s",
                     "gpu.tensor_latency_s", "gpu.gemv_efficiency", "gpu.operand_bytes_per_clk_per_sm"]
A100_PARAMS = ["gpu.tensor_efficiency", "gpu.kernel_floor_s", "gpu.memory_kernel_floor_s", "gpu.memory_efficiency"]
XAVIER_DLA_PARAMS = ["dla.mac_efficiency", "dla.mac_efficiency_fp16", "dla.layer_overhead_s",
                     "dla.subgraph_overhead_s", "copies.dla_copy_efficiency", "copies.transition_overhead_s"]
XAVIER_DLA_BANDWIDTH = "dla.dram_bytes_per_cycle"


def rel(p: Path) -> str:
    return str(Path(p).resolve().relative_to(ROOT))


def say(*a):
    print(*a, flush=True)


# --------------------------------------------------------------------------------------------------
# Xavier

def haxconn_means() -> dict:
    return {k: v["mean_time"] for k, v in json.loads((HAX / "transition_results.json").read_text()).items()}


def googlenet_marked(mark: int):
    """GoogLeNet with prototxt layer `mark` (TensorRT layer index, data input not counted) marked as an
    extra output, as HaX-CoNN's *_mark_at_N engines (validation/data/README.md)."""
    g = dlasim.load(str(GOOGLENET))
    if mark < 0:
        return g
    t = g.layers[mark].outputs[0]
    return Graph(g.name, g.layers, g.tensors, g.inputs, list(g.outputs) + [t], g.source)


def xavier_gpu_observations(plat, profile="googlenet_gpu_mark_at_-1"):
    plan = dlasim.build(str(GOOGLENET), plat, device="gpu", precision="fp16", batch=1)
    path = HAX / "profiles" / f"{profile}.profile"
    obs, _ = C.row_observations(plan, path, split_dla=True, dataset=rel(path))
    return obs


def seed_medians() -> dict:
    with open(SEEDS / "xavier_dla_conv_trtexec.csv") as f:
        rows = list(csv.DictReader(ln for ln in f if not ln.startswith("#")))
    return {k: statistics.median(float(r[k]) for r in rows) for k in rows[0] if k != "run"}


def seed_breakdown() -> dict:
    with open(SEEDS / "xavier_dla_conv_breakdown.csv") as f:
        rows = list(csv.DictReader(ln for ln in f if not ln.startswith("#")))
    out = {}
    for prec in ("int8", "fp16"):
        out[prec] = [(r["step"], float(r[f"{prec}_ms"])) for r in rows if r["step"] != "total"]
    return out


def seed_observations(plat):
    obs = []
    med = seed_medians()
    csv_name = rel(SEEDS / "xavier_dla_conv_trtexec.csv")
    plans = {}
    for k in ("1x1", "3x3"):
        for prec in ("int8", "fp16"):
            plan = dlasim.build(str(SEEDS / f"kernel_{k}.prototxt"), plat, device="dla", precision=prec, batch=32)
            plans[(k, prec)] = plan
            col = f"k{k[0]}_{prec}_ms"
            obs.append(C.total_observation(plan, med[col], f"seed000 {k} {prec} bs32 total (median of 10)",
                                           csv_name))
    bd_name = rel(SEEDS / "xavier_dla_conv_breakdown.csv")
    for prec, rows in seed_breakdown().items():
        prof = profile_from_rows(rows, bd_name)
        o, _ = C.row_observations(plans[("1x1", prec)], prof, split_dla=True, dataset=bd_name)
        for x in o:
            x.label = f"seed000 1x1 {prec}: {x.label}"
        obs += o
    return obs


def googlenet_dla_observations(plat):
    plan = dlasim.build(str(GOOGLENET), plat, device="dla", precision="fp16", batch=1)
    path = HAX / "profiles" / "googlenet_dla_mark_at_-1.profile"
    obs, _ = C.row_observations(plan, path, split_dla=True, dataset=rel(path))
    for x in obs:
        x.label = "googlenet DLA: " + (x.label if len(x.label) < 50 else x.label[:24] + "..." + x.label[-22:])
    obs.append(C.total_observation(plan, haxconn_means()["googlenet_dla_mark_at_-1"],
                                   "googlenet DLA total (trtexec mean)", rel(HAX / "transition_results.json")))
    return obs


def loo_xavier_gpu(plat) -> list[dict]:
    """Totals of the other googlenet_gpu_mark_at_* engines, predicted with the parameters fitted on -1."""
    out = []
    means = haxconn_means()
    for path in sorted((HAX / "profiles").glob("googlenet_gpu_mark_at_*.profile"),
                       key=lambda p: int(re.search(r"at_(-?\d+)", p.name).group(1))):
        mark = int(re.search(r"at_(-?\d+)", path.name).group(1))
        key = path.stem
        g = googlenet_marked(mark)
        e = dlasim.estimate(g, plat, device="gpu", precision="fp16", batch=1)
        meas = means.get(key)
        out.append({"case": key, "measured": meas, "predicted": e.total_ms,
                    "error_pct": 100 * (e.total_ms / meas - 1) if meas else None, "in_sample": mark == -1})
    return out


def xavier_gpu_sources(res: dict, data_text: str) -> dict:
    """sources_for, saying which rows set the class parameters that few rows determine."""
    src = sources_for(res, data_text)
    if "gpu.stream_bytes_per_clk_per_sm" in src:
        src["gpu.stream_bytes_per_clk_per_sm"] += ("; set by the memory-bound rows (pools, LRN, prob) and the "
                                                   "reformat copies, at this GPU's 8 SMs x 1377 MHz")
    if "gpu.tensor_efficiency" in src and "gpu.operand_bytes_per_clk_per_sm" in src:
        src["gpu.tensor_efficiency"] += ("; with operand_bytes_per_clk_per_sm the profile bounds it from below only: "
                                         "its 256 x 128 FP16 tile sits where the operand limit takes over, which then "
                                         "sets every FP16 and INT8 tile's rate; it alone sets the FP32 (CUDA-core) "
                                         "tiles, which no Xavier data check")
    if "gpu.gemv_efficiency" in src:
        src["gpu.gemv_efficiency"] += "; set by the profile's one FC row (loss3/classifier, 1024->1000, batch 1)"
    return src


def predict_total(model, plat, measured, label, **kw) -> dict:
    e = dlasim.estimate(model, plat, **kw)
    return {"case": label, "measured": measured, "predicted": e.total_ms,
            "error_pct": 100 * (e.total_ms / measured - 1)}


# --------------------------------------------------------------------------------------------------
# H200

def h200_data() -> dict:
    return json.loads(H200_JSON.read_text())


def _gemm_plan(plat, m, n, k, sparsity="disable"):
    b = dlasim.GraphBuilder(f"gemm_{m}x{n}x{k}")
    x = b.input("x", (m, k))
    y = b.fc(x, n, bias=False, name="gemm")
    return dlasim.build(b.build([y]), plat, device="gpu", precision="fp16", sparsity=sparsity)


def _conv_plan(plat, n, c, h, k):
    b = dlasim.GraphBuilder(f"conv_{n}x{c}x{h}_{k}")
    x = b.input("x", (n, c, h, h))
    y = b.conv(x, c, kernel=k, bias=False, name="conv")
    return dlasim.build(b.build([y]), plat, device="gpu", precision="fp16")


def _layer_index(plan) -> int:
    return next(i for i, s in enumerate(plan.steps) if s.kind == "layer")


def h200_dense_observations(plat):
    d = h200_data()
    src = rel(H200_JSON)
    obs = []
    for r in d["C_wave"]:
        plan = _gemm_plan(plat, r["M"], r["N"], r["K"])
        obs.append(C.Observation(f"cuBLAS GEMM M={r['M']} N={r['N']} K={r['K']}", r["ms"], plan=plan,
                                 steps=(_layer_index(plan),), dataset=src + " C_wave"))
    for r in d["D_sparse"]:
        plan = _gemm_plan(plat, r["P"], r["N"], r["K"])
        obs.append(C.Observation(f"cuBLAS GEMM M={r['P']} N={r['N']} K={r['K']} (dense, kernel-only)",
                                 r["dense_kernel_ms"], plan=plan, steps=(_layer_index(plan),),
                                 dataset=src + " D_sparse"))
    for r in d["F_conv"]:
        plan = _conv_plan(plat, r["N"], r["C"], r["H"], r["k"])
        obs.append(C.Observation(f"cuDNN conv N={r['N']} C=K={r['C']} {r['H']}x{r['H']} {r['k']}x{r['k']}",
                                 r["ms"], plan=plan, steps=(_layer_index(plan),), dataset=src + " F_conv"))
    return obs


def _sparse_ratio_fn(plan):
    i = _layer_index(plan)
    step = plan.steps[i]

    def fn(plat):
        import dataclasses
        c = cost_step(step, dataclasses.replace(plan, platform=plat))
        g = plat.gpu
        floor = class_floor(g, "gemm")
        dense = max(floor, c.parts.dense_s) + g.launch_overhead_s
        sparse = max(floor, c.parts.sparse_s) + g.launch_overhead_s
        return sparse / dense
    return fn


def h200_sparse_observations(plat):
    d = h200_data()
    obs = []
    for r in d["D_sparse"]:
        plan = _gemm_plan(plat, r["P"], r["N"], r["K"], sparsity="force")
        obs.append(C.Observation(f"sparse/dense M={r['P']} N={r['N']} K={r['K']}",
                                 r["sparse_kernel_ms"] / r["dense_kernel_ms"], fn=_sparse_ratio_fn(plan),
                                 unit="ratio", dataset=rel(H200_JSON) + " D_sparse"))
    return obs


def _copy_fn(nbytes):
    # the grid's NCHW -> NHWC FP16 copy on the GPU (E_reformat)
    step = Step(name="copy", kind="reformat", op="Reformat", device="gpu",
                copy=Copy(("fp16", "linear"), ("fp16", "hwc8"), nbytes // 2, nbytes - nbytes // 2, "gpu", "gpu"))
    return lambda plat: copy_cost(step, plat).total_s * 1e3


def h200_copy_observations(ops=("nchw_to_nhwc_fp16",)):
    d = h200_data()
    return [C.Observation(f"{r['op']} {r['shape']}", r["ms"], fn=_copy_fn(r["bytes_rw"]),
                          dataset=rel(H200_JSON) + " E_reformat")
            for r in d["E_reformat"] if r["op"] in ops]


def h200_kernel_classes(plat, queue, conv_obs=(), verbose=False):
    """Per-kernel-class floors and efficiencies and the L2 term on the H200 kernel grid, with the leave-out
    report per class (validation/gpu_classes.py); `conv_obs` (the cuDNN conv micro-benchmarks) join the conv
    class's fit rows. Queues the fitted values for h200.toml."""
    import gpu_classes as G
    p, results, report = G.fit_classes(plat, conv_obs)
    for cls, res in results.items():
        print_fit(f"h200 kernel class {cls} (grid shapes not held out)", res, verbose, rows=6)
        data = f"{rel(G.GRID)} {G.GRID_KIND[cls]}" + {"eltwise": f", {rel(G.KERNELS)} memory",
                                                       "conv": f", {rel(H200_JSON)} F_conv"}.get(cls, "")
        queue("h200", C.fitted_values(res), sources_for(
            res, data + f" (every 3rd shape held out; held-out median |error| "
                        f"{statistics.median(abs(e) for e in next(r for r in report if r['class'] == cls)['held_after']):.0f}%)"))
    G.print_report(report, say, verbose)
    return p


JETSON_GPUS = ("xavier-agx", "orin-agx", "orin-nx-16gb")
ORIN_GPUS = ("orin-agx", "orin-nx-16gb")


def jetson_depthwise_share(h200, fitted: dict, queue) -> None:
    """Jetson iGPUs have no depthwise-conv data: their depthwise_efficiency is their memory_efficiency times the
    H200 grid's ratio of the two (cuDNN's depthwise kernels against streaming ReLU/Add), an assumption said so in
    the source. `fitted`: platforms already refitted in this run (else the spec file's values)."""
    ratio = h200.gpu.depthwise_efficiency / h200.gpu.memory_efficiency
    say(f"\n== Jetson iGPUs: depthwise_efficiency = memory_efficiency x {ratio:.3f} (H200 grid depthwise / eltwise)")
    for name in JETSON_GPUS:
        plat = fitted.get(name) or dlasim.hardware(name)
        v = plat.gpu.memory_efficiency * ratio
        say(f"   {name}: {plat.gpu.memory_efficiency:.4g} x {ratio:.3f} = {v:.4g}")
        queue(name, {"gpu.depthwise_efficiency": v}, {"gpu.depthwise_efficiency": (
            f"assumption: this GPU's memory_efficiency x {ratio:.3f}, the ratio of depthwise_efficiency to "
            f"memory_efficiency fitted by {TOOL} on the H200 grid (validation/h200/gpu_grid_results.json "
            f"depthwise and eltwise); no depthwise data on this GPU")})


DISCRETE_GPUS = ("a100", "a40", "titan-rtx")
# the kernel classes whose floor the discrete GPUs' own data leave open: no row of these classes in the A100
# engine sits at a floor (its 1x1 downsample convs run far above one; it has no depthwise conv)
OPEN_CLASSES = {"conv1x1": "gpu.conv1x1_floor_s", "depthwise": "gpu.depthwise_floor_s"}
OPEN_CLASS_FLOORS = tuple(OPEN_CLASSES.values())


def discrete_class_floors(h200, queue) -> dict[str, float]:
    """The discrete GPUs (A100, A40, TITAN RTX) take the H200 grid's conv1x1 and depthwise floors as an
    assumption: without them those classes fall back to kernel_floor_s and memory_kernel_floor_s, which the
    A100 fit sets from its FC (Gemm) and GlobalAveragePool rows, and the H200 grid shows a 1x1 conv's floor at
    about half a 3x3 conv's (cost/gpu.py class_floor). Returns the values, for the A100 fit to start from."""
    import gpu_classes as G
    values = {p: C.get_param(h200, p) for p in OPEN_CLASS_FLOORS}
    say("\n== discrete GPUs: the H200 grid's " + ", ".join(f"{k}={v:.4g}" for k, v in values.items()))
    sources = {p: (f"fitted on H200 data by {TOOL} ({rel(G.GRID)} {G.GRID_KIND[cls]}), applied to this discrete GPU "
                   f"as an assumption: no data fitted for it set a floor for the class (no row of the class sits at "
                   f"one), and without it the class would take kernel_floor_s or memory_kernel_floor_s, which the FC "
                   f"and pooling rows set") for cls, p in OPEN_CLASSES.items()}
    for name in DISCRETE_GPUS:
        queue(name, values, sources)
    return values


# --------------------------------------------------------------------------------------------------
# A100

def volta_dram_side_share(h200, queue) -> None:
    """Xavier's memory_efficiency is the DRAM-side share of streaming kernels, which its SMs keep it under
    (stream_bytes_per_clk_per_sm binds); no Xavier data can set it, so it is the H200's fitted streaming
    share (its eltwise kernels are DRAM-limited), an assumption said in the source."""
    v = h200.gpu.memory_efficiency
    queue("xavier-agx", {"gpu.memory_efficiency": v}, {"gpu.memory_efficiency": (
        f"assumption: the share of DRAM peak a streaming kernel reaches when the DRAM, not the SMs, limits it, "
        f"taken as h200.toml memory_efficiency {v:.4g} (fitted by {TOOL} on validation/h200/gpu_grid_results.json "
        f"eltwise), the only GPU in the data whose streaming kernels are DRAM-limited; on Xavier the SM-side rate "
        f"(stream_bytes_per_clk_per_sm) binds whenever this share exceeds 0.36 (AGX) / 0.50 (NX), so predictions "
        f"do not depend on its value above that")})


def stream_cross_check(h200, xav) -> None:
    """Print the per-SM streaming rates: Xavier's fitted one (SM-limited) against the H200's DRAM-limited
    streaming rate per SM (memory_efficiency x HBM bandwidth / (SMs x clock)), a lower bound of what an H200
    SM can stream; and whether Xavier's DRAM-side share leaves the SM rate the limit."""
    hg, xg = h200.gpu, xav.gpu
    h = hg.memory_efficiency * h200.memory.dram_bandwidth_bytes_per_s / (hg.sm_count * hg.clock_hz)
    say("\n== per-SM streaming rate (bytes read+written per SM clock)")
    say(f"   h200 (DRAM-limited, a lower bound of its SM rate): {h:.3g}")
    if xg.stream_bytes_per_clk_per_sm is not None:
        x = xg.stream_bytes_per_clk_per_sm
        share = x * xg.sm_count * xg.clock_hz / xav.memory.dram_bandwidth_bytes_per_s
        say(f"   xavier-agx (fitted): {x:.3g} = {share:.3f} of DRAM peak at 8 SMs x 1377 MHz; DRAM-side share "
            f"{xg.memory_efficiency:.4g} {'>' if xg.memory_efficiency > share else '<='} that "
            f"({'the SM rate binds' if xg.memory_efficiency > share else 'the DRAM binds: the SM rate is not identified'})")


def onnx_to_zoo_map(graph_json: Path, g) -> dict:
    """ONNX node names of the trex ResNet-18 engine -> zoo:resnet18 layer names.

    Convolutions match on (input dims, output channels, kernel, stride), in order among equal ones;
    other ops by their order of appearance (ONNX numbers nodes in execution order)."""
    layers = json.loads(graph_json.read_text())["Layers"]
    sig_onnx: dict = {}
    other_onnx: dict = {}
    names = set()
    for l in layers:
        for part in re.split(r" \+ | \|\| ", l["Name"]):
            names.add(part.strip())
        if l.get("Kernel") and l.get("OutMaps"):
            conv = next((p for p in re.split(r" \+ ", l["Name"]) if p.startswith("Conv_")), None)
            if conv:
                key = (tuple(l["Inputs"][0]["Dimensions"]), l["OutMaps"], tuple(l["Kernel"]), tuple(l["Stride"]))
                sig_onnx.setdefault(key, []).append(conv)
    for n in names:
        m = re.fullmatch(r"([A-Za-z]+)_(\d+)", n)
        if m and m.group(1) != "Conv":
            other_onnx.setdefault(m.group(1), []).append((int(m.group(2)), n))
    sig_zoo: dict = {}
    other_zoo: dict = {}
    for l in g.layers:
        if l.op == "Conv":
            key = (tuple(g.tensors[l.inputs[0]].shape), g.tensors[l.outputs[0]].shape[1],
                   tuple(l.attributes["kernel_shape"]), tuple(l.attributes["strides"]))
            sig_zoo.setdefault(key, []).append(l.name)
        else:
            other_zoo.setdefault(l.op, []).append(l.name)
    out = {}
    for key, onnx_names in sig_onnx.items():
        onnx_names = sorted(set(onnx_names), key=lambda n: int(n.split("_")[1]))
        for a, b in zip(onnx_names, sig_zoo.get(key, [])):
            out[a] = b
    for op, items in other_onnx.items():
        for (_, a), b in zip(sorted(items), other_zoo.get(op, [])):
            out[a] = b
    for n in names:                       # the reshape TensorRT adds after the FC belongs to the FC
        m = re.fullmatch(r"reshape_after_(Gemm_\d+)", n)
        if m and m.group(1) in out:
            out[n] = out[m.group(1)]
    return out


def a100_observations(plat):
    g = dlasim.load("zoo:resnet18", batch=32)
    plan = dlasim.build(g, plat, device="gpu", precision="fp16")
    base = TREX / "fp16" / "resnet.onnx.engine"
    lmap = onnx_to_zoo_map(Path(str(base) + ".graph.json"), g)
    prof = Path(str(base) + ".profile.json")
    obs, groups = C.row_observations(plan, prof, split_dla=True, layer_map=lmap, dataset=rel(prof))
    return obs


def trex_median(variant: str) -> float:
    meta = next((TREX / variant).glob("*.profile.metadata.json"))
    from dlasim.trtexec import parse_metadata
    return parse_metadata(meta)["gpu_compute_ms"]["median"]


# --------------------------------------------------------------------------------------------------
# Orin

# The log does not state its precision and HaX-CoNN's builder script sets FP16, but its 1.58 GMAC cannot run in
# 1.032 ms in FP16: the DLA-SW FAQ puts Orin's FP16 convolution rate below Xavier's (ref/dla.md s0.1 fact 3
# [SPEC]), and at Xavier's 1.43 TMAC/s they take 1.11 ms. So the engine ran (at least its convolutions) in INT8.
ORIN_PRECISION = "int8"
# One number sets one parameter: the per-layer overhead. The MAC efficiency (the first choice while the log was
# read as FP16, when it touched FP16 layers only) would have to be 0.29 in INT8, below the 0.32 the DLA-SW
# ResNet-50 throughput (2037 img/s on 2 DLAs, 4.1 GMAC per image, validation/cases.csv) needs at any overhead:
# that held-out row is used as a bound here, and validation/README.md says so.
ORIN_CANDIDATES = ("dla.layer_overhead_s",)
ORIN_FN = "{ForeignNode[conv1/7x7_s2...loss3/classifier]}"
ORIN_ROWS = [(f"Reformatting CopyNode for Input Tensor 0 to {ORIN_FN}", 0.041), (ORIN_FN, 1.032),
             ("Reformatting CopyNode for Input Tensor 0 to prob", 0.0174), ("prob", 0.0186)]


def orin_observations(plat):
    plan = dlasim.build(str(GOOGLENET), plat, device="dla", precision=ORIN_PRECISION, batch=1)
    prof = profile_from_rows(ORIN_ROWS, "validation/data/public_measurements.csv orin_googlenet_dla")
    obs, groups = C.row_observations(plan, prof, split_dla=False,
                                     dataset="validation/data/public_measurements.csv orin_googlenet_dla")
    # the one number: the ForeignNode row (dlasim also places prob on Orin's DLA, so the prob row joins it)
    return [o for o in obs if o.label == ORIN_FN], plan, groups


# --------------------------------------------------------------------------------------------------
# Printing

def print_fit(title: str, res: dict, verbose: bool = False, rows: int = 10):
    b, a = res["before"], res["after"]
    say(f"\n== {title}")
    say(f"   data: {', '.join(res['data'])}")
    say(f"   {res['n']} observations; median |error| before {b['median_abs_error_pct']:.1f}% -> after "
        f"{a['median_abs_error_pct']:.1f}%  (mean {b['mean_abs_error_pct']:.1f}% -> {a['mean_abs_error_pct']:.1f}%);"
        f" residual rms {res['band_pct']:.1f}%")
    say(f"   {'parameter':<30} {'before':>11} {'after':>11} {'1-sigma band':>14}  note")
    for name, d in res["parameters"].items():
        band = f"+/-{d['band_pct']:.0f}%" if d.get("band_pct") is not None else "-"
        note = ""
        if not d["constrained"]:
            note = "NOT constrained (" + d.get("reason", "") + "), kept at prior"
        elif d.get("one_sided") or d.get("exact"):
            note = d["reason"]
        elif d.get("at_bound"):
            note = f"at {d['at_bound']} bound" + (f": {d['reason']}" if d.get("reason") else "")
        say(f"   {name:<30} {d['before']:>11.4g} {d['after']:>11.4g} {band:>14}  {note}")
    before = {(r["label"], r["dataset"]): r["predicted"] for r in b["rows"]}
    items = a["rows"]
    if not verbose and len(items) > rows:
        items = sorted(items, key=lambda r: -abs(math.log(r["predicted"] / r["measured"])))[:rows]
        say(f"   largest {rows} remaining deviations (of {len(a['rows'])}):")
    say(f"   {'observation':<62} {'measured':>10} {'before':>10} {'after':>10} {'err':>7}")
    for r in items:
        lab = r["label"] if len(r["label"]) <= 62 else r["label"][:59] + "..."
        say(f"   {lab:<62} {r['measured']:>10.4g} {before[(r['label'], r['dataset'])]:>10.4g} "
            f"{r['predicted']:>10.4g} {r['error_pct']:>+6.0f}%")


def retable(res: dict, obs, plat0, plat1) -> None:
    """Before/after tables of a fit against the original spec and the final platform."""
    usable = [o for o in obs if o.label not in set(res["excluded"])]
    res["before"] = C.error_table(usable, C.predict_all(usable, plat0))
    after = C.predict_all(usable, plat1)
    res["after"] = C.error_table(usable, after)
    r = [math.log(p / o.measured) for o, p in zip(usable, after)]
    res["residual_rms_log"] = math.sqrt(sum(x * x for x in r) / len(r))
    res["band_pct"] = 100 * (math.exp(res["residual_rms_log"]) - 1)


def print_cases(title: str, cases: list[dict]):
    say(f"\n-- {title}")
    say(f"   {'case':<44} {'measured ms':>11} {'predicted':>10} {'error':>8}")
    for c in cases:
        tag = " (in sample)" if c.get("in_sample") else ""
        err = f"{c['error_pct']:+7.1f}%" if c["error_pct"] is not None else "-"
        say(f"   {c['case'] + tag:<44} {c['measured']:>11.4f} {c['predicted']:>10.4f} {err:>8}")
    errs = [abs(c["error_pct"]) for c in cases if c["error_pct"] is not None and not c.get("in_sample")]
    if errs:
        say(f"   median |error| {statistics.median(errs):.1f}% over {len(errs)} held-out case(s)")


# --------------------------------------------------------------------------------------------------
# Sources written into the specs

def sources_for(res: dict, data_text: str, extra: str = "") -> dict[str, str]:
    base = f"fitted by {TOOL} from {data_text} (residual rms {res['band_pct']:.0f}%, n={res['n']})"
    out = {}
    for p, d in res["parameters"].items():
        if not d["constrained"]:
            continue
        note = ""
        if d.get("one_sided"):
            note = f"; one-sided: the data push it to {d['after']:.3g}, where it stops mattering"
        elif d.get("at_bound"):
            note = f"; at its {d['at_bound']} bound {d['after']:.3g}: the data push it there"
        elif d.get("exact"):
            note = "; exactly determined (one number, one parameter), no uncertainty estimate"
        elif d.get("band_pct") is not None:
            note = f"; 1-sigma +/-{d['band_pct']:.0f}%"
        out[p] = base + note + extra
    return out


# --------------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fit and print only; write nothing")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every observation")
    ap.add_argument("--leave-one-network-out", action="store_true",
                    help="refit without each network family, report its held-out error; write nothing")
    a = ap.parse_args(argv)
    if a.leave_one_network_out:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import lono
        lono.run(sys.modules[__name__], say)
        return 0
    writes: dict[str, tuple[dict, dict]] = {}

    def queue(spec: str, values: dict, sources: dict):
        v, s = writes.setdefault(spec, ({}, {}))
        v.update(values)
        s.update(sources)

    # ---------------- Xavier: GPU and DLA fits alternate (shared copies block, GPU prob layer); each fit
    # starts from the spec's own values of its parameters and the other fit's latest results
    xav0 = dlasim.hardware("xavier-agx")
    orig = lambda params: {p: C.get_param(xav0, p) for p in params}
    xav = xav0
    gpu_obs = xavier_gpu_observations(xav0)
    seed_obs = seed_observations(xav0)
    dla_obs = seed_obs + googlenet_dla_observations(xav0)
    bw_params = XAVIER_DLA_PARAMS + [XAVIER_DLA_BANDWIDTH]
    for _ in range(2):
        res_gpu = C.fit(gpu_obs, C.apply(xav, orig(XAVIER_GPU_PARAMS)), XAVIER_GPU_PARAMS)
        xav = res_gpu["platform"]
        res_bw = C.fit(seed_obs, C.apply(xav, orig(bw_params)), bw_params)
        bw = {XAVIER_DLA_BANDWIDTH: res_bw["parameters"][XAVIER_DLA_BANDWIDTH]["after"]}
        xav = C.apply(xav, bw)
        res_dla = C.fit(dla_obs, C.apply(xav, orig(XAVIER_DLA_PARAMS)), XAVIER_DLA_PARAMS)
        xav = res_dla["platform"]
    retable(res_gpu, gpu_obs, xav0, xav)
    retable(res_dla, dla_obs, xav0, xav)
    print_fit("xavier-agx GPU (per-row GoogLeNet FP16 profile)", res_gpu, a.verbose)
    print_fit("xavier-agx DLA bandwidth (seed 000 alone; only dla.dram_bytes_per_cycle is kept)", res_bw, a.verbose)
    print_fit("xavier-agx DLA + copies (seed 000 + GoogLeNet DLA profile)", res_dla, a.verbose, rows=20)
    gpu_data = f"{rel(HAX / 'profiles' / 'googlenet_gpu_mark_at_-1.profile')} (per row, TRT 7.1.3 FP16 bs1)"
    dla_data = (f"{rel(SEEDS / 'xavier_dla_conv_trtexec.csv')} (4 medians, bs32), "
                f"{rel(SEEDS / 'xavier_dla_conv_breakdown.csv')}, "
                f"{rel(HAX / 'profiles' / 'googlenet_dla_mark_at_-1.profile')} (rows + 3.656 ms mean)")
    queue("xavier-agx", C.fitted_values(res_gpu), xavier_gpu_sources(res_gpu, gpu_data))
    queue("xavier-agx", C.fitted_values(res_dla), sources_for(res_dla, dla_data))
    seed_data = f"{rel(SEEDS / 'xavier_dla_conv_trtexec.csv')} (4 medians, bs32), {rel(SEEDS / 'xavier_dla_conv_breakdown.csv')}"
    bw_src = sources_for(res_bw, seed_data, extra="; the 3x3 FP16 engine's weight re-reads set it; the NVDLA "
                         "spreadsheet pairs 2048 MACs with 10-20 GB/s at 1 GHz, 10-20 bytes per DLA cycle (ref/dla.md s1.5); "
                         "without seed 000 (validation/lono.py) the prior is the primer's 20 GB/s for 2048 MACs at "
                         "1 GHz = 20 bytes per cycle")
    if XAVIER_DLA_BANDWIDTH in bw_src:
        queue("xavier-agx", bw, {XAVIER_DLA_BANDWIDTH: bw_src[XAVIER_DLA_BANDWIDTH]})
    # Orin iGPUs: no per-layer GPU profile of their own; the Jetson iGPU memory-kernel floor from Xavier
    mfloor = res_gpu["parameters"]["gpu.memory_kernel_floor_s"]
    if mfloor["constrained"]:
        for orin in ("orin-agx", "orin-nx-16gb"):
            queue(orin, {"gpu.memory_kernel_floor_s": mfloor["after"]}, {"gpu.memory_kernel_floor_s": (
                f"as xavier-agx: fitted on Xavier data by {TOOL} ({gpu_data}, residual rms "
                f"{res_gpu['band_pct']:.0f}%, n={res_gpu['n']}), applied to this Jetson iGPU as an assumption: "
                f"no per-layer Orin GPU data (ref/gpu.md s5.1, s9)")})

    # leave-one-out
    print_cases("leave-one-out: xavier GPU fitted on googlenet_gpu_mark_at_-1, other cut engines' totals "
                "(transition_results.json means)", loo_xavier_gpu(xav))
    seed_only = C.fit(seed_obs, C.apply(xav, orig(XAVIER_DLA_PARAMS)), XAVIER_DLA_PARAMS)
    print_fit("(leave-one-out) xavier-agx DLA fitted on seed 000 only", seed_only, a.verbose)
    print_cases("leave-one-out: seed-000-only DLA fit predicts GoogLeNet on DLA",
                [predict_total(str(GOOGLENET), seed_only["platform"], haxconn_means()["googlenet_dla_mark_at_-1"],
                               "googlenet DLA fp16 bs1 (3.656 ms)", device="dla", precision="fp16", batch=1)])

    # ---------------- H200
    h0 = dlasim.hardware("h200")
    dense = h200_dense_observations(h0)
    gemms = [o for o in dense if not o.dataset.endswith("F_conv")]
    res_h = C.fit(gemms, h0, ["gpu.tensor_efficiency", "gpu.tensor_latency_s", "gpu.gemm_floor_s"])
    print_fit("h200 GPU dense (cuBLAS GEMMs, kernel time vs layer step)", res_h, a.verbose)
    h1 = res_h["platform"]
    sparse = h200_sparse_observations(h1)
    res_hs = C.fit(sparse, h1, ["gpu.sparse_efficiency", "gpu.sparse_k_half"])
    print_fit("h200 2:4 sparse / dense kernel-time ratio (cuSPARSELt vs cuBLAS)", res_hs, a.verbose)
    h2 = res_hs["platform"]
    copies = h200_copy_observations()
    res_hc = C.fit(copies, h2, ["copies.reformat_efficiency", "copies.reformat_floor_s"])
    print_fit("h200 copies (NCHW->NHWC fp16 transposes)", res_hc, a.verbose)
    h3 = res_hc["platform"]
    casts = h200_copy_observations(("fp32_to_fp16_cast",))
    cast_rows = [{"case": o.label, "measured": o.measured, "predicted": o.predict(h3, C.CostCache()),
                  "error_pct": 100 * (o.predict(h3, C.CostCache()) / o.measured - 1)} for o in casts]
    print_cases("h200 layout-preserving casts with the transpose-fitted copy parameters (not fitted: one "
                "reformat efficiency cannot serve both)", cast_rows)
    h4 = h200_kernel_classes(h3, queue, [o for o in dense if o.dataset.endswith("F_conv")], a.verbose)
    jetson_depthwise_share(h4, {"xavier-agx": xav}, queue)
    volta_dram_side_share(h4, queue)
    stream_cross_check(h4, xav)
    hsrc = rel(H200_JSON)
    queue("h200", C.fitted_values(res_h), sources_for(res_h, f"{hsrc} C_wave, D_sparse dense kernel times"))
    queue("h200", C.fitted_values(res_hs), sources_for(res_hs, f"{hsrc} D_sparse sparse/dense kernel-time ratios"))
    queue("h200", C.fitted_values(res_hc), sources_for(res_hc, f"{hsrc} E_reformat nchw_to_nhwc_fp16"))

    # ---------------- A100
    a0 = C.apply(dlasim.hardware("a100"), discrete_class_floors(h4, queue))
    aobs = a100_observations(a0)
    res_a = C.fit(aobs, a0, A100_PARAMS)
    print_fit("a100 GPU (trex ResNet-18 FP16 bs32, per row, corrected to GPU compute median)", res_a, a.verbose)
    a1 = res_a["platform"]
    r18 = dlasim.load("zoo:resnet18", batch=32)
    cases = [predict_total(r18, a1, trex_median("fp16"), "FP16 engine (in sample) 0.862", device="gpu",
                           precision="fp16"),
             predict_total(r18, a1, trex_median("fp32"), "FP32 engine 1.991", device="gpu", precision="fp32")]
    for v in ("qat", "qat-residual", "qat-residual-qgap"):
        cases.append(predict_total(r18, a1, trex_median(v), f"INT8 vs {v} {trex_median(v):.3f}", device="gpu",
                                   precision="int8"))
    cases[0]["in_sample"] = True
    print_cases("leave-one-out: a100 fitted on FP16 predicts FP32 and INT8 without refitting", cases)
    prof_a = rel(TREX / "fp16" / "resnet.onnx.engine.profile.json")
    queue("a100", C.fitted_values(res_a), sources_for(
        res_a, f"{prof_a} (per row, scaled to the 0.862 ms GPU compute median; dlasim zoo:resnet18 bs32)"))
    # Orin iGPUs (GA10B, sm_87: the A100-class SM, ref/gpu.md s1.1 notes): no per-layer GPU data of their own;
    # the A100-fitted tensor-core share, said so (validation/lono.py puts it back to the prior without ResNet)
    te = res_a["parameters"]["gpu.tensor_efficiency"]
    if te["constrained"]:
        for orin in ORIN_GPUS:
            queue(orin, {"gpu.tensor_efficiency": te["after"]}, {"gpu.tensor_efficiency": (
                f"fitted on A100 data by {TOOL} ({prof_a}, residual rms {res_a['band_pct']:.0f}%, n={res_a['n']}), "
                f"applied to this Ampere iGPU as an assumption: GA10B has the A100-class SM (ref/gpu.md s1.1 notes: "
                f"1024 FP16 FMA/clk/SM, 8192 sparse INT8 ops/clk/SM); no per-layer Orin GPU data (ref/gpu.md s9)")})

    # ---------------- Orin: one number (the ForeignNode row) can set one DLA parameter (ORIN_CANDIDATES).
    o0 = dlasim.hardware("orin-agx")
    oobs, oplan, ogroups = orin_observations(o0)
    res_o = None
    for orin_param in ORIN_CANDIDATES:
        r = C.fit(oobs, o0, [orin_param])
        d = r["parameters"][orin_param]
        print_fit(f"orin-agx DLA (GoogLeNet log read as INT8, one number -> one parameter): try {orin_param}", r,
                  a.verbose)
        if d["constrained"] and not d.get("at_bound") and not d.get("one_sided"):
            res_o = r
            break
        say(f"   -> {orin_param} cannot reach the measurement (ends at {d['after']:.3g}"
            f"{', its ' + d['at_bound'] + ' bound' if d.get('at_bound') else ''}); not written")
    if res_o is not None:
        queue("orin-agx", C.fitted_values(res_o), sources_for(
            res_o, "validation/data/public_measurements.csv orin_googlenet_dla (HaX-CoNN README: ForeignNode "
            "1.032 ms + prob 0.0186 ms, AGX Orin JP 5.1.1 TRT 8.5.2, read as INT8: in FP16 the DLA-SW FAQ's lower "
            "FP16 rate could not reach it, validation/fit_specs.py ORIN_PRECISION)",
            "; the one DLA parameter this single number is used for (the INT8 MAC efficiency it would otherwise "
            "need, 0.29, is below what the DLA-SW ResNet-50 throughput needs); every other Orin DLA value stays a "
            "first estimate"))
        # Orin NX 16GB has the same DLA 2.0 cores (ref/dla.md s0.1 facts 3 and 6) and no per-layer DLA data of its
        # own: the AGX-fitted per-layer overhead, in seconds as fitted (no reference says whether it scales with
        # the DLA clock, 614.4 MHz on the NX against 1.6 GHz), replaces its first estimate, said so
        o_src = sources_for(res_o, "validation/data/public_measurements.csv orin_googlenet_dla (HaX-CoNN README, AGX "
                            "Orin GoogLeNet log read as INT8, validation/fit_specs.py ORIN_PRECISION)")
        queue("orin-nx-16gb", C.fitted_values(res_o), {k: "as orin-agx (same DLA 2.0 cores, ref/dla.md s0.1 facts 3 "
                                                       "and 6; kept in seconds, not scaled to this DLA's clock): " + v
                                                       for k, v in o_src.items()})

    # ---------------- Orin depthwise processor: the DLA-SW SSD-MobileNetV1 number (13 depthwise convs, the
    # only Orin measurement with any) sets its rate; fitted after the GoogLeNet parameter, which it leaves alone
    o1 = C.apply(o0, C.fitted_values(res_o)) if res_o is not None else o0
    ssd_case = "orin_dlasw_ssd_mobilenet_v1_bs2"
    ssd_ms = 2 * 2 / 2664 * 1e3      # 2 DLAs x batch 2 / 2664 img/s (validation/cases.csv, public_measurements.csv)
    ssd_plan = dlasim.build("zoo:ssd_mobilenet_v1", o1, device="dla", precision="int8", batch=2,
                            input_formats="int8:dla_hwc4", output_formats="int8:chw32")
    ssd_src = (f"validation/cases.csv {ssd_case} (NVIDIA/Deep-Learning-Accelerator-SW README: 2664 img/s on "
               f"2 DLAs, batch 2, INT8, MAXN = {ssd_ms:.4f} ms per engine run)")
    res_dw = C.fit([C.total_observation(ssd_plan, ssd_ms, "ssd_mobilenet_v1 DLA int8 bs2", ssd_src)], o1,
                   ["dla.depthwise_macs_per_cycle"])
    print_fit("orin-agx DLA depthwise processor (SSD-MobileNetV1, one number -> one parameter)", res_dw, a.verbose)
    if res_dw["parameters"]["dla.depthwise_macs_per_cycle"]["constrained"]:
        dw_src = sources_for(res_dw, ssd_src, "; the case is in-sample from then on")
        queue("orin-agx", C.fitted_values(res_dw), dw_src)
        queue("orin-nx-16gb", C.fitted_values(res_dw), {k: "as orin-agx (same DLA 2.0): " + v
                                                         for k, v in dw_src.items()})

    # ---------------- A40: no data of its own
    a40 = {}
    a40_src = {}
    for p in ("gpu.sparse_efficiency", "gpu.sparse_k_half"):
        if res_hs["parameters"][p]["constrained"]:
            a40[p] = res_hs["parameters"][p]["after"]
            a40_src[p] = (f"fitted on H200 data by {TOOL} ({hsrc} D_sparse ratios, residual rms "
                          f"{res_hs['band_pct']:.0f}%, n={res_hs['n']}), applied to Ampere as an assumption: "
                          f"no A40 data")
    for p in A100_PARAMS:
        if res_a["parameters"][p]["constrained"]:
            a40[p] = res_a["parameters"][p]["after"]
            a40_src[p] = (f"fitted on A100 data by {TOOL} ({prof_a}, residual rms {res_a['band_pct']:.0f}%, "
                          f"n={res_a['n']}), applied to the A40 (GA102) as an assumption: no A40 data")
    say("\n== a40: no data of its own; copies " + ", ".join(f"{k}={v:.4g}" for k, v in a40.items()))
    queue("a40", a40, a40_src)

    # ---------------- TITAN RTX: no data fitted (the trex MobileNetV2 QAT engines are held out)
    titan = {p: res_a["parameters"][p]["after"] for p in A100_PARAMS if res_a["parameters"][p]["constrained"]}
    titan_src = {p: (f"fitted on A100 data by {TOOL} ({prof_a}, residual rms {res_a['band_pct']:.0f}%, "
                     f"n={res_a['n']}), applied to the TITAN RTX (Turing) as an assumption: its own trex engines "
                     f"are held-out cases") for p in titan}
    if res_hc["parameters"]["copies.reformat_floor_s"]["constrained"]:
        titan["copies.reformat_floor_s"] = res_hc["parameters"]["copies.reformat_floor_s"]["after"]
        titan_src["copies.reformat_floor_s"] = (
            f"fitted on H200 data by {TOOL} ({rel(H200_JSON)} E_reformat nchw_to_nhwc_fp16), applied to the TITAN "
            f"RTX as an assumption; ref/gpu.md s6.4: small copies cost a 2-8 us floor in a CUDA graph; the TITAN "
            f"RTX reformat rows of s3.3 belong to the held-out engines and are not read")
    say("\n== titan-rtx: no data fitted; copies " + ", ".join(f"{k}={v:.4g}" for k, v in titan.items()))
    queue("titan-rtx", titan, titan_src)

    # ---------------- Xavier NX: the same Xavier SoC (DLA v1 cores, Volta SM): every value fitted on AGX Xavier
    # data is copied, and its source says so (no Xavier NX measurement is fitted)
    xv, xs = writes.get("xavier-agx", ({}, {}))
    queue("xavier-nx", dict(xv), {k: f"copied from xavier-agx.toml (same Xavier DLA v1 core / Volta SM; Xavier NX "
                                     f"is the same SoC), where it reads: {v}" for k, v in xs.items()})

    # ---------------- write
    if a.check:
        say("\n--check: nothing written")
        return 0
    for spec, (values, sources) in writes.items():
        if not values:
            continue
        path = SPECS / f"{spec}.toml"
        C.write_spec(path, path, values, sources)
        say(f"wrote {rel(path)}: " + ", ".join(f"{k}={v:.4g}" for k, v in values.items()))
    return 0

if __name__ == "__main__":
    sys.exit(main())
