"""The build rules as data (hardware_specs/rules/*.toml): every entry sourced, loaded once and immutable, and
each table drives the build (changing one entry changes the plan). Also TensorRT's precision choice by timing,
which lives in builder.build_engine and reads its bound from the rules."""
import dataclasses
import shutil

import pytest

try:
    import tomllib
except ModuleNotFoundError:
    import tomli as tomllib

import dlasim
from dlasim import BuildOptions, GraphBuilder, SpecError, rules
from dlasim.passes import build_plan

RULE_FILES = ("precision.toml", "formats.toml", "sparsity.toml", "rewrites.toml")


def test_the_rule_folder_holds_the_files_the_loader_reads():
    assert sorted(p.name for p in rules.RULES_DIR.glob("*.toml")) == sorted(RULE_FILES)


@pytest.mark.parametrize("name", RULE_FILES)
def test_every_rule_entry_names_its_source(name):
    data = tomllib.loads((rules.RULES_DIR / name).read_text())
    n = 0
    for table, entries in data.items():
        assert isinstance(entries, dict) and entries, table
        for key, entry in entries.items():
            source = entry if isinstance(entry, str) else entry.get("source")
            assert isinstance(source, str) and len(source.strip()) > 10, f"{name} [{table}] {key}"
            assert source.startswith(("ref/", "the ", "assumption", "trtexec", "dlasim's")), f"{name} [{table}] {key}"
            n += 1
    assert n >= 4


def _copy(tmp_path):
    folder = tmp_path / "rules"
    shutil.copytree(rules.RULES_DIR, folder)
    return folder


def _edit(folder, name, old, new):
    path = folder / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_an_entry_without_a_source_is_refused_naming_file_and_entry(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder, "formats.toml", 'hwc8 = { c = 8, source = "', 'hwc8 = { c = 8, note = "')
    with pytest.raises(SpecError, match=r"formats.toml: \[channel_align\] hwc8: expected \{ c = \.\.\., source"):
        rules.load_rules(folder)
    folder = _copy(tmp_path / "b")
    _edit(folder, "precision.toml", 'Conv = "ref/', 'Conv = "')
    text = (folder / "precision.toml").read_text()
    (folder / "precision.toml").write_text(text.replace(text[text.index('Conv = "'):text.index("\n", text.index('Conv = "'))],
                                                         'Conv = ""'))
    with pytest.raises(SpecError, match=r"precision.toml: \[gpu_int8_ops\] Conv: expected a source string"):
        rules.load_rules(folder)


def test_a_missing_table_or_a_bad_value_is_refused(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder, "rewrites.toml", "[dla]", "[gpu]")
    with pytest.raises(SpecError, match=r"rewrites.toml: \[dla\]: missing or empty table"):
        rules.load_rules(folder)
    folder = _copy(tmp_path / "b")
    _edit(folder, "formats.toml", "chw32 = { c = 32,", 'chw32 = { c = "32",')
    with pytest.raises(SpecError, match=r"formats.toml: \[channel_align\] chw32.c: expected int, got '32'"):
        rules.load_rules(folder)
    folder = _copy(tmp_path / "c")
    _edit(folder, "formats.toml", 'int8 = { formats = ["dla_linear", "dla_hwc4", "chw32"]',
          'int8 = { formats = ["dla_linear", "dla_hwc5", "chw32"]')
    with pytest.raises(SpecError, match=r"\[dla_input_formats\] int8: dla_hwc5 not in \[channel_align\]"):
        rules.load_rules(folder)


def test_an_unreadable_or_too_deeply_nested_rule_file_is_one_line(tmp_path):
    # the rule files are read like every other user file (safeio.load_toml): a FIFO is refused before it is
    # opened and TOML nested past the recursion limit is a SpecError, not a RecursionError
    import os
    folder = _copy(tmp_path)
    (folder / "formats.toml").write_text("a = " + "[" * 5000 + "]" * 5000)
    with pytest.raises(SpecError, match=r"formats.toml: not valid TOML \(arrays or tables nest too deeply\)"):
        rules.load_rules(folder)
    folder = _copy(tmp_path / "b")
    (folder / "sparsity.toml").unlink()
    os.mkfifo(folder / "sparsity.toml")
    with pytest.raises(SpecError, match=r"sparsity.toml: cannot read rule file \(a FIFO"):
        rules.load_rules(folder)


