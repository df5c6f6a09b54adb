"""The timeline, bars, breakdown, waterfall and speed-up pictures (inline SVG)."""
from __future__ import annotations

from .common import (BOUND_COLOURS, COPY_COLOUR, COPY_DARK, DEVICE_COLOURS, LAUNCH_COLOUR, _c, _e, _est, _fmt_ms,
                     _hatch_defs, _is_copy, _legend, _num, _pct, _short, _step_title, _svg_open, _time_axis)


# ---------------------------------------------------------------------------------------------- timeline
def timeline_svg(est, sid: str = "timeline", scale_ms: float | None = None, width: int = 1300) -> str:
    """Two lanes, DLA and GPU; steps back to back in execution order at their predicted time."""
    d = est if isinstance(est, dict) and "_hw_obj" in est else _est(est)
    steps = d["steps"]
    total = sum(s["time_ms"] for s in steps) or d["total_ms"] or 1.0
    span = max(scale_ms or 0.0, total)
    L, R = 70, 18
    pw = width - L - R
    sx = pw / span
    lh, y_dla, y_gpu = 46, 34, 112
    gap0, gap1 = y_dla + lh + 6, y_gpu - 2
    h = 200
    lane_y = {"dla": y_dla, "gpu": y_gpu}
    out = [_svg_open(sid, width, h, f"timeline of {d.get('model', '')}: DLA and GPU lanes"), _hatch_defs(sid)]
    busy = {"dla": 0.0, "gpu": 0.0}
    copies = 0.0
    for s in steps:
        if _is_copy(s):
            copies += s["time_ms"]
        busy[s["device"] if s["device"] in busy else "gpu"] += s["time_ms"]
    for dev, y in lane_y.items():
        out.append(f'<rect class="lane" data-lane="{dev}" x="{L}" y="{y}" width="{_c(pw)}" height="{lh}" '
                   f'fill="{"#f3eff8" if dev == "dla" else "#edf5ef"}"/>')
        out.append(f'<text x="8" y="{y + 20}" font-size="15" font-weight="700" fill="{DEVICE_COLOURS[dev]}">'
                   f'{dev.upper()}</text>')
        out.append(f'<text x="8" y="{y + 36}" font-size="11" fill="#5a6272">{_fmt_ms(busy[dev])} ms</text>')
    out.append(f'<text x="8" y="{(gap0 + gap1) / 2 + 4:.0f}" font-size="10" fill="{COPY_DARK}">hand-over</text>')

    # execution order: start times, neighbour layer devices (for the transition arrows), loadable spans
    t0s, t = [], 0.0
    for s in steps:
        t0s.append(t)
        t += s["time_ms"]
    n = len(steps)
    prev_dev: list[str | None] = [None] * n
    next_dev: list[str | None] = [None] * n
    last = None
    for i, s in enumerate(steps):
        prev_dev[i] = last
        if s["kind"] == "layer":
            last = s["device"]
    last = None
    for i in range(n - 1, -1, -1):
        next_dev[i] = last
        if steps[i]["kind"] == "layer":
            last = steps[i]["device"]
    spans: dict[int, list[float]] = {}
    for s, t0 in zip(steps, t0s):
        if s["device"] == "dla" and s["subgraph"] >= 0:
            sp = spans.setdefault(s["subgraph"], [t0, t0 + s["time_ms"]])
            sp[0], sp[1] = min(sp[0], t0), max(sp[1], t0 + s["time_ms"])
    for k, (a, b) in sorted(spans.items()):
        x, w = L + a * sx, max((b - a) * sx, 1.0)
        out.append(f'<rect class="loadable" x="{_c(x)}" y="{y_dla + lh + 1}" width="{_c(w)}" height="4" '
                   f'fill="{LAUNCH_COLOUR}" opacity="0.55"><title>{_e(f"DLA loadable {k}: {_fmt_ms(b - a)} ms")}'
                   f'</title></rect>')

    arrows, launches = [], []
    for i, (s, t0) in enumerate(zip(steps, t0s)):
        dev = s["device"] if s["device"] in lane_y else "gpu"
        x, w = L + t0 * sx, max(s["time_ms"] * sx, 0.6)
        if _is_copy(s):
            fill = f"url(#{sid}-hatch)"
        elif s["kind"] == "overhead":
            fill = LAUNCH_COLOUR if dev == "dla" else BOUND_COLOURS["overhead"]
        else:
            fill = BOUND_COLOURS.get(s["bound"], "#777")
        stroke = ' stroke="#fff" stroke-width="0.5"' if w > 3 else ""
        out.append(f'<rect class="step {_e(s["kind"])} {dev}" x="{_c(x)}" y="{lane_y[dev] + 1}" width="{_c(w)}" '
                   f'height="{lh - 2}" fill="{fill}"{stroke}>{_step_title(s, total)}</rect>')
        if s["kind"] == "transition":
            dst = next_dev[i] or ("gpu" if prev_dev[i] == "dla" else "dla")
            src = "gpu" if dst == "dla" else "dla"
            xm = x + w / 2
            y1, y2 = (gap0, gap1) if src == "dla" else (gap1, gap0)
            tip = f"transition {src.upper()} -> {dst.upper()}: {s['name']}, {_fmt_ms(s['time_ms'])} ms"
            arrows.append(f'<line class="transition-marker" x1="{_c(xm)}" y1="{y1}" x2="{_c(xm)}" y2="{y2}" '
                          f'stroke="{COPY_DARK}" stroke-width="1.6" marker-end="url(#{sid}-arrow)">'
                          f'<title>{_e(tip)}'
                          f'</title></line>')
        if s["kind"] == "overhead" and dev == "dla":
            launches.append((x, s))
    out += arrows
    last_label = -1e9
    for x, s in launches:
        out.append(f'<path class="launch-marker" d="M{_c(x - 4)},{y_dla - 11} L{_c(x + 4)},{y_dla - 11} '
                   f'L{_c(x)},{y_dla - 3} z" fill="{LAUNCH_COLOUR}"><title>{_e(s["name"])}: '
                   f'{_e(_fmt_ms(s["time_ms"]))} ms</title></path>')
        if s["subgraph"] >= 0 and x - last_label >= 24:
            out.append(f'<text x="{_c(x)}" y="{y_dla - 14}" font-size="9" text-anchor="middle" '
                       f'fill="{LAUNCH_COLOUR}">L{s["subgraph"]}</text>')
            last_label = x
    # time axis
    ya = y_gpu + lh + 8
    out += _time_axis(L, pw, ya, sx, span, 12)
    out.append(f'<text x="{_c(L + pw)}" y="{ya + 30}" font-size="11" text-anchor="end" fill="#333">time (ms); '
               f'total {_fmt_ms(total)} ms, of which reformat/transition copies {_fmt_ms(copies)} ms</text>')
    out.append(_legend(L, ya + 30 - 9, [("compute-bound", BOUND_COLOURS["compute"]),
                                        ("memory-bound", BOUND_COLOURS["memory"]),
                                        ("overhead", BOUND_COLOURS["overhead"]),
                                        ("reformat / transition", f"url(#{sid}-hatch)"),
                                        ("DLA loadable launch / span", LAUNCH_COLOUR)]))
    out.append("</svg>")
    return "".join(out)


