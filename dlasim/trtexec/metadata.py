"""trex metadata files (`*.profile.metadata.json` and friends) -> the parse_trtexec_log keys (gpu_tensorrt.md s4.5)."""
from __future__ import annotations

from pathlib import Path

from ..errors import ModelError
from .records import load_json

_SUMMARY_STATS = {7: ("min", "max", "mean", "median", "p90", "p95", "p99"),
                  5: ("min", "max", "mean", "median", "p99")}
_METADATA_KEYS = {"Latency": "latency_ms", "Enqueue Time": "enqueue_ms", "H2D Latency": "h2d_ms",
                  "GPU Compute Time": "gpu_compute_ms", "D2H Latency": "d2h_ms",
                  "End-to-End Host Latency": "end_to_end_ms", "Throughput": "throughput_qps",
                  "Total Host Walltime": "total_host_walltime_s",
                  "Total GPU Compute Time": "total_gpu_compute_s"}


def _stat_list(values: list) -> dict:
    names = _SUMMARY_STATS.get(len(values))
    if names is None:
        return {"values": values}
    return dict(zip(names, (float(v) for v in values)))


def parse_metadata(path) -> dict:
    """Read a trex metadata file (gpu_tensorrt.md s4.5) into the parse_trtexec_log keys.

    `*.profile.metadata.json`: performance_summary lists [min,max,mean,median,p90,p95,p99] (older files
    5 values: min,max,mean,median,p99), inference_options, device_information (-> "device").
    `*.build.metadata.json` (model/build options) and `*.engine.metadata.json` (a list of device
    attribute dicts, -> "device_attributes") are returned as read.
    """
    p = Path(path)
    data = load_json(p)
    if isinstance(data, list):
        return {"device_attributes": data}
    if not isinstance(data, dict):
        raise ModelError(f"{p}: expected a JSON object of trex metadata, got {type(data).__name__}")
    out: dict = {}
    summary = data.get("performance_summary")
    if isinstance(summary, dict):
        for key, value in summary.items():
            target = _METADATA_KEYS.get(key, key)
            out[target] = _stat_list(value) if isinstance(value, list) else value
    if "device_information" in data:
        out["device"] = data["device_information"]
    for key in ("inference_options", "model_options", "build_options"):
        if key in data:
            out[key] = data[key]
    return out
