"""Hardware spec files: every shipped file loads, power modes apply, and bad files fail with one clear line."""
from __future__ import annotations

import pickle
import re

import pytest

from dlasim.errors import SpecError
from dlasim.hardware import SPEC_DIR, Platform, hardware, spec_names

EXPECTED = ["a100", "a40", "h200", "nvdla-full", "nvdla-small", "orin-agx", "orin-nx-16gb", "titan-rtx", "xavier-agx",
            "xavier-nx"]
XAVIER = (SPEC_DIR / "xavier-agx.toml").read_text()


def test_all_expected_spec_files_ship():
    assert set(EXPECTED) <= set(spec_names())


@pytest.mark.parametrize("name", EXPECTED)
def test_spec_loads_with_every_power_mode(name):
    plat = hardware(name)
    assert isinstance(plat, Platform) and plat.name == name
    assert plat.dla or plat.gpu
    for mode in plat.power_modes:
        assert hardware(f"{name}:{mode}").mode == mode


@pytest.mark.parametrize("name", EXPECTED)
def test_every_source_entry_is_text(name):
    plat = hardware(name)
    blocks = [plat.memory, plat.copies, *plat.power_modes.values()]
    blocks += [plat.dla, plat.dla.support] if plat.dla else []
    blocks += [plat.gpu] if plat.gpu else []
    for block in blocks:
        assert all(isinstance(v, str) and len(v) > 10 for v in block.sources.values())


def test_orin_power_modes_lower_clocks_and_bandwidth():
    maxn, low = hardware("orin-agx:maxn"), hardware("orin-agx:15w")
    assert hardware("orin-agx").mode == "maxn"              # default_power_mode
    assert low.dla.clock_hz < maxn.dla.clock_hz
    assert low.gpu.clock_hz < maxn.gpu.clock_hz
    assert low.memory.dram_bandwidth_bytes_per_s < maxn.memory.dram_bandwidth_bytes_per_s
    assert low.label == "orin-agx:15w"
    assert [hardware(f"orin-agx:{m}").dla.clock_hz for m in ("maxn", "50w", "30w", "15w")] == \
        pytest.approx([1.6e9, 1369.6e6, 1369.6e6, 614.4e6])


def test_peaks_reproduce_published_totals():
    orin = hardware("orin-agx").dla                          # 105 sparse INT8 TOPS for 2 DLAs (dla.md s0.1 fact 3)
    assert orin.cores * orin.macs_per_cycle("int8") * 2 * 2 * orin.clock_hz / 1e12 == pytest.approx(105, rel=0.01)
    for name, precision, tera, clock in [("a100", "fp16", 312, None), ("a40", "fp16", 149.7, None),
                                         ("h200", "fp16", 989.4, 1.83e9), ("orin-agx", "int8", 85.2, None),
                                         ("titan-rtx", "fp16", 130.5, None), ("titan-rtx", "int8", 261, None)]:
        g = hardware(name).gpu
        peak = g.sm_count * g.fma_per_clk_per_sm(precision) * 2 * (clock or g.clock_hz) / 1e12
        assert peak == pytest.approx(tera, rel=0.01), name