def test_rules_are_immutable():
    r = rules.RULES
    assert isinstance(r.gpu_int8_ops, frozenset) and isinstance(r.sparsity.gpu_ops, frozenset)
    assert isinstance(r.formats.dla_inputs["int8"], frozenset)
    with pytest.raises(TypeError):
        r.formats.channel_align["chw32"] = 16
    with pytest.raises(TypeError):
        r.dla_rewrites["Mish"] = "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.reformat_share_min = 0.5


def _with_rules(monkeypatch, folder):
    monkeypatch.setattr(rules, "RULES", rules.load_rules(folder))
    dlasim.clear_caches()


def _conv_pool():
    b = GraphBuilder("cp")
    x = b.input("x", (1, 16, 16, 16))
    return b.build([b.conv(b.maxpool(b.relu(b.conv(x, 32, kernel=3)), 2, 2), 32, kernel=3)])


def _step(plan, op):
    return next(s for s in plan.steps if s.kind == "layer" and s.op == op)


def test_removing_an_op_from_the_gpu_int8_ops_runs_it_in_fp16(tmp_path, monkeypatch):
    a100 = dlasim.hardware("a100")
    opts = BuildOptions(device="gpu", precision="int8")
    assert _step(build_plan(_conv_pool(), a100, opts), "MaxPool").precision == "int8"
    folder = _copy(tmp_path)
    _edit(folder, "precision.toml", "\nMaxPool = ", "\n# MaxPool = ")
    _with_rules(monkeypatch, folder)
    pool = _step(build_plan(_conv_pool(), a100, opts), "MaxPool")
    assert pool.precision == "fp16" and pool.reason == "MaxPool has no INT8 kernel; runs in FP16"


def test_a_format_table_entry_sets_the_copy_bytes(tmp_path, monkeypatch):
    from dlasim.passes.reformat import copy_bytes
    # 3 channels FP16: linear 3 x 2 B, hwc8 8 x 2 B per pixel (16 pixels)
    assert copy_bytes((1, 3, 4, 4), ("fp16", "linear"), ("fp16", "hwc8")) == (96, 256)
    folder = _copy(tmp_path)
    _edit(folder, "formats.toml", "hwc8 = { c = 8,", "hwc8 = { c = 4,")
    _with_rules(monkeypatch, folder)
    assert copy_bytes((1, 3, 4, 4), ("fp16", "linear"), ("fp16", "hwc8")) == (96, 128)


def test_a_dla_input_format_table_decides_the_input_copy(tmp_path, monkeypatch):
    orin = dlasim.hardware("orin-agx")
    opts = BuildOptions(precision="int8", input_formats="int8:chw32")
    n_copies = lambda: sum(s.kind == "reformat" and s.inputs[0].name == "x" for s in build_plan(_conv_pool(), orin, opts).steps)
    assert n_copies() == 0
    folder = _copy(tmp_path)
    _edit(folder, "formats.toml", '[dla_input_formats]\nfp16 = { formats = ["dla_linear", "dla_hwc4", "chw16"]',
          '[dla_input_formats]\nfp16 = { formats = ["dla_linear", "dla_hwc4", "chw16"]')
    _edit(folder, "formats.toml", 'int8 = { formats = ["dla_linear", "dla_hwc4", "chw32"]',
          'int8 = { formats = ["dla_linear", "dla_hwc4"]')
    _with_rules(monkeypatch, folder)
    assert n_copies() == 1


def test_the_sparsity_table_sets_gpu_eligibility(tmp_path, monkeypatch):
    a100 = dlasim.hardware("a100")
    opts = dict(device="gpu", precision="fp16", sparsity="enable", batch=8)
    b = GraphBuilder("c12")
    x = b.input("x", (1, 12, 64, 64))
    g = b.build([b.conv(b.conv(b.conv(x, 64, kernel=3, name="first"), 64, kernel=3), 64, kernel=3)])
    why = lambda: _step_row(dlasim.estimate(g, a100, **opts), "first").parts.sparse_reason
    assert _step_row(dlasim.estimate(g, a100, **opts), "first").precision == "fp16"
    assert "not divisible" not in why()                 # 12 input channels: a multiple of 4
    folder = _copy(tmp_path)
    _edit(folder, "sparsity.toml", "channel_multiple = { value = 4,", "channel_multiple = { value = 8,")
    _with_rules(monkeypatch, folder)
    assert why() == "input channels 12 not divisible by 8"


def _step_row(e, layer):
    return next(r for r in e.steps if layer in r.layers)


