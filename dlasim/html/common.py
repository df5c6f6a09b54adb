"""Shared pieces of the HTML pages: colours, CSS, escaping, number formats, SVG helpers."""
from __future__ import annotations

import dataclasses
import math
from html import escape

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
    """The dict form of what a page renders: a dict as it is, a result's to_dict() (Estimate, ExplainResult,
    CompareResult, MeasuredExplain), a record's fields (a StepRow, a Fallback)."""
    if obj is None:
        return {}
    if isinstance(obj, dict):
        return obj
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    raise TypeError(f"dlasim.html renders dlasim results, records and dicts, not a {type(obj).__name__}")


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



def _legend(x: float, y: float, items: list[tuple[str, str]], font: int = 11) -> str:
    parts = []
    for label, fill in items:
        parts.append(f'<rect x="{_c(x)}" y="{_c(y)}" width="12" height="11" fill="{fill}" stroke="#999" '
                     f'stroke-width="0.4"/><text x="{_c(x + 16)}" y="{_c(y + 10)}" font-size="{font}" '
                     f'fill="#333">{_e(label)}</text>')
        x += 30 + len(label) * font * 0.6
    return '<g class="legend">' + "".join(parts) + "</g>"

