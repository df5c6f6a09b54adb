"""Leave-one-network-out (validation/lono.py): which fits are redone and what replaces the fitted values."""
from __future__ import annotations

import importlib.util
import re
import sys
from functools import lru_cache

import pytest

import dlasim
from dlasim import calibrate as C
from dlasim import validate

ROOT = validate.ROOT


def _load(name):
    sys.path.insert(0, str(ROOT / "validation"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "validation" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod      # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


lono = _load("lono")


def test_a_family_no_fit_reads_changes_nothing():
    assert lono.refit_without("vgg", fs=None) == ({}, [])


def test_without_resnet_the_a100_goes_back_to_its_priors():
    values, notes = lono.refit_without("resnet", fs=None)
    assert values["a100"] == lono.prior_values("a100") and "a100" in notes[0]
    a = C.apply(dlasim.hardware("a100"), values["a100"])
    assert a.gpu.tensor_efficiency == 0.7 != dlasim.hardware("a100").gpu.tensor_efficiency
    # the first estimate 0.8 also read the trex A100 ResNet reformats: the H200 figure alone
    assert a.gpu.memory_efficiency == 0.83
    # the Orin iGPUs take the A100-fitted tensor_efficiency (fit_specs.py): without ResNet, their first estimate;
    # the Orin DLA DMA rate (kept at 64 B/cycle on GoogLeNet/ResNet-50 evidence) goes to the primer balance:
    # 20 GB/s per 2048 MACs at 1 GHz = 20 B per cycle, x 8192 MACs / 2048 = 80 B per DLA cycle (AGX and NX)
    assert values["orin-agx"] == {"gpu.tensor_efficiency": 0.6, "dla.dram_bytes_per_cycle": 80.0}
    assert values["orin-nx-16gb"] == {"gpu.tensor_efficiency": 0.6, "dla.dram_bytes_per_cycle": 80.0}
    assert dlasim.hardware("orin-agx").gpu.tensor_efficiency == dlasim.hardware("a100").gpu.tensor_efficiency
    assert set(values) == {"a100", "orin-agx", "orin-nx-16gb"}


def test_without_mobilenet_the_orin_depthwise_rate_is_unset_on_both_orins():
    values, _ = lono.refit_without("mobilenet", fs=None)
    assert values["orin-agx"] == {"dla.depthwise_macs_per_cycle": None}
    assert values["orin-nx-16gb"] == {"dla.depthwise_macs_per_cycle": None}   # a copy of orin-agx's value


def test_priors_are_not_the_fitted_values():
    # the priors predate every fit: none equals the value fit_specs.py wrote, except a share the fit
    # pushed to its upper bound 1 (xavier-agx dla.mac_efficiency_fp16, whose prior is ideal issue)
    for spec in lono.LONO_PRIORS:
        plat = dlasim.hardware(spec)
        pri = lono.prior_values(spec)
        fitted = {p: C.get_param(plat, p) for p in pri if "fitted" in _source(plat, p)}
        assert fitted and all(pri[p] != v or v == 1.0 for p, v in fitted.items()), spec


def _source(plat, param):
    block, key = param.split(".")
    return getattr(plat, block).sources.get(key, "")


def test_without_the_kernel_data_no_grid_fitted_h200_value_survives():
    """Every h200 parameter fit_specs.py fits on the kernel grid (gpu_classes.CLASS_PARAMS) or the GEMM
    micro-benchmarks goes back to a prior without the kernels family; class fields go back to unset."""
    classes = _load("gpu_classes")
    values, _ = lono.refit_without("kernels", _fs())
    fitted = {p for ps in classes.CLASS_PARAMS.values() for p in ps} | {
        "gpu.tensor_efficiency", "gpu.tensor_latency_s", "gpu.sparse_efficiency", "gpu.sparse_k_half"}
    assert fitted <= set(values["h200"])
    h = C.apply(dlasim.hardware("h200"), values["h200"])
    assert h.gpu.conv1x1_efficiency is None and h.gpu.l2_bandwidth_bytes_per_s is None
    # the first H200 values were read off the H200 micro-benchmarks themselves: the A100 fit replaces them,
    # redone with the H200 grid's class floors unset (a100.toml carries them, fit_specs.discrete_class_floors)
    a0 = C.apply(dlasim.hardware("a100"), {"gpu.conv1x1_floor_s": None, "gpu.depthwise_floor_s": None})
    a = C.fit(_fs().a100_observations(a0), a0, _fs().A100_PARAMS)["platform"]
    assert h.gpu.tensor_latency_s == 0.0 and h.gpu.kernel_floor_s == a.gpu.kernel_floor_s != 3e-6
    assert h.gpu.tensor_efficiency == a.gpu.tensor_efficiency and h.gpu.gemm_floor_s is None
    assert h.gpu.memory_efficiency == a.gpu.memory_efficiency
    assert h.gpu.sparse_efficiency == 1.0 and h.gpu.launch_overhead_s == 0.58e-6


def test_without_the_kernel_data_the_h200_priors_do_not_read_the_grid_through_the_a100(monkeypatch):
    """Negative test: the A100 spec's class floors come from the H200 grid (the kernels family's data); set
    them absurdly high and the H200 priors the kernels family is predicted with must not move."""
    want, _ = lono.refit_without("kernels", _fs())
    real = dlasim.hardware

    def odd(name, *a, **k):
        plat = real(name, *a, **k)
        if name == "a100":
            plat = C.apply(plat, {"gpu.conv1x1_floor_s": 1e-3, "gpu.depthwise_floor_s": 1e-3})
        return plat

    monkeypatch.setattr(lono.dlasim, "hardware", odd)
    got, _ = lono.refit_without("kernels", _fs())
    assert got["h200"] == want["h200"]


def test_the_seed_copy_priors_count_bytes_as_the_model_does():
    """Seed 000 'input to nvm': 32 x 528 x 14 x 14 FP32 in, INT8 chw32 (528 -> 544 channels) or FP16 chw16 out,
    1.016 / 0.970 ms. A GPU reformat costs (read + written) bytes, a copy into DLA memory its larger side."""
    rd = 32 * 528 * 14 * 14 * 4
    wr8, wr16 = 32 * 544 * 14 * 14, 32 * 528 * 14 * 14 * 2
    peak = 136.5e9
    gpu = ((rd + wr8) / 1.016e-3 / peak + (rd + wr16) / 0.970e-3 / peak) / 2
    dla = (rd / 1.016e-3 / peak + rd / 0.970e-3 / peak) / 2
    pri = lono.prior_values("xavier-agx")
    assert pri["copies.reformat_efficiency"] == pytest.approx(gpu, abs=0.001) == pytest.approx(0.135, abs=0.001)
    assert pri["copies.dla_copy_efficiency"] == pytest.approx(dla, abs=0.001)
    # the NVDLA primer: 20 GB/s for 2048 MACs at 1 GHz = 20 bytes per DLA cycle
    assert pri["dla.dram_bytes_per_cycle"] == 20e9 / 1e9


fs = None


def _fs():
    global fs
    if fs is None:
        fs = _load("fit_specs")
    return fs


@lru_cache(maxsize=None)
def _refit(family):
    return lono.refit_without(family, _fs())


FITTED_FAMILIES = sorted({c["family"] for c in validate.load_cases() if c.get("fitted") == "yes"})


@pytest.mark.parametrize("family", FITTED_FAMILIES)
def test_no_family_is_predicted_with_a_prior_read_off_its_own_data(family):
    values, _ = _refit(family)
    checked = 0
    for spec, params in values.items():
        own = {**lono.LONO_PRIORS.get(lono.COPIES.get(spec, spec), {}), **lono.LONO_PRIORS.get(spec, {})}
        for p, v in params.items():
            if p in own and v == own[p].get(p):
                checked += 1
                assert family not in own[p].families, (spec, p, own[p].source)
    assert checked or family == "mobilenet"


# the data each family's cases come from, as spec sources name them
DATA_OF = {"googlenet": r"googlenet", "single_conv": r"seeds/|seed 000", "resnet": r"a100-resnet50|resnet-18",
           "kernels": r"h200", "mobilenet": r"ssd_mobilenet|ssd-mobilenet"}
# device facts the data report (counts, clocks, capacities, datasheet rates): no fit reads them
DEVICE_FACTS = {"memory.dram_bandwidth_bytes_per_s", "memory.l2_bytes", "gpu.sm_count", "gpu.clock_hz",
                "gpu.cuda_core_fma_per_clk_per_sm"}


@pytest.mark.parametrize("family", FITTED_FAMILIES)
def test_every_value_read_off_a_family_is_reset_for_its_cases(family):
    """A spec value whose source names the family's data (fitted to it, read off it, or kept because of it)
    is refitted or sent back to a prior whenever that family's cases are predicted."""
    values, _ = _refit(family)
    specs = {validate.platform_key(c["platform"]) for c in validate.load_cases() if c["family"] == family}
    missing = []
    for spec in sorted(specs):
        plat = dlasim.hardware(spec)
        for blk in ("memory", "copies", "dla", "gpu"):
            b = getattr(plat, blk, None)
            for key, src in (b.sources.items() if b is not None else ()):
                v = getattr(b, key, None)
                p = f"{blk}.{key}"
                if isinstance(v, bool) or not isinstance(v, (int, float)) or p in DEVICE_FACTS:
                    continue
                if re.search(DATA_OF[family], src, re.I) and p not in values.get(spec, {}):
                    missing.append(f"{spec} {p}")
    assert not missing, missing


def test_the_audit_catches_a_value_left_fitted(monkeypatch):
    """Negative test: drop one reset and the audit above must fail."""
    values, notes = lono.refit_without("resnet", fs=None)
    del values["a100"]["gpu.kernel_floor_s"]
    monkeypatch.setattr(lono, "refit_without", lambda f, fs: (values, notes))
    _refit.cache_clear()
    try:
        with pytest.raises(AssertionError, match="a100 gpu.kernel_floor_s"):
            test_every_value_read_off_a_family_is_reset_for_its_cases("resnet")
    finally:
        _refit.cache_clear()


def test_without_googlenet_the_seed_000_dla_share_is_refitted_not_left_at_its_prior():
    """As fit_specs.py, the DLA DMA rate (bytes per cycle) is fitted on seed 000 together with the DLA parameters (alone it is
    not constrained and would stay at the 20 B/cycle prior); seed 000 is all that fit reads, so it lands on the
    spec's value."""
    values, notes = _refit("googlenet")
    v = values["xavier-agx"]["dla.dram_bytes_per_cycle"]
    assert v != lono.prior_values("xavier-agx")["dla.dram_bytes_per_cycle"]
    assert v == pytest.approx(dlasim.hardware("xavier-agx").dla.dram_bytes_per_cycle, rel=0.01)
    assert not any("dram_bytes_per_cycle" in n for n in notes)
    # without seed 000 it has no data: at its prior, and the note says so
    values, notes = _refit("single_conv")
    assert values["xavier-agx"]["dla.dram_bytes_per_cycle"] == 20.0 and "dla.dram_bytes_per_cycle" in notes[1]
