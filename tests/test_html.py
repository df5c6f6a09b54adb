"""HTML pages (`--format html -o FILE`): structure, self-containment, well-formed SVG. No browser needed."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import pytest

import dlasim
from dlasim.cli import main
from dlasim.html import compare_page, estimate_page, explain_page

SVG_RE = re.compile(r"<svg\b.*?</svg>", re.S)


@pytest.fixture(scope="module")
def yolo():
    return dlasim.estimate("zoo:yolov4", "xavier-agx", device="dla", precision="fp16", gpu_fallback=True)


@pytest.fixture(scope="module")
def yolo_page(yolo):
    return estimate_page(yolo)


def svgs(page: str) -> dict[str, ET.Element]:
    out = {}
    for i, text in enumerate(SVG_RE.findall(page)):
        el = ET.fromstring(text)          # raises if the SVG part is not well-formed XML
        out[el.get("id") or f"svg{i}"] = el
    return out


def assert_self_contained(page: str) -> None:
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert "url(http" not in page and "@import" not in page and "<script" not in page.lower()
    assert "<link" not in page.lower()


def test_estimate_page_structure(yolo, yolo_page):
    page = yolo_page
    assert page.startswith("<!DOCTYPE html>")
    for id_ in ("timeline", "bars", "roofline"):
        assert f'id="{id_}"' in page
    parts = svgs(page)
    tl = parts["timeline"]
    lanes = {r.get("data-lane") for r in tl.iter("rect") if r.get("class") == "lane"}
    assert lanes == {"dla", "gpu"}
    texts = {t.text for t in tl.iter("text")}
    assert {"DLA", "GPU"} <= texts
    markers = [e for e in tl.iter() if (e.get("class") or "") == "transition-marker"]
    assert len(markers) == sum(1 for s in yolo.steps if s.kind == "transition") > 0
    assert any("launch-marker" in (e.get("class") or "") for e in tl.iter())
    # one rect per step, each with a hover title
    steps = [r for r in tl.iter("rect") if (r.get("class") or "").startswith("step ")]
    assert len(steps) == len(yolo.steps)
    assert all(r.find("title") is not None for r in steps)
    # rects lie inside the drawing and in execution order
    xs = [float(r.get("x")) for r in steps]
    assert xs == sorted(xs)
    assert max(float(r.get("x")) + float(r.get("width")) for r in steps) <= float(tl.get("width")) + 1


def test_bars_and_roofline(yolo, yolo_page):
    parts = svgs(yolo_page)
    bars = parts["bars"]
    groups = [g for g in bars.iter("g") if (g.get("class") or "").startswith("bar ")]
    assert len(groups) == min(40, len(yolo.steps))
    legend = " ".join(t.text or "" for t in bars.iter("text"))
    assert "compute-bound" in legend and "memory-bound" in legend
    roof = parts["roofline"]
    pts = [c for c in roof.iter("circle")]
    assert len(pts) == sum(1 for s in yolo.steps if s.kind == "layer" and s.macs > 0 and s.bytes > 0)
    assert {"dla", "gpu"} <= {c.get("class").split()[1] for c in pts}
    assert len([p for p in roof.iter("polyline") if p.get("class") == "roof"]) == 2


def test_fallback_reasons_and_table(yolo, yolo_page):
    page = yolo_page
    assert "Mish is not supported on DLA v1" in page
    assert "pooling window 13 &gt; 8" in page        # escaped
    assert f"GPU fallback: {len(yolo.fallback)} layer(s)" in page
    for s in yolo.steps[:20]:
        assert f"<td>{s.name.replace('>', '&gt;')}</td>" in page
    assert 20_000 < len(page.encode()) < 1_000_000


def test_self_contained(yolo_page):
    assert_self_contained(yolo_page)


def test_escaping_and_dict_input():
    e = dlasim.estimate("zoo:resnet18", "xavier-agx", device="dla", precision="int8")
    d = e.to_dict()
    d["model"] = "<b>evil & co</b>"
    d["steps"][0]["name"] = "<script>alert(1)</script>"
    page = estimate_page(d)
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;evil &amp; co" in page
    svgs(page)


def test_gpu_only_and_empty_estimates():
    e = dlasim.estimate("zoo:resnet18", "orin-agx", device="gpu", precision="fp16")
    page = estimate_page(e)
    parts = svgs(page)
    assert not [m for m in parts["timeline"].iter() if m.get("class") == "transition-marker"]
    assert "No layer falls back" in page
    page = estimate_page({"model": "empty", "hardware": "x", "steps": [], "fallback": [], "total_ms": 0})
    svgs(page)


def test_roofline_given_roofs(yolo):
    from dlasim.html import roofline_svg
    svg = roofline_svg(yolo, peak={"dla": 5e12, "gpu": 20e12}, bandwidth=100e9)
    el = ET.fromstring(svg)
    assert len([p for p in el.iter("polyline") if p.get("class") == "roof"]) == 2
    assert "given" in svg


class _Obj:
    def __init__(self, d):
        self._d = d

    def to_dict(self):
        return self._d


def _stub_explain(e):
    return _Obj({"estimate": e.to_dict(), "ideal_ms": 8.0, "predicted_ms": e.total_ms,
                 "causes": [{"code": "transition", "ms": 15.9, "share": 0.59, "text": "GPU<->DLA hand-overs"},
                            {"code": "fallback", "ms": 6.0, "share": 0.22, "text": "Mish on the GPU"},
                            {"code": "overhead", "ms": 0.8, "share": 0.03, "text": "16 loadable launches"}],
                 "advice": [{"change": "replace Mish by LeakyReLU", "text": "keeps the backbone on the DLA",
                             "predicted_ms": 12.0, "gain_ms": e.total_ms - 12.0, "gain_pct": 65.6}]})


def test_explain_page(yolo):
    page = explain_page(_stub_explain(yolo))
    parts = svgs(page)
    for id_ in ("waterfall", "timeline", "bars", "roofline"):
        assert id_ in parts
    wf = parts["waterfall"]
    kinds = [g.get("class") for g in wf.iter("g") if (g.get("class") or "").startswith("wf")]
    assert kinds[0] == "wf base" and kinds[-1] == "wf end"
    assert "wf cause" in kinds
    assert "replace Mish by LeakyReLU" in page and "Mish on the GPU" in page
    assert_self_contained(page)


def test_explain_page_record_without_to_dict(yolo):
    """A record without to_dict (a dataclass holding an Estimate and cause dicts) renders by its fields; an
    object that is neither a record, a result nor a dict is refused."""
    @dataclass
    class R:
        estimate: object
        ideal_ms: float
        causes: list
        advice: list
    page = explain_page(R(yolo, 10.0, [{"code": "reformat", "ms": 1.0, "share": 0.1, "text": "copies"}], []))
    assert 'id="waterfall"' in page and "unattributed" in page
    svgs(page)

    class Plain:
        estimate = yolo
    with pytest.raises(TypeError, match="not a Plain"):
        explain_page(Plain())


def test_compare_page():
    a = dlasim.estimate("zoo:resnet18", "xavier-agx", device="dla", precision="fp16", label="fp16")
    b = dlasim.estimate("zoo:resnet18", "xavier-agx", device="dla", precision="int8", label="int8")
    diff = [{"name": sa.name, "kind": sa.kind, "ms": [sa.time_ms, sb.time_ms], "delta_ms": sb.time_ms - sa.time_ms}
            for sa, sb in zip(a.steps, b.steps)]
    stub = _Obj({"variants": [a.to_dict(), b.to_dict()], "speedup": a.total_ms / b.total_ms, "ideal_speedup": 2.0,
                 "causes": [{"code": "memory_bound", "ms": 0.3, "share": 0.6, "text": "bytes do not halve"},
                            {"code": "overhead", "ms": 0.1, "share": 0.2, "text": "fixed costs"}],
                 "diff": diff, "advice": [{"change": "batch 4", "text": "amortise", "predicted_ms": 1.0,
                                           "gain_ms": 0.2, "gain_pct": 0.1}]})
    page = compare_page(stub)
    parts = svgs(page)
    assert {"waterfall", "timeline", "timeline-2", "speedup"} <= set(parts)
    # same time scale: the faster variant's steps end further left
    def right_edge(el):
        return max(float(r.get("x")) + float(r.get("width")) for r in el.iter("rect")
                   if (r.get("class") or "").startswith("step "))
    assert right_edge(parts["timeline-2"]) < right_edge(parts["timeline"])
    assert "Per-step difference" in page and "batch 4" in page and "(ideal 2.00" in page
    assert_self_contained(page)


def test_cli_writes_html(tmp_path, capsys):
    out = tmp_path / "yolo.html"
    rc = main(["estimate", "zoo:yolov4", "--hw", "xavier-agx", "--device", "dla", "--fp16", "--allowGPUFallback",
               "--format", "html", "-o", str(out)])
    assert rc == 0
    text = out.read_text()
    assert 'id="timeline"' in text and "Mish" in text
    assert capsys.readouterr().out == ""


def test_cli_html_needs_output(capsys):
    rc = main(["estimate", "zoo:resnet18", "--format", "html"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "-o" in err and len(err.strip().splitlines()) == 1
