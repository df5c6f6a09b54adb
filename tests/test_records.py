"""Stages hand each other typed records (dlasim/plan.py Step fields, Copy, KernelPair, Fallback; dlasim/cost
CostParts, Tiling), not string-keyed side channels, and no fact is recovered from the text meant for people."""
import dataclasses
import pickle
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "dlasim"

# what a string-keyed side channel or a fact read from reason text looks like
FORBIDDEN = {
    "a string-keyed attrs/parts lookup": re.compile(
        r"\b(attrs|parts)\[|\.(attrs|parts)\.(get|setdefault|update|pop)\("),
    "a Step.attrs side channel": re.compile(r"\.attrs\b"),
    "a fact read from reason text": re.compile(
        r"reason\W{0,3}\.(startswith|endswith|find|index|count|split|partition)\("
        r"|\bin\s+[\w.\[\]\"']*reason\b|re\.\w+\(.*reason"),
}


def offences(text: str, rel: str) -> list[str]:
    """'FILE:LINE: what: the line' for each forbidden pattern in `text` (comments skipped)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0]
        for what, rx in FORBIDDEN.items():
            if rx.search(code):
                out.append(f"{rel}:{n}: {what}: {line.strip()}")
    return out


def test_no_side_channels_or_reason_matching_in_the_package():
    found = []
    for p in sorted(PKG.rglob("*.py")):
        found += offences(p.read_text(encoding="utf-8"), p.relative_to(PKG.parent).as_posix())
    assert found == []


@pytest.mark.parametrize("line", [
    'step.attrs["dla_ok"] = ok',
    'if step.attrs.get("simt"):',
    'pool = bool(step.attrs)',
    'p = row.parts.get("sparse", "off")',
    'refetch = parts["refetch_s"]',
    'dense.parts.update(sparse="used")',
    'limited = {f["name"] for f in base.fallback if f["reason"].startswith("past the")}',
    'if f.reason.startswith("past the"):',
    'hint if hint not in step.reason else ""',
    'm = re.search(r"past the (\\d+)", f.reason)',
])
def test_the_patterns_catch_what_they_forbid(line):
    assert offences(line, "x.py")


@pytest.mark.parametrize("line", [
    'k = conv_params(layer.attributes)',
    'lo = layer.attributes.get("min", 0.0)',
    'if f.kind is FallbackKind.LOADABLE_LIMIT:',
    'groups.setdefault(f.reason, []).append(f)',       # grouping by the text, for people, is fine
    'kw = attrs.get("kernel_shape")               # an ONNX node attribute dict',
    'refetch = min(p.refetch_s * 1e3, excess)',
])
def test_the_patterns_allow_typed_reads(line):
    assert offences(line, "x.py") == []


def test_cost_parts_json_is_the_fields_that_differ_from_their_defaults():
    from dlasim.cost import CostParts, Tiling
    assert CostParts().to_dict() == {}
    p = CostParts(ideal_s=0.0, sparse="used", tiling=Tiling(tile_eff=1.0, wave_eff=0.5, k_eff=1.0, rate_eff=0.8))
    assert p.to_dict() == {"ideal_s": 0.0, "sparse": "used",      # 0.0 is not None: an ideal that was computed
                           "tiling": {"tile_eff": 1.0, "wave_eff": 0.5, "k_eff": 1.0, "rate_eff": 0.8}}
    q = dataclasses.replace(p, ideal_s=1.0)
    assert q == CostParts(ideal_s=1.0, sparse="used", tiling=p.tiling) and p.ideal_s == 0.0


def test_cost_parts_and_tilings_are_immutable():
    """The DLA conv costs the cost model reuses share their CostParts across estimates: none may change."""
    from dlasim.cost import CostParts, Tiling
    p = CostParts(ideal_s=1e-3, tiling=Tiling(1.0, 0.5, 1.0, 0.8))
    for obj, name in ((p, "ideal_s"), (p, "sparse"), (p.tiling, "wave_eff")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, name, 0.25)
    with pytest.raises(TypeError, match="sparse_typo"):
        CostParts(sparse_typo="used")
    assert p.ideal_s == 1e-3 and p.tiling.wave_eff == 0.5 and p.sparse == "off" and CostParts().sparse == "off"
    assert pickle.loads(pickle.dumps(p)) == p and hash(p) == hash(CostParts(ideal_s=1e-3, tiling=p.tiling))


def test_reused_dla_conv_parts_survive_a_sparse_estimate():
    """A sparsity outcome is a new CostParts, not written into the conv cost the next estimate reuses."""
    import dlasim
    dlasim.clear_caches()
    dense = dlasim.estimate("zoo:resnet18", "orin-agx", device="dla", precision="int8")
    sparse = dlasim.estimate("zoo:resnet18", "orin-agx", device="dla", precision="int8", sparsity="force")
    again = dlasim.estimate("zoo:resnet18", "orin-agx", device="dla", precision="int8")
    assert any(r.parts.sparse == "used" for r in sparse.steps)
    assert [r.parts for r in again.steps] == [r.parts for r in dense.steps]
    assert all(r.parts.sparse == "off" for r in again.steps)


def test_copy_record_says_whether_it_touches_the_dla():
    from dlasim.plan import Copy
    assert Copy(("fp32", "linear"), ("int8", "chw32"), 12, 32, "host", "dla").touches_dla
    assert Copy(("int8", "chw32"), ("fp32", "linear"), 32, 12, "dla", "host").touches_dla
    assert not Copy(("fp16", "hwc8"), ("fp16", "linear"), 8, 8, "gpu", "host").touches_dla
