"""dlasim calibrate's pieces by hand: the soft_l1 cost, the finite-difference Jacobian, dropping flat parameters,
the reported 1-sigma band, the parameter bounds, the spec-text patching, one model against several profiles and
the text report (the survivors of a mutation sample of dlasim/calibrate, benchmarks/mutation.py --package
calibrate)."""
import math
from pathlib import Path

import numpy as np
import pytest

from dlasim import calibrate as C
from dlasim.calibrate import fitting as F

ROOT = Path(__file__).resolve().parent.parent
HAX = ROOT / "validation" / "data" / "haxconn"
GOOGLENET = str(HAX / "prototxt" / "googlenet.prototxt")
GPU_PROFILE = str(HAX / "profiles" / "googlenet_gpu_mark_at_-1.profile")


def _problem(log_ratio=None, loss="soft_l1", f_scale=0.1, params=("a",), priors=None, bounds=None):
    """A _Problem whose residuals are given directly (no platform, no observations)."""
    class P(F._Problem):
        def log_ratio(self, values):
            return log_ratio(values)
    params = list(params)
    return P([], np.array([]), None, params, priors or {p: 1.0 for p in params},
             bounds or {p: (0.5, 2.0) for p in params}, {p: 1.0 for p in params}, loss, f_scale, 10)


def test_soft_l1_cost_by_hand():
    r = np.array([0.1, -0.2])           # with f_scale 0.1: z = 1 and 4
    pb = _problem(lambda v: r)
    assert math.isclose(pb.cost({}), 2 * (math.sqrt(2) - 1) + 2 * (math.sqrt(5) - 1), rel_tol=1e-12)
    assert math.isclose(_problem(lambda v: r, loss="linear").cost({}), 1 + 4, rel_tol=1e-12)


def test_jacobian_central_difference_by_hand():
    # d(x^3)/dx by central difference with step h: 3 x^2 + h^2 (h = 0.01); d(2 y)/dy = 2 exactly
    x = np.array([1.0, 5.0])
    J = F._jacobian(lambda v: np.array([v[0] ** 3, 2 * v[1]]), x)
    assert J.shape == (2, 2)
    assert math.isclose(J[0, 0], 3.0 + 1e-4, rel_tol=1e-9)
    assert math.isclose(J[1, 1], 2.0, rel_tol=1e-12)
    assert J[0, 1] == 0 and J[1, 0] == 0


def test_drop_flat_removes_the_named_columns_and_keeps_the_rest():
    pb = _problem(lambda v: np.zeros(3), params=("a", "b", "c"))
    st = F._Elimination(active=["a", "b", "c"])
    F._drop_flat(pb, st, {"a": 1.0, "b": 1.0, "c": 1.0}, [0, 2])
    assert st.active == ["b"]
    assert set(st.reasons) == {"a", "c"} and not st.one_sided
    assert "do not depend" in st.reasons["a"]


def test_drop_flat_one_sided_when_the_prior_costs_more():
    # the residual is log(a): at the fitted 0.5 it is -0.69, at the prior 1.0 it is 0 -- the prior fits better, so
    # a is "not depending"; with the residual log(a / 0.5) the prior costs more: one-sided, kept at 0.5 (down)
    pb = _problem(lambda v: np.array([math.log(v["a"] / 0.5)]))
    st = F._Elimination(active=["a"])
    F._drop_flat(pb, st, {"a": 0.5}, [0])
    assert st.one_sided == {"a": 0.5} and st.active == []
    assert st.reasons["a"].startswith("one-sided: the data push it down to 0.5")


def test_parameter_report_band_by_hand():
    pb = _problem(lambda v: np.zeros(1), bounds={"a": (0.5, 4.0)})
    st = F._Elimination(active=[], result_x={"a": 2.0}, sigma={"a": 0.05})
    d = F._parameter_report("a", pb, st, 2.0)
    assert d["constrained"] and math.isclose(d["band"], 0.1) and math.isclose(d["band_pct"], 5.0)
    assert "at_bound" not in d
    assert F._parameter_report("a", pb, st, 0.5)["at_bound"] == "lower"
    assert F._parameter_report("a", pb, st, 4.0)["at_bound"] == "upper"


@pytest.mark.parametrize("name, bounds", [
    ("gpu.tensor_efficiency", (0.02, 1.0)),                 # EFF_BOUNDS
    ("gpu.kernel_floor_s", (1e-8, 1e-3)),                   # TIME_BOUNDS
    ("memory.dram_bandwidth_bytes_per_s", (1e9, 1e14)),     # a bandwidth
    ("gpu.sparse_k_half", (1.0, 1e5)),
    ("dla.clock_hz", (1e-6, 1e12)),                         # any other number
    ("dla.image_mode_utilization", (1e-6, 1.0)),            # the field's le=1 is tighter than 1e12
])
def test_bounds_per_kind_of_field(name, bounds):
    assert C.bounds_of(name) == bounds


def test_patch_adds_a_sources_table_after_its_table():
    text = "[gpu]\nkernel_floor_s = 1e-05  # measured\n\n[copies]\nx = 1.0\n"
    out = C.patch_spec_text(text, {"gpu.kernel_floor_s": 2e-5}, {"gpu.kernel_floor_s": "fit"})
    assert out == ('[gpu]\nkernel_floor_s = 2e-05  # measured\n\n[gpu.sources]\nkernel_floor_s = "fit"\n\n'
                   '[copies]\nx = 1.0\n')


def test_patch_adds_a_missing_key_after_the_tables_last_line():
    text = "[gpu]\na = 1.0\n\n[gpu.sources]\na = \"x\"\n\n[copies]\nx = 1.0"
    out = C.patch_spec_text(text, {"gpu.b": 3}, {"gpu.b": "fit"})
    assert out == '[gpu]\na = 1.0\nb = 3.0\n\n[gpu.sources]\na = "x"\nb = "fit"\n\n[copies]\nx = 1.0'


@pytest.fixture(scope="module")
def one_profile_fit(tmp_path_factory):
    out = tmp_path_factory.mktemp("cal") / "x.toml"
    return C.calibrate("xavier-agx", [GOOGLENET], [GPU_PROFILE], str(out), device="gpu",
                       params=["gpu.memory_efficiency"])


def test_one_model_serves_every_profile(one_profile_fit, tmp_path):
    # the same profile twice against the one model: every observation twice
    two = C.calibrate("xavier-agx", [GOOGLENET], [GPU_PROFILE, GPU_PROFILE], str(tmp_path / "y.toml"),
                      device="gpu", params=["gpu.memory_efficiency"])
    assert two["n"] == 2 * one_profile_fit["n"] > 0


def test_text_report_lists_every_observation(one_profile_fit):
    text = C.render(one_profile_fit)
    lines = text.split("\n")
    head = next(i for i, ln in enumerate(lines) if ln.startswith("observation"))
    assert lines[head].split() == ["observation", "measured", "before", "after"]
    rows = lines[head + 1:head + 1 + one_profile_fit["n"]]
    assert len(rows) == one_profile_fit["n"] and all(len(r.split()) >= 4 for r in rows)
    assert lines[-1].startswith("wrote ")
