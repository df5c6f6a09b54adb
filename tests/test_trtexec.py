"""dlasim.trtexec: tolerant readers of trtexec profiles, layer info, logs and trex metadata."""
import json
from pathlib import Path

import pytest

from dlasim.errors import ModelError
from dlasim.trtexec import (
    MeasuredProfile, classify, corrected_rows, parse_layer_info, parse_metadata, parse_profile,
    parse_trtexec_log, profile_summary, render_profile_table, split_layer_names,
)

DATA = Path(__file__).resolve().parent.parent / "validation" / "data"
HAX = DATA / "haxconn" / "profiles"
FP16 = DATA / "trex" / "a100-resnet50" / "fp16" / "resnet.onnx.engine"
PROFILES = sorted(p for p in DATA.rglob("*") if p.is_file() and (
    p.suffix == ".profile" or p.name.endswith(".profile.json") or p.name.endswith("_filtered.json")))
GRAPHS = sorted(DATA.rglob("*.graph.json"))


def test_data_files_are_there():
    assert len(PROFILES) >= 30 and len(GRAPHS) >= 7


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_every_profile_parses(path):
    prof = parse_profile(path)
    assert prof.rows and prof.total_ms > 0
    assert abs(prof.total_ms - sum(r.time_ms for r in prof.rows)) < 1e-9
    assert all(r.layers for r in prof.rows)


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: p.parent.name + "/" + p.name)
def test_every_layer_info_parses(path):
    layers = parse_layer_info(path)
    assert layers and all(l["name"] and l["layer_type"] for l in layers)
    assert not any(l["unknown_type"] for l in layers)


def test_gpu_googlenet_total():
    prof = parse_profile(HAX / "googlenet_gpu_mark_at_-1.profile")
    assert prof.count == 12483
    assert prof.total_ms == pytest.approx(1.94, abs=0.005)
    assert prof.rows[0].median_ms is None
    kinds = {r.name: r.kind for r in prof.rows}
    assert kinds["conv1/7x7_s2 + conv1/relu_7x7"] == "conv"
    assert kinds["conv1/7x7_s2 + conv1/relu_7x7 input reformatter 0"] == "reformat"
    assert kinds["inception_3a/1x1 copy"] == "concat"
    assert kinds["loss3/classifier"] == "fc" and kinds["prob"] == "softmax"


def test_xavier_dla_profile_rows():
    prof = parse_profile(HAX / "googlenet_dla_mark_at_-1.profile")
    subgraphs = [r for r in prof.rows if r.kind == "dla_subgraph"]
    assert len(subgraphs) == 1
    assert 135 <= len(subgraphs[0].layers) <= 145           # 140 Caffe layers in braces
    assert subgraphs[0].layers[0] == "conv1/7x7_s2" and subgraphs[0].layers[-1] == "loss3/classifier"
    out = next(r for r in prof.rows if r.name.endswith("output reformatter 0"))
    assert out.kind == "reformat"
    assert out.time_ms == pytest.approx(3.33, abs=0.01)
    assert out.extra["carries_dla_time"] is True
    assert out.layers == subgraphs[0].layers
    assert next(r for r in prof.rows if r.name == "data to nvm").kind == "reformat"


def test_trex_fp16_noop_reformats_joined_with_layer_info():
    prof = parse_profile(FP16.with_name(FP16.name + ".profile.json"))
    assert prof.count == 1 and all(r.median_ms is not None for r in prof.rows)
    summary = profile_summary(FP16.with_name(FP16.name + ".profile.json"),
                              FP16.with_name(FP16.name + ".graph.json"))
    rows = {d["name"]: d for d in summary["layers"]}
    noop = rows["Reformatting CopyNode for Input Tensor 0 to Conv_5 + Add_6 + Relu_7"]
    assert noop["kind"] == "noop" and noop["layer_type"] == "NoOp"
    real = rows["Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1"]
    assert real["kind"] == "reformat" and real["time_ms"] > 0.05
    assert rows["Conv_3 + Relu_4"]["tile"] == [256, 64, 32]
    assert rows["Conv_3 + Relu_4"]["has_sparse_weights"] is False
    assert summary["by_kind"]["noop"]["count"] == 11
    assert summary["gpu_compute_median_ms"] == pytest.approx(0.862, abs=0.001)


