"""`dlasim sweep`: its options and handler over dlasim/sweep.py (the grid, the Pareto set and its outputs)."""
from __future__ import annotations

from ..errors import DlasimError
from ..sweep import KEYS, parse_vary, sweep, to_csv, to_html, to_table

HELP = "one model over a grid of options: CSV/JSON/HTML with the Pareto set"


def add_options(p) -> None:
    """The sweep-only options (the model options are added by the CLI)."""
    p.add_argument("--vary", required=True, action="append",
                   help=f"KEY=V1,V2 ({'|'.join(KEYS)}); repeat for a grid (required)")
    p.add_argument("--workers", type=int, default=1, help="local processes (estimate_many) (default: 1)")
    p.add_argument("--backend", type=str.lower, choices=["process", "ray"], default="process",
                   help="process: local processes; ray: a Ray cluster, needs dlasim[nas] (default: process)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr (default: a bar)")


def cmd(a, options: dict) -> str | dict:
    """The `dlasim sweep` handler; `options` are the resolved model options (hw, shapes and the estimate keywords).
    The text of the table, CSV or HTML; for --format json the result's dict, which the caller makes a
    versioned document (cli/commands.py document)."""
    if a.format == "html" and not a.output:
        raise DlasimError("--format html needs -o FILE")
    if a.workers < 1:
        raise DlasimError(f"--workers: expected a positive integer, got {a.workers}")
    vary = parse_vary(a.vary)
    n = 1
    for v in vary.values():
        n *= len(v)
    from ..hardware import hardware
    for h in vary.get("hw", [options["hw"]]):
        hardware(h)                               # bad platforms fail before the progress bar starts
    progress = None
    if not a.no_progress:
        from ..batch import progress_bar
        progress = progress_bar(n, "sweep")
    res = sweep(a.model, options, vary, workers=a.workers, backend=a.backend, progress=progress)
    if a.format == "json":
        return res.to_dict()
    if a.format == "csv":
        return to_csv(res)
    if a.format == "html":
        return to_html(res)
    return to_table(res)
