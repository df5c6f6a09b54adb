"""HTML roofline labels stay clear of the points; the throughput card says its unit."""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

import dlasim
from dlasim.html import estimate_page, roofline_svg
from dlasim.report import Estimate, StepRow



def _svg(text: str) -> ET.Element:
    return ET.fromstring(re.search(r"<svg\b.*?</svg>", text, re.S).group(0))


def _covered(label: ET.Element, circles) -> list:
    """Circles within 3 px of the label's text: 0.6 em per character along the baseline, the text's middle
    3.5 px above it (checked independently of the placement code)."""
    x, y = float(label.get("x")), float(label.get("y"))
    m = re.search(r"rotate\(([-\d.]+)", label.get("transform") or "")
    ang = math.radians(-float(m.group(1))) if m else 0.0
    w = 6.0 * len(label.text)
    hits = []
    for i in range(21):
        px = x + i / 20 * w * math.cos(ang) - 3.5 * math.sin(ang)
        py = y - i / 20 * w * math.sin(ang) - 3.5 * math.cos(ang)
        hits += [c for c in circles if math.hypot(px - c[0], py - c[1]) < c[2] + 3]
    return hits


def _check(svg: ET.Element) -> int:
    circles = [(float(c.get("cx")), float(c.get("cy")), float(c.get("r"))) for c in svg.iter() if c.tag.endswith("circle")]
    labels = [t for t in svg.iter() if t.tag.endswith("text") and t.get("class") == "roof-label"]
    for t in labels:
        assert not _covered(t, circles), t.text
    return len(labels)


@pytest.mark.parametrize("model,hw,device,precision", [
    ("zoo:yolov4", "xavier-agx", "dla", "fp16"), ("zoo:resnet50", "a100", "gpu", "int8"),
    ("zoo:mobilenet_v2", "orin-agx", "dla", "int8"), ("zoo:googlenet", "h200", "gpu", "fp16")])
def test_roofline_labels_not_covered_by_points(model, hw, device, precision):
    e = dlasim.estimate(model, hw, device=device, precision=precision)
    assert _check(_svg(roofline_svg(e))) >= 1


def _crowded() -> Estimate:
    """Layers sitting on a 1 Top/s peak roof at 300..10,000 ops/byte (the roof's right end, where the peak
    label goes by default), against a 10 GB/s memory roof (ridge at 100 ops/byte)."""
    steps = []
    for i in range(24):
        intensity = 10 ** (2.5 + 1.5 * i / 23)
        macs = 10 ** 9
        nbytes = int(2 * macs / intensity)
        t_ms = 2 * macs / 1e12 * 1e3
        steps.append(StepRow(f"l{i}", "layer", "Conv", "gpu", "int8", t_ms, "compute", [f"l{i}"], macs, nbytes,
                             t_ms, 0.0, 0.0))
    total = sum(s.time_ms for s in steps)
    return Estimate("crowded", "custom", "gpu", "int8", 1, "disable", total, steps, [], 0, 0, macs=24 * 10 ** 9)


def test_labels_move_away_from_a_crowded_roof():
    svg = _svg(roofline_svg(_crowded(), peak=1e12, bandwidth=1e10))
    assert _check(svg) == 2
    peak = next(t for t in svg.iter() if t.tag.endswith("text") and (t.text or "").startswith("GPU peak"))
    right = max(float(c.get("cx")) for c in svg.iter() if c.tag.endswith("circle"))
    assert float(peak.get("x")) + 6.0 * len(peak.text) < right     # moved left of the crowd


def test_throughput_card_states_its_unit():
    e = dlasim.estimate("zoo:resnet18", "xavier-agx", device="dla", precision="int8", batch=4)
    page = estimate_page(e)
    cards = dict((k, v) for v, k in re.findall(r'<div class="card[^"]*"><b>([^<]*)</b><span>([^<]*)</span>', page))
    key = next(k for k in cards if k.startswith("throughput"))
    assert "inferences/s" in key and "batch 4" in key
    assert cards[key] == f"{4 * 1000 / e.total_ms:,.1f} qps"
    assert not any(k == "throughput" for k in cards)        # the ops/s card is not called throughput


def test_roofline_roofs_come_from_the_spec():
    e = dlasim.estimate("zoo:resnet18", "xavier-agx", device="dla", precision="fp16")
    assert "roofs: spec xavier-agx, fp16" in roofline_svg(e)


def test_compare_page_lists_throughput_per_variant(tmp_path):
    r = dlasim.compare("zoo:resnet18", "xavier-agx", vary={"batch": [1, 4]}, device="dla", precision="int8")
    from dlasim.html import compare_page
    page = compare_page(r)
    assert "throughput, inferences/s (qps = batch / latency)" in page
    for e in r.variants:
        assert f">{e.batch * 1000 / e.total_ms:,.1f}</td>" in page
