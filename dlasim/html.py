"""Self-contained HTML pages for `--format html -o FILE` (estimate, explain, compare).

One page, inline CSS, pictures as inline SVG written by hand: no scripts, no external assets, no network,
so a page opens offline and can be mailed around. The pictures:

- timeline:  two lanes (DLA, GPU), every step back to back in execution order at its predicted time;
             reformats and GPU<->DLA transitions hatched orange, an arrow between the lanes at each
             transition, a marker at each DLA loadable launch and a strip under each loadable's span;
- bars:      the ~40 longest steps, coloured by what bounds them (compute, memory, overhead);
- roofline:  layer steps at arithmetic intensity (2*MACs/bytes) vs achieved ops/s, log-log, under the
             device roofs (peak ops/s and DRAM bandwidth) taken from the platform spec when it can be
             found, or inferred from the cost rows otherwise;
- waterfall: (explain, compare) from the ideal time through each cause to the predicted time.

The renderers read plain dicts (the `to_dict()` forms of Estimate, ExplainResult and CompareResult), so
they do not depend on attribute details of the result classes. All text goes through html.escape.
"""
from __future__ import annotations

import dataclasses
import math
from html import escape

__all__ = ["estimate_page", "explain_page", "compare_page"]

BOUND_COLOURS = {"compute": "#3b6fd4", "memory": "#00a3c4", "overhead": "#9a9a9a"}
DEVICE_COLOURS = {"dla": "#7b3fb8", "gpu": "#2a8a4a"}
COPY_COLOUR, COPY_DARK = "#f6b26b", "#d9480f"     # reformats and transitions
LAUNCH_COLOUR = "#5b2a86"
ELLIPSIS, DASH = " \u2026", "\u2013"
STEP_FIELDS = ("name", "kind", "op", "device", "precision", "time_ms", "bound", "layers", "macs", "bytes",
               "compute_ms", "memory_ms", "overhead_ms", "subgraph", "reason")

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;color:#1d2330;
 margin:0;background:#f6f7f9}
main{max-width:1360px;margin:0 auto;padding:18px 24px 40px}
h1{font-size:22px;margin:4px 0 2px}h2{font-size:17px;margin:26px 0 6px;border-bottom:1px solid #d8dce3;
 padding-bottom:3px}h3{font-size:14px;margin:14px 0 4px}