# -------------------------------------------------------------------------------------------------- bars
def bars_svg(est, sid: str = "bars", top: int = 40, width: int = 1300) -> str:
    """The `top` longest steps, longest first, coloured by bound; copies hatched."""
    d = est if isinstance(est, dict) and "_hw_obj" in est else _est(est)
    total = d["total_ms"] or 1.0
    rows = sorted(d["steps"], key=lambda s: -s["time_ms"])[:top]
    L, tag_w, R = 420, 34, 130
    rh, y0 = 17, 28
    pw = width - L - tag_w - R
    tmax = max((s["time_ms"] for s in rows), default=1.0) or 1.0
    h = y0 + len(rows) * rh + 12
    out = [_svg_open(sid, width, h, "longest steps coloured by bound"), _hatch_defs(sid)]
    out.append(_legend(L + tag_w, 6, [("compute-bound", BOUND_COLOURS["compute"]),
                                      ("memory-bound", BOUND_COLOURS["memory"]),
                                      ("overhead-bound", BOUND_COLOURS["overhead"]),
                                      ("reformat / transition (hatched)", f"url(#{sid}-hatch)")]))
    for i, s in enumerate(rows):
        y = y0 + i * rh
        w = max(s["time_ms"] / tmax * pw, 1.0)
        fill = BOUND_COLOURS.get(s["bound"], "#777")
        dev = s["device"]
        out.append(f'<g class="bar {_e(s["bound"])}">{_step_title(s, total)}'
                   f'<text x="{L - 6}" y="{y + 12}" font-size="11" text-anchor="end" fill="#222">'
                   f'{_e(_short(s["name"], 64))}</text>'
                   f'<rect x="{L + 2}" y="{y + 2}" width="{tag_w - 6}" height="{rh - 4}" rx="2" '
                   f'fill="{DEVICE_COLOURS.get(dev, "#777")}"/>'
                   f'<text x="{L + tag_w / 2 - 1}" y="{y + 12}" font-size="9" text-anchor="middle" fill="#fff">'
                   f'{_e(dev.upper())}</text>'
                   f'<rect x="{L + tag_w}" y="{y + 2}" width="{_c(w)}" height="{rh - 4}" fill="{fill}"/>')
        if _is_copy(s):
            out.append(f'<rect x="{L + tag_w}" y="{y + 2}" width="{_c(w)}" height="{rh - 4}" '
                       f'fill="url(#{sid}-hatch)" opacity="0.85"/>')
        out.append(f'<text x="{_c(L + tag_w + w + 5)}" y="{y + 12}" font-size="11" fill="#333">'
                   f'{_fmt_ms(s["time_ms"])} ms \u00b7 {_pct(s["time_ms"] / total)}</text></g>')
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------------------------- breakdown
def breakdown_svg(est, sid: str = "breakdown", width: int = 1300) -> str:
    """One stacked bar: DLA layers, GPU layers, reformats, transitions, overhead."""
    d = est if isinstance(est, dict) and "_hw_obj" in est else _est(est)
    groups = [("DLA layers", DEVICE_COLOURS["dla"], lambda s: s["kind"] == "layer" and s["device"] == "dla"),
              ("GPU layers", DEVICE_COLOURS["gpu"], lambda s: s["kind"] == "layer" and s["device"] != "dla"),
              ("transitions", COPY_DARK, lambda s: s["kind"] == "transition"),
              ("reformats", COPY_COLOUR, lambda s: s["kind"] == "reformat"),
              ("overhead / launches", BOUND_COLOURS["overhead"], lambda s: s["kind"] == "overhead")]
    vals = [(name, col, sum(s["time_ms"] for s in d["steps"] if f(s))) for name, col, f in groups]
    total = sum(v for _, _, v in vals) or 1.0
    L, h = 8, 46
    pw = width - 2 * L
    out = [_svg_open(sid, width, h, "time by kind")]
    x = L
    for name, col, v in vals:
        w = v / total * pw
        if w <= 0:
            continue
        out.append(f'<rect x="{_c(x)}" y="2" width="{_c(w)}" height="20" fill="{col}">'
                   f'<title>{_e(f"{name}: {_fmt_ms(v)} ms ({_pct(v / total)})")}</title></rect>')
        if w > 70:
            out.append(f'<text x="{_c(x + 4)}" y="16" font-size="11" fill="#fff">{_e(f"{name} {_pct(v / total)}")}'
                       f'</text>')
        x += w
    out.append(_legend(L, 30, [(f"{n} {_fmt_ms(v)} ms", c) for n, c, v in vals]))
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------------------------- waterfall
def waterfall_svg(ideal_ms: float, causes: list[dict], predicted_ms: float, sid: str = "waterfall",
                  start_label: str = "ideal", end_label: str = "predicted", width: int = 1300) -> str:
    """From the ideal time through each cause (ms added, or removed when negative) to the predicted time."""
    rows = [(start_label, 0.0, ideal_ms, "base", "")]
    run = ideal_ms
    for c in causes:
        ms = _num(c.get("ms"))
        text = str(c.get("text") or "")
        rows.append((str(c.get("code") or "cause"), run, run + ms, "cause", text))
        run += ms
    gap = predicted_ms - run
    if abs(gap) > max(1e-4, 0.002 * abs(predicted_ms)):
        rows.append(("unattributed", run, predicted_ms, "cause", "difference not assigned to a cause"))
    rows.append((end_label, 0.0, predicted_ms, "end", ""))
    L, R, rh, y0 = 230, 230, 24, 10
    pw = width - L - R
    vmax = max([max(a, b) for _, a, b, _, _ in rows] + [1e-9])
    sx = pw / vmax
    h = y0 + len(rows) * rh + 26
    span = (predicted_ms - ideal_ms) or 1.0
    out = [_svg_open(sid, width, h, "waterfall from ideal to predicted time")]
    for i, (label, a, b, kind, text) in enumerate(rows):
        y = y0 + i * rh
        lo, hi = min(a, b), max(a, b)
        if kind == "base":
            col = "#6c7a89"
        elif kind == "end":
            col = "#1d2330"
        elif label == "unattributed":
            col = "#b8bec8"
        else:
            col = "#d35400" if b >= a else "#1e8449"
        w = max((hi - lo) * sx, 1.0)
        tip = f"{label}: {_fmt_ms(b - a) if kind == 'cause' else _fmt_ms(b)} ms" + (f"\n{text}" if text else "")
        out.append(f'<g class="wf {kind}"><title>{_e(tip)}</title>'
                   f'<text x="{L - 8}" y="{y + 16}" font-size="12" text-anchor="end" fill="#222">'
                   f'{_e(_short(label, 34))}</text>'
                   f'<rect x="{_c(L + lo * sx)}" y="{y + 3}" width="{_c(w)}" height="{rh - 6}" fill="{col}"/>')
        if kind == "cause":
            share = (b - a) / span
            sign = "+" if b >= a else "\u2212"
            val = f"{sign}{_fmt_ms(abs(b - a))} ms ({share * 100:.0f}% of the gap)"
        else:
            val = f"{_fmt_ms(b)} ms"
        out.append(f'<text x="{_c(L + hi * sx + 6)}" y="{y + 16}" font-size="11" fill="#333">{_e(val)}</text></g>')
        if i + 1 < len(rows):
            out.append(f'<line x1="{_c(L + b * sx)}" y1="{y + rh - 3}" x2="{_c(L + b * sx)}" y2="{y + rh + 3}" '
                       f'stroke="#888" stroke-dasharray="2 2"/>')
    ya = y0 + len(rows) * rh + 4
    out += _time_axis(L, pw, ya, sx, vmax, 10)
    out.append(f'<text x="{L + pw + 8}" y="{ya + 16}" font-size="10" fill="#333">ms</text>')
    out.append("</svg>")
    return "".join(out)