def test_layer_info_names_only_and_no_bindings(tmp_path):
    path = tmp_path / "names.json"
    path.write_text(json.dumps({"Layers": ["Conv_0 + Relu_1", "MaxPool_2"]}))
    layers = parse_layer_info(path)
    assert [l["name"] for l in layers] == ["Conv_0 + Relu_1", "MaxPool_2"]
    assert layers[0]["layer_type"] is None and layers[0]["tile"] is None and not layers[0]["detailed"]


def test_layer_info_unknown_type_is_kept(tmp_path):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"Layers": [{"Name": "x", "LayerType": "FancyNewKernel"}], "Bindings": []}))
    (layer,) = parse_layer_info(path)
    assert layer["layer_type"] == "FancyNewKernel" and layer["unknown_type"]


TRT85_LOG = """\
[11/20/2022-10:00:00] [I] === Device Information ===
[11/20/2022-10:00:00] [I] Selected Device: NVIDIA A100 80GB PCIe
[11/20/2022-10:00:00] [I] Compute Capability: 8.0
[11/20/2022-10:00:00] [I] SMs: 108
[11/20/2022-10:00:00] [I] Compute Clock Rate: 1.41 GHz
[11/20/2022-10:00:00] [I]
[11/20/2022-10:00:00] [I] TensorRT version: 8.5.1
[11/20/2022-10:00:05] [I] === Performance summary ===
[11/20/2022-10:00:05] [I] Throughput: 1155.36 qps
[11/20/2022-10:00:05] [I] Latency: min = 0.856049 ms, max = 0.872559 ms, mean = 0.86277 ms, median = 0.862183 ms, percentile(90%) = 0.8667 ms, percentile(95%) = 0.868 ms, percentile(99%) = 0.871338 ms
[11/20/2022-10:00:05] [I] Enqueue Time: min = 0.00463867 ms, max = 0.0183105 ms, mean = 0.00524884 ms, median = 0.00524902 ms, percentile(90%) = 0.0055 ms, percentile(95%) = 0.0057 ms, percentile(99%) = 0.00585938 ms
[11/20/2022-10:00:05] [I] H2D Latency: min = 0 ms, max = 0 ms, mean = 0 ms, median = 0 ms, percentile(90%) = 0 ms, percentile(95%) = 0 ms, percentile(99%) = 0 ms
[11/20/2022-10:00:05] [I] GPU Compute Time: min = 0.856049 ms, max = 0.872559 ms, mean = 0.86277 ms, median = 0.862183 ms, percentile(90%) = 0.8667 ms, percentile(95%) = 0.868 ms, percentile(99%) = 0.871338 ms
[11/20/2022-10:00:05] [I] D2H Latency: min = 0 ms, max = 0 ms, mean = 0 ms, median = 0 ms, percentile(90%) = 0 ms, percentile(95%) = 0 ms, percentile(99%) = 0 ms
[11/20/2022-10:00:05] [I] Total Host Walltime: 3.00166 s
[11/20/2022-10:00:05] [I] Total GPU Compute Time: 2.99208 s
"""

TRT7_LOG = """\
[09/10/2020-11:34:15] [I] Host Latency
[09/10/2020-11:34:15] [I] min: 3.47241 ms (end to end 3.48169 ms)
[09/10/2020-11:34:15] [I] max: 6.60596 ms (end to end 6.61499 ms)
[09/10/2020-11:34:15] [I] mean: 3.69107 ms (end to end 3.70191 ms)
[09/10/2020-11:34:15] [I] median: 3.67761 ms (end to end 3.68701 ms)
[09/10/2020-11:34:15] [I] percentile: 4.25342 ms at 99% (end to end 4.27966 ms at 99%)
[09/10/2020-11:34:15] [I] throughput: 0 qps
[09/10/2020-11:34:15] [I] walltime: 3.01063 s
[09/10/2020-11:34:15] [I] Enqueue Time
[09/10/2020-11:34:15] [I] min: 0.829102 ms
[09/10/2020-11:34:15] [I] median: 0.872437 ms
[09/10/2020-11:34:15] [I] GPU Compute
[09/10/2020-11:34:15] [I] min: 3.45642 ms
[09/10/2020-11:34:15] [I] max: 6.58887 ms
[09/10/2020-11:34:15] [I] mean: 3.67332 ms
[09/10/2020-11:34:15] [I] median: 3.65961 ms
[09/10/2020-11:34:15] [I] percentile: 4.23602 ms at 99%
[09/10/2020-11:34:15] [I] total compute time: 2.98707 s
"""