def test_the_rewrite_table_names_the_rewrite_in_a_dla_only_build_error(tmp_path, monkeypatch):
    b = GraphBuilder("m")
    g = b.build([b.mish(b.conv(b.input("x", (1, 16, 8, 8)), 16, kernel=3))])
    with pytest.raises(dlasim.BuildError, match="replace Mish with ReLU"):
        dlasim.build(g, "xavier-agx", gpu_fallback=False)
    folder = _copy(tmp_path)
    _edit(folder, "rewrites.toml", 'hint = "replace Mish with ReLU or LeakyReLU (TAO force_relu)"',
          'hint = "use a ReLU here"')
    _with_rules(monkeypatch, folder)
    with pytest.raises(dlasim.BuildError, match="use a ReLU here$"):
        dlasim.build(g, "xavier-agx", gpu_fallback=False)


# ---- TensorRT keeps the faster precision (builder.build_engine) --------------------------------------------

def test_a_gpu_engine_dominated_by_reformats_runs_the_wider_precision():
    """seed000_conv1x1 on the A100: one 1x1 conv between FP32 engine I/O. At FP16 the two boundary reformats
    cost more than the FP16 conv saves, so TensorRT's timing keeps the FP32 engine (gpu_tensorrt.md s2.1)."""
    fp16 = dlasim.estimate("zoo:seed000_conv1x1", "a100", device="gpu", precision="fp16")
    fp32 = dlasim.estimate("zoo:seed000_conv1x1", "a100", device="gpu", precision="fp32")
    assert fp16.precision == "fp16" and fp16.total_ms == fp32.total_ms
    assert {r.precision for r in fp16.steps if r.kind == "layer"} == {"fp32"}
    assert not [r for r in fp16.steps if r.kind == "reformat"]
    assert any(w.startswith("TensorRT would run this engine in FP32") for w in fp16.warnings)


def test_the_timing_bound_is_read_from_the_rules(monkeypatch):
    monkeypatch.setattr(rules, "RULES", dataclasses.replace(rules.RULES, reformat_share_min=1.0))
    dlasim.clear_caches()
    fp16 = dlasim.estimate("zoo:seed000_conv1x1", "a100", device="gpu", precision="fp16")
    fp32 = dlasim.estimate("zoo:seed000_conv1x1", "a100", device="gpu", precision="fp32")
    assert {r.precision for r in fp16.steps if r.kind == "layer"} == {"fp16"}
    assert fp16.total_ms > fp32.total_ms and not any("would run" in w for w in fp16.warnings)


def test_a_dla_build_is_not_timed_against_other_precisions():
    e = dlasim.estimate("zoo:seed000_conv1x1", "orin-agx", device="dla", precision="fp16")
    assert not any("would run" in w for w in e.warnings)
    assert {r.precision for r in e.steps if r.kind == "layer" and r.device == "dla"} == {"fp16"}


def test_the_native_format_table_sets_what_gpu_convolutions_read(tmp_path, monkeypatch):
    a100 = dlasim.hardware("a100")
    opts = BuildOptions(device="gpu", precision="fp16")
    dst = lambda: {s.copy.dst for s in build_plan(_conv_pool(), a100, opts).steps if s.kind == "reformat"
                   and s.inputs[0].name == "x"}
    assert dst() == {("fp16", "hwc8")}
    folder = _copy(tmp_path)
    _edit(folder, "formats.toml", 'gpu_fp16 = { format = "hwc8",', 'gpu_fp16 = { format = "hwc16",')
    _with_rules(monkeypatch, folder)
    assert dst() == {("fp16", "hwc16")}


