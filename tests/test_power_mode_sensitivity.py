"""validation/power_mode_sensitivity.py: the probe replaces exactly one clock of the applied power mode."""
from __future__ import annotations

import importlib.util

import pytest

import dlasim
from dlasim import validate

_spec = importlib.util.spec_from_file_location(
    "power_mode_sensitivity", validate.ROOT / "validation" / "power_mode_sensitivity.py")
pms = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pms)


def test_emc_probe_scales_the_mode_bandwidth_by_the_clock_ratio():
    nx = dlasim.hardware("xavier-nx:15w")
    p = pms.probe_platform(nx, "emc_clock_hz", 1066e6)
    # 128-bit LPDDR4x: 16 B x 2 x 1066e6 = 34.112 GB/s (the 15w mode's 51.2 GB/s x 1066 / 1600)
    assert p.memory.dram_bandwidth_bytes_per_s == pytest.approx(16 * 2 * 1066e6, rel=2e-3)
    assert (p.gpu.clock_hz, p.dla.clock_hz) == (nx.gpu.clock_hz, nx.dla.clock_hz)


def test_gpu_and_dla_probes_leave_the_other_clocks_alone():
    nx = dlasim.hardware("xavier-nx")
    g = pms.probe_platform(nx, "gpu_clock_hz", 700e6)
    d = pms.probe_platform(nx, "dla_clock_hz", 700e6)
    assert (g.gpu.clock_hz, g.dla.clock_hz) == (700e6, nx.dla.clock_hz)
    assert (d.dla.clock_hz, d.gpu.clock_hz) == (700e6, nx.gpu.clock_hz)
    assert g.memory.dram_bandwidth_bytes_per_s == d.memory.dram_bandwidth_bytes_per_s == \
        nx.memory.dram_bandwidth_bytes_per_s
    assert pms.probe_platform(nx, None, None) is nx


def test_a_lower_gpu_clock_slows_a_compute_bound_gpu_engine():
    nx = dlasim.hardware("xavier-nx:15w")
    fast = dlasim.estimate("zoo:vgg19", nx, device="gpu", precision="int8")
    slow = dlasim.estimate("zoo:vgg19", pms.probe_platform(nx, "gpu_clock_hz", nx.gpu.clock_hz / 2),
                           device="gpu", precision="int8")
    assert slow.total_ms > 1.5 * fast.total_ms
