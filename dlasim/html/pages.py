"""Whole pages: estimate, explain, compare (header cards, tables, figures)."""
from __future__ import annotations

from .charts import bars_svg, breakdown_svg, speedup_svg, timeline_svg, waterfall_svg
from .common import CSS, DASH, ELLIPSIS, _as_dict, _e, _est, _fmt_ms, _num, _pct, _si
from .roofline import roofline_svg


# -------------------------------------------------------------------------------------------- html parts
def _page(title: str, body: list[str]) -> str:
    from .._version import __version__
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


def _estimate_sections(d: dict, peak=None, bandwidth=None) -> list[str]:
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
        _figure(roofline_svg(d, peak=peak, bandwidth=bandwidth),
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
def estimate_page(e, peak=None, bandwidth=None) -> str:
    """The page for one Estimate (object or its to_dict())."""
    d = _est(e)
    title = f"dlasim: {d.get('model', '?')} on {d.get('hardware', '?')} ({d.get('device')}, {d.get('precision')}, " \
            f"batch {d.get('batch')}): {_fmt_ms(d['total_ms'])} ms"
    return _page(title, [_header(d)] + _estimate_sections(d, peak, bandwidth))


def explain_page(result, peak=None, bandwidth=None) -> str:
    """The estimate page plus the causes waterfall (ideal -> predicted) and the advice."""
    r = _as_dict(result)
    est = getattr(result, "estimate", None)          # the record (its device peaks set the roofs)
    if est is None:
        est = r.get("estimate")
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
    body += _estimate_sections(d, peak, bandwidth)
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
        f"<td class=\"n\">{_fmt_ms(v['total_ms'])}</td>"
        f"<td class=\"n\">{_num(v.get('batch'), 1) * 1e3 / v['total_ms'] if v['total_ms'] else 0:,.1f}</td>"
        f"<td class=\"n\">{_e(v.get('dla_subgraphs', 0))}</td>"
        f"<td class=\"n\">{_e(v.get('transitions', 0))}</td><td class=\"n\">{len(v['fallback'])}</td></tr>"
        for lb, v in zip(labels, variants))
    body.append("<table><thead><tr><th>variant</th><th>hardware</th><th>device</th><th>precision</th>"
                "<th class=\"n\">batch</th><th>sparsity</th><th class=\"n\">total ms</th>"
                "<th class=\"n\">throughput, inferences/s (qps = batch / latency)</th><th class=\"n\">DLA "
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