def test_an_int8_gpu_build_is_always_timed_against_fp16():
    """Grouped 3x3 convs of group width 8 on AGX Xavier: INT8 chw32 pads each 8-channel group to 32 (4x the MACs),
    FP16 hwc8 pads none, so the FP16 engine is faster although the INT8 engine's reformat copies are only 7% of
    its time, below the reformat_share_min bound that gates the FP32 engine. TensorRT times FP16 tactics beside
    INT8 ones, so the INT8 build runs FP16 (builder.ALWAYS_TIMED)."""
    from dlasim.build_options import BuildOptions
    from dlasim.passes import cached_plan
    from dlasim.simulate import estimate_plan
    b = GraphBuilder("g8")
    x = b.input("x", (1, 64, 56, 56))
    for i in range(4):
        x = b.relu(b.conv(x, 64, kernel=3, groups=8, name=f"c{i}"), name=f"r{i}")
    g = b.build([x])
    hw = dlasim.hardware("xavier-agx")
    int8 = estimate_plan(cached_plan(g, hw, BuildOptions.of(device="gpu", precision="int8")))
    fp16 = estimate_plan(cached_plan(g, hw, BuildOptions.of(device="gpu", precision="fp16")))
    assert fp16.total_ms < int8.total_ms
    assert int8.by_kind()["reformat"] < rules.RULES.reformat_share_min * int8.total_ms
    e = dlasim.estimate(g, hw, device="gpu", precision="int8")
    assert e.precision == "int8" and e.total_ms == pytest.approx(fp16.total_ms)
    assert {r.precision for r in e.steps if r.kind == "layer"} == {"fp16"}
    assert any(w.startswith("TensorRT would run this engine in FP16: it times faster than the INT8 engine")
               for w in e.warnings)
    # every FP16 layer says why it is not INT8, and explain names that reason, not an empty one
    why = {r.reason for r in e.steps if r.kind == "layer"}
    assert why == {f"TensorRT keeps the FP16 engine: it times faster than the INT8 one ({fp16.total_ms:.4f} "
                   f"ms vs {int8.total_ms:.4f} ms)"}
    text = next(c["text"] for c in dlasim.explain(g, hw, device="gpu", precision="int8").causes
                if c["code"] == "precision_unsupported")
    assert "TensorRT keeps the FP16 engine" in text and "()" not in text
    # where INT8 wins (plain convs: no group padding) the INT8 engine is kept, with no warning
    b = GraphBuilder("dense")
    x = b.input("x", (1, 64, 56, 56))
    y = b.relu(b.conv(b.relu(b.conv(x, 64, kernel=3, name="c0"), name="r0"), 64, kernel=3, name="c1"), name="r1")
    e = dlasim.estimate(b.build([y]), hw, device="gpu", precision="int8")
    assert {r.precision for r in e.steps if r.kind == "layer"} == {"int8"} and not e.warnings


def test_a_switched_engine_keeps_the_requested_builds_option_warnings():
    # INT8 I/O formats on an INT8 build are right even when the FP16 engine wins: no "on an FP16 engine" warning
    b = GraphBuilder("g8")
    x = b.input("x", (1, 64, 56, 56))
    for i in range(4):
        x = b.relu(b.conv(x, 64, kernel=3, groups=8, name=f"c{i}"), name=f"r{i}")
    e = dlasim.estimate(b.build([x]), "xavier-agx", device="gpu", precision="int8", input_formats="int8:chw32")
    assert any(w.startswith("TensorRT would run this engine in FP16") for w in e.warnings)
    assert not any("FP16 engine" in w and "--inputIOFormats" in w for w in e.warnings), e.warnings


def _loadable_limit_graph(width: int, size: int, convs_past_limit: int, regions: int = 17) -> dlasim.Graph:
    """`regions` DLA regions, each a Mish (no DLA support, no GPU INT8 kernel: FP16 on the GPU) before convs:
    Orin's 16 loadables per core (orin-agx.toml) send every conv of region 17 on to the GPU."""
    b = GraphBuilder("limit")
    x = b.input("x", (1, width, size, size))
    for i in range(regions):
        x = b.op("Mish", [x], name=f"m{i}")
        for j in range(convs_past_limit if i >= 16 else 1):
            x = b.conv(x, width, kernel=3, name=f"c{i}_{j}")
    return b.build([x])


