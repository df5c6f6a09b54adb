"""AGX Orin: the power modes against the published per-mode TOPS, and the round-trip bounds of
validation/orin_roundtrip.py (hand-computed)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dlasim.hardware import hardware

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("mode,dla_tops,gpu_tops,emc_ratio", [
    # DLA-SW README (dla.md s2 table; gpu_tensorrt.md s1.1): 2 x DLA / GPU sparse INT8 TOPs per mode. The 50W
    # DLA figure is 92, but nvpmodel caps the DLA at 1369.6 MHz in both 30W and 50W: 2 x 8192 x 2 x 2 x
    # 1.3696 GHz = 89.8 at both, within 3% of 92
    ("maxn", 105, 171, 1.0), ("50w", 92, 109, 1.0), ("30w", 90, 41, 1.0), ("15w", 40, 14, 2133 / 3200)])
def test_orin_modes_reproduce_the_published_tops_and_emc_cap(mode, dla_tops, gpu_tops, emc_ratio):
    p = hardware(f"orin-agx:{mode}")
    dla = p.dla.cores * p.dla.macs_per_cycle("int8") * 2 * 2 * p.dla.clock_hz / 1e12      # FMA = 2 ops, 2:4 = 2x
    gpu = p.gpu.sm_count * p.gpu.fma_per_clk_per_sm("int8") * 2 * 2 * p.gpu.clock_hz / 1e12
    assert dla == pytest.approx(dla_tops, rel=0.03)
    assert gpu == pytest.approx(gpu_tops, rel=0.01)
    assert p.memory.dram_bandwidth_bytes_per_s == pytest.approx(204.8e9 * emc_ratio)


def _roundtrip():
    sys.path.insert(0, str(ROOT / "validation"))
    import orin_roundtrip
    return orin_roundtrip


def test_per_trip_gap_by_hand():
    rt = _roundtrip()
    # the toy CNN throughputs: 1000/305.9 = 3.26904 ms, 1000/649.7 = 1.53917 ms; 5 vs 1 loadables
    gap = rt.per_trip_gap(1000 / 305.9, 1000 / 649.7, (5, 1), 1.40, 0.80, (6, 2))
    assert gap.measured_ms == pytest.approx(1.72987, abs=1e-5)
    assert gap.measured_per_trip_ms == pytest.approx(0.43247, abs=1e-5)
    assert gap.predicted_per_trip_ms == pytest.approx(0.15)             # (1.40 - 0.80) / 4
    assert gap.closing_ms == pytest.approx((1.72987 - 0.60) / 4, abs=1e-5)
    with pytest.raises(ValueError, match="more DLA loadables"):
        rt.per_trip_gap(2.0, 1.0, (1, 1), 2.0, 1.0, (2, 2))


def test_loadable_cost_bounds_by_hand():
    rt = _roundtrip()
    assert rt.forum_bound_ms(132.7, 6.934) == pytest.approx(1000 / 132.7 - 6.934)     # 0.60179 ms
    assert rt.forum_bound_ms(132.7, 6.934) == pytest.approx(0.60179, abs=1e-5)
    assert rt.googlenet_bound_ms(1.032 + 0.0186, 0.781) == pytest.approx(0.2696)