def speedup_svg(speedup: float, ideal: float, labels: tuple[str, str], sid: str = "speedup",
                width: int = 700) -> str:
    L, R = 150, 120
    pw = width - L - R
    vmax = max(speedup, ideal, 1.0) * 1.1
    sx = pw / vmax
    out = [_svg_open(sid, width, 84, "achieved vs ideal speedup")]
    for i, (name, v, col) in enumerate((("achieved speedup", speedup, "#3b6fd4"), ("ideal speedup", ideal, "#b0b8c4"))):
        y = 8 + i * 28
        out.append(f'<text x="{L - 8}" y="{y + 15}" font-size="12" text-anchor="end">{_e(name)}</text>'
                   f'<rect x="{L}" y="{y}" width="{_c(max(v * sx, 1))}" height="20" fill="{col}"/>'
                   f'<text x="{_c(L + v * sx + 6)}" y="{y + 15}" font-size="12">{v:.2f}\u00d7</text>')
    x1 = L + 1.0 * sx
    out.append(f'<line x1="{_c(x1)}" y1="4" x2="{_c(x1)}" y2="64" stroke="#c0392b" stroke-dasharray="3 2"/>'
               f'<text x="{_c(x1)}" y="78" font-size="10" text-anchor="middle" fill="#c0392b">1\u00d7</text>'
               f'<text x="{L + pw + R - 4}" y="78" font-size="10" text-anchor="end" fill="#5a6272">'
               f'{_e(labels[0])} \u2192 {_e(labels[1])}</text>')
    out.append("</svg>")
    return "".join(out)

