"""Peaks and the naive expectation: every MAC at the peak of one DLA core or the GPU (doubled for 2:4).

Sources (../shared/reference): dla.md s1.2 (peak = atomic C x K x clock), s3.1 (one network per DLA core,
FP16/INT8 only); gpu_tensorrt.md s1.1 (GPU peaks).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..hardware import Platform
from ..ir import Graph
from .config import Config


def run_precision(hw: Platform, device: str, precision: str) -> str:
    """The precision `device` runs for a requested one (the DLA runs FP16 or INT8 only, dla.md s3.1)."""
    if device == "dla":
        p = "int8" if precision in ("int8", "best") else "fp16"
        have = [q for q in hw.dla.precisions if q != "fp32" and hw.dla.macs_per_cycle(q)]
        return p if p in have else have[0]
    return "int8" if precision == "best" else precision


def peak_macs_per_s(hw: Platform, device: str, precision: str) -> float:
    """Dense peak: one DLA core = atomic C x atomic K x clock (dla.md s1.2; TensorRT runs a network on one
    core, s3.1); GPU = SMs x FMA/clk/SM x clock (gpu_tensorrt.md s1.1)."""
    p = run_precision(hw, device, precision)
    if device == "dla":
        return hw.dla.macs_per_cycle(p) * hw.dla.clock_hz
    return hw.gpu.sm_count * hw.gpu.fma_per_clk_per_sm(p) * hw.gpu.clock_hz


@dataclass(frozen=True)
class Expectation:
    """One configuration's naive expectation: every MAC at the device's peak (doubled when 2:4 is asked)."""
    graph: Graph
    device: str
    precision: str               # what the device runs for the requested precision
    sparse: bool
    peak: float                  # dense MAC/s

    @classmethod
    def of(cls, cfg: Config) -> "Expectation":
        dev, prec = cfg.opts["device"], cfg.opts["precision"]
        return cls(cfg.graph, dev, run_precision(cfg.hw, dev, prec), cfg.opts["sparsity"] != "disable",
                   peak_macs_per_s(cfg.hw, dev, prec))

    @property
    def rate(self) -> float:
        """The expected MAC/s: the dense peak, doubled for 2:4."""
        return self.peak * (2.0 if self.sparse else 1.0)

    def ideal_ms(self, macs: int) -> float:
        return macs / self.rate * 1e3


def ideal_speedup(key: str, a, b, ctx1: Expectation, ctx2: Expectation) -> float:
    """Naive speedup from value a to b: the ratio of the expected MAC rates (peaks; 2x for 2:4), b1/b2 for
    the batch (a time is that of the whole batch)."""
    if key == "batch":
        return a / b
    if key == "model":          # two networks: the ratio of their MACs at the expected rates
        return ctx2.rate / ctx1.rate * ctx1.graph.macs / max(ctx2.graph.macs, 1)
    return ctx2.rate / ctx1.rate
