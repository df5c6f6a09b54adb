"""Reused results (plans by graph content, conv costs by layer facts) never go stale and never leak state."""
from __future__ import annotations

import dataclasses

import pytest

import dlasim
from dlasim import BuildOptions, clear_caches, zoo
from dlasim.cost import dla as dla_cost
from dlasim.cost import gpu as gpu_cost
from dlasim.ir import GraphBuilder
from dlasim.passes import _LAST, build_plan, cached_plan


def _net(k: int = 64, kernel: int = 3):
    b = GraphBuilder("reuse")
    x = b.input("x", (1, 32, 28, 28))
    y = b.relu(b.bn(b.conv(x, k, kernel=kernel)))
    return b.build([b.conv(y, 32, kernel=1)])


def test_fingerprint_sees_in_place_changes():
    g = _net()
    before = g.fingerprint()
    assert _net().fingerprint() == before          # same content, another object: same bytes
    assert _net().fingerprint(identity=True) != g.fingerprint(identity=True)   # ... but other objects
    g.layers[0].attributes["strides"] = [2, 2]
    assert g.fingerprint() != before
    g2 = _net()
    g2.tensors["x"].shape = (2, 32, 28, 28)
    assert g2.fingerprint() != before


def test_graph_changed_in_place_is_rebuilt():
    hw = dlasim.hardware("orin-agx")
    g = _net()
    first = dlasim.estimate(g, hw, device="dla", precision="int8", batch=1)
    conv = next(l for l in g.layers if l.op == "Conv")
    conv.attributes["kernel_shape"] = [1, 1]
    conv.attributes["pads"] = [0, 0, 0, 0]
    g.tensors[conv.inputs[1]].shape = (64, 32, 1, 1)
    g.infer_shapes()                  # what resets the graph's own MAC count (Graph.macs)
    second = dlasim.estimate(g, hw, device="dla", precision="int8", batch=1)
    fresh = dlasim.estimate(_fresh_1x1(), hw, device="dla", precision="int8", batch=1)
    assert second.total_ms != first.total_ms
    assert second.to_dict(parts=True) == fresh.to_dict(parts=True)


def _fresh_1x1():
    return _net(kernel=1)


def test_options_and_platforms_are_part_of_the_key():
    g = _net()
    orin, xavier = dlasim.hardware("orin-agx"), dlasim.hardware("xavier-agx")
    cached_plan(g, orin, BuildOptions("dla", "int8"))     # first seen: built, not fingerprinted
    p1 = cached_plan(g, orin, BuildOptions("dla", "int8"))
    assert cached_plan(g, orin, BuildOptions("dla", "int8")) is p1
    assert cached_plan(g, orin, BuildOptions("dla", "fp16")) is not p1
    assert cached_plan(g, xavier, BuildOptions("dla", "int8")).platform is xavier
    assert cached_plan(g, orin, BuildOptions("dla", "int8", sparsity="enable")).sparsity == "enable"
    assert cached_plan(g, orin, BuildOptions("dla", "int8", gpu_fallback=False)).gpu_fallback is False


def test_cached_estimate_equals_uncached_and_results_are_independent():
    hw = dlasim.hardware("orin-agx")
    g = zoo.build("resnet50")
    clear_caches()
    cold = dlasim.estimate(g, hw, device="dla", precision="int8", batch=1)
    assert _LAST[0][0] is g and _LAST[0][1] is None and not _LAST[0][2] and dla_cost._CONV   # seen once
    again = dlasim.estimate(g, hw, device="dla", precision="int8", batch=1)
    assert _LAST[0][1] and _LAST[0][2]                     # fingerprinted, its Plan kept
    assert again.to_dict(parts=True) == cold.to_dict(parts=True)
    warm = dlasim.estimate(g, hw, device="dla", precision="int8", batch=1)
    from dlasim.simulate import estimate_plan
    plain = estimate_plan(build_plan(zoo.build("resnet50"), hw, BuildOptions("dla", "int8")))
    assert warm.to_dict(parts=True) == cold.to_dict(parts=True) == plain.to_dict(parts=True)
    # changing one result changes no later one (rows and fallback are the caller's own; parts, shared with the
    # reused conv costs, cannot change)
    conv = next(r for r in warm.steps if r.op == "Conv")
    with pytest.raises(dataclasses.FrozenInstanceError):
        conv.parts.ideal_s = -1.0
    warm.steps[1].layers.append("x")
    again = dlasim.estimate(g, hw, device="dla", precision="int8", batch=1)
    assert again.to_dict(parts=True) == cold.to_dict(parts=True)


