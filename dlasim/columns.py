"""Text tables that fit a width: when the columns do not fit side by side, they go into blocks, one under the
other, each repeating the key columns (the row's name) and taking as many of the next columns as fit."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

SEP = "  "                      # between columns


@dataclass(frozen=True)
class Column:
    title: str
    width: int
    left: bool = False          # names align left, numbers right


def _line(columns: Sequence[Column], cells: Sequence[str]) -> str:
    return SEP.join(f"{c:<{col.width}}" if col.left else f"{c:>{col.width}}"
                    for col, c in zip(columns, cells)).rstrip()


def blocks(columns: Sequence[Column], keep: int, width: int) -> list[list[int]]:
    """The column indices of each block: the first `keep` columns, then the next columns while the line stays
    within `width` (at least one per block, so a block too wide for any width still makes progress)."""
    key = list(range(keep))
    gap = len(SEP)
    used = sum(columns[i].width + gap for i in key)
    out, cur, room = [], [], used
    for i in range(keep, len(columns)):
        w = columns[i].width + gap
        if cur and room + w - gap > width:
            out.append(key + cur)
            cur, room = [], used
        cur.append(i)
        room += w
    return out + [key + cur] if cur or not out else out


def table(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int, keep: int = 1) -> list[str]:
    """Header, rule, rows, rule: once when the columns fit in `width`, else per block (blocks.__doc__),
    blocks separated by an empty line. Cells are given as text; a cell wider than its column pushes the row."""
    out = []
    for n, idx in enumerate(blocks(columns, keep, width)):
        cols = [columns[i] for i in idx]
        hdr = _line(cols, [c.title for c in cols])
        rule = "-" * len(hdr)
        out += ([""] if n else []) + [hdr, rule] + [_line(cols, [r[i] for i in idx]) for r in rows] + [rule]
    return out
