"""Device peaks: the dense MAC rate of one DLA core and of the GPU per precision, and the DRAM bandwidth.

Sources (../shared/reference): dla.md s1.2 (peak = atomic C x atomic K x clock; TensorRT runs a network on one
core, s3.1); gpu_tensorrt.md s1.1 (peak = SMs x FMA/clk/SM x clock per precision).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..hardware import Gpu, Platform

GPU_PRECISIONS = ("fp32", "fp16", "int8")


@dataclass(frozen=True, slots=True)
class DevicePeak:
    """One engine's dense peak MAC rate per precision it runs, and the DRAM bandwidth it reads at (computed
    once per estimate, device_peaks, from the platform spec)."""
    macs_per_s: tuple[tuple[str, float], ...]      # (precision, MAC/s), in the spec's order
    dram_bytes_per_s: float

    @property
    def precisions(self) -> tuple[str, ...]:
        return tuple(p for p, _ in self.macs_per_s)

    def rate(self, precision: str) -> float:
        """MAC/s at `precision` (one the engine runs: see dlasim.precision.run_precision)."""
        return dict(self.macs_per_s)[precision]


def gpu_peak_macs_per_s(gpu: Gpu, precision: str) -> float:
    """SMs x FMA/clk/SM x clock (gpu_tensorrt.md s1.1)."""
    return gpu.sm_count * gpu.fma_per_clk_per_sm(precision) * gpu.clock_hz


def device_peaks(plat: Platform) -> dict[str, DevicePeak]:
    """{"dla": ..., "gpu": ...} for the engines the platform has: MAC/s per precision each runs, DRAM bytes/s."""
    bw = plat.memory.dram_bandwidth_bytes_per_s
    out = {}
    if plat.dla is not None:
        dla = plat.dla
        out["dla"] = DevicePeak(tuple((p, float(dla.macs_per_cycle(p) * dla.clock_hz)) for p in dla.precisions), bw)
    if plat.gpu is not None:
        out["gpu"] = DevicePeak(tuple((p, float(gpu_peak_macs_per_s(plat.gpu, p))) for p in GPU_PRECISIONS), bw)
    return out