def test_fallback_records_are_copies():
    b = GraphBuilder("fb")
    x = b.input("x", (1, 16, 8, 8))
    g = b.build([b.mish(b.conv(x, 16, kernel=3))])
    hw = dlasim.hardware("xavier-agx")
    e = dlasim.estimate(g, hw, device="dla", precision="fp16")
    assert e.fallback
    with pytest.raises(AttributeError):                  # the records are frozen: shared, never changed
        e.fallback[0].reason = "changed"
    e.fallback.clear()                                   # the list is the caller's own
    assert dlasim.estimate(g, hw, device="dla", precision="fp16").fallback


@pytest.mark.parametrize("model, plat, device", [(dla_cost, "orin-agx", "dla"), (gpu_cost, "a100", "gpu")])
def test_conv_cost_cache_is_bounded(monkeypatch, model, plat, device):
    monkeypatch.setattr(model, "CONV_CACHE_SIZE", 2)
    clear_caches()
    hw = dlasim.hardware(plat)
    for k in (16, 32, 48, 64):
        dlasim.estimate(_net(k), hw, device=device, precision="int8")
    assert 0 < len(model._CONV) <= 2
    clear_caches()
    assert not model._CONV


def test_failed_build_is_not_stored():
    b = GraphBuilder("nofb")
    x = b.input("x", (1, 16, 8, 8))
    g = b.build([b.mish(b.conv(x, 16, kernel=3))])
    hw = dlasim.hardware("xavier-agx")
    for _ in range(2):
        try:
            dlasim.estimate(g, hw, device="dla", precision="fp16", gpu_fallback=False)
        except dlasim.DlasimError:
            pass
        else:
            raise AssertionError("expected a BuildError")
        assert not any(plan.gpu_fallback is False for _, plan in (_LAST[0] or (0, 0, {}))[2].values())


def test_only_the_last_graphs_plans_are_kept():
    hw = dlasim.hardware("orin-agx")
    g1, g2 = _net(16), _net(32)
    cached_plan(g1, hw, BuildOptions("dla", "int8"))
    p1 = cached_plan(g1, hw, BuildOptions("dla", "int8"))
    cached_plan(g1, hw, BuildOptions("dla", "fp16"))
    assert len(_LAST[0][2]) == 2 and cached_plan(g1, hw, BuildOptions("dla", "int8")) is p1
    cached_plan(g2, hw, BuildOptions("dla", "int8"))
    assert _LAST[0][0] is g2 and not _LAST[0][2]            # g1's Plans freed; g2 seen once
    cached_plan(g2, hw, BuildOptions("dla", "int8"))
    assert [plan.graph for _, plan in _LAST[0][2].values()] == [g2]
    assert cached_plan(g1, hw, BuildOptions("dla", "int8")) is not p1


def test_graph_that_cannot_be_fingerprinted_is_built_each_time():
    g = _net()
    g.layers[0].attributes["note"] = lambda: None       # pickle cannot write a lambda
    hw = dlasim.hardware("orin-agx")
    p1 = cached_plan(g, hw, BuildOptions("dla", "int8"))
    assert cached_plan(g, hw, BuildOptions("dla", "int8")) is not p1
    assert dlasim.estimate(g, hw, device="dla", precision="int8").total_ms == \
        dlasim.estimate(_net(), hw, device="dla", precision="int8").total_ms


def test_plan_of_a_graph_changed_later_is_not_reused_for_another_graph():
    """A cached Plan refers to the layers it was built from: once they change, an equal-content graph made
    afresh gets its own Plan, not one whose layers now say something else."""
    hw = dlasim.hardware("orin-agx")
    g1 = _net()
    dlasim.estimate(g1, hw, device="dla", precision="int8")
    conv = next(l for l in g1.layers if l.op == "Conv")
    conv.attributes["strides"] = [2, 2]
    g1.infer_shapes()
    dlasim.estimate(g1, hw, device="dla", precision="int8")
    g2 = _net()
    got = dlasim.estimate(g2, hw, device="dla", precision="int8").to_dict(parts=True)
    clear_caches()
    assert got == dlasim.estimate(_net(), hw, device="dla", precision="int8").to_dict(parts=True)


def test_replaced_layer_object_misses():
    hw = dlasim.hardware("orin-agx")
    g = _net()
    cached_plan(g, hw, BuildOptions("dla", "int8"))
    p1 = cached_plan(g, hw, BuildOptions("dla", "int8"))
    assert cached_plan(g, hw, BuildOptions("dla", "int8")) is p1
    old = g.layers[0]
    from dlasim.ir import Layer
    g.layers[0] = Layer(old.name, old.op, list(old.inputs), list(old.outputs), dict(old.attributes), list(old.flags))
    assert cached_plan(g, hw, BuildOptions("dla", "int8")) is not p1


