"""The explain layer (dlasim/explainer/) and the HTML pages (dlasim/html/) read the Plan and Estimate records:
they import no cost-model internals, parse no step names, match no reason text, and neither load a spec nor
compute a peak (the device peaks are Estimate.peaks, from cost/peaks.py). explainer/config.py is where the
explain layer loads its inputs (the model and the platform, once per configuration), so it may call
dlasim.hardware; nothing after it may."""
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "dlasim"
LOADER = "dlasim/explainer/config.py"

FORBIDDEN = {
    "a cost-model import": re.compile(r"^\s*(from\s+(dlasim|\.\.?)\.?cost\b|import\s+dlasim\.cost\b)"),
    "a regular expression (step names are parsed by none)": re.compile(r"^\s*import\s+re\b|\bre\.\w+\("),
    "a fact read from reason text": re.compile(
        r"reason\W{0,3}\.(startswith|endswith|find|index|split|partition)\(|\bin\s+[\w.\[\]\"']*reason\b"),
    "a spec load or a peak computed again": re.compile(
        r"\bload_spec\b|\bhardware\(|macs_per_cycle\(|fma_per_clk_per_sm\("),
}


def offences(text: str, rel: str) -> list[str]:
    """'FILE:LINE: what: the line' for each forbidden pattern in `text` (comments skipped)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0]
        for what, rx in FORBIDDEN.items():
            if rx.search(code) and not (rel == LOADER and what.startswith("a spec load")):
                out.append(f"{rel}:{n}: {what}: {line.strip()}")
    return out


def explain_layer_files() -> list[Path]:
    return sorted((PKG / "explainer").glob("*.py")) + sorted((PKG / "html").glob("*.py"))


def test_the_explain_layer_and_html_read_records_only():
    files = explain_layer_files()
    assert len(files) >= 15 and any(p.name == "classify.py" for p in files)     # the glob found the layer
    found = []
    for p in files:
        found += offences(p.read_text(encoding="utf-8"), p.relative_to(PKG.parent).as_posix())
    assert found == []


@pytest.mark.parametrize("line", [
    "from dlasim.cost.gpu import padded_channels",
    "from ..cost.geometry import conv_shape",
    "    from ..cost.gpu import step_kernel_floor",
    "from .cost import cost_step",
    "import dlasim.cost.dla",
    "import re",
    'COPY_NAME = re.compile(r"^(.*) (reformat|transition)")',
    "m = re.match(PATTERN, row.name)",
    'limited = {f["name"] for f in base.fallback if f["reason"].startswith("past the")}',
    'if r.reason.startswith("past the"):',
    'hits = [r for r in rows if "INT8" in r.reason]',
    "plat = hardware(d.get('hardware'))",
    "spec = load_spec(path)",
    "peak = hw.dla.macs_per_cycle(p) * hw.dla.clock_hz",
    "peak = gpu.sm_count * gpu.fma_per_clk_per_sm(p) * gpu.clock_hz",
])
def test_the_patterns_catch_what_they_forbid(line):
    assert offences(line, "dlasim/explainer/x.py")


@pytest.mark.parametrize("line", [
    "from ..report import Estimate, StepRow",
    "from ..precision import run_precision",
    "from .classify import outcome",
    'return [f"C:{row.kind}:{row.copy.tensor}" if row.copy is not None else f"N:{row.name}"]',
    "why = Counter(r.reason for _, r in hits)",              # counting reasons, for people, is fine
    'lines = [f"{e.model} on {e.hardware}  device={e.device}"]',
    "peak = est.peaks[dev].rate(prec)",
    "refetch = min(p.refetch_s * 1e3, excess)",
    "# a comment may name re.match or hardware()",
])
def test_the_patterns_allow_record_reads(line):
    assert offences(line, "dlasim/explainer/x.py") == []


def test_only_the_loader_may_resolve_a_platform():
    line = "        return cls(g, hardware(hw), o)"
    assert offences(line, LOADER) == []
    assert offences(line, "dlasim/explainer/compare.py")
    assert offences("from ..cost.gpu import padded_channels", LOADER)
