"""The roofline picture: layer steps at arithmetic intensity vs achieved ops/s, under the device roofs;
roof labels are placed where no point covers them."""
from __future__ import annotations

import math

from ..precision import run_precision
from .common import BOUND_COLOURS, DEVICE_COLOURS, _c, _e, _est, _legend, _si, _step_title, _svg_open


def _estimate_roofs(d: dict, devices: list[str]) -> tuple[dict, str]:
    """{device: (peak ops/s, bytes/s)} from the estimate's device peaks (Estimate.peaks, from the platform spec),
    at the precision each device runs for the one asked; none for an estimate given as a dict."""
    peaks = getattr(d.get("_hw_obj"), "peaks", None) or {}
    asked = str(d.get("precision") or "fp16")
    roofs, precs = {}, []
    for dev in devices:
        if dev in peaks:
            p = run_precision(dev, asked, peaks[dev].precisions)
            roofs[dev] = (2.0 * peaks[dev].rate(p), peaks[dev].dram_bytes_per_s)
            precs.append(p)
    return roofs, (f"spec {d.get('hardware')}, {', '.join(dict.fromkeys(precs))}" if roofs else "")


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


def roofline_svg(est, sid: str = "roofline", peak=None, bandwidth=None,
                 width: int = 760, height: int = 484) -> str:
    """Layer steps: arithmetic intensity (2*MACs/bytes, ops/byte) vs achieved ops/s, log-log, under the roofs.

    `peak` (ops/s) and `bandwidth` (bytes/s) may be numbers (every device) or {device: number}; otherwise
    the roofs are the estimate's device peaks (Estimate.peaks), or are inferred from the rows' compute/memory parts.
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
        roofs, src = _estimate_roofs(d, devices)
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

