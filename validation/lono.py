"""Leave-one-network-out for validation/fit_specs.py (`--leave-one-network-out`).

For each network family that some fit reads (the `family` column of validation/cases.csv names the family
of every case), the fits that read data of that family are redone without it, and every case of the family
is predicted with the refitted values. A fit whose data hold no observation of the family keeps the spec's
values (redoing it would reproduce them). A parameter left with no data at all goes back to its prior:
the first-estimate value of the spec's first version (LONO_PRIORS, before any fit), never a fitted one.

Simplifications, said here so the report can be read: the Xavier GPU and DLA fits are redone once each
(fit_specs.py alternates them twice); the Orin depthwise rate keeps its value when only the GoogLeNet-fitted
Orin parameter goes back to its prior.
"""
from __future__ import annotations

import statistics

import dlasim
from dlasim import calibrate as C
from dlasim import validate as V

# First-estimate values of each spec's first version (git: xavier-agx.toml at eb6407d, a100/h200/orin-agx
# at bd5db10), with the reason those files gave; parameters added later have the value the model used
# before they existed (mac_efficiency_fp16 = mac_efficiency, memory_kernel_floor_s = kernel_floor_s,
# dla_copy_efficiency = reformat_efficiency, depthwise_macs_per_cycle unset = depthwise on the MAC array,
# tensor_latency_s unset = no kernel ramp, gemv_efficiency unset = memory_efficiency,
# operand_bytes_per_clk_per_sm unset = no operand limit on a CTA tile).
LONO_PRIORS = {
    "xavier-agx": {"gpu.tensor_efficiency": 0.6, "gpu.memory_efficiency": 0.6, "gpu.kernel_floor_s": 8e-6,
                   "gpu.memory_kernel_floor_s": 8e-6, "copies.reformat_efficiency": 0.12,
                   "copies.reformat_floor_s": 15e-6, "copies.transition_overhead_s": 50e-6,
                   "copies.dla_copy_efficiency": 0.12, "dla.dram_efficiency": 0.5, "dla.mac_efficiency": 1.0,
                   "dla.mac_efficiency_fp16": 1.0, "dla.layer_overhead_s": 5e-6, "dla.subgraph_overhead_s": 50e-6,
                   "gpu.tensor_latency_s": 0.0, "gpu.gemv_efficiency": 0.6, "gpu.operand_bytes_per_clk_per_sm": None,
                   # no SM limit before: the per-SM rate that gives the 0.6 prior share on AGX
                   # (0.6 x 136.5e9 / (8 x 1377e6)) under memory_efficiency 0.8552
                   "gpu.stream_bytes_per_clk_per_sm": 7.435},
    "a100": {"gpu.tensor_efficiency": 0.7, "gpu.memory_efficiency": 0.8, "gpu.kernel_floor_s": 4e-6,
             "gpu.memory_kernel_floor_s": 4e-6},
    "h200": {"gpu.tensor_efficiency": 0.7, "gpu.memory_efficiency": 0.83, "gpu.kernel_floor_s": 3e-6,
             "gpu.memory_kernel_floor_s": 3e-6, "gpu.sparse_efficiency": 0.765,
             "copies.reformat_efficiency": 0.15, "copies.reformat_floor_s": 3.5e-6,
             # fitted on the kernel grid and micro-benchmarks after the first version: unset (the generic
             # fields serve every class, no L2 term), no kernel ramp, no K dependence of the sparse share
             "gpu.tensor_latency_s": 0.0, "gpu.sparse_k_half": 0.0, "gpu.l2_bandwidth_bytes_per_s": None,
             "gpu.conv_tensor_efficiency": None, "gpu.conv1x1_efficiency": None, "gpu.conv1x1_floor_s": None,
             "gpu.gemv_efficiency": None, "gpu.gemv_floor_s": None, "gpu.depthwise_efficiency": None,
             "gpu.depthwise_floor_s": None, "gpu.reduce_efficiency": None, "gpu.reduce_floor_s": None},
    "orin-agx": {"dla.mac_efficiency_fp16": 1.0, "dla.layer_overhead_s": 5e-6, "gpu.memory_kernel_floor_s": 8e-6},
}
# the Orin iGPUs' tensor_efficiency before fit_specs.py took the A100-fitted value (orin-agx.toml first estimate)
ORIN_TENSOR_PRIOR = 0.6
GOOGLENET_ONLY_DLA = ["dla.mac_efficiency_fp16", "dla.layer_overhead_s", "dla.subgraph_overhead_s",
                      "copies.dla_copy_efficiency"]
# specs whose values are copies of another spec's fitted values (their sources say so)
COPIES = {"xavier-nx": "xavier-agx", "orin-nx-16gb": "orin-agx"}


def _keep(spec: str, params) -> dict:
    plat = dlasim.hardware(spec)
    return {p: C.get_param(plat, p) for p in params}


