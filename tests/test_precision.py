"""One precision rule (dlasim/precision.py): what each engine runs for the precision a build asks, used by
the build (passes/place.py), the explain layer's expectation and the HTML roofs."""
from collections import Counter

import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.explainer.config import Config
from dlasim.explainer.expectation import Expectation
from dlasim.precision import run_precision


@pytest.mark.parametrize("device, asked, dla, runs", [
    ("dla", "fp16", ("fp16", "int8"), "fp16"),
    ("dla", "fp32", ("fp16", "int8"), "fp16"),      # the DLA has no FP32 (dla.md s3.1)
    ("dla", "int8", ("fp16", "int8"), "int8"),
    ("dla", "best", ("fp16", "int8"), "int8"),
    ("dla", "fp16", ("int8",), "int8"),             # nvdla-small: INT8 only
    ("gpu", "fp32", ("fp16", "int8"), "fp32"),
    ("gpu", "best", ("fp16", "int8"), "int8"),
    ("gpu", "fp16", ("int8",), "fp16"),             # the DLA's list says nothing about the GPU
])
def test_run_precision(device, asked, dla, runs):
    assert run_precision(device, asked, dla) == runs


def _convs():
    b = GraphBuilder("convs")
    x = b.relu(b.conv(b.input("x", (8, 64, 56, 56)), 128, kernel=3, name="c1"), name="r1")
    return b.build([b.relu(b.conv(x, 128, kernel=3, name="c2"), name="r2")])


@pytest.mark.parametrize("hw, device, asked", [("xavier-agx", "dla", "fp32"), ("xavier-agx", "dla", "best"),
                                                ("orin-agx", "gpu", "best"), ("nvdla-small", "dla", "fp16")])
def test_the_build_and_the_expectation_run_the_same_precision(hw, device, asked):
    """The layers run what the rule says, and the explain layer's expectation is at that precision's peak."""
    cfg = Config.load(_convs(), hw, dict(device=device, precision=asked))
    e = cfg.estimate()
    want = run_precision(device, asked, e.peaks["dla"].precisions if "dla" in e.peaks else ("fp16", "int8"))
    assert Counter(r.precision for r in e.steps if r.kind == "layer" and r.device == device) == {want: 2}
    ctx = Expectation.of(cfg, e)
    assert ctx.precision == want and ctx.peak == e.peaks[device].rate(want)


def test_nvdla_small_runs_and_checks_int8_when_fp16_is_asked():
    """nvdla-small has no FP16: the layers run INT8 (and passes/place.py checks DLA support at INT8 too)."""
    e = dlasim.estimate(_convs(), "nvdla-small", device="dla", precision="fp16")
    assert {r.precision for r in e.steps if r.kind == "layer"} == {"int8"} and not e.fallback