def test_platform_shapes():
    for name in ("a40", "a100", "h200"):
        plat = hardware(name)
        assert plat.dla is None and not plat.power_modes and plat.gpu.sparse_tensor_cores
    titan = hardware("titan-rtx")            # Turing: no DLA, no 2:4 sparsity, no TF32 (FP32 on the CUDA cores)
    assert titan.dla is None and not titan.gpu.sparse_tensor_cores and not titan.gpu.tf32
    # 384-bit GDDR6 at the 7.001 GHz memory clock trtexec reports, two transfers per clock
    assert titan.memory.dram_bandwidth_bytes_per_s == pytest.approx(384 / 8 * 2 * 7.001e9, rel=1e-3)
    for name in ("nvdla-full", "nvdla-small"):
        plat = hardware(name)
        assert plat.gpu is None and plat.dla.version == "nvdla" and plat.dla.cores == 1
    small = hardware("nvdla-small").dla
    assert small.precisions == ("int8",) and small.macs_per_cycle("int8") == 64 and small.mac_atomic_k_fp16 == 0
    assert hardware("nvdla-full").dla.macs_per_cycle("fp16") == 1024
    orin = hardware("orin-agx").dla
    assert orin.sparse_int8_conv and "Softmax" in orin.support.ops
    assert "Softmax" not in hardware("xavier-agx").dla.support.ops
    orin = hardware("orin-agx")
    for mapping in (orin.power_modes, orin.dla.sources, orin.gpu.sources):
        with pytest.raises(TypeError):
            mapping["turbo"] = orin.power_modes["maxn"]
        with pytest.raises(TypeError):
            mapping.update(turbo=1)
        with pytest.raises(TypeError):
            mapping.pop(next(iter(mapping)))
    assert "turbo" not in hardware("orin-agx").power_modes
    # still plain data: copies and pickles (process workers) keep the values and stay read-only
    back = pickle.loads(pickle.dumps(orin))
    assert back == orin and back.power_modes == dict(orin.power_modes)
    with pytest.raises(TypeError):
        back.power_modes["turbo"] = None


def test_unknown_mode_and_name():
    with pytest.raises(SpecError, match="unknown power mode 'turbo'"):
        hardware("orin-agx:turbo")
    with pytest.raises(SpecError, match="unknown hardware 'orin-agxx'"):
        hardware("orin-agxx")
    with pytest.raises(SpecError, match="unknown power mode .maxn. \\(known: none\\)"):
        hardware("a100:maxn")
    with pytest.raises(SpecError, match="not found"):
        hardware("/nonexistent/dir/spec.toml")


def test_platform_names_ignore_case():
    assert hardware("ORIN-AGX:MAXN") == hardware("orin-agx:maxn") and hardware("Xavier-NX").name == "xavier-nx"


def test_power_mode_names_ignore_case():
    # nvpmodel and NVIDIA's tables write MAXN, 30W: the same mode, labelled as the spec names it
    assert hardware("orin-agx:MAXN") == hardware("orin-agx:maxn")
    assert hardware("orin-agx:30W").label == "orin-agx:30w"
    assert hardware("orin-agx:30W").dla.clock_hz == hardware("orin-agx:30w").dla.clock_hz != hardware("orin-agx").dla.clock_hz


@pytest.mark.parametrize("name, hint", [("orin", "orin-agx or orin-nx-16gb"), ("agx-orin", "orin-agx"),
                                        ("jetson-agx-orin", "orin-agx"), ("orin-nx", "orin-nx-16gb"),
                                        ("jetson_xavier_nx", "xavier-nx"), ("orin-agxx", "orin-agx")])
def test_unknown_name_suggests_the_spec_meant(name, hint):
    with pytest.raises(SpecError, match=f"unknown hardware '{name}': did you mean {hint}"):
        hardware(name)


def test_unknown_name_far_from_every_spec_suggests_nothing():
    with pytest.raises(SpecError) as e:
        hardware("t4")
    assert "did you mean" not in str(e.value) and "known: a100" in str(e.value)


def test_copied_file_with_mode(tmp_path):
    p = tmp_path / "my-orin.toml"
    p.write_text((SPEC_DIR / "orin-agx.toml").read_text().replace("dla_clock_hz = 614.4e6", "dla_clock_hz = 500e6"))
    plat = hardware(f"{p}:15w")
    assert plat.mode == "15w" and plat.dla.clock_hz == 500e6
    assert hardware(p).mode == "maxn"
    assert hardware(str(p)).path == str(p)


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


