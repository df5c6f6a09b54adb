"""Leave-one-network-out (validation/lono.py): which fits are redone and what replaces the fitted values."""
from __future__ import annotations

import importlib.util
import sys

import dlasim
from dlasim import calibrate as C
from dlasim import validate

ROOT = validate.ROOT


def _load(name):
    sys.path.insert(0, str(ROOT / "validation"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "validation" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


lono = _load("lono")


def test_a_family_no_fit_reads_changes_nothing():
    assert lono.refit_without("vgg", fs=None) == ({}, [])


def test_without_resnet_the_a100_goes_back_to_its_priors():
    values, notes = lono.refit_without("resnet", fs=None)
    assert values["a100"] == lono.LONO_PRIORS["a100"] and "a100" in notes[0]
    a = C.apply(dlasim.hardware("a100"), values["a100"])
    assert a.gpu.tensor_efficiency == 0.7 != dlasim.hardware("a100").gpu.tensor_efficiency
    # the Orin iGPUs take the A100-fitted tensor_efficiency (fit_specs.py): without ResNet, their first estimate
    assert values["orin-agx"] == values["orin-nx-16gb"] == {"gpu.tensor_efficiency": 0.6}
    assert dlasim.hardware("orin-agx").gpu.tensor_efficiency == dlasim.hardware("a100").gpu.tensor_efficiency
    assert set(values) == {"a100", "orin-agx", "orin-nx-16gb"}


def test_without_mobilenet_the_orin_depthwise_rate_is_unset_on_both_orins():
    values, _ = lono.refit_without("mobilenet", fs=None)
    assert values["orin-agx"] == {"dla.depthwise_macs_per_cycle": None}
    assert values["orin-nx-16gb"] == {"dla.depthwise_macs_per_cycle": None}   # a copy of orin-agx's value


def test_priors_are_not_the_fitted_values():
    # the priors predate every fit: none equals the value fit_specs.py wrote, except a share the fit
    # pushed to its upper bound 1 (xavier-agx dla.mac_efficiency_fp16, whose prior is ideal issue)
    for spec, pri in lono.LONO_PRIORS.items():
        plat = dlasim.hardware(spec)
        fitted = {p: C.get_param(plat, p) for p in pri if "fitted" in _source(plat, p)}
        assert fitted and all(pri[p] != v or v == 1.0 for p, v in fitted.items()), spec


def _source(plat, param):
    block, key = param.split(".")
    return getattr(plat, block).sources.get(key, "")


def test_without_the_kernel_data_no_grid_fitted_h200_value_survives():
    """Every h200 parameter fit_specs.py fits on the kernel grid (gpu_classes.CLASS_PARAMS) or the GEMM
    micro-benchmarks goes back to a prior without the kernels family; class fields go back to unset."""
    classes = _load("gpu_classes")
    values, _ = lono.refit_without("kernels", fs=None)
    fitted = {p for ps in classes.CLASS_PARAMS.values() for p in ps} | {
        "gpu.tensor_efficiency", "gpu.tensor_latency_s", "gpu.sparse_efficiency", "gpu.sparse_k_half"}
    assert fitted <= set(values["h200"])
    h = C.apply(dlasim.hardware("h200"), values["h200"])
    assert h.gpu.conv1x1_efficiency is None and h.gpu.l2_bandwidth_bytes_per_s is None
    assert h.gpu.tensor_latency_s == 0.0 and h.gpu.kernel_floor_s == 3e-6