def refit_without(family: str, fs) -> tuple[dict[str, dict], list[str]]:
    """{spec: {param: value}} for the fits redone without `family`, and what was done (one line each).
    `fs` is the fit_specs module (its observation builders and parameter lists)."""
    out: dict[str, dict] = {}
    notes: list[str] = []
    if family in ("googlenet", "single_conv"):
        xav0 = dlasim.hardware("xavier-agx")
        pri = LONO_PRIORS["xavier-agx"]
        gpu_obs = [] if family == "googlenet" else fs.xavier_gpu_observations(xav0)
        seed_obs = [] if family == "single_conv" else fs.seed_observations(xav0)
        dla_obs = seed_obs + ([] if family == "googlenet" else fs.googlenet_dla_observations(xav0))
        xav = C.apply(xav0, {p: pri[p] for p in fs.XAVIER_GPU_PARAMS + fs.XAVIER_DLA_PARAMS
                             + [fs.XAVIER_DLA_BANDWIDTH]})
        if gpu_obs:
            xav = C.apply(xav, _keep("xavier-agx", fs.XAVIER_GPU_PARAMS))
            notes.append("xavier-agx GPU: kept (its data are GoogLeNet only)")
        else:
            notes.append("xavier-agx GPU + copies.reformat_*: no data left -> first-estimate priors")
        bw = [fs.XAVIER_DLA_BANDWIDTH]
        if seed_obs:
            xav = C.fit(seed_obs, xav, bw)["platform"]
        # without seed 000 only FP16 GoogLeNet rows remain (5 usable): the INT8 MAC efficiency, the DRAM share
        # and the transition overhead keep their priors
        params = fs.XAVIER_DLA_PARAMS if seed_obs else GOOGLENET_ONLY_DLA
        res = C.fit(dla_obs, xav, params)
        xav = res["platform"]
        fixed = [p for p, d in res["parameters"].items() if not d["constrained"]]
        fixed += [p for p in fs.XAVIER_DLA_PARAMS + bw if p not in params and not (seed_obs and p in bw)]
        notes.append(f"xavier-agx DLA refitted on {len(dla_obs)} observations without {family}"
                     + (f"; at prior (no data): {', '.join(fixed)}" if fixed else ""))
        out["xavier-agx"] = {p: C.get_param(xav, p) for p in pri}
    if family == "googlenet":
        out["orin-agx"] = dict(LONO_PRIORS["orin-agx"])
        notes.append("orin-agx: the GoogLeNet-fitted DLA parameter and the Xavier-fitted GPU memory floor "
                     "-> priors")
    if family == "resnet":
        out["a100"] = dict(LONO_PRIORS["a100"])
        out["orin-agx"] = {"gpu.tensor_efficiency": ORIN_TENSOR_PRIOR}
        notes.append("a100: its only data are ResNet-18 -> first-estimate priors (and the Orin iGPUs' A100-fitted "
                     "tensor_efficiency)")
    if family == "mobilenet":
        out["orin-agx"] = {"dla.depthwise_macs_per_cycle": None}
        notes.append("orin-agx: depthwise rate unset (SSD-MobileNetV1 was its only data): depthwise on the MAC array")
    if family == "kernels":
        out["h200"] = dict(LONO_PRIORS["h200"])
        notes.append("h200: every fit reads the kernel grid -> first-estimate priors")
    for copy, orig in COPIES.items():
        if orig in out:
            plat = dlasim.hardware(copy)
            out[copy] = {p: v for p, v in out[orig].items() if _has(plat, p)}
    return out, notes


def _has(plat, param: str) -> bool:
    block = getattr(plat, param.split(".")[0], None)
    return block is not None and param.split(".")[1] in type(block).model_fields


def run(fs, say=print) -> dict:
    cases = V.load_cases()
    fit_families = sorted({c["family"] for c in cases if c.get("fitted") == "yes"})
    report = {}
    pooled: list[float] = []
    for fam in sorted({c["family"] for c in cases}):
        mine = [c for c in cases if c["family"] == fam and (c.get("kind") or "estimate") == "estimate"]
        if not mine:
            continue
        values, notes = refit_without(fam, fs) if fam in fit_families else ({}, ["no fit reads it: as validate"])
        runner = V._Runner()
        runner.cases = {c["name"]: c for c in cases}       # minus_case metrics read another case
        for c in mine:
            spec = V.platform_key(c["platform"])
            if c["platform"] not in runner.platforms:
                runner.platforms[c["platform"]] = C.apply(dlasim.hardware(c["platform"]), values.get(spec, {}))
        rows = [V.run_case(c, runner) for c in mine]
        errs = [abs(r["error_pct"]) for r in rows if r["error_pct"] is not None]
        pooled += errs
        s = V.summarize(rows)
        if s["n_errors"]:
            say(f"   {s['n_errors']} case(s) failed: " + "; ".join(f"{r['name']}: {r['error']}" for r in rows
                                                                  if r["error"]))
        report[fam] = {"n": s["n"], "median_abs_error_pct": s["median_abs_error_pct"],
                       "within_20pct": s["within_20pct"], "refit": fam in fit_families, "notes": notes,
                       "cases": [(r["name"], r["platform"], r["error_pct"]) for r in rows]}
        say(f"\n-- family {fam} ({'refitted without it' if fam in fit_families else 'no fit reads it'}): "
            f"{s['n']} cases, median |error| {s['median_abs_error_pct']:.1f}%, within 20% "
            f"{100 * s['within_20pct']:.0f}%")
        for n in notes:
            say(f"   {n}")
        for name, plat, e in report[fam]["cases"]:
            say(f"   {name:<44} {plat:<18} " + ("ERROR" if e is None else f"{e:+7.1f}%"))
    med = statistics.median(pooled) if pooled else None
    fit_errs = [abs(e) for f, r in report.items() if r["refit"] for _, _, e in r["cases"] if e is not None]
    say(f"\nleave-one-network-out: median |held-out error| {med:.1f}% over {len(pooled)} cases "
        f"(every case predicted without its own family's data); families a fit reads: "
        f"{statistics.median(fit_errs):.1f}% over {len(fit_errs)}; per-family medians: "
        + ", ".join(f"{f} {r['median_abs_error_pct']:.1f}%" for f, r in report.items()))
    return {"families": report, "median_abs_error_pct": med, "n": len(pooled)}
