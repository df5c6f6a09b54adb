"""Peaks and the naive expectation: every MAC at the peak of one DLA core or the GPU (doubled for 2:4).

The peaks are the estimate's (cost/peaks.py: dla.md s1.2, s3.1; gpu_tensorrt.md s1.1), at the precision the
device runs for the one asked (dlasim.precision.run_precision).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph
from ..precision import run_precision
from ..report import Estimate
from .config import Config


@dataclass(frozen=True)
class Expectation:
    """One configuration's naive expectation: every MAC at the device's peak (doubled when 2:4 is asked)."""
    graph: Graph
    device: str
    precision: str               # what the device runs for the requested precision
    sparse: bool
    peak: float                  # dense MAC/s

    @classmethod
    def of(cls, cfg: Config, est: Estimate) -> "Expectation":
        """The expectation of `cfg` from its estimate's device peaks, at the precision the device runs for the
        one asked."""
        dev = cfg.opts["device"]
        peak = est.peaks[dev]
        prec = run_precision(dev, cfg.opts["precision"], peak.precisions)
        return cls(cfg.graph, dev, prec, cfg.opts["sparsity"] != "disable", peak.rate(prec))

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
    if key in ("model", "shapes"):   # two networks (or input sizes): the ratio of their MACs at the expected rates
        return ctx2.rate / ctx1.rate * ctx1.graph.macs / max(ctx2.graph.macs, 1)
    return ctx2.rate / ctx1.rate
