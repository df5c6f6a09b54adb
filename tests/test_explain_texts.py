"""The naive expectation's speedup, the ranking of cause entries and the examples that name the steps, on
hand-made rows (closing the mutants benchmarks/mutation.py left alive on expectation.py and summary.py)."""
from __future__ import annotations

import pytest

from dlasim.cost import CostParts
from dlasim.explainer import summary as S
from dlasim.explainer.expectation import Expectation, ideal_speedup
from dlasim.ir import GraphBuilder
from dlasim.report import ConvChannels, StepRow


def _graph(channels: int):
    """One 1x1 conv on a 1 x 8 x 4 x 4 input: 16 x 8 x channels MACs."""
    b = GraphBuilder(f"c{channels}")
    return b.build([b.conv(b.input("x", (1, 8, 4, 4)), channels, kernel=1, name="conv")])


def _ctx(peak=1e12, sparse=False, channels=16, precision="int8"):
    return Expectation(_graph(channels), "gpu", precision, sparse, peak)


def _row(name="s", time_ms=1.0, compute_ms=1.0, memory_ms=0.0, precision="int8", reason="", conv=None, **parts):
    return StepRow(name, "layer", "Conv", "gpu", precision, time_ms, "compute", [name], 10**9, 0, compute_ms,
                   memory_ms, 0.0, -1, reason, CostParts(**parts), conv=conv)


def test_ideal_speedup_of_each_kind_of_variation():
    a, b = _ctx(1e12, channels=16), _ctx(2e12, sparse=True, channels=64)     # 2048 and 8192 MACs
    assert a.graph.macs == 2048 and b.graph.macs == 8192
    assert ideal_speedup("precision", "fp16", "int8", a, b) == pytest.approx(4.0)   # 2x peak, 2x for 2:4
    assert ideal_speedup("batch", 1, 8, a, a) == pytest.approx(1 / 8)                # a time is the batch's
    assert ideal_speedup("model", "a", "b", a, b) == pytest.approx(4.0 * 2048 / 8192)
    assert ideal_speedup("model", "b", "a", b, a) == pytest.approx(0.25 * 8192 / 2048)
    assert a.ideal_ms(10**9) == pytest.approx(1.0) and b.ideal_ms(10**9) == pytest.approx(0.25)


def test_ranked_folds_small_entries_and_the_unexplained_rest_into_other():
    causes = [S._cause("memory_bound", 4.0, 5.0, "m"), S._cause("overhead", 0.02, 5.0, "o"),
              S._cause("reformat", 1.0, 5.0, "r"), S._cause("other", 0.03, 5.0, "x")]
    ranked = S._ranked(causes, 5.0, 0.005, unexplained=0.03)      # 0.02 < 0.005 x 5 folds with the 0.03
    assert [c["code"] for c in ranked] == ["memory_bound", "reformat", "other"]
    other = ranked[-1]
    assert other["ms"] == pytest.approx(0.05) and other["share"] == pytest.approx(0.01)
    assert other["text"] == ("smaller causes together 0.0200 ms, left unexplained by the mechanisms "
                             "0.0300 ms")
    assert S._ranked([S._cause("memory_bound", 4.0, 4.0, "m")], 4.0, 0.005) == [S._cause("memory_bound", 4.0,
                                                                                         4.0, "m")]


def test_examples_name_the_heaviest_steps_with_channels_and_reasons():
    """Tile quantization: the steps whose compute loses most to partly empty tiles, heaviest first, with C->K."""
    from dlasim.cost import Tiling
    rows = [_row(f"conv{i}", time_ms=1.0 + i, compute_ms=1.0 + i, ideal_s=1e-3, tiling=Tiling(1 / (1 + i), 1, 1, 1),
                 conv=ConvChannels(8 * i, 16 * i, 1)) for i in range(5)]
    text = S._examples(rows, _ctx(), "tile_quantization")
    assert text == "; 4 step(s), e.g. conv4 (32->64 ch), conv3 (24->48 ch), conv2 (16->32 ch) and 1 more"
    assert S._examples(rows, _ctx(), "tile_quantization", n=6).endswith("conv1 (8->16 ch)")
    assert S._examples(rows, _ctx(), "wave_quantization") == ""


def test_precision_examples_add_the_int8_layers_writing_wider_outputs():
    """An FP16 step where INT8 was asked (its reason), and INT8 steps writing FP16 (0.4 and 0.2 ms of wider
    bytes above compute)."""
    ctx = _ctx()
    rows = [_row("relu", precision="fp16", reason="no INT8 kernel", ideal_s=1e-3),
            _row("a", time_ms=2.0, compute_ms=1.0, memory_ms=2.0, ideal_s=1e-3, float_io_s=0.4e-3,
                 reason="no Q follows it"),
            _row("b", time_ms=2.0, compute_ms=1.0, memory_ms=2.0, ideal_s=1e-3, float_io_s=0.2e-3,
                 reason="no Q follows it"),
            _row("c", time_ms=1.0, compute_ms=1.0, memory_ms=0.5, ideal_s=1e-3, float_io_s=0.1e-3)]  # hidden
    text = S._examples(rows, ctx, "precision_unsupported")
    assert text == ("; 1 step(s), e.g. relu (no INT8 kernel (1)); 2 INT8 layer(s) write wider outputs / read "
                    "wider residuals (no Q follows it (2)): 0.600 ms of DRAM time, e.g. a, b")


def test_copy_examples_count_the_steps_of_the_kind():
    rows = [StepRow(f"t{i}", "reformat" if i < 3 else "transition", "Reformat", "gpu", "fp16", 0.1, "memory", [])
            for i in range(5)]
    assert S._examples(rows, _ctx(), "reformat") == "; 3 step(s)"
    assert S._examples(rows, _ctx(), "transition") == "; 2 step(s)"
    assert S._examples(rows[:1], _ctx(), "transition") == ""


def test_fallback_examples_give_the_three_most_common_reasons():
    rows = [_row(f"l{i}", time_ms=1.0 + i, reason=f"reason {i % 4}") for i in range(8)]
    ctx = Expectation(_graph(16), "dla", "fp16", False, 1e12)
    text = S._examples(rows, ctx, "fallback")
    assert text.startswith("; 8 step(s), e.g. l7, l6, l5 and 5 more (")
    assert text.count("(2)") == 3 and "reason 3 (2); reason 2 (2); reason 1 (2)" in text
