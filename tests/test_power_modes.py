"""Power modes: the EMC (DRAM) clock cap of a mode sets its DRAM bandwidth (hand-computed)."""
from __future__ import annotations

import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.errors import SpecError
from dlasim.hardware import SPEC_DIR, emc_bandwidth, hardware

ORIN = (SPEC_DIR / "orin-agx.toml").read_text()


def test_bandwidth_scales_with_the_emc_clock():
    # AGX Orin: 204.8 GB/s at 3200 MHz (LPDDR5-6400); 15W caps EMC at 2133 MHz -> 204.8 * 2133 / 3200
    assert emc_bandwidth(204.8e9, 3.2e9, 2133e6) == pytest.approx(136.512e9)
    assert emc_bandwidth(204.8e9, 3.2e9, 4.0e9) == pytest.approx(204.8e9)       # a cap above the peak does not bind
    bw = {m: hardware(f"orin-agx:{m}").memory.dram_bandwidth_bytes_per_s for m in ("maxn", "50w", "30w", "15w")}
    assert bw == pytest.approx({"maxn": 204.8e9, "50w": 204.8e9, "30w": 204.8e9, "15w": 136.512e9})


def test_memory_bound_dla_layer_slows_by_the_emc_ratio():
    # a 1x1 conv 64 -> 64 on a 64x256x256 INT8 map: 4 MiB in + 4 MiB out, MAC cycles far below DRAM time
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 256, 256))
    g = b.build([b.conv(x, 64, 1, bias=False, name="c")])
    io = dict(device="dla", precision="int8", input_formats="int8:chw32", output_formats="int8:chw32")
    rows = {}
    for mode in ("maxn", "15w"):
        plat = hardware(f"orin-agx:{mode}")
        rows[mode] = next(s for s in dlasim.estimate(g, plat, **io).steps if s.name == "c")
        nbytes = 2 * 64 * 256 * 256 + 64 * 64
        assert rows[mode].memory_ms == pytest.approx(
            nbytes / (plat.memory.dram_bandwidth_bytes_per_s * plat.dla.dram_efficiency) * 1e3)
    assert rows["15w"].memory_ms / rows["maxn"].memory_ms == pytest.approx(3200 / 2133)


BOTH = ORIN.replace("emc_clock_hz = 2133e6\n", "emc_clock_hz = 2133e6\ndram_bandwidth_bytes_per_s = 136.5e9\n") \
    .replace("[power_modes.15w.sources]\n", '[power_modes.15w.sources]\ndram_bandwidth_bytes_per_s = "a test"\n')
NO_PEAK = ORIN.replace("emc_clock_hz = 3.2e9\n", "", 1).replace('emc_clock_hz = "ref/gpu.md', 'l2_note = "', 1) \
    .replace('\nl2_note = "', '\n# "', 1)


@pytest.mark.parametrize("text,words", [(BOTH, "not both"), (NO_PEAK, "[memory] has no emc_clock_hz")])
def test_bad_emc_settings_fail_with_one_line(tmp_path, text, words):
    p = tmp_path / "orin.toml"
    p.write_text(text)
    with pytest.raises(SpecError) as info:
        hardware(f"{p}:15w")
    msg = str(info.value)
    assert "\n" not in msg and str(p) in msg and "emc_clock_hz" in msg and words in msg, msg
