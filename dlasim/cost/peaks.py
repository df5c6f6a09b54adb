"""Device peaks: the dense MAC rate of one DLA core and of the GPU per precision, and the DRAM bandwidth.

Sources (../shared/reference): dla.md s1.2 (peak = atomic C x atomic K x clock; TensorRT runs a network on one
core, s3.1); gpu_tensorrt.md s1.1 (peak = SMs x FMA/clk/SM x clock per precision).
"""
from __future__ import annotations

from ..hardware import Gpu, Platform
from ..report import DevicePeak

GPU_PRECISIONS = ("fp32", "fp16", "int8")


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