def test_equal_graph_after_the_last_one_changed_gets_its_own_plan():
    hw = dlasim.hardware("orin-agx")
    g1 = _net()
    dlasim.estimate(g1, hw, device="dla", precision="int8")
    next(l for l in g1.layers if l.op == "Conv").attributes["strides"] = [2, 2]
    g1.infer_shapes()                     # g1's cached Plan now refers to changed layers and tensors
    got = dlasim.estimate(_net(), hw, device="dla", precision="int8").to_dict(parts=True)
    clear_caches()
    assert got == dlasim.estimate(_net(), hw, device="dla", precision="int8").to_dict(parts=True)


def test_threads_estimating_different_graphs_get_their_own_results():
    from concurrent.futures import ThreadPoolExecutor
    hw = dlasim.hardware("orin-agx")
    graphs = [_net(16 * (i % 4 + 1)) for i in range(40)]
    clear_caches()
    want = {k: dlasim.estimate(_net(k), hw, device="dla", precision="int8").total_ms for k in (16, 32, 48, 64)}
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda g: dlasim.estimate(g, hw, device="dla", precision="int8").total_ms, graphs))
    assert got == [want[16 * (i % 4 + 1)] for i in range(40)]


def _strided(stride: int = 1, width: int = 28):
    b = GraphBuilder("reuse")
    x = b.input("x", (1, 32, width, width))
    y = b.relu(b.bn(b.conv(x, 64, kernel=3, stride=stride)))
    return b.build([b.conv(y, 32, kernel=1)])


@pytest.mark.parametrize("target", [("orin-agx", "dla", "int8"), ("a100", "gpu", "fp16")], ids=["DLA", "GPU"])
@pytest.mark.parametrize("other", [lambda: _strided(stride=2), lambda: _strided(width=30)],
                         ids=["one conv's stride", "one tensor shape"])
def test_graphs_differing_in_one_fact_never_share_a_result(other, target):
    """Every reuse warm (the Plan of the graph estimated last, the conv costs): a graph that differs in one
    conv's stride or one input shape gets what an empty cache gives it, and so does the first graph changed
    in place to that fact after its Plan was kept."""
    plat, device, precision = target
    hw = dlasim.hardware(plat)
    clear_caches()
    want = dlasim.estimate(other(), hw, device=device, precision=precision).to_dict(parts=True)
    clear_caches()
    base = _strided()
    first = [dlasim.estimate(base, hw, device=device, precision=precision).to_dict(parts=True) for _ in range(3)]
    assert _LAST[0][0] is base and _LAST[0][2]          # its Plan kept and reused
    assert first[0] != want
    assert dlasim.estimate(other(), hw, device=device, precision=precision).to_dict(parts=True) == want
    # the same object changed in place, after its Plan was kept
    for _ in range(2):
        dlasim.estimate(base, hw, device=device, precision=precision)
    o = other()
    for layer, new in zip(base.layers, o.layers):
        layer.attributes = dict(new.attributes)
    for name, t in o.tensors.items():
        base.tensors[name].shape = t.shape
    base.infer_shapes()               # what resets the graph's own MAC count (Graph.macs)
    assert dlasim.estimate(base, hw, device=device, precision=precision).to_dict(parts=True) == want


def test_reused_conv_costs_equal_fresh_ones_across_options():
    """One process, caches never cleared between builds that share conv shapes but differ in a fact the cost
    reads (sparsity, precision, the INT8 DepSep / ConvActPool pairing, an FP32 image conv on the CUDA cores):
    each result equals the one an empty cache gives."""
    configs = [("a100", "gpu", "int8", "disable"), ("a100", "gpu", "int8", "enable"), ("a100", "gpu", "int8", "force"),
               ("a100", "gpu", "fp16", "force"), ("a100", "gpu", "fp32", "disable"), ("a100", "gpu", "fp16", "disable"),
               ("orin-agx", "dla", "int8", "force"), ("orin-agx", "dla", "int8", "disable")]
    clear_caches()
    got = [dlasim.estimate(zoo.build(m), p, device=d, precision=pr, sparsity=sp).to_dict(parts=True)
           for m in ("mobilenet_v2", "resnet18") for p, d, pr, sp in configs]
    assert any(s["parts"].get("sparse") == "used" for e in got for s in e["steps"])
    assert any(s["parts"].get("fused_with") for e in got for s in e["steps"])
    fresh = []
    for m in ("mobilenet_v2", "resnet18"):
        for p, d, pr, sp in configs:
            clear_caches()
            fresh.append(dlasim.estimate(zoo.build(m), p, device=d, precision=pr, sparsity=sp).to_dict(parts=True))
    assert got == fresh