def test_trtexec_log_85():
    log = parse_trtexec_log(TRT85_LOG)
    assert log["gpu_compute_ms"]["median"] == pytest.approx(0.862183)
    assert log["gpu_compute_ms"]["p95"] == pytest.approx(0.868)
    assert log["throughput_qps"] == pytest.approx(1155.36)
    assert log["h2d_ms"]["median"] == 0.0 and log["total_gpu_compute_s"] == pytest.approx(2.99208)
    assert log["device"]["Selected Device"] == "NVIDIA A100 80GB PCIe" and log["device"]["SMs"] == 108
    assert log["trt_version"] == "8.5.1"


def test_trtexec_log_7x(tmp_path):
    path = tmp_path / "trt7.log"
    path.write_text(TRT7_LOG)
    log = parse_trtexec_log(path)
    assert log["gpu_compute_ms"]["median"] == pytest.approx(3.65961)
    assert log["gpu_compute_ms"]["p99"] == pytest.approx(4.23602)
    assert log["latency_ms"]["median"] == pytest.approx(3.67761)
    assert log["end_to_end_ms"]["p99"] == pytest.approx(4.27966)
    assert log["enqueue_ms"] == {"min": 0.829102, "median": 0.872437}


def test_trtexec_log_without_summary():
    with pytest.raises(ModelError):
        parse_trtexec_log("[I] nothing here\n[I] still nothing\n")


def test_trex_metadata_5_and_7_values():
    five = parse_metadata(FP16.with_name(FP16.name + ".profile.metadata.json"))
    assert five["gpu_compute_ms"]["median"] == pytest.approx(0.862183)
    assert set(five["gpu_compute_ms"]) == {"min", "max", "mean", "median", "p99"}
    seven = parse_metadata(DATA / "trex" / "a100-mobilenet-qat" / "mobilenet.qat.onnx.engine.profile.metadata.json")
    assert seven["gpu_compute_ms"]["p90"] == pytest.approx(0.352234)
    assert seven["device"]["Selected Device"] == "NVIDIA TITAN RTX"


@pytest.mark.parametrize("text", ["[{\"count\": 1}, {\"name\": ", "{\"name\": \"x\", \"averageMs\": 1}", ""])
def test_malformed_profile_is_one_line_model_error(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ModelError) as err:
        parse_profile(path)
    assert "\n" not in str(err.value) and "bad.json" in str(err.value)


def test_missing_file_is_model_error(tmp_path):
    with pytest.raises(ModelError, match="nope.json"):
        parse_profile(tmp_path / "nope.json")


def test_tolerant_records(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps([
        {"name": "Conv_0 + Relu_1", "timeMs": 2.0, "averageMs": 0.2, "percentage": 50, "newField": 7},
        {"name": "{ForeignNode[Conv_1...Relu_9]}", "timeMs": 2.0, "averageMs": 0.2, "medianMs": 0.19},
    ]))
    prof = parse_profile(path)
    assert prof.count is None and len(prof.rows) == 2
    assert prof.rows[0].extra["fields"] == {"newField": 7}
    assert prof.rows[1].kind == "dla_subgraph" and prof.rows[1].layers == ["Conv_1", "Relu_9"]
    assert prof.rows[1].extra["range"] is True
    text = " ".join(prof.warnings)
    assert "newField" in text and "count" in text
    # a record with no time, or one that is not an object, is an error (tests/test_input_validation.py)


