"""The console "Performance summary" of trtexec TRT 7.x / 8.0 / 8.4 / 8.5+ (gpu_tensorrt.md s4.5)."""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import ModelError

_LOG_PREFIX = re.compile(r"^\s*(?:\[\d{2}/\d{2}/\d{4}-\d{2}:\d{2}:\d{2}\]\s*)?(?:\[[A-Z]\]\s*)?(?:\[TRT\]\s*)?")
_NUM = r"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_METRICS_8X = {"Latency": "latency_ms", "End-to-End Host Latency": "end_to_end_ms",
               "Enqueue Time": "enqueue_ms", "H2D Latency": "h2d_ms", "GPU Compute Time": "gpu_compute_ms",
               "D2H Latency": "d2h_ms"}
_BLOCKS_7X = {"Host Latency": "latency_ms", "Enqueue Time": "enqueue_ms", "GPU Compute": "gpu_compute_ms"}
_STAT_8X = re.compile(rf"(min|max|mean|median|percentile\(([\d.]+)%\))\s*=\s*{_NUM}\s*ms")
_STAT_7X = re.compile(rf"^(min|max|mean|median):\s*{_NUM}\s*ms(?:\s*\(end to end {_NUM}\s*ms\))?")
_PCT_7X = re.compile(rf"^percentile:\s*{_NUM}\s*ms at ([\d.]+)%(?:\s*\(end to end {_NUM}\s*ms at [\d.]+%\))?")
_THROUGHPUT_8X = re.compile(rf"Throughput:\s*{_NUM}\s*qps")
_TOTAL_8X = re.compile(rf"Total (Host Walltime|GPU Compute Time):\s*{_NUM}\s*s")
_THROUGHPUT_7X = re.compile(rf"throughput:\s*{_NUM}\s*qps")
_TOTAL_7X = re.compile(rf"(walltime|total compute time):\s*{_NUM}\s*s")


def _pkey(pct: str) -> str:
    return "p" + (pct[:-2] if pct.endswith(".0") else pct)


def _is_file(text: str) -> bool:
    try:
        return "\n" not in text and Path(text).is_file()
    except (OSError, ValueError):                 # e.g. a one-line log longer than a file name may be
        return False


def _log_lines(text_or_path) -> tuple[list[str], str]:
    """Lines of a log given as text, or as a path (Path, or a str naming an existing file)."""
    if isinstance(text_or_path, Path) or _is_file(str(text_or_path)):
        from ..safeio import read_bytes
        p = Path(text_or_path)
        return read_bytes(p, "trtexec log").decode("utf-8", errors="replace").splitlines(), str(p)
    return str(text_or_path).splitlines(), "<text>"


def _device_value(value: str):
    """Device value: "8.0" -> 8.0, "1.41 GHz" -> 1.41, "5120 bits (ECC enabled)" -> 5120.0 (as trex stores them)."""
    m = re.match(rf"^{_NUM}(?:\s*(?:GHz|bits)\b.*)?$", value)
    return float(m.group(1)) if m else value


def parse_trtexec_log(text_or_path) -> dict:
    """Performance summary (and device block) of a trtexec console log (gpu_tensorrt.md s4.5).

    TRT 8.0/8.4 (one percentile), 8.5+ (a percentile list): `GPU Compute Time: min = a ms, ...`;
    TRT 7.x: "Host Latency" / "Enqueue Time" / "GPU Compute" blocks of `min: a ms` lines and
    `percentile: x ms at 99%`. Lines may carry the `[MM/DD/YYYY-HH:MM:SS] [I] ` prefix. Returns the
    keys found among throughput_qps, latency_ms, end_to_end_ms, enqueue_ms, h2d_ms, gpu_compute_ms,
    d2h_ms (dicts of min/max/mean/median/pNN), total_host_walltime_s, total_gpu_compute_s, device,
    trt_version, format ("7.x" or "8.x"). A log with none of these raises ModelError.
    """
    lines, source = _log_lines(text_or_path)
    out: dict = {}
    block = None                      # current TRT 7 block key, or "device"
    for raw in lines:
        line = _LOG_PREFIX.sub("", raw).strip()
        if line.startswith("==="):
            block = "device" if "Device Information" in line else None
            continue
        m = re.match(r"TensorRT version:\s*([\w.+-]+)", line)
        if m:
            out["trt_version"] = m.group(1)
            continue
        key, _, rest = line.partition(": ")
        if key in _METRICS_8X and "=" in rest:
            out[_METRICS_8X[key]] = {(_pkey(m.group(2)) if m.group(2) else m.group(1)): float(m.group(3))
                                     for m in _STAT_8X.finditer(rest)}
            out["format"] = "8.x"
            continue
        if _throughput_or_total(line, out, _THROUGHPUT_8X, _TOTAL_8X, "Host Walltime"):
            continue
        if line in _BLOCKS_7X:
            block = _BLOCKS_7X[line]
            out.setdefault(block, {})
            out["format"] = "7.x"
            continue
        if block == "device":
            if rest and re.fullmatch(r"[A-Z][A-Za-z0-9 /-]*", key) and key != "Note":
                out.setdefault("device", {})[key] = _device_value(rest.strip())
                continue
            block = None              # the device block ends at its first line of another shape
        if block:
            _parse_7x_line(line, block, out)
    if not any(k in out for k in ("throughput_qps", "latency_ms", "gpu_compute_ms", "device")):
        raise ModelError(f"{source}: no trtexec performance summary or device information found")
    return out


def _parse_7x_line(line: str, block: str, out: dict) -> None:
    """One line inside a TRT 7.x "Host Latency" / "Enqueue Time" / "GPU Compute" block."""
    m = _STAT_7X.match(line)
    if m:
        out[block][m.group(1)] = float(m.group(2))
        if m.group(3) is not None:
            out.setdefault("end_to_end_ms", {})[m.group(1)] = float(m.group(3))
        return
    m = _PCT_7X.match(line)
    if m:
        out[block][_pkey(m.group(2))] = float(m.group(1))
        if m.group(3) is not None:
            out.setdefault("end_to_end_ms", {})[_pkey(m.group(2))] = float(m.group(3))
        return
    _throughput_or_total(line, out, _THROUGHPUT_7X, _TOTAL_7X, "walltime")


def _throughput_or_total(line: str, out: dict, throughput, total, host: str) -> bool:
    """A `throughput: x qps` or `<walltime | GPU compute total>: x s` line (spelled per TRT version) into out."""
    m = throughput.match(line)
    if m:
        out["throughput_qps"] = float(m.group(1))
        return True
    m = total.match(line)
    if m:
        out["total_host_walltime_s" if m.group(1) == host else "total_gpu_compute_s"] = float(m.group(2))
        return True
    return False
