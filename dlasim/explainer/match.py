"""Matching steps: one union-find, and the groups of steps of two estimates that cover the same work."""
from __future__ import annotations

from ..report import StepRow
from .config import COPY_NAME


class Union:
    """Union-find over hashable items (path halving)."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _keys(row: StepRow) -> list[str]:
    """What a step covers: its original layers, or the tensor a copy moves."""
    if row.kind == "layer":
        return [f"L:{n}" for n in row.layers] or [f"N:{row.name}"]
    m = COPY_NAME.match(row.name)
    return [f"C:{m.group(2)}:{m.group(1)}" if m else f"N:{row.name}"]


def match_steps(a: list[StepRow], b: list[StepRow]) -> list[tuple[list[StepRow], list[StepRow]]]:
    """Groups of steps of two estimates that cover the same original layers (or copy the same tensor): the
    connected components of steps linked through their keys (the variants may fuse differently), in the
    order of their first step."""
    rows = [(0, r) for r in a] + [(1, r) for r in b]
    uf = Union()
    first: dict[str, int] = {}                         # key -> first row holding it
    for i, (_, r) in enumerate(rows):
        uf.find(i)
        for k in _keys(r):
            uf.union(first.setdefault(k, i), i)
    parts: dict[int, list[int]] = {}
    for i in range(len(rows)):
        parts.setdefault(uf.find(i), []).append(i)
    parts = sorted(parts.values())                      # each part ascending; parts by their first row
    return [tuple([rows[i][1] for i in part if rows[i][0] == side] for side in (0, 1)) for part in parts]
