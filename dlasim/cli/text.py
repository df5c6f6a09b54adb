"""Text output that fits the terminal: the width to wrap to, and wrapping that keeps indentation."""
from __future__ import annotations

import os
import sys
import textwrap

NOT_A_TTY_WIDTH = 100
MIN_WIDTH = 60


def width(to_file: bool = False) -> int:
    """100 for a file (-o); else $COLUMNS when set, else the terminal's width, else 100 (a pipe). At least 60."""
    if to_file:
        return NOT_A_TTY_WIDTH
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return max(MIN_WIDTH, int(env))
    stream = sys.stdout
    try:
        if stream.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(stream.fileno()).columns)
    except (OSError, ValueError, AttributeError):
        pass
    return NOT_A_TTY_WIDTH


def fit(text: str, cols: int) -> str:
    """Every line of `text` at most `cols` wide: a longer line wraps, continuing 4 columns further in than
    its own indentation; a word longer than the line is cut."""
    out = []
    for line in text.splitlines():
        if len(line) <= cols:
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip(" "))]
        if len(lead) > cols // 2:
            lead = ""
        out += textwrap.wrap(line.strip(" "), cols, initial_indent=lead, subsequent_indent=lead + "    ",
                             break_on_hyphens=False, break_long_words=True) or [""]
    return "\n".join(out)
