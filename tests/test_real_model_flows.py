"""Regressions found running real exported models (tests/fixtures/exports) through the README's flows: each
test is a small graph or a real file with the behaviour computed by hand, and fails without its fix."""
from __future__ import annotations

import dlasim
from dlasim import GraphBuilder


def _squeeze_pair_net():
    """conv -> Unsqueeze(axis 4) -> Squeeze(axis 4) -> conv: the shape ops torch.onnx writes around attention
    (torchvision ViT: Unsqueeze/Squeeze around the q, k, v split)."""
    b = GraphBuilder("sq")
    x = b.input("x", (1, 64, 56, 56))
    y = b.relu(b.conv(x, 64, kernel=3))
    y = b.op("Unsqueeze", [y], {"axes": [4]}, name="unsq")
    y = b.op("Squeeze", [y], {"axes": [4]}, name="sq")
    return b.build([b.relu(b.conv(y, 64, kernel=3))])


def test_squeeze_and_unsqueeze_run_on_the_dla_like_reshape():
    """TensorRT imports Squeeze/Unsqueeze as the Shuffle layer Reshape is (dla.md s3.2 "Shuffle"): on the
    DLA they stay inside the one loadable (they fell back before, splitting it in two with four hand-overs)."""
    e = dlasim.estimate(_squeeze_pair_net(), "orin-agx", device="dla", precision="int8")
    assert e.fallback == []
    assert e.dla_subgraphs == 1 and e.transitions == 0
    assert {s.name: s.device for s in e.steps if s.name in ("unsq", "sq")} == {"unsq": "dla", "sq": "dla"}


def test_squeeze_and_unsqueeze_have_int8_kernels_on_the_gpu():
    """Shuffle layers run INT8 on the GPU (precision.toml lists Reshape): no FP16 island, no precision
    reformat on either side of them (the engine's I/O is INT8 chw32, so the INT8 engine has no copy at all)."""
    e = dlasim.estimate(_squeeze_pair_net(), "orin-agx", device="gpu", precision="int8", batch=8,
                        input_formats="int8:chw32", output_formats="int8:chw32")
    shuffles = [s for s in e.steps if s.name in ("unsq", "sq")]
    assert [s.precision for s in shuffles] == ["int8", "int8"]
    assert [s.name for s in e.steps if s.kind == "reformat"] == []
