"""How an Estimate shows itself in a REPL and a notebook: one summary line, and an HTML step table."""
from __future__ import annotations

from html import escape


def summary(e) -> str:
    """One line: what was estimated, the total, and the counts a reader checks first."""
    what = f"{e.model} on {e.hardware}, {e.device} {e.precision} batch {e.batch}"
    if e.sparsity != "disable":
        what += f" sparsity={e.sparsity}"
    label = f"{e.label!r}, " if e.label else ""
    counts = (f"{len(e.steps)} steps, {e.dla_subgraphs} DLA subgraph{'s' * (e.dla_subgraphs != 1)}, "
              f"{len(e.fallback)} GPU fallback, {e.transitions} transition{'s' * (e.transitions != 1)}")
    warn = f", {len(e.warnings)} warning{'s' * (len(e.warnings) != 1)}" if e.warnings else ""
    return f"Estimate({label}{what}: {e.total_ms:.4f} ms; {counts}{warn})"


_COLUMNS = ("step", "kind", "device", "precision", "time ms", "share", "bound", "MACs", "bytes")


def step_table_html(e) -> str:
    """The summary line, the step table (as `dlasim estimate` prints it) and the fallback layers with reasons."""
    from .report import _si
    total = e.total_ms or 1.0
    head = "".join(f"<th>{c}</th>" for c in _COLUMNS)
    rows = []
    for s in e.steps:
        cells = (escape(s.name), s.kind, s.device, s.precision, f"{s.time_ms:.4f}", f"{s.time_ms / total:.1%}",
                 s.bound, _si(s.macs), _si(s.bytes))
        title = f' title="{escape(s.reason)}"' if s.reason else ""
        rows.append(f"<tr{title}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    kinds = ", ".join(f"{k} {v:.3f} ms" for k, v in e.by_kind().items())
    parts = [f"<p><b>{escape(summary(e))}</b></p>",
             f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>",
             f"<tfoot><tr><td colspan='{len(_COLUMNS)}'>total {e.total_ms:.4f} ms ({kinds})</td></tr></tfoot></table>"]
    if e.fallback:
        items = "".join(f"<li>{escape(f.name)} ({escape(f.op)}): {escape(f.reason)}</li>"
                        for f in e.fallback)
        parts.append(f"<details><summary>{len(e.fallback)} GPU fallback layers</summary><ul>{items}</ul></details>")
    if e.warnings:
        parts.append("<ul>" + "".join(f"<li>warning: {escape(w)}</li>" for w in e.warnings) + "</ul>")
    return "<div class='dlasim-estimate'>" + "".join(parts) + "</div>"
