"""Hardware-aware architecture search: search spaces (stages of blocks) and latency tables that price every
choice in context on a platform, then predict the latency of many encoded candidates at once."""
from __future__ import annotations

from .space import SearchSpace, Stage, mobilenet_v3_space, resnet_space, tiny_space
from .table import LatencyTable

__all__ = ["SearchSpace", "Stage", "LatencyTable", "mobilenet_v3_space", "resnet_space", "tiny_space"]
