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


def test_memory_bound_dla_layer_slows_by_the_dla_clock_when_its_dma_binds():
    # a 1x1 conv 64 -> 64 on a 64x256x256 INT8 map: 4 MiB in + 4 MiB out, MAC cycles far below DRAM time.
    # The DLA's DMA moves 64 B per DLA cycle (orin-agx.toml): MAXN 64 x 1.6 GHz = 102.4 GB/s (below the
    # 204.8 GB/s DRAM peak), 15W 64 x 614.4 MHz = 39.3 GB/s (below the EMC-capped 136.5 GB/s)
    b = GraphBuilder("t")
    x = b.input("x", (1, 64, 256, 256))
    g = b.build([b.conv(x, 64, 1, bias=False, name="c")])
    io = dict(device="dla", precision="int8", input_formats="int8:chw32", output_formats="int8:chw32")
    rows = {}
    for mode in ("maxn", "15w"):
        plat = hardware(f"orin-agx:{mode}")
        rows[mode] = next(s for s in dlasim.estimate(g, plat, **io).steps if s.name == "c")
        nbytes = 2 * 64 * 256 * 256 + 64 * 64
        bw = {"maxn": 64 * 1.6e9, "15w": 64 * 614.4e6}[mode]
        assert rows[mode].memory_ms == pytest.approx(nbytes / bw * 1e3)
    assert rows["15w"].memory_ms / rows["maxn"].memory_ms == pytest.approx(1600 / 614.4)


def test_dla_bandwidth_is_its_dma_rate_capped_by_the_emc_bandwidth():
    from dlasim.cost.dla import dram_bandwidth
    # Xavier: B per DLA cycle fitted on seed 000 (xavier-agx.toml, 21.08), the NX's a copy; AGX 1395.2 MHz,
    # NX 1100.8 MHz: about 29.4 GB/s of 136.5 and 23.2 of 51.2, both below their DRAM peak
    bpc = hardware("xavier-agx").dla.dram_bytes_per_cycle
    assert hardware("xavier-nx").dla.dram_bytes_per_cycle == bpc and 15 < bpc < 30
    assert dram_bandwidth(hardware("xavier-agx")) == pytest.approx(bpc * 1395.2e6)
    assert dram_bandwidth(hardware("xavier-nx:15w")) == pytest.approx(bpc * 1100.8e6)
    assert dram_bandwidth(hardware("xavier-nx:20w")) == dram_bandwidth(hardware("xavier-nx:15w"))
    # a DRAM below the DMA rate binds: 10 GB/s of DRAM against 29.4 GB/s of DMA
    xa = hardware("xavier-agx")
    slow = xa.model_copy(update={"memory": xa.memory.model_copy(update={"dram_bandwidth_bytes_per_s": 10e9})})
    assert dram_bandwidth(slow) == 10e9
    # no DLA-side figure (the NVDLA spreadsheet's optimal case): the DRAM peak, 10 GB/s in nvdla-full.toml
    full = hardware("nvdla-full")
    assert full.dla.dram_bytes_per_cycle is None and dram_bandwidth(full) == 10e9


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