def _depsep(paired: bool):
    """An INT8 depthwise conv whose output one 1x1 conv reads (a DepSep pair on the A100) or two convs do (no pair)."""
    b = GraphBuilder("depsep")
    x = b.input("x", (1, 64, 28, 28))
    d = b.conv(x, 64, kernel=3, groups=64, name="dw")
    outs = [b.conv(d, 64, kernel=1, name="pw")]
    if not paired:
        outs.append(b.conv(d, 64, kernel=3, name="pw2"))     # another kernel: not fused with pw
    return b.build(outs)


def test_conv_cost_of_a_paired_kernel_is_not_reused_for_an_unpaired_one():
    hw = dlasim.hardware("a100")
    want = []
    # INT8 I/O: with FP32 bindings the input and output copies make the FP32 engine time faster (no pair)
    io = dict(device="gpu", precision="int8", input_formats="int8:chw32", output_formats="int8:chw32")
    for paired in (False, True, False):
        clear_caches()
        want.append(dlasim.estimate(_depsep(paired), hw, **io).to_dict(parts=True))
    clear_caches()
    got = [dlasim.estimate(_depsep(paired), hw, **io).to_dict(parts=True) for paired in (False, True, False)]
    assert any(s["parts"].get("fused_with") for s in got[1]["steps"])
    assert got == want


def _wide(width: int, precision_groups: int = 1):
    b = GraphBuilder("wide")
    x = b.input("x", (1, 256, 4, width))
    return b.build([b.conv(x, 64, kernel=3, groups=precision_groups, name="c")])


def test_dla_conv_verdicts_reused_only_for_equal_facts():
    """The DLA conv rules' verdicts are reused by their facts: an input width that fails the CBUF check, a
    precision that changes the bank count, a group count, each gets what an empty cache gives (in either order)."""
    hw = dlasim.hardware("orin-agx")
    cases = [(16, "fp16", 1), (1024, "fp16", 1), (16, "fp16", 1), (600, "fp16", 1), (600, "int8", 1),
             (16, "fp16", 4), (1024, "int8", 4)]
    want = []
    for width, prec, groups in cases:
        dla_support_cache_clear()
        want.append([(f.name, f.reason) for f in
                     dlasim.estimate(_wide(width, groups), hw, device="dla", precision=prec).fallback])
    dla_support_cache_clear()
    got = [[(f.name, f.reason) for f in dlasim.estimate(_wide(w, gr), hw, device="dla", precision=p).fallback]
           for w, p, gr in cases]
    assert got == want
    assert want[0] == [] and want[1] and want[3] != want[4]     # the cases differ in their verdicts


def dla_support_cache_clear():
    clear_caches()
    from dlasim.passes import dla_support
    assert not dla_support._CONV


def _islands():
    """A DLA build with a GPU island (Mish): transitions both ways around it."""
    b = GraphBuilder("islands")
    x = b.input("x", (1, 16, 8, 8))
    return b.build([b.conv(b.mish(b.conv(x, 16, kernel=3)), 16, kernel=3)])


def test_copy_costs_reused_only_for_the_same_platform():
    hw = dlasim.hardware("orin-agx")
    slow = hw.model_copy(update={"copies": hw.copies.model_copy(
        update={"transition_overhead_s": hw.copies.transition_overhead_s + 1e-3})})
    g = _islands()
    clear_caches()
    base = dlasim.estimate(g, hw, device="dla", precision="int8")
    other = dlasim.estimate(g, slow, device="dla", precision="int8")       # the cache holds hw's copies now
    fresh_other = dlasim.estimate(_islands(), slow, device="dla", precision="int8")
    rows = [(a, b) for a, b in zip(base.steps, other.steps) if a.kind == "transition"]
    assert len(rows) >= 2
    for a, b in rows:      # the hand-over sync is each transition's overhead: exactly 1 ms more on `slow`
        assert b.overhead_ms == pytest.approx(a.overhead_ms + 1.0)
    assert other.to_dict(parts=True) == fresh_other.to_dict(parts=True)
    assert dlasim.estimate(g, hw, device="dla", precision="int8").to_dict(parts=True) == base.to_dict(parts=True)


def test_copy_cost_cache_is_bounded(monkeypatch):
    from dlasim.cost import copies
    monkeypatch.setattr(copies, "COPY_CACHE_SIZE", 2)
    clear_caches()
    hw = dlasim.hardware("orin-agx")
    for c in (8, 16, 24, 32):
        b = GraphBuilder("copies")
        x = b.input("x", (1, c, 8, 8))
        dlasim.estimate(b.build([b.mish(b.conv(x, c, kernel=3))]), hw, device="dla", precision="int8")
    assert 0 < len(copies._COPY) <= 2
    clear_caches()
    assert not copies._COPY
