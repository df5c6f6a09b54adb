"""Leave-one-network-out for validation/fit_specs.py (`--leave-one-network-out`).

For each network family that some fit reads (the `family` column of validation/cases.csv names the family
of every case), the fits that read data of that family are redone without it, and every case of the family
is predicted with the refitted values. A fit whose data hold no observation of the family keeps the spec's
values (redoing it would reproduce them). A parameter left with no data at all goes back to its prior
(LONO_PRIORS), never to a fitted value of the same spec, and never to a value read off the left-out family's
data: each prior names its source and the families whose data that source read (`Prior.families`), and
tests/test_lono.py checks that no family is predicted with a prior that read its own data.

The priors are the first estimates of each spec's first version (git: xavier-agx.toml at eb6407d,
a100/h200/orin-agx at bd5db10) where those read no data of the family that sends the parameter back to them;
where they did (the Xavier GPU floors were read off the GoogLeNet profile, the Orin copies off the Orin
GoogLeNet log, every first H200 value off the H200 micro-benchmarks), the prior is a value from an independent
source, said in its `source`. Parameters
added later have the value the model used before they existed (a mechanism switched off).

Simplifications, said here so the report can be read: the Xavier GPU and DLA fits are redone once each
(fit_specs.py alternates them twice); the Orin depthwise rate keeps its value when only the GoogLeNet-fitted
Orin parameter goes back to its prior.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

import dlasim
from dlasim import calibrate as C
from dlasim import validate as V


@dataclass(frozen=True)
class Prior:
    """A parameter's value when the data that fit it are left out. `value` None: the field unset (the
    mechanism it drives switched off). `from_spec`: the value is that spec's current (fitted) value of the same
    parameter, read at run time. `families`: the network families whose data the source read."""
    source: str
    value: float | None = None
    families: tuple[str, ...] = ()
    from_spec: str | None = None

    def get(self, param: str):
        return C.get_param(dlasim.hardware(self.from_spec), param) if self.from_spec else self.value


_FIRST = "first estimate of the spec's first version: "
_OFF = "the model before this field existed: "
_A100_FIT = ("fitted on A100 data by validation/fit_specs.py (trex ResNet-18 FP16 TensorRT profile, the one "
             "per-layer TensorRT GPU fit that reads neither GoogLeNet nor the H200 kernels): ")
# Xavier GPU first estimates read off googlenet_gpu_mark_at_-1.profile, replaced for the GoogLeNet family:
# Volta has no other platform in the data, so the floors come from the A100's TensorRT fit
_XAVIER_FLOOR = Prior(_A100_FIT + "the per-kernel floor of TensorRT's kernels, assumed for the Volta iGPU",
                      from_spec="a100", families=("resnet",))
# seed 000 'input to nvm' (validation/data/seeds/xavier_dla_conv_breakdown.csv): the 13.25 MB FP32 input
# (32 x 528 x 14 x 14) written as 3.41 MB INT8 chw32 in 1.016 ms and 6.62 MB FP16 chw16 in 0.970 ms. Counted
# as the model counts bytes (cost/copies.py): a GPU reformat by read + written bytes, 0.120 / 0.150 of 136.5 GB/s,
# mean 0.135; a copy into DLA memory by the larger side, 0.096 / 0.100, mean 0.098. The first estimate 0.12 also
# read HaX-CoNN's GoogLeNet reformatter (~20 GB/s), which these priors leave out.
_SEED = "seed 000 'input to nvm' rows (the first estimate's GoogLeNet figure left out): "
_SEED_REFORMAT = Prior(_SEED + "(read + written bytes) / time = 0.120 and 0.150 of 136.5 GB/s, mean 0.135", 0.135,
                       ("single_conv",))
_SEED_DLA_COPY = Prior(_SEED + "larger side / time = 0.096 and 0.100 of 136.5 GB/s, mean 0.098", 0.098,
                       ("single_conv",))

LONO_PRIORS: dict[str, dict[str, Prior]] = {
    "xavier-agx": {
        "gpu.tensor_efficiency": Prior(_FIRST + "H200 cuBLAS reaches 76% of dense peak (ref/gpu.md s1.1 notes), "
                                       "an iGPU sustains less", 0.6, ("kernels",)),
        "gpu.kernel_floor_s": _XAVIER_FLOOR,
        "gpu.memory_kernel_floor_s": _XAVIER_FLOOR,
        "copies.reformat_efficiency": _SEED_REFORMAT,
        "copies.reformat_floor_s": Prior("ref/gpu.md s3.3 and s7 fact 8: reformat floor 4-5 us (TITAN RTX "
                                         "per-layer profiles 3.97-5.54 us), as a100.toml's first estimate; the "
                                         "first estimate read the HaX-CoNN GoogLeNet profiles", 4e-6),
        "copies.transition_overhead_s": Prior(_FIRST + "HaX-CoNN transition_results.json, DLA exit +0.045..0.084 ms "
                                              "(ref/dla.md s5.1)", 50e-6, ("googlenet",)),
        "copies.dla_copy_efficiency": _SEED_DLA_COPY,
        # ref/dla.md s1.5 primer table: the nv_full configuration (2048 INT8 MACs, 512 KB CBUF, Xavier's DLA)
        # is paired with 20 GB/s at 1 GHz, 20 bytes per DLA cycle
        "dla.dram_bytes_per_cycle": Prior("ref/dla.md s1.5 NVDLA primer: 2048 MACs / 512 KB CBUF paired with "
                                          "20 GB/s at 1 GHz = 20 bytes per DLA cycle (the first estimate, half "
                                          "of the DRAM peak, had no source)", 20.0),
        "dla.mac_efficiency": Prior(_FIRST + "ideal MAC issue (the physical bound)", 1.0),
        "dla.mac_efficiency_fp16": Prior(_OFF + "= mac_efficiency, ideal MAC issue", 1.0),
        "dla.layer_overhead_s": Prior(_FIRST + "per fused hardware layer programming/pipeline fill; no source "
                                      "gives a figure (the NVDLA spreadsheet models no SW overhead, ref/dla.md "
                                      "s1.5), and only GoogLeNet's multi-layer loadable identifies it", 5e-6),
        "dla.subgraph_overhead_s": Prior(_FIRST + "seed 000 '{conv1}' 0.052-0.055 ms for a one-layer loadable",
                                         50e-6, ("single_conv",)),
        "gpu.tensor_latency_s": Prior(_OFF + "no kernel ramp", 0.0),
        "gpu.gemv_efficiency": Prior(_OFF + "= memory_efficiency's first estimate", 0.6),
        "gpu.operand_bytes_per_clk_per_sm": Prior(_OFF + "no operand limit on a CTA tile", None),
        # no SM limit before: the per-SM rate that gives the 0.6 first-estimate share on AGX
        # (0.6 x 136.5e9 / (8 x 1377e6)) under memory_efficiency 0.8552 (the H200 fit)
        "gpu.stream_bytes_per_clk_per_sm": Prior(_OFF + "no SM-side limit: the rate giving the 0.6 share under "
                                                 "the H200-fitted memory_efficiency", 7.435, ("kernels",)),
    },
    "a100": {
        "gpu.tensor_efficiency": Prior(_FIRST + "H200 cuBLAS 748 TFLOPS = 0.70 of its peak (ref/gpu.md s6.2)",
                                       0.7, ("kernels",)),
        # the first estimate 0.8 also read the trex A100 transposes (the ResNet files); the H200 figure alone
        "gpu.memory_efficiency": Prior("ref/gpu.md s6.1/s6.4: H200 D2D copy and large casts 0.83 of HBM peak "
                                       "(the first estimate 0.8 also read the trex A100 ResNet reformats)",
                                       0.83, ("kernels",)),
        "gpu.kernel_floor_s": Prior(_FIRST + "per-kernel floor 2-7 us on the H200 (ref/gpu.md s5.1, s6), "
                                    "A100 slightly above", 4e-6, ("kernels",)),
        "gpu.memory_kernel_floor_s": Prior(_OFF + "= kernel_floor_s's first estimate", 4e-6, ("kernels",)),
    },
    # every first H200 value was read off the H200 micro-benchmarks (ref/gpu.md s6 [M-h200], the kernels
    # family's data): without them, the A100 TensorRT fit for the fields it fits, the datasheet for sparsity
    "h200": {
        **{p: Prior(_A100_FIT + "assumed for Hopper, as a40.toml assumes it for GA102", from_spec="a100",
                    families=("resnet",))
           for p in ("gpu.tensor_efficiency", "gpu.memory_efficiency", "gpu.kernel_floor_s",
                     "gpu.memory_kernel_floor_s")},
        "gpu.sparse_efficiency": Prior("datasheet (ref/gpu.md s1.1 table): 2:4 sparse peak = 2 x dense, i.e. the "
                                       "ideal speedup", 1.0),
        "copies.reformat_efficiency": Prior("a100.toml first estimate: trex A100 reformats of 19-51 MB at 253-1140 "
                                            "GB/s of 1935, ~0.3 (ref/gpu.md s3.3)", 0.3, ("resnet",)),
        "copies.reformat_floor_s": Prior("ref/gpu.md s3.3 and s7 fact 8: reformat floor 4-5 us (TITAN RTX)", 4e-6),
        "gpu.launch_overhead_s": Prior("ref/gpu.md s5.1: RTX 5070 Ti CUDA graph ~0.58 us per node (ahrefs/ocannl#488 "
                                       "[M]); the spec's 0.84 us was measured on the H200 itself", 0.58e-6),
        "gpu.gemm_floor_s": Prior(_OFF + "unset: GEMMs take kernel_floor_s (the spec's 2 us was read off the H200 "
                                  "GEMMs)"),
        **{p: Prior(_OFF + "no kernel ramp, no K dependence of the sparse share", 0.0)
           for p in ("gpu.tensor_latency_s", "gpu.sparse_k_half")},
        **{p: Prior(_OFF + "unset: the generic fields serve every kernel class, no L2 term")
           for p in ("gpu.l2_bandwidth_bytes_per_s", "gpu.l2_usable_fraction", "gpu.conv_tensor_efficiency", "gpu.conv1x1_efficiency",
                     "gpu.conv1x1_floor_s", "gpu.gemv_efficiency", "gpu.gemv_floor_s", "gpu.depthwise_efficiency",
                     "gpu.depthwise_floor_s", "gpu.reduce_efficiency", "gpu.reduce_floor_s")},
    },
    "orin-agx": {
        "dla.mac_efficiency_fp16": Prior(_OFF + "= mac_efficiency's first estimate, ideal MAC issue", 1.0),
        "dla.layer_overhead_s": Prior(_FIRST + "as xavier-agx's (no source gives a figure)", 5e-6),
        # the first value (8e-6) was Xavier's first estimate, read off the GoogLeNet profile; GA10B has the
        # A100-class SM (ref/gpu.md s1.1 notes)
        "gpu.memory_kernel_floor_s": Prior(_A100_FIT + "GA10B has the A100-class SM (ref/gpu.md s1.1 notes)",
                                           from_spec="a100", families=("resnet",)),
        # orin-agx.toml's copies block was read off the Orin GoogLeNet log (HaX-CoNN README, ref/dla.md s5.1)
        "copies.reformat_efficiency": Prior("a100.toml first estimate (trex A100 reformats at 0.13-0.59 of peak, "
                                            "~0.3, ref/gpu.md s3.3), the Ampere GPU's figure", 0.3, ("resnet",)),
        "copies.reformat_floor_s": Prior("ref/gpu.md s3.3 and s7 fact 8: reformat floor 4-5 us (TITAN RTX "
                                         "per-layer profiles 3.97-5.54 us)", 4e-6),
        "copies.transition_overhead_s": Prior("lower bound: no hand-over cost beyond the copies; no Orin figure "
                                              "that reads no GoogLeNet data", 0.0),
        # the Orin iGPUs' tensor_efficiency before fit_specs.py took the A100-fitted value
        "gpu.tensor_efficiency": Prior(_FIRST + "as xavier-agx (H200 cuBLAS 76% of dense peak, ref/gpu.md s1.1 "
                                       "notes)", 0.6, ("kernels",)),
        # orin-agx.toml keeps 0.5 ('half of 204.8 GB/s') because the Xavier share put the Orin GoogLeNet log and
        # the DLA-SW ResNet-50 too slow: a choice made on those families' data. The primer's balance instead
        # (as xavier-agx's prior): 20 bytes per cycle per 2048 MACs, x 8192 MACs (the spec's per-core count)
        "dla.dram_bytes_per_cycle": Prior("ref/dla.md s1.5 NVDLA primer: 20 GB/s per 2048 MACs at 1 GHz, x 4 "
                                          "(8192 INT8 MACs per core, orin-agx.toml) = 80 bytes per DLA cycle",
                                          80.0),
    },
}
# which orin-agx priors each family sends back (the fitted or hand-read values that read its data)
ORIN_RESETS = {"googlenet": ("dla.mac_efficiency_fp16", "dla.layer_overhead_s", "gpu.memory_kernel_floor_s",
                             "copies.reformat_efficiency", "copies.reformat_floor_s", "copies.transition_overhead_s",
                             "dla.dram_bytes_per_cycle"),
               "resnet": ("gpu.tensor_efficiency", "dla.dram_bytes_per_cycle")}
# a copy's own prior: the same DLA 2.0 core, per DLA cycle as orin-agx's
LONO_PRIORS["orin-nx-16gb"] = {
    "dla.dram_bytes_per_cycle": Prior("ref/dla.md s1.5 NVDLA primer balance as orin-agx's prior (the same DLA "
                                      "2.0 core): 80 bytes per DLA cycle", 80.0)}
GOOGLENET_ONLY_DLA = ["dla.mac_efficiency_fp16", "dla.layer_overhead_s", "dla.subgraph_overhead_s",
                      "copies.dla_copy_efficiency"]
# specs whose values are copies of another spec's fitted values (their sources say so)
COPIES = {"xavier-nx": "xavier-agx", "orin-nx-16gb": "orin-agx"}


def prior_values(spec: str) -> dict:
    """{param: value} of a spec's priors."""
    return {p: pr.get(p) for p, pr in LONO_PRIORS[spec].items()}


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
        pri = prior_values("xavier-agx")
        gpu_obs = [] if family == "googlenet" else fs.xavier_gpu_observations(xav0)
        seed_obs = [] if family == "single_conv" else fs.seed_observations(xav0)
        dla_obs = seed_obs + ([] if family == "googlenet" else fs.googlenet_dla_observations(xav0))
        xav = C.apply(xav0, {p: pri[p] for p in fs.XAVIER_GPU_PARAMS + fs.XAVIER_DLA_PARAMS
                             + [fs.XAVIER_DLA_BANDWIDTH]})
        if gpu_obs:
            xav = C.apply(xav, _keep("xavier-agx", fs.XAVIER_GPU_PARAMS))
            notes.append("xavier-agx GPU: kept (its data are GoogLeNet only)")
        else:
            notes.append("xavier-agx GPU + copies.reformat_*: no data left -> priors (kernel floors from the A100 fit, "
                         "reformat share from seed 000, first estimates otherwise)")
        bw = [fs.XAVIER_DLA_BANDWIDTH]
        bw_fixed = []
        if seed_obs:
            # as fit_specs.py: the DLA share fitted on seed 000 together with the DLA parameters, only it kept
            d = C.fit(seed_obs, xav, fs.XAVIER_DLA_PARAMS + bw)["parameters"][bw[0]]
            xav = C.apply(xav, {bw[0]: d["after"]})
            bw_fixed = [] if d["constrained"] else bw
        # without seed 000 only FP16 GoogLeNet rows remain (5 usable): the INT8 MAC efficiency, the DRAM share
        # and the transition overhead keep their priors
        params = fs.XAVIER_DLA_PARAMS if seed_obs else GOOGLENET_ONLY_DLA
        res = C.fit(dla_obs, xav, params)
        xav = res["platform"]
        fixed = [p for p, d in res["parameters"].items() if not d["constrained"]]
        fixed += [p for p in fs.XAVIER_DLA_PARAMS + bw if p not in params and not (seed_obs and p in bw)] + bw_fixed
        notes.append(f"xavier-agx DLA refitted on {len(dla_obs)} observations without {family}"
                     + (f"; at prior (no data): {', '.join(fixed)}" if fixed else ""))
        out["xavier-agx"] = {p: C.get_param(xav, p) for p in pri}
    if family == "googlenet":
        out["orin-agx"] = {p: prior_values("orin-agx")[p] for p in ORIN_RESETS["googlenet"]}
        notes.append("orin-agx: the GoogLeNet-fitted DLA parameter, the Xavier-fitted GPU memory floor, the "
                     "copies read off the Orin GoogLeNet log and the DLA DRAM share kept on it -> priors")
    if family == "resnet":
        out["a100"] = prior_values("a100")
        out["orin-agx"] = {p: prior_values("orin-agx")[p] for p in ORIN_RESETS["resnet"]}
        notes.append("a100: its only data are ResNet-18 -> priors (and the Orin iGPUs' A100-fitted "
                     "tensor_efficiency, the Orin DLA DRAM share kept on GoogLeNet/ResNet-50 evidence)")
    if family == "mobilenet":
        out["orin-agx"] = {"dla.depthwise_macs_per_cycle": None}
        notes.append("orin-agx: depthwise rate unset (SSD-MobileNetV1 was its only data): depthwise on the MAC array")
    if family == "kernels":
        out["h200"] = prior_values("h200")
        # the A100 fit that lends the H200 its priors ran with the H200 grid's class floors in place
        # (fit_specs.py discrete_class_floors): without the grid it is redone with them unset
        a0 = C.apply(dlasim.hardware("a100"), {p: None for p in fs.OPEN_CLASS_FLOORS})
        a_fit = C.fit(fs.a100_observations(a0), a0, fs.A100_PARAMS)["platform"]
        for p, pr in LONO_PRIORS["h200"].items():
            if pr.from_spec == "a100":
                out["h200"][p] = C.get_param(a_fit, p)
        notes.append("h200: every fit reads the kernel grid -> priors from the A100 fit (redone without the grid's "
                     "class floors) and the datasheet (the first estimates were read off the H200 micro-benchmarks)")
    for copy, orig in COPIES.items():
        if orig in out:
            plat = dlasim.hardware(copy)
            own = LONO_PRIORS.get(copy, {})
            out[copy] = {p: own[p].get(p) if p in own else v for p, v in out[orig].items() if _has(plat, p)}
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