BAD = {
    "missing": (_edit(XAVIER, "clock_hz = 1395.2e6\n", ""), "dla.clock_hz", "missing"),
    "extra": (_edit(XAVIER, "clock_hz = 1395.2e6\n", "clock_hz = 1395.2e6\nclock_mhz = 1395.2\n"),
              "dla.clock_mhz", "unknown field"),
    "duplicate": (_edit(XAVIER, "clock_hz = 1395.2e6\n", "clock_hz = 1395.2e6\nclock_hz = 1.0e9\n"),
                  "dla.clock_hz", "given twice"),
    "wrong_type": (_edit(XAVIER, "clock_hz = 1395.2e6\n", 'clock_hz = "1.4 GHz"\n'), "dla.clock_hz", "number"),
    "no_source": (re.sub(r'\nclock_hz = "ref/dla.md s0.1 fact 4[^\n]*', "", XAVIER), "dla.clock_hz", "sources"),
    "bad_source": (_edit(XAVIER, "[dla.sources]\n", '[dla.sources]\nclock_mhz = "made up"\n'),
                   "dla.sources.clock_mhz", "no field"),
    "nested": (_edit(XAVIER, "pool_window_max = 8\n", "pool_window_max = -1.5\n"),
               "dla.support.pool_window_max", "integer"),
    "bad_default_mode": (_edit(XAVIER, 'name = "xavier-agx"\n', 'name = "xavier-agx"\ndefault_power_mode = "maxn"\n'),
                         "default_power_mode", "power_modes"),
    "no_device": (XAVIER[:XAVIER.index("[dla]")], "field dla", "[dla] or a [gpu] block"),
    "cbuf_size": (_edit(XAVIER, "cbuf_bank_entries = 256\n", "cbuf_bank_entries = 128\n"), "dla.cbuf_bytes",
                  "524288 bytes is not cbuf_banks x cbuf_bank_entries x cbuf_entry_bytes = 262144"),
    "out_of_range": (_edit(XAVIER, "image_mode_utilization = 0.5\n", "image_mode_utilization = 1.5\n"),
                     "dla.image_mode_utilization", "less than or equal"),
    "no_fp16_macs": (_edit(XAVIER, "mac_atomic_k_fp16 = 16\n", "mac_atomic_k_fp16 = 0\n"), "dla.mac_atomic_k_fp16",
                     "(0 means no FP16: drop fp16 from precisions), got 0"),       # the field's value, not its block
    "huge_int": (_edit(XAVIER, "mac_atomic_k_fp16 = 16\n", "mac_atomic_k_fp16 = " + "9" * 60 + "\n"),
                 "dla.mac_atomic_k_fp16", "past 2**53"),
    # a CTA tile is [M, N, K] of sizes 1 .. 1024 (a huge K made the GEMM model divide by zero)
    "tile_size": (re.sub(r"\ncta_tiles_fp16 = \[\[(\d+), (\d+), (\d+)\]", r"\ncta_tiles_fp16 = [[\1, \2, 2048]",
                         XAVIER, count=1), "gpu.cta_tiles_fp16.0.2", "less than or equal to 1024"),
    "tile_rank": (re.sub(r"\ncta_tiles_fp16 = \[\[(\d+), (\d+), (\d+)\]", r"\ncta_tiles_fp16 = [[\1, \2]",
                         XAVIER, count=1), "gpu.cta_tiles_fp16.0", "at least 3 items"),
    # an earlier spec version's field: the error says what replaced it and how to convert
    "renamed": (re.sub(r"\ndram_bytes_per_cycle = [0-9.e+-]+\n", "\ndram_efficiency = 0.2155\n", XAVIER, count=1),
                "dla.dram_efficiency", "replaced by dla.dram_bytes_per_cycle = share x DRAM bytes/s / DLA clock_hz"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_file_gives_one_line_naming_file_and_field(tmp_path, case):
    text, field, words = BAD[case]
    p = tmp_path / f"{case}.toml"
    p.write_text(text)
    with pytest.raises(SpecError) as info:
        hardware(str(p))
    msg = str(info.value)
    assert "\n" not in msg
    assert str(p) in msg and field in msg and words in msg, msg


def test_bad_file_with_mode_suffix_still_names_the_file(tmp_path):
    p = tmp_path / "broken.toml"
    p.write_text(_edit(XAVIER, "cores = 2\n", "cores = 0\n"))
    with pytest.raises(SpecError, match=r"broken\.toml: field dla\.cores: .*greater than or equal to 1"):
        hardware(f"{p}:maxn")


def test_xavier_nx_modes_set_bandwidth_from_the_emc_clock():
    # 128-bit LPDDR4x: 16 B x 2 transfers x EMC clock; 1866 MHz -> 59.7 GB/s (20W), 1600 MHz -> 51.2 GB/s (15W, 10W)
    bw = {m: hardware(f"xavier-nx:{m}").memory.dram_bandwidth_bytes_per_s for m in ("20w", "15w", "10w")}
    assert bw == pytest.approx({"20w": 59.7e9, "15w": 59.7e9 * 1600 / 1866, "10w": 59.7e9 * 1600 / 1866})
    assert bw["15w"] == pytest.approx(16 * 2 * 1600e6, rel=0.001)
    nx = hardware("xavier-nx")
    assert nx.mode == "15w" and nx.gpu.sm_count * nx.gpu.cuda_core_fma_per_clk_per_sm == 384
    assert nx.dla.cores == 2 and hardware("xavier-nx:10w").dla.clock_hz < nx.dla.clock_hz


def test_cached_platform_lists_cannot_be_changed_in_place():
    """hardware() hands out cached Platform objects: their list-like fields are tuples, so no caller can add an
    op to one platform's supported list and change every later hardware("xavier-agx") in the process."""
    first = hardware("xavier-agx")
    for seq in (first.dla.support.ops, first.dla.support.fusable_post_ops, first.dla.precisions,
                first.gpu.fusable_post_ops, first.gpu.cta_tiles("fp16"), first.gpu.cta_tiles("fp16")[0]):
        with pytest.raises((AttributeError, TypeError)):
            seq.append("Softmax")
        with pytest.raises(TypeError):
            seq[0] = "Softmax"
    assert "Softmax" not in hardware("xavier-agx").dla.support.ops


@pytest.mark.parametrize("name", EXPECTED)
def test_every_shipped_spec_estimates_a_network(name):
    """Each shipped platform (DLA-only NVDLA configurations included: no GPU block) costs a conv network on
    each of its devices, the DLA engine with its input/output reformat copies; a cost path that assumes a
    GPU fails here."""
    import dlasim
    from dlasim.ir import GraphBuilder
    b = GraphBuilder("tiny")
    x = b.input("x", (2, 16, 28, 28))
    b.relu(b.conv(b.relu(b.conv(x, 32, kernel=3, pad=1)), 32, kernel=1))
    g = b.build()
    plat = hardware(name)
    prec = "int8" if plat.dla is not None and "fp16" not in plat.dla.precisions else "fp16"
    for device in [d for d, unit in (("dla", plat.dla), ("gpu", plat.gpu)) if unit is not None]:
        e = dlasim.estimate(g, plat, device=device, precision=prec)
        assert e.total_ms > 0, (name, device)
        if device == "dla":
            assert any(s.kind == "reformat" for s in e.steps), name


@pytest.mark.parametrize("name, hint", [("resnet-50", "resnet50"), ("mobilenetv2", "mobilenet_v2"),
                                        ("ssd-mobilenet", "ssd_mobilenet_v1")])
def test_unknown_zoo_name_suggests_the_network_meant(name, hint):
    from dlasim import ModelError, load
    with pytest.raises(ModelError, match=f"unknown zoo model '{name}': did you mean {hint}"):
        load(f"zoo:{name}")
