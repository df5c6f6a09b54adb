"""HTML for `dlasim concurrent --format html`: one self-contained page with the engines' table, their
slowdown causes, and a timeline of the engines running together (one lane per engine, steps coloured by
the unit that runs them). Uses dlasim/html's page frame and escaping."""
from __future__ import annotations

from ..html.common import _e
from ..html.pages import _page

_COLOURS = {"gpu": "#76b900", "dla0": "#1f77b4", "dla1": "#17becf", "copy": "#ff7f0e", "overhead": "#999999"}


def _colour(span) -> str:
    if span.kind in ("reformat", "transition"):
        return _COLOURS["copy"]
    if span.kind == "overhead":
        return _COLOURS["overhead"]
    return _COLOURS.get(span.unit, "#9467bd")


def timeline_svg(result, width: int = 1300, lane: int = 26) -> str:
    spans = result.spans
    if not spans:
        return ""
    end = max(s.end_s for s in spans)
    left, right = 230, 20
    scale = (width - left - right) / end if end > 0 else 1.0
    n = len(result.engines)
    h = 40 + n * (lane + 8) + 40
    out = [f'<svg viewBox="0 0 {width} {h}" width="100%" role="img" aria-label="timeline of the engines">']
    for i, e in enumerate(result.engines):
        y = 30 + i * (lane + 8)
        out.append(f'<text x="4" y="{y + lane * 0.7:.1f}" font-size="12">{_e(e.name[:32])}</text>')
    for s in spans:
        y = 30 + s.engine * (lane + 8)
        x = left + s.start_s * scale
        w = max((s.end_s - s.start_s) * scale, 0.5)
        out.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{lane}" fill="{_colour(s)}" '
                   f'stroke="#fff" stroke-width="0.3"><title>{_e(s.name)} ({s.kind} on {s.unit}, iteration '
                   f'{s.iteration}): {s.start_s * 1e3:.4f}-{s.end_s * 1e3:.4f} ms</title></rect>')
    y = 30 + n * (lane + 8) + 14
    ticks = 10
    for t in range(ticks + 1):
        x = left + (width - left - right) * t / ticks
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="24" y2="{y - 10}" stroke="#ddd"/>'
                   f'<text x="{x:.1f}" y="{y}" font-size="11" text-anchor="middle">'
                   f'{end * 1e3 * t / ticks:.3g} ms</text>')
    lx = left
    for label, key in (("GPU step", "gpu"), ("DLA0 step", "dla0"), ("DLA1 step", "dla1"),
                       ("reformat / transition copy", "copy"), ("launch overhead", "overhead")):
        out.append(f'<rect x="{lx}" y="{y + 8}" width="12" height="12" fill="{_COLOURS[key]}"/>'
                   f'<text x="{lx + 16}" y="{y + 18}" font-size="11">{label}</text>')
        lx += 40 + 7 * len(label)
    out.append("</svg>")
    return "".join(out)


def _engines_table(result) -> str:
    head = ("<tr><th>engine</th><th>unit</th><th>batch</th><th>alone ms</th><th>together ms</th><th>alone qps</th>"
            "<th>together qps</th><th>slowdown</th><th>+DRAM ms</th><th>+unit share ms</th><th>+copies ms</th></tr>")
    rows = "".join(
        f"<tr><td>{_e(e.name)}</td><td>{e.unit}</td><td>{e.batch}</td><td>{e.alone_ms:.3f}</td>"
        f"<td>{e.together_ms:.3f}</td><td>{e.alone_qps:.1f}</td><td>{e.together_qps:.1f}</td>"
        f"<td>{e.slowdown:.2f}x</td><td>{e.dram_ms:.3f}</td><td>{e.unit_share_ms:.3f}</td>"
        f"<td>{e.copies_ms:.3f}</td></tr>"
        for e in result.engines)
    return f"<table>{head}{rows}</table>"


def concurrent_page(result) -> str:
    title = f"{len(result.engines)} engines on {result.hardware} ({result.mode})"
    agg = (f"pipeline {result.aggregate_img_per_s:.1f} img/s, frame latency {result.pipeline_latency_ms:.3f} ms"
           if result.mode == "pipeline" else
           f"aggregate {result.aggregate_img_per_s:.1f} img/s together (sum of stand-alone "
           f"{result.alone_sum_img_per_s:.1f} img/s)")
    causes = "".join(f"<li><b>{_e(e.name)}</b>: {_e(c.text)}</li>" for e in result.engines for c in e.causes)
    warn = "".join(f'<p class="warn">{_e(w)}</p>' for w in result.warnings)
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="sub">{_e(agg)}; DRAM {result.dram_cap_bytes_per_s / 1e9:.1f} GB/s drawn together at most, '
            f"{result.mean_dram_use:.0%} used on average, saturated {result.saturated_share:.0%} of the time</p>",
            warn, _engines_table(result), "<h2>Why each engine is slower together</h2>", f"<ul>{causes}</ul>",
            "<h2>Timeline (first iterations, simulated together)</h2>",
            f"<figure>{timeline_svg(result)}</figure>"]
    return _page(title, body)


def advice_page(result) -> str:
    title = f"Engine assignment advice on {result.hardware}"
    rows = "".join(f"<tr><td>{i + 1}</td><td>{_e(c.describe())}</td><td>{c.aggregate_img_per_s:.1f}</td>"
                   f"<td>{c.worst_latency_ms:.3f}</td></tr>" for i, c in enumerate(result.candidates[:20]))
    body = [f"<h1>{_e(title)}</h1>", f'<p class="sub">{_e(result.summary())}</p>',
            "<table><tr><th>rank</th><th>assignment</th><th>aggregate img/s</th><th>worst latency ms</th></tr>"
            f"{rows}</table>"]
    if result.best_result is not None:
        body += ["<h2>Best assignment, together</h2>", _engines_table(result.best_result),
                 f"<figure>{timeline_svg(result.best_result)}</figure>"]
    return _page(title, body)