def test_name_grammar():
    assert split_layer_names("Conv_0 + PWN(PWN(/m/act/Sigmoid), /m/act/Mul)")[0] == \
        ["Conv_0", "/m/act/Sigmoid", "/m/act/Mul"]
    assert split_layer_names("a + b || c + d input reformatter 0")[0] == ["a", "b", "c", "d"]
    assert split_layer_names("conv1/relu_7x7 copy finish")[0] == ["conv1/relu_7x7"]
    assert classify("Reformatting CopyNode for Input Tensor 0 to {ForeignNode[a...b]}", None, 0.04) == "reformat"
    assert classify("Reformatting CopyNode for Output Tensor 0 to Conv_2", None, 0.0) == "noop"
    assert classify("Gemm_48", "CaskConvolution", 0.01) == "fc"
    assert classify("pool1/3x3_s2") == "pool" and classify("inception_3a/pool_proj") == "conv"


def test_seed_breakdown_step_names():
    """TRT 5 DLA step names of the seed-000 thread (seeds/xavier_dla_conv_breakdown.csv)."""
    lines = [l for l in (DATA / "seeds" / "xavier_dla_conv_breakdown.csv").read_text().splitlines()
             if l and not l.startswith("#")][1:]
    kinds = {l.split(",")[0]: classify(l.split(",")[0], None, float(l.split(",")[2])) for l in lines}
    assert kinds["{conv1}"] == "dla_subgraph"
    assert kinds["input to nvm"] == kinds["conv1 from nvm"] == kinds["conv1 copy finish"] == "reformat"


def test_corrected_rows_scale_to_gpu_compute():
    prof = parse_profile(FP16.with_name(FP16.name + ".profile.json"))
    rows = corrected_rows(prof, gpu_compute_ms=0.862183)
    assert sum(r.time_ms for r in rows) == pytest.approx(0.862183)
    assert all(r.time_ms == 0 for r, raw in zip(rows, prof.rows) if raw.time_ms == 0)
    assert rows[0].extra["raw_ms"] == prof.rows[0].time_ms
    shifted = corrected_rows(prof, per_layer_overhead_ms=0.006)
    nonzero = sum(1 for r in prof.rows if r.time_ms > 0)
    assert sum(r.time_ms for r in shifted) == pytest.approx(prof.total_ms - 0.006 * nonzero, abs=1e-6)
    assert min(r.time_ms for r in corrected_rows(prof, per_layer_overhead_ms=1.0)) == 0.0


def test_profile_summary_shares_and_table():
    summary = profile_summary(HAX / "googlenet_dla_mark_at_-1.profile", top=3)
    assert sum(k["share"] for k in summary["by_kind"].values()) == pytest.approx(1.0)
    assert sum(k["count"] for k in summary["by_kind"].values()) == len(summary["layers"]) == 6
    assert [d["time_ms"] for d in summary["largest"]] == sorted((d["time_ms"] for d in summary["largest"]),
                                                                reverse=True)
    assert len(summary["largest"]) == 3
    dla = summary["dla_time_attribution"]
    assert dla["subgraphs"][0]["dla_ms"] == pytest.approx(3.33, abs=0.01) and "output reformatter" in dla["note"]
    json.dumps(summary)
    table = render_profile_table(summary)
    assert "{conv1/7x7_s2 ... loss3/classifier}" in table and "(140 layers)" in table
    assert all(len(line) < 140 for line in table.splitlines() if not line.startswith("  On TensorRT"))
    gpu = profile_summary(HAX / "googlenet_gpu_mark_at_-1.profile")
    assert gpu["dla_time_attribution"] is None
    assert sum(k["share"] for k in gpu["by_kind"].values()) == pytest.approx(1.0)


def test_profile_summary_accepts_parsed_profile():
    prof = parse_profile(HAX / "googlenet_gpu_mark_at_-1.profile")
    assert isinstance(prof, MeasuredProfile)
    assert profile_summary(prof)["total_ms"] == prof.total_ms
