"""Real exported models (tests/fixtures/exports, made by make_exports.py with torch.onnx.export and
Ultralytics, weights zeroed): they import and estimate on a GPU and on a DLA with fallback.

MAC counts are torchvision's published figures ("GFLOPS" in the torchvision model tables counts
multiply-accumulates): resnet18 1.81, mobilenet_v3_small 0.06 (56 M MAdds in the MobileNetV3 paper, Table 3), efficientnet_b0 0.39, vit_b_16 17.56,
swin_t 4.49, convnext_tiny 4.46, regnet_y_400mf 0.40, deeplabv3_mobilenet_v3_large 10.45 (at 520x520),
maxvit_t 5.56 (its attention is torch.einsum);
YOLOv8n: Ultralytics' model table, 8.7 GFLOPs at 640 (= 2 x MACs, so ~4.4 G MACs); its dynamic-axes export
(batch, 3, height, width) is estimated at --shapes images:1x3x640x640.
"""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

import dlasim
from dlasim.cli import main

pytest.importorskip("onnx")

FIXTURES = Path(__file__).parent / "fixtures" / "exports"
GMACS = {"tv_resnet18": 1.81, "tv_mobilenet_v3_small": 0.056, "tv_efficientnet_b0": 0.39,
         "tv_vit_b_16": 17.56, "tv_vit_b_16_dynamo": 17.56, "ultralytics_yolov8n": 4.35,
         "tv_swin_t": 4.49, "tv_convnext_tiny": 4.46, "tv_regnet_y_400mf": 0.40,
         "tv_deeplabv3_mobilenet_v3_large": 10.45, "tv_maxvit_t": 5.56, "ultralytics_yolov8n_dynamic": 4.35}
SHAPES = {"ultralytics_yolov8n_dynamic": {"images": (1, 3, 640, 640)}}      # fixtures with dynamic inputs


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("exports")
    paths = {}
    for gz in sorted(FIXTURES.glob("*.onnx.gz")):
        dst = out / gz.name[:-3]
        with gzip.open(gz, "rb") as f, open(dst, "wb") as g:
            shutil.copyfileobj(f, g)
        paths[dst.name[:-5]] = dst
    return paths


def test_every_fixture_is_there(exported):
    assert set(exported) == set(GMACS)


@pytest.mark.parametrize("name", sorted(GMACS))
def test_imports_with_published_macs_and_no_unmodelled_op(exported, name):
    g = dlasim.load(str(exported[name]), shapes=SHAPES.get(name))
    assert g.macs / 1e9 == pytest.approx(GMACS[name], rel=0.03)
    unknown = [l.name for l in g.layers if "unknown_op" in l.flags]
    assert unknown == []


@pytest.mark.parametrize("name", sorted(GMACS))
@pytest.mark.parametrize("hw,device,precision", [("a100", "gpu", "--fp16"), ("orin-agx", "dla", "--int8")])
def test_estimates_on_gpu_and_dla_with_fallback(exported, capsys, name, hw, device, precision):
    if name == "tv_vit_b_16_dynamo" and device == "dla":
        pytest.skip("same network as tv_vit_b_16 (covered there); keeps the suite short")
    shapes = [f"--shapes={k}:{'x'.join(map(str, v))}" for k, v in SHAPES.get(name, {}).items()]
    rc = main(["estimate", str(exported[name]), "--hw", hw, "--device", device, precision,
               "--allowGPUFallback", "--format", "json"] + shapes)
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["total_ms"] > 0
    for f in d["fallback"]:
        assert f["reason"] and f["kind"]     # every fallback says why, in words and as a kind
    if device == "gpu":
        assert d["dla_subgraphs"] == 0 and all(s["device"] == "gpu" for s in d["steps"])


def test_vit_attention_matmuls_run_on_the_gpu_of_an_orin_dla_engine(exported):
    """MatMul of two activations (attention's Q.K^T and P.V) has no DLA form (dla.md s6.2 MatMul row):
    those layers fall back, each with that reason."""
    e = dlasim.estimate(str(exported["tv_vit_b_16"]), "orin-agx", device="dla", precision="int8")
    mm = [f for f in e.fallback if f.op == "MatMul" and "two activations" in f.reason]
    assert len(mm) == 24                         # 12 blocks x (Q.K^T, P.V)


def test_unit_dim_transposes_cost_nothing_on_the_gpu():
    """(197, 1, 768) -> (1, 197, 768) moves only a size-1 dimension: a view, no kernel; (197, 12, 64) ->
    (12, 197, 64) moves data and costs a memory-bound kernel. (Between two layers: from the input binding
    straight to the output binding even a view is a copy.)"""
    def net(shape, perm):
        b = dlasim.GraphBuilder("t")
        x = b.relu(b.input("x", shape))
        return b.build([b.relu(b.op("Transpose", [x], {"perm": perm}))])
    view = dlasim.estimate(net((197, 1, 768), [1, 0, 2]), "a100", device="gpu")
    copy = dlasim.estimate(net((197, 12, 64), [1, 0, 2]), "a100", device="gpu")
    t_view = sum(s.time_ms for s in view.steps if s.op == "Transpose")
    t_copy = sum(s.time_ms for s in copy.steps if s.op == "Transpose")
    assert t_view == 0.0 and t_copy > 0.0


def test_last_two_dims_transpose_folds_into_the_matmul():
    b = dlasim.GraphBuilder("kt")
    q = b.input("q", (1, 12, 197, 64))
    k = b.input("k", (1, 12, 197, 64))
    kt = b.op("Transpose", [k], {"perm": [0, 1, 3, 2]})
    e = dlasim.estimate(b.build([b.op("MatMul", [q, kt])]), "a100", device="gpu")
    layer_steps = [s for s in e.steps if s.kind == "layer"]
    assert [s.op for s in layer_steps] == ["MatMul"]
    assert len(layer_steps[0].layers) == 2       # the MatMul and the folded Transpose


def test_an_orin_dla_int8_build_is_not_slower_than_fp16_through_its_gpu_layers(exported, capsys):
    """MobileNetV3-small on the Orin DLA: its HardSwish / HardSigmoid layers (no DLA support, no GPU INT8
    kernel) sit between INT8-capable GPU layers; with those in INT8 the engine pays an INT8 <-> FP16 copy at
    every change and comes out slower than the FP16 build. TensorRT times the GPU layers in FP16 too."""
    path = str(exported["tv_mobilenet_v3_small"])
    int8 = dlasim.estimate(path, "orin-agx", device="dla", precision="int8")
    fp16 = dlasim.estimate(path, "orin-agx", device="dla", precision="fp16")
    assert any(w.startswith("TensorRT would run this engine's GPU layers in FP16") for w in int8.warnings)
    assert {r.precision for r in int8.steps if r.kind == "layer" and r.device == "gpu"} == {"fp16"}
    assert {r.precision for r in int8.steps if r.kind == "layer" and r.device == "dla"} == {"int8"}
    assert int8.total_ms < fp16.total_ms
    # trtexec --int8 alone may not use FP16: the build it makes is not the one dlasim keeps, and it says so
    assert main(["estimate", path, "--hw", "orin-agx", "--int8", "--format", "json"]) == 0
    w = [x for x in json.loads(capsys.readouterr().out)["warnings"] if x.startswith("--int8 without --fp16")]
    assert len(w) == 1 and "cannot keep the FP16 GPU layers" in w[0]
    assert main(["estimate", path, "--hw", "orin-agx", "--int8", "--fp16", "--format", "json"]) == 0
    assert not [x for x in json.loads(capsys.readouterr().out)["warnings"] if x.startswith("--int8 without")]