.sub{color:#5a6272;margin:0 0 10px}
.cards{display:flex;flex-wrap:wrap;gap:8px;margin:10px 0}
.card{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:6px 12px;min-width:96px}
.card b{display:block;font-size:19px}.card span{color:#5a6272;font-size:12px}
.card.hot b{color:#c0392b}
.roof-label{paint-order:stroke;stroke:#fbfbfd;stroke-width:3px;stroke-linejoin:round}
figure{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:8px 0;padding:8px;overflow-x:auto}
figcaption{color:#5a6272;font-size:12px;margin-top:4px}
svg{display:block}svg text{font-family:inherit}
table{border-collapse:collapse;background:#fff;font-size:12px;width:100%}
th,td{border-bottom:1px solid #e6e9ee;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#eef0f4;position:sticky;top:0}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.transition td,tr.reformat td{background:#fff4e8}tr.overhead td{color:#6b7280}
.tag{display:inline-block;border-radius:3px;padding:0 4px;font-size:11px;color:#fff}
.tag.dla{background:#7b3fb8}.tag.gpu{background:#2a8a4a}
.b-compute{color:#3b6fd4}.b-memory{color:#0089a8}.b-overhead{color:#808080}
.pos{color:#c0392b}.neg{color:#1e8449}
details summary{cursor:pointer;color:#34495e}
.warn{background:#fff8e1;border:1px solid #f0d58c;padding:4px 10px;border-radius:4px}
.tablewrap{max-height:720px;overflow:auto;border:1px solid #dde1e8;border-radius:6px}
footer{color:#8a92a0;font-size:11px;margin-top:30px}
"""


# ----------------------------------------------------------------------------------------------- helpers
def _e(x) -> str:
    return escape("" if x is None else str(x), quote=True)


def _as_dict(obj) -> dict:
    """The dict form of a result, a row or a cause, whatever it is (dict, object with to_dict, dataclass)."""
    if obj is None:
        return {}
    if isinstance(obj, dict):
        return obj
    td = getattr(obj, "to_dict", None)
    if callable(td):
        try:
            d = td()
            if isinstance(d, dict):
                return d
        except Exception:  # noqa: BLE001 - fall back to the attributes
            pass
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    out = {}
    for k in dir(obj):
        if k.startswith("_"):
            continue
        try:
            v = getattr(obj, k)
        except Exception:  # noqa: BLE001 - a property that fails: skip it
            continue
        if not callable(v):
            out[k] = v
    return out


def _num(x, default: float = 0.0) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return default
    return v if math.isfinite(v) else default


def _step(s) -> dict:
    d = _as_dict(s)
    out = {k: d.get(k) for k in STEP_FIELDS}
    out["name"] = str(out["name"] or "")
    out["kind"] = str(out["kind"] or "layer")
    out["device"] = str(out["device"] or "gpu").lower()
    out["bound"] = str(out["bound"] or "compute")
    for k in ("time_ms", "compute_ms", "memory_ms", "overhead_ms", "macs", "bytes"):
        out[k] = _num(out[k])
    out["subgraph"] = int(_num(out["subgraph"], -1))
    out["layers"] = list(out["layers"] or [])
    out["reason"] = out["reason"] or ""
    return out


def _est(e) -> dict:
    """An estimate (object or dict) as a normalised dict with normalised step rows."""
    d = dict(_as_dict(e))
    d["steps"] = [_step(s) for s in d.get("steps") or []]
    d["fallback"] = [_as_dict(f) for f in d.get("fallback") or []]
    d["total_ms"] = _num(d.get("total_ms")) or sum(s["time_ms"] for s in d["steps"])
    d["_hw_obj"] = e if not isinstance(e, dict) else None
    return d


def _fmt_ms(x: float) -> str:
    x = _num(x)
    if abs(x) >= 100:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.3f}"
    return f"{x:.4f}"


def _si(n: float, unit: str = "") -> str:
    n = _num(n)
    for p, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            v = n / scale
            return f"{v:.3g} {p}{unit}".strip()
    if 0 < abs(n) < 1:
        return f"{n:.3g} {unit}".strip()
    return f"{n:.0f} {unit}".strip()


def _pct(x: float) -> str:
    return f"{_num(x) * 100:.1f}%"


def _short(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "\u2026"


def _c(x: float) -> str:
    """A coordinate: one decimal is plenty and keeps the page small."""
    return f"{x:.1f}".rstrip("0").rstrip(".") if x == x else "0"


def _time_axis(left: float, width: float, y: float, scale: float, span: float, ticks: int) -> list[str]:
    """A horizontal ms axis from 0 to `span` at `scale` px per ms, with about `ticks` labelled ticks."""
    out = [f'<line x1="{_c(left)}" y1="{y}" x2="{_c(left + width)}" y2="{y}" stroke="#555"/>']
    step = _nice_step(span, ticks)
    k = 0
    while k * step <= span * 1.0001:
        xt = left + k * step * scale
        out.append(f'<line x1="{_c(xt)}" y1="{y}" x2="{_c(xt)}" y2="{y + 4}" stroke="#555"/>'
                   f'<text x="{_c(xt)}" y="{y + 16}" font-size="10" text-anchor="middle" fill="#333">'
                   f'{k * step:g}</text>')
        k += 1
    return out


def _nice_step(span: float, target: int = 10) -> float:
    if span <= 0:
        return 1.0
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def _svg_open(sid: str, w: float, h: float, label: str) -> str:
    return (f'<svg id="{_e(sid)}" width="{_c(w)}" height="{_c(h)}" viewBox="0 0 {_c(w)} {_c(h)}" '
            f'role="img" aria-label="{_e(label)}">')


def _hatch_defs(sid: str) -> str:
    return (f'<defs><pattern id="{sid}-hatch" patternUnits="userSpaceOnUse" width="6" height="6" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{COPY_COLOUR}"/>'
            f'<line x1="0" y1="0" x2="0" y2="6" stroke="{COPY_DARK}" stroke-width="2.5"/></pattern>'
            f'<marker id="{sid}-arrow" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="6" markerHeight="6" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{COPY_DARK}"/></marker></defs>')


def _step_title(s: dict, total: float) -> str:
    bits = [s["name"], f"{s['kind']} {s['op'] or ''} on {s['device'].upper()} {s['precision'] or ''}".strip(),
            f"{_fmt_ms(s['time_ms'])} ms ({_pct(s['time_ms'] / total) if total else '-'}), {s['bound']}-bound"]
    if s["macs"]:
        bits.append(f"MACs {_si(s['macs'])}, bytes {_si(s['bytes'], 'B')}")
    elif s["bytes"]:
        bits.append(f"bytes {_si(s['bytes'], 'B')}")
    if s["subgraph"] >= 0 and s["device"] == "dla":
        bits.append(f"DLA loadable {s['subgraph']}")
    if s["reason"]:
        bits.append(f"reason: {s['reason']}")
    return "<title>" + _e("\n".join(bits)) + "</title>"


def _is_copy(s: dict) -> bool:
    return s["kind"] in ("reformat", "transition")


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


def _legend(x: float, y: float, items: list[tuple[str, str]], font: int = 11) -> str:
    parts = []
    for label, fill in items:
        parts.append(f'<rect x="{_c(x)}" y="{_c(y)}" width="12" height="11" fill="{fill}" stroke="#999" '
                     f'stroke-width="0.4"/><text x="{_c(x + 16)}" y="{_c(y + 10)}" font-size="{font}" '
                     f'fill="#333">{_e(label)}</text>')
        x += 30 + len(label) * font * 0.6
    return '<g class="legend">' + "".join(parts) + "</g>"


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


# ---------------------------------------------------------------------------------------------- roofline
def _platform_roofs(d: dict, platform=None) -> tuple[dict, str]:
    """{device: (peak ops/s, bytes/s)} from the platform spec (the estimate's hardware name), if found."""
    try:
        from .hardware import Platform, hardware
        plat = platform if isinstance(platform, Platform) else hardware(platform or d.get("hardware"))
    except Exception:  # noqa: BLE001 - a custom spec path, or no spec: infer from rows instead
        return {}, ""
    prec = str(d.get("precision") or "fp16")
    prec = "int8" if prec == "best" else prec
    bw = plat.memory.dram_bandwidth_bytes_per_s
    roofs = {}
    try:
        if plat.dla is not None:
            dprec = prec if prec in plat.dla.precisions else ("fp16" if "fp16" in plat.dla.precisions else "int8")
            roofs["dla"] = (2.0 * plat.dla.macs_per_cycle(dprec) * plat.dla.clock_hz, bw)
        if plat.gpu is not None:
            roofs["gpu"] = (2.0 * plat.gpu.sm_count * plat.gpu.fma_per_clk_per_sm(prec) * plat.gpu.clock_hz, bw)
    except Exception:  # noqa: BLE001
        return {}, ""
    return roofs, f"spec {plat.label}, {prec}"


def _inferred_roofs(points: list[dict]) -> dict:
    """Peak ops/s and bandwidth per device from the cost rows: the best any layer's compute/memory part reached."""
    roofs: dict[str, list[float]] = {}
    for s in points:
        r = roofs.setdefault(s["device"], [0.0, 0.0])
        if s["compute_ms"] > 0 and s["macs"] > 0:
            r[0] = max(r[0], 2 * s["macs"] / (s["compute_ms"] * 1e-3))
        if s["memory_ms"] > 0 and s["bytes"] > 0:
            r[1] = max(r[1], s["bytes"] / (s["memory_ms"] * 1e-3))
    return {k: (v[0], v[1]) for k, v in roofs.items() if v[0] > 0 and v[1] > 0}


def _text_w(text: str, size: float = 10) -> float:
    """Approximate width in px of `text` in the page's sans-serif font (0.6 em per character)."""
    return 0.6 * size * len(text)


def _seg_dist(px: float, py: float, x0: float, y0: float, x1: float, y1: float) -> float:
    dx, dy = x1 - x0, y1 - y0
    t = 0.0 if dx == dy == 0 else max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (x0 + t * dx), py - (y0 + t * dy))


LABEL_HALF_HEIGHT = 6.0            # px around a 10px text's middle line that a point must stay out of


def label_hits(seg: tuple, circles) -> int:
    """How many circles (cx, cy, r) touch a label whose baseline runs from (x0, y0) to (x1, y1): the text's
    middle line sits 3.5 px above the baseline (perpendicular to it)."""
    x0, y0, x1, y1 = seg
    n = math.hypot(x1 - x0, y1 - y0) or 1.0
    ox, oy = 3.5 * (y1 - y0) / n, -3.5 * (x1 - x0) / n          # normal pointing up the text
    ox, oy = (ox, oy) if oy <= 0 else (-ox, -oy)
    return sum(1 for cx, cy, r in circles
               if _seg_dist(cx, cy, x0 + ox, y0 + oy, x1 + ox, y1 + oy) < r + LABEL_HALF_HEIGHT)


def _free_spot(spots, circles):
    """The first label baseline (x0, y0, x1, y1) no point covers, else the least covered; its start point."""
    best = min(spots, key=lambda sp: (label_hits(sp, circles), spots.index(sp)), default=None)
    return None if best is None else (best[0], best[1])


def roofline_svg(est, sid: str = "roofline", peak=None, bandwidth=None, platform=None,
                 width: int = 760, height: int = 484) -> str:
    """Layer steps: arithmetic intensity (2*MACs/bytes, ops/byte) vs achieved ops/s, log-log, under the roofs.

    `peak` (ops/s) and `bandwidth` (bytes/s) may be numbers (every device) or {device: number}; otherwise
    the roofs come from the platform spec, or are inferred from the rows' compute/memory parts.
    """
    d = est if isinstance(est, dict) and "_hw_obj" in est else _est(est)
    pts = [s for s in d["steps"] if s["kind"] == "layer" and s["macs"] > 0 and s["bytes"] > 0 and s["time_ms"] > 0]
    skipped = sum(1 for s in d["steps"] if s["kind"] == "layer") - len(pts)
    devices = sorted({s["device"] for s in pts}) or ["dla", "gpu"]
    if peak is not None or bandwidth is not None:
        roofs, src = {}, "given"
        inferred = _inferred_roofs(pts)
        for dev in devices:
            p = peak.get(dev) if isinstance(peak, dict) else peak
            b = bandwidth.get(dev) if isinstance(bandwidth, dict) else bandwidth
            p = p or inferred.get(dev, (0, 0))[0]
            b = b or inferred.get(dev, (0, 0))[1]
            if p and b:
                roofs[dev] = (float(p), float(b))
    else:
        roofs, src = _platform_roofs(d, platform)
        if not roofs:
            roofs, src = _inferred_roofs(pts), "inferred from the cost rows"
    roofs = {k: v for k, v in roofs.items() if k in devices}
    L, R, T, B = 78, 20, 22, 88
    pw, ph = width - L - R, height - T - B
    xs = [2 * s["macs"] / s["bytes"] for s in pts]
    ys = [2 * s["macs"] / (s["time_ms"] * 1e-3) for s in pts]
    knees = [p / b for p, b in roofs.values()]
    xlo = min(xs + [k / 10 for k in knees] or [1.0])
    xhi = max(xs + [k * 10 for k in knees] or [1000.0])
    ylo = min(ys + [p / 100 for p, _ in roofs.values()] or [1e9])
    yhi = max(ys + [p for p, _ in roofs.values()] or [1e12])
    x0, x1 = math.floor(math.log10(xlo)), math.ceil(math.log10(xhi))
    y0, y1 = math.floor(math.log10(ylo)), math.ceil(math.log10(yhi * 1.05))
    x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)

    def X(v: float) -> float:
        return L + (math.log10(v) - x0) / (x1 - x0) * pw

    def Y(v: float) -> float:
        return T + ph - (math.log10(v) - y0) / (y1 - y0) * ph

    out = [_svg_open(sid, width, height, "roofline: arithmetic intensity vs achieved ops/s")]
    out.append(f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="#fbfbfd" stroke="#999" stroke-width="0.6"/>')
    for k in range(x0, x1 + 1):
        xv = X(10.0 ** k)
        out.append(f'<line x1="{_c(xv)}" y1="{T}" x2="{_c(xv)}" y2="{T + ph}" stroke="#e2e4ea"/>'
                   f'<text x="{_c(xv)}" y="{T + ph + 15}" font-size="10" text-anchor="middle" fill="#333">'
                   f'{_e(_si(10.0 ** k))}</text>')
    for k in range(y0, y1 + 1):
        yv = Y(10.0 ** k)
        out.append(f'<line x1="{L}" y1="{_c(yv)}" x2="{L + pw}" y2="{_c(yv)}" stroke="#e2e4ea"/>'
                   f'<text x="{L - 5}" y="{_c(yv + 3)}" font-size="10" text-anchor="end" fill="#333">'
                   f'{_e(_si(10.0 ** k))}</text>')
    out.append(f'<text x="{L + pw / 2}" y="{T + ph + 32}" font-size="11" text-anchor="middle" fill="#222">'
               f'arithmetic intensity (2\u00b7MACs / bytes, ops per byte)</text>')
    out.append(f'<text x="16" y="{T + ph / 2}" font-size="11" text-anchor="middle" fill="#222" '
               f'transform="rotate(-90 16 {T + ph / 2})">achieved ops/s</text>')
    xmin, xmax = 10.0 ** x0, 10.0 ** x1
    ymin, ymax = 10.0 ** y0, 10.0 ** y1
    total = d["total_ms"] or 1.0
    dots = []                      # (step, cx, cy, r), largest time first (drawn first, small ones on top)
    for s, xv, yv in sorted(zip(pts, xs, ys), key=lambda t: -t[0]["time_ms"]):
        dots.append((s, X(xv), Y(yv), 2.5 + 5.5 * math.sqrt(min(1.0, s["time_ms"] / total * 10))))
    circles = [(cx, cy, r) for _, cx, cy, r in dots]
    labels = []                    # drawn after the points, each where no point covers it
    for dev, (p, b) in sorted(roofs.items()):
        col = DEVICE_COLOURS.get(dev, "#555")
        xa = max(xmin, ymin / b)
        knee = p / b
        pts_line = []
        if knee > xa:
            pts_line.append((xa, b * xa))
            pts_line.append((min(knee, xmax), b * min(knee, xmax)))
        if knee < xmax:
            pts_line.append((max(knee, xmin), p))
            pts_line.append((xmax, p))
        tip = f"{dev.upper()} roof: peak {_si(p)}op/s, DRAM {_si(b)}B/s, ridge at {knee:.3g} ops/B ({src})"
        pl = " ".join(f"{_c(X(a))},{_c(Y(min(max(v, ymin), ymax)))}" for a, v in pts_line)
        out.append(f'<polyline class="roof" points="{pl}" fill="none" stroke="{col}" stroke-width="1.8" '
                   f'stroke-dasharray="6 3"><title>{_e(tip)}'
                   f'</title></polyline>')
        if ymin <= p <= ymax:
            text = f"{dev.upper()} peak {_si(p)}op/s"
            w = _text_w(text)
            left, right = max(X(knee) + 4, L + 4), L + pw - 4
            spots = [(x, Y(p) + dy) for dy in (-5, 13) for x in
                     [right - w] + [left + f * (right - w - left) for f in (0.0, 0.25, 0.5, 0.75)]]
            x, y = _free_spot([(x, y, x + w, y) for x, y in spots if L <= x], circles) or (right - w, Y(p) - 5)
            labels.append(f'<text class="roof-label" x="{_c(x)}" y="{_c(y)}" font-size="10" fill="{col}">'
                          f'{_e(text)}</text>')
        same_bw = sorted(k.upper() for k, (_, b2) in roofs.items() if abs(b2 - b) <= 0.01 * b)
        if dev.upper() != same_bw[0]:
            continue                                        # the bandwidth roof is shared: label it once
        text = f"{'/'.join(same_bw)} DRAM {_si(b)}B/s"
        w = _text_w(text)
        ang = math.atan2(ph / (y1 - y0), pw / (x1 - x0))
        spots = []
        for f in (0.1, 0.25, 0.4, 0.55, 0.7):
            xl = 10 ** (math.log10(max(xa, xmin)) + f * (math.log10(min(knee, xmax)) - math.log10(max(xa, xmin))))
            if not (ymin < b * xl < ymax):
                continue
            for off in (-5, 13):
                sx, sy = X(xl) + off * math.sin(ang), Y(b * xl) + off * math.cos(ang)
                spots.append((sx, sy, sx + w * math.cos(ang), sy - w * math.sin(ang)))
        spot = _free_spot(spots, circles) if spots else None
        if spot:
            x, y = spot
            labels.append(f'<text class="roof-label" x="{_c(x)}" y="{_c(y)}" font-size="10" '
                          f'fill="{col if len(same_bw) == 1 else "#444"}" '
                          f'transform="rotate({-math.degrees(ang):.1f} {_c(x)} {_c(y)})">{_e(text)}</text>')
    for s, cx, cy, r in dots:
        col = DEVICE_COLOURS.get(s["device"], "#555")
        out.append(f'<circle class="pt {s["device"]}" cx="{_c(cx)}" cy="{_c(cy)}" r="{r:.1f}" fill="{col}" '
                   f'fill-opacity="0.55" stroke="{BOUND_COLOURS.get(s["bound"], "#333")}" stroke-width="1.2">'
                   f'{_step_title(s, total)}</circle>')
    out += labels
    items = [(f"{dev.upper()} layer", DEVICE_COLOURS.get(dev, "#555")) for dev in devices]
    items += [(f"outline: {b}-bound", BOUND_COLOURS[b]) for b in ("compute", "memory", "overhead")]
    out.append(_legend(L, T + ph + 44, items, 10))
    notes = ["point area ~ share of the time; " + (f"roofs: {src}" if roofs else "no roofs (peak and bandwidth unknown)")]
    if skipped:
        notes.append(f"{skipped} layer step(s) without MACs (activations, eltwise, pooling, ...) are not plotted")
    for i, note in enumerate(notes):
        out.append(f'<text x="{L}" y="{T + ph + 66 + 13 * i}" font-size="10" fill="#5a6272">{_e(note)}</text>')
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


# -------------------------------------------------------------------------------------------- html parts
def _page(title: str, body: list[str]) -> str:
    from . import __version__
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{_e(title)}</title>"
            f"<style>{CSS}</style></head><body><main>\n" + "\n".join(body)
            + f"\n<footer>dlasim {__version__} \u00b7 analytical estimate, not a measurement \u00b7 "
              f"hover the pictures for details</footer></main></body></html>\n")


def _header(d: dict, heading: str | None = None) -> str:
    nfb = len(d["fallback"])
    title = heading or f"{d.get('model', '?')} on {d.get('hardware', '?')}"
    sub = (f"device {d.get('device', '?')} \u00b7 {d.get('precision', '?')} \u00b7 batch {d.get('batch', '?')}"
           + (f" \u00b7 sparsity {d.get('sparsity')}" if d.get("sparsity") not in (None, "", "disable") else "")
           + (f" \u00b7 {d.get('label')}" if d.get("label") else ""))
    cards = [("total latency", f"{_fmt_ms(d['total_ms'])} ms", False),
             ("DLA subgraphs", d.get("dla_subgraphs", 0), False),
             ("GPU\u2194DLA transitions", d.get("transitions", 0), bool(d.get("transitions"))),
             ("GPU fallback layers", nfb, nfb > 0),
             ("steps", len(d["steps"]), False)]
    if d.get("macs"):
        cards.append(("MACs", _si(d["macs"]), False))
        if d["total_ms"]:
            cards.append(("achieved compute (2\u00b7MACs / latency)",
                          f"{_si(2 * _num(d['macs']) / (d['total_ms'] * 1e-3))}op/s", False))
    if d["total_ms"] and d.get("batch"):
        qps = d.get("throughput_qps") or _num(d["batch"]) * 1e3 / d["total_ms"]
        cards.insert(1, (f"throughput: inferences/s (qps) = batch {d['batch']} / latency", f"{qps:,.1f} qps", False))
    c = "".join(f'<div class="card{" hot" if hot else ""}"><b>{_e(v)}</b><span>{_e(k)}</span></div>'
                for k, v, hot in cards)
    warn = "".join(f'<p class="warn">{_e(w)}</p>' for w in d.get("warnings") or [])
    return f"<h1>{_e(title)}</h1><p class=\"sub\">{_e(sub)}</p><div class=\"cards\">{c}</div>{warn}"


def _fallback_html(d: dict) -> str:
    fb = d["fallback"]
    if not fb:
        return "<h2>GPU fallback</h2><p>No layer falls back to the GPU.</p>"
    groups: dict[str, list[dict]] = {}
    for f in fb:
        groups.setdefault(str(f.get("reason") or "(no reason given)"), []).append(f)
    rows = []
    for reason, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        ops = sorted({str(f.get("op") or "") for f in items})
        names = [str(f.get("name") or "") for f in items]
        shown = ", ".join(_e(n) for n in names[:6])
        more = ""
        if len(names) > 6:
            more = (f" <details><summary>all {len(names)} layers</summary>"
                    + ", ".join(_e(n) for n in names) + "</details>")
        rows.append(f"<tr><td>{_e(reason)}</td><td class=\"n\">{len(items)}</td><td>{_e(', '.join(ops))}</td>"
                    f"<td>{shown}{ELLIPSIS if len(names) > 6 else ''}{more}</td></tr>")
    return (f"<h2>GPU fallback: {len(fb)} layer(s), {len(groups)} reason(s)</h2>"
            "<table><thead><tr><th>reason</th><th class=\"n\">layers</th><th>ops</th><th>layers</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _steps_table(d: dict) -> str:
    total = d["total_ms"] or 1.0
    rows = []
    for i, s in enumerate(d["steps"]):
        share = s["time_ms"] / total
        bar = f"background:linear-gradient(90deg,#dbe4f5 {min(share * 100 * 3, 100):.1f}%,transparent 0)"
        dev = s["device"]
        rows.append(f'<tr class="{_e(s["kind"])}"><td class="n">{i}</td><td>{_e(s["name"])}</td>'
                    f'<td>{_e(s["kind"])}</td><td>{_e(s["op"])}</td><td><span class="tag {_e(dev)}">'
                    f'{_e(dev.upper())}</span></td><td>{_e(s["precision"])}</td>'
                    f'<td class="n">{_fmt_ms(s["time_ms"])}</td><td class="n" style="{bar}">{_pct(share)}</td>'
                    f'<td class="b-{_e(s["bound"])}">{_e(s["bound"])}</td><td class="n">{_e(_si(s["macs"]))}</td>'
                    f'<td class="n">{_e(_si(s["bytes"]))}</td><td>{_e(s["reason"])}</td></tr>')
    return ("<h2>All steps, in execution order</h2><div class=\"tablewrap\"><table><thead><tr>"
            "<th class=\"n\">#</th><th>name</th><th>kind</th><th>op</th><th>device</th><th>precision</th>"
            "<th class=\"n\">time ms</th><th class=\"n\">share</th><th>bound</th><th class=\"n\">MACs</th>"
            "<th class=\"n\">bytes</th><th>reason</th></tr></thead><tbody>" + "".join(rows)
            + f"</tbody><tfoot><tr><th></th><th>total</th><th colspan=\"4\"></th><th class=\"n\">"
              f"{_fmt_ms(d['total_ms'])}</th><th colspan=\"5\"></th></tr></tfoot></table></div>")


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


def _estimate_sections(d: dict, peak=None, bandwidth=None, platform=None) -> list[str]:
    kinds = {}
    for s in d["steps"]:
        kinds[s["kind"]] = kinds.get(s["kind"], 0) + 1
    top = min(40, len(d["steps"]))
    return [
        "<h2>Where the time goes</h2>",
        _figure(breakdown_svg(d), "Total time split by kind of step."),
        "<h2>Timeline</h2>",
        _figure(timeline_svg(d), "Steps back to back in execution order (TensorRT runs them serially), in the "
                "lane of the device that runs them. Hatched orange: reformat and GPU\u2194DLA transition copies; "
                "arrows: hand-overs between the engines; purple triangles: DLA loadable launches, the purple strip "
                "under the DLA lane spans each loadable. Hover a step for its details."),
        f"<h2>Longest {top} steps</h2>",
        _figure(bars_svg(d), "Coloured by what bounds the step; the tag says where it runs."),
        "<h2>Roofline</h2>",
        _figure(roofline_svg(d, peak=peak, bandwidth=bandwidth, platform=platform),
                "Each layer step with MACs at its arithmetic intensity and achieved rate (2\u00b7MACs / predicted "
                "time). Points far below their roof lose time to overhead, padding or refetches; points left of "
                "the ridge are bound by DRAM bandwidth."),
        _fallback_html(d),
        _steps_table(d),
    ]


def _causes_table(causes: list[dict], span: float) -> str:
    if not causes:
        return "<p>No causes reported.</p>"
    rows = []
    for c in causes:
        ms = _num(c.get("ms"))
        share = c.get("share")
        share = _num(share) if share is not None else (ms / span if span else 0.0)
        rows.append(f"<tr><td>{_e(c.get('code'))}</td><td class=\"n\">{_fmt_ms(ms)}</td>"
                    f"<td class=\"n\">{_pct(share)}</td><td>{_e(c.get('text'))}</td></tr>")
    return ("<table><thead><tr><th>cause</th><th class=\"n\">ms</th><th class=\"n\">share</th><th>explanation</th>"
            "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _advice_html(advice) -> str:
    items = [_as_dict(a) for a in advice or []]
    if not items:
        return "<h2>Advice</h2><p>No change found that would make it faster.</p>"
    rows = []
    for a in items:
        pred, gain, pct = a.get("predicted_ms"), a.get("gain_ms"), a.get("gain_pct")
        pct_s = ""
        if pct is not None:
            p = _num(pct)
            pct_s = f"{p:.1f}%" if abs(p) > 1.0 else f"{p * 100:.1f}%"
        rows.append(f"<tr><td>{_e(a.get('change'))}</td><td>{_e(a.get('text'))}</td>"
                    f"<td class=\"n\">{_fmt_ms(pred) if pred is not None else ''}</td>"
                    f"<td class=\"n\">{_fmt_ms(gain) if gain is not None else ''}</td><td class=\"n\">{pct_s}</td></tr>")
    return ("<h2>Advice</h2><table><thead><tr><th>change</th><th>why</th><th class=\"n\">predicted ms</th>"
            "<th class=\"n\">gain ms</th><th class=\"n\">gain</th></tr></thead><tbody>" + "".join(rows)
            + "</tbody></table>")


def _measured_html(rows) -> str:
    rows = [_as_dict(r) for r in rows or []]
    if not rows:
        return ""
    body = []
    for r in rows:
        p, m = r.get("predicted_ms"), r.get("measured_ms")
        err = ""
        if p is not None and m:
            err = f"{(_num(p) - _num(m)) / _num(m) * 100:+.0f}%"
        body.append(f"<tr><td>{_e(r.get('name'))}</td><td class=\"n\">{_fmt_ms(p) if p is not None else ''}</td>"
                    f"<td class=\"n\">{_fmt_ms(m) if m is not None else ''}</td><td class=\"n\">{err}</td>"
                    f"<td>{_e(r.get('cause'))}</td></tr>")
    return ("<h2>Predicted vs measured</h2><div class=\"tablewrap\"><table><thead><tr><th>step</th>"
            "<th class=\"n\">predicted ms</th><th class=\"n\">measured ms</th><th class=\"n\">error</th>"
            "<th>cause</th></tr></thead><tbody>" + "".join(body) + "</tbody></table></div>")


# ------------------------------------------------------------------------------------------------ pages
def estimate_page(e, peak=None, bandwidth=None, platform=None) -> str:
    """The page for one Estimate (object or its to_dict())."""
    d = _est(e)
    title = f"dlasim: {d.get('model', '?')} on {d.get('hardware', '?')} ({d.get('device')}, {d.get('precision')}, " \
            f"batch {d.get('batch')}): {_fmt_ms(d['total_ms'])} ms"
    return _page(title, [_header(d)] + _estimate_sections(d, peak, bandwidth, platform))


def explain_page(result, peak=None, bandwidth=None, platform=None) -> str:
    """The estimate page plus the causes waterfall (ideal -> predicted) and the advice."""
    r = _as_dict(result)
    est = r.get("estimate")
    if est is None:
        est = getattr(result, "estimate", None)
    if est is None and "steps" in r:
        est = r
    d = _est(est or {})
    causes = [_as_dict(c) for c in r.get("causes") or []]
    predicted = _num(r.get("predicted_ms")) or d["total_ms"]
    ideal = r.get("ideal_ms")
    ideal = _num(ideal) if ideal is not None else predicted - sum(_num(c.get("ms")) for c in causes)
    title = f"dlasim explain: {d.get('model', '?')} on {d.get('hardware', '?')}: {_fmt_ms(predicted)} ms " \
            f"(ideal {_fmt_ms(ideal)} ms)"
    body = [_header(d, f"Why {d.get('model', '?')} takes {_fmt_ms(predicted)} ms on {d.get('hardware', '?')}"),
            "<h2>From ideal to predicted</h2>",
            _figure(waterfall_svg(ideal, causes, predicted),
                    f"Ideal: every MAC at the device's peak rate and every byte at full DRAM bandwidth "
                    f"({_fmt_ms(ideal)} ms). Each cause adds (orange) or removes (green) time on the way to the "
                    f"predicted {_fmt_ms(predicted)} ms."),
            _causes_table(causes, predicted - ideal),
            _advice_html(r.get("advice")),
            _measured_html(r.get("rows"))]
    body += _estimate_sections(d, peak, bandwidth, platform)
    return _page(title, body)


def _variant_label(v: dict, i: int) -> str:
    if v.get("label"):
        return str(v["label"])
    return f"{v.get('device', '?')} {v.get('precision', '?')} b{v.get('batch', '?')} ({i + 1})"


def _diff_html(diff, labels: list[str]) -> str:
    rows = [_as_dict(x) for x in diff or []]
    if not rows:
        return ""
    body = []
    for r in rows:
        ms = r.get("ms")
        if isinstance(ms, dict):
            vals = [ms.get(lb) for lb in labels]
        elif isinstance(ms, (list, tuple)):
            vals = list(ms)
        else:
            vals = [r.get(f"ms_{lb}", r.get(lb)) for lb in labels]
            if all(v is None for v in vals):
                vals = [r.get(k) for k in sorted(r) if k.startswith("ms") and k != "ms"]
        vals = (vals + [None] * len(labels))[: len(labels)]
        delta = r.get("delta_ms")
        if delta is None and len(vals) >= 2 and vals[0] is not None and vals[1] is not None:
            delta = _num(vals[1]) - _num(vals[0])
        cls = "pos" if _num(delta) > 0 else "neg" if _num(delta) < 0 else ""
        cells = "".join(f"<td class=\"n\">{_fmt_ms(v) if v is not None else DASH}</td>" for v in vals)
        body.append(f"<tr><td>{_e(r.get('name'))}</td><td>{_e(r.get('kind'))}</td>{cells}"
                    f"<td class=\"n {cls}\">{(f'{_num(delta):+.4f}') if delta is not None else ''}</td></tr>")
    heads = "".join(f"<th class=\"n\">{_e(lb)} ms</th>" for lb in labels)
    return ("<h2>Per-step difference</h2><div class=\"tablewrap\"><table><thead><tr><th>step</th><th>kind</th>"
            f"{heads}<th class=\"n\">\u0394 ms</th></tr></thead><tbody>" + "".join(body)
            + "</tbody></table></div>")


def compare_page(result) -> str:
    """One timeline per variant (same time scale), achieved vs ideal speedup, causes waterfall, diff, advice."""
    r = _as_dict(result)
    raw = r.get("variants")
    if raw is None:
        raw = getattr(result, "variants", None) or []
    variants = [_est(v) for v in raw]
    labels = [_variant_label(v, i) for i, v in enumerate(variants)]
    tot = [v["total_ms"] for v in variants]
    speedup = _num(r.get("speedup")) or (tot[0] / tot[1] if len(tot) >= 2 and tot[1] else 1.0)
    ideal_speedup = _num(r.get("ideal_speedup")) or 1.0
    causes = [_as_dict(c) for c in r.get("causes") or []]
    first = variants[0] if variants else _est({})
    model, hw = first.get("model", "?"), first.get("hardware", "?")
    body = [f"<h1>{_e(model)} on {_e(hw)}: {_e(' vs '.join(labels))}</h1>"]
    vrows = "".join(
        f"<tr><td><b>{_e(lb)}</b></td><td>{_e(v.get('hardware'))}</td><td>{_e(v.get('device'))}</td>"
        f"<td>{_e(v.get('precision'))}</td><td class=\"n\">{_e(v.get('batch'))}</td><td>{_e(v.get('sparsity'))}</td>"
        f"<td class=\"n\">{_fmt_ms(v['total_ms'])}</td><td class=\"n\">{_e(v.get('dla_subgraphs', 0))}</td>"
        f"<td class=\"n\">{_e(v.get('transitions', 0))}</td><td class=\"n\">{len(v['fallback'])}</td></tr>"
        for lb, v in zip(labels, variants))
    body.append("<table><thead><tr><th>variant</th><th>hardware</th><th>device</th><th>precision</th>"
                "<th class=\"n\">batch</th><th>sparsity</th><th class=\"n\">total ms</th><th class=\"n\">DLA "
                "subgraphs</th><th class=\"n\">transitions</th><th class=\"n\">fallback layers</th></tr></thead>"
                f"<tbody>{vrows}</tbody></table>")
    if len(variants) >= 2:
        body.append(f"<h2>Speedup {_e(labels[0])} \u2192 {_e(labels[1])}: {speedup:.2f}\u00d7 "
                    f"(ideal {ideal_speedup:.2f}\u00d7)</h2>")
        body.append(_figure(speedup_svg(speedup, ideal_speedup, (labels[0], labels[1])),
                            f"Achieved: {_fmt_ms(tot[0])} ms / {_fmt_ms(tot[1])} ms. Ideal: what the naive "
                            f"expectation was."))
        ideal_ms = r.get("ideal_ms")
        ideal_ms = _num(ideal_ms) if ideal_ms is not None else (tot[0] / ideal_speedup if ideal_speedup else tot[1])
        body.append("<h2>Why the speedup falls short</h2>")
        body.append(_figure(waterfall_svg(ideal_ms, causes, tot[1], start_label=f"ideal {labels[1]}",
                                          end_label=f"predicted {labels[1]}"),
                            f"From {_fmt_ms(ideal_ms)} ms ({labels[0]} at {_fmt_ms(tot[0])} ms divided by the "
                            f"ideal {ideal_speedup:.2f}\u00d7) through each cause to {labels[1]}'s predicted "
                            f"{_fmt_ms(tot[1])} ms."))
        body.append(_causes_table(causes, tot[1] - ideal_ms))
    body.append("<h2>Timelines (same time scale)</h2>")
    scale = max(tot or [1.0])
    for i, (lb, v) in enumerate(zip(labels, variants)):
        sid = "timeline" if i == 0 else f"timeline-{i + 1}"
        body.append(f"<h3>{_e(lb)}: {_fmt_ms(v['total_ms'])} ms</h3>")
        body.append(_figure(timeline_svg(v, sid=sid, scale_ms=scale),
                            f"{lb}: {len(v['steps'])} steps, {v.get('dla_subgraphs', 0)} DLA subgraph(s), "
                            f"{v.get('transitions', 0)} transition(s)."))
    body.append(_advice_html(r.get("advice")))
    body.append(_diff_html(r.get("diff"), labels))
    for lb, v in zip(labels, variants):
        if v["fallback"]:
            body.append(_fallback_html(v).replace("<h2>GPU fallback", f"<h2>{_e(lb)}: GPU fallback", 1))
    title = f"dlasim compare: {model} on {hw}: {' vs '.join(labels)} ({speedup:.2f}x, ideal {ideal_speedup:.2f}x)"
    return _page(title, body)