def test_a_dla_int8_builds_gpu_layers_are_timed_in_fp16():
    """Four regions past the limit, one small conv each: on the GPU, INT8 convs between FP16 Mish layers pay an
    FP16 -> INT8 and an INT8 -> FP16 reformat each (two floors of 17 us against a 10 us conv); in FP16 they pay
    none, so TensorRT keeps the GPU layers in FP16. The DLA loadables are the same in both builds."""
    from dlasim.passes import cached_plan
    from dlasim.simulate import estimate_plan
    g = _loadable_limit_graph(16, 8, 1, regions=20)
    hw = dlasim.hardware("orin-agx")
    o = BuildOptions.of(device="dla", precision="int8")
    int8 = estimate_plan(cached_plan(g, hw, o))
    fp16 = estimate_plan(cached_plan(g, hw, o, gpu_precision="fp16"))
    gpu_convs = lambda e: {r.name: r.precision for r in e.steps if r.kind == "layer" and r.device == "gpu"
                           and r.op == "Conv"}
    assert set(gpu_convs(int8).values()) == {"int8"} and set(gpu_convs(fp16).values()) == {"fp16"}
    assert len(gpu_convs(int8)) == 4
    n_copies = lambda e: sum(r.kind == "reformat" for r in e.steps)
    assert n_copies(int8) - n_copies(fp16) == 8 - 1     # one pair per conv; the FP16 engine output still converts
    dla = lambda e: [(r.name, r.precision, r.time_ms) for r in e.steps if r.device == "dla"]
    assert dla(int8) == dla(fp16)
    e = dlasim.estimate(g, hw, device="dla", precision="int8")
    assert fp16.total_ms < int8.total_ms and e.total_ms == pytest.approx(fp16.total_ms)
    assert e.precision == "int8"
    assert [w for w in e.warnings if w.startswith("TensorRT would run this engine's GPU layers in FP16:")]
    conv = next(r for r in e.steps if r.name == "c19_0")
    assert conv.precision == "fp16" and conv.reason.startswith("past the 16th DLA loadable")
    assert "TensorRT keeps the GPU layers in FP16" in conv.reason
    mish = next(r for r in e.steps if r.name == "m19")
    assert mish.reason == "Mish is not supported on DLA v2"        # FP16 in both builds: its own reason only
    moved = {d.layer: d.action for d in e.decisions if d.pass_name == "builder"}
    assert moved == {f"c{i}_0": "fp16" for i in range(16, 20)}
    again = dlasim.estimate(g, hw, device="dla", precision="int8")      # the cached Plan's list is not changed
    assert [d for d in again.decisions if d.pass_name == "builder"] == [d for d in e.decisions
                                                                        if d.pass_name == "builder"]


def test_a_dla_int8_build_keeps_int8_gpu_layers_that_win():
    # four wide convs in a row past the limit: INT8 halves their time, and only the chain's ends pay a copy
    g = _loadable_limit_graph(256, 64, 4)
    e = dlasim.estimate(g, "orin-agx", device="dla", precision="int8")
    assert {r.precision for r in e.steps if r.kind == "layer" and r.device == "gpu" and r.op == "Conv"} == {"int8"}
    assert not any("would run" in w for w in e.warnings)
    # FP16 and DLA FP16 builds are not timed against anything
    f = dlasim.estimate(g, "orin-agx", device="dla", precision="fp16")
    assert not any("would run" in w for w in f.warnings)


def test_a_dla_int8_build_with_padded_grouped_gpu_convs_is_timed_in_fp16():
    """Every layer falls back (W = 9000 > the DLA's 8192 limit) and runs INT8 on the GPU, so there is no INT8
    <-> FP16 copy; but the group width 8 pads to chw32 in INT8 (4x the MACs) and not in FP16 hwc8. The FP16
    GPU layers are timed too (builder.fp16_may_win), as for the same network built for the GPU."""
    b = GraphBuilder("wide")
    x = b.input("x", (1, 64, 8, 9000))
    for i in range(4):
        x = b.relu(b.conv(x, 64, kernel=3, groups=8, name=f"c{i}"), name=f"r{i}")
    g = b.build([x])
    dla = dlasim.estimate(g, "xavier-agx", device="dla", precision="int8")
    gpu = dlasim.estimate(g, "xavier-agx", device="gpu", precision="int8")
    assert {r.precision for r in dla.steps if r.kind == "layer"} == {"fp16"}
    assert any(w.startswith("TensorRT would run this engine's GPU layers in FP16") for w in dla.warnings)
    assert any(w.startswith("TensorRT would run this engine in FP16") for w in gpu.warnings)
    assert dla.total_ms == pytest.approx(gpu.total_ms, rel=0.05)


def test_a_switched_dla_build_keeps_the_reasons_of_layers_whose_precision_did_not_change():
    # a Softmax past the loadable limit runs FP16 in both builds (no GPU INT8 kernel): its reason says so
    b = GraphBuilder("limit_softmax")
    x = b.input("x", (1, 16, 8, 8))
    for i in range(20):
        x = b.conv(b.op("Mish", [x], name=f"m{i}"), 16, kernel=3, name=f"c{i}")
    x = b.softmax(x, axis=1, name="sm")
    e = dlasim.estimate(b.build([b.conv(x, 16, kernel=1, name="last")]), "orin-agx", device="dla",
                        precision="int8")
    assert any(w.startswith("TensorRT would run this engine's GPU layers in FP16") for w in e.warnings)
    sm = next(r for r in e.steps if r.name == "sm")
    assert sm.precision == "fp16" and "Softmax has no INT8 kernel" in sm.reason, sm.reason
    assert "TensorRT keeps" not in sm.reason
