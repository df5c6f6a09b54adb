"""Hand-made explain-layer inputs shared by the cause tests: a report row with chosen times and cost parts,
and the expectation of an empty graph at a chosen peak."""
from __future__ import annotations

from dlasim.cost import CostParts, Tiling
from dlasim.explainer.expectation import Expectation
from dlasim.ir import GraphBuilder
from dlasim.report import StepRow

FULL = Tiling(tile_eff=1.0, wave_eff=1.0, k_eff=1.0, rate_eff=1.0)     # every tile, wave and K step full


def ctx(device="gpu", precision="fp16", sparse=False, peak=1e12):
    """The expectation of a graph with no MACs: rows bring their own, priced at `peak` MAC/s."""
    b = GraphBuilder("empty")
    b.relu(b.input("input", (1, 8, 4, 4)))
    return Expectation(b.build(), device, precision, sparse, peak)


def row(device="gpu", precision="fp16", time_ms=0.0, compute_ms=0.0, memory_ms=0.0, overhead_ms=0.0,
        macs=10**9, kind="layer", bound="compute", conv=None, floor_ms=0.0, **parts):
    """A Conv step "s" (a layer of no graph) with these times (ms) and CostParts fields (seconds)."""
    return StepRow("s", kind, "Conv", device, precision, time_ms, bound, ["s"], macs, 0, compute_ms, memory_ms,
                   overhead_ms, -1, "", CostParts(**parts), conv=conv, kernel_floor_ms=floor_ms)
