"""A network on a platform with estimate options, and what the cause attribution hands the advisors.

This is where the explain layer loads its inputs (the model through dlasim.api, the platform through
dlasim.hardware, once per configuration); the modules after it read the Estimate records only."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from .. import api
from ..build_options import BuildOptions
from ..hardware import Platform, hardware
from ..ir import Graph
from ..report import Estimate

FIXED_KINDS = ("reformat", "transition", "overhead")     # step kinds that are not layers: copies and launches


@dataclass(frozen=True)
class Config:
    """A network on a platform with estimate options (shapes already applied to the graph)."""
    graph: Graph
    hw: Platform
    opts: dict

    @classmethod
    def load(cls, model, hw, opts: dict) -> "Config":
        """Check the option names, fill in the defaults, load the model at the batch and shapes asked."""
        o = BuildOptions.of(**opts).as_kwargs()
        g = api.load(model, shapes=o.pop("shapes"), batch=o["batch"])
        return cls(g, hardware(hw), o)

    def on(self, hw) -> "Config":
        """The same network and options on another platform (a name, NAME:MODE, a spec path or a Platform)."""
        return replace(self, hw=hardware(hw))

    def estimate(self, label: str = "", graph: Graph | None = None, **change) -> Estimate:
        return api.estimate(graph or self.graph, self.hw, label=label, **{**self.opts, **change})


@dataclass(frozen=True)
class Findings:
    """What the cause attribution (classify.py, gap.py) found for one configuration, as far as the advisors need it."""
    codes: list[str]                            # cause codes, largest first
    ideal_ms: float                             # every MAC at the device's peak
    kept_dense: list[tuple[str, int, int]]      # (layer, C, K) of conv steps that get no 2:4 kernel


@dataclass(frozen=True)
class Change:
    """One change an advisor proposes: a rewritten network and/or other build options."""
    change: str                  # stable id of the suggestion
    text: str                    # what to do, with the reason
    graph: Graph | None = None   # rewritten network (None: the same)
    opts: dict = field(default_factory=dict)
    per_image: bool = False      # compare per-image time (batch changes)
