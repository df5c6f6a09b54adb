"""`dlasim profile`: a measured profile summarised as JSON, and its terminal table."""
from __future__ import annotations

from .layer_info import join_layer_info, parse_layer_info
from .names import abbreviate_name
from .profile import gpu_compute_median, parse_profile
from .records import DLA_TIME_NOTE, MeasuredLayer, MeasuredProfile

def _row_dict(row: MeasuredLayer, total: float) -> dict:
    d = {"name": row.name, "time_ms": row.time_ms, "kind": row.kind,
         "share": row.time_ms / total if total > 0 else 0.0, "layers": row.layers}
    if row.median_ms is not None:
        d["median_ms"] = row.median_ms
    for key in ("layer_type", "tactic", "tile", "has_sparse_weights", "origin", "carries_dla_time"):
        if key in row.extra:
            d[key] = row.extra[key]
    return d


def _by_kind(rows: list[MeasuredLayer], total: float) -> dict:
    acc: dict[str, dict] = {}
    for r in rows:
        k = acc.setdefault(r.kind, {"time_ms": 0.0, "share": 0.0, "count": 0})
        k["time_ms"] += r.time_ms
        k["count"] += 1
    for k in acc.values():
        k["share"] = k["time_ms"] / total if total > 0 else 0.0
    return dict(sorted(acc.items(), key=lambda kv: -kv[1]["time_ms"]))


def _dla_attribution(rows: list[MeasuredLayer]) -> dict | None:
    subgraphs = []
    for r in rows:
        if r.kind != "dla_subgraph":
            continue
        carrier = next((c for c in rows if c.name == r.extra.get("dla_time_row")), None)
        foreign = bool(r.extra.get("foreign_node"))
        subgraphs.append({
            "name": abbreviate_name(r.name), "layer_count": None if foreign else len(r.layers),
            "row_ms": r.time_ms, "carrier": carrier.name if carrier else r.name,
            "dla_ms": carrier.time_ms if carrier else r.time_ms})
    if not subgraphs:
        return None
    return {"note": DLA_TIME_NOTE, "subgraphs": subgraphs,
            "dla_ms": sum(s["dla_ms"] for s in subgraphs)}


def profile_summary(profile_path, layer_info_path=None, top: int = 10) -> dict:
    """JSON for `dlasim profile FILE [--layer-info FILE]` (docs/DESIGN.md "JSON contract").

    Keys: source, count, total_ms, layers (every row in order: name, time_ms, kind, share, layers, and
    layer_type/tactic/tile/has_sparse_weights when layer info is joined), by_kind ({kind: time_ms,
    share, count}), largest (top rows by time), dla_time_attribution (None without DLA subgraphs),
    warnings; plus gpu_compute_median_ms and profiling_overhead_ms_per_layer when a summary is known.
    """
    profile = profile_path if isinstance(profile_path, MeasuredProfile) else parse_profile(profile_path)
    if layer_info_path is not None:
        profile = join_layer_info(profile, parse_layer_info(layer_info_path))
    total = profile.total_ms
    layers = [_row_dict(r, total) for r in profile.rows]
    largest = sorted(layers, key=lambda d: -d["time_ms"])[:max(0, top)]
    out = {"source": profile.source, "count": profile.count, "total_ms": total, "layers": layers,
           "by_kind": _by_kind(profile.rows, total), "largest": largest,
           "dla_time_attribution": _dla_attribution(profile.rows), "warnings": list(profile.warnings)}
    median = gpu_compute_median(profile.summary)
    if median is not None:
        nonzero = sum(1 for r in profile.rows if r.time_ms > 0)
        out["gpu_compute_median_ms"] = median
        out["profiling_overhead_ms_per_layer"] = (total - median) / nonzero if nonzero else None
    return out


def render_profile_table(summary: dict) -> str:
    """A short terminal view of profile_summary(): header, time by kind, largest layers, notes."""
    count = summary.get("count")
    lines = [f"trtexec profile: {summary['source']}",
             f"runs: {count if count is not None else 'unknown'}   rows: {len(summary['layers'])}   "
             f"total (sum of per-layer averages): {summary['total_ms']:.4f} ms"]
    if summary.get("gpu_compute_median_ms") is not None:
        lines.append(f"GPU compute median without per-layer profiling: {summary['gpu_compute_median_ms']:.4f} ms")
    lines += ["", "time by kind:"]
    for kind, k in summary["by_kind"].items():
        lines.append(f"  {kind:<13}{k['time_ms']:>10.4f} ms {100 * k['share']:>6.1f}%  ({k['count']} rows)")
    lines += ["", f"largest {len(summary['largest'])} rows:",
              f"  {'time_ms':>9} {'share':>6}  {'kind':<13}name"]
    for d in summary["largest"]:
        mark = " *" if d.get("carries_dla_time") else ""
        lines.append(f"  {d['time_ms']:>9.4f} {100 * d['share']:>5.1f}%  {d['kind']:<13}"
                     f"{abbreviate_name(d['name'])}{mark}")
    dla = summary.get("dla_time_attribution")
    if dla:
        lines += ["", f"DLA time: {dla['dla_ms']:.4f} ms (* = row carrying a DLA subgraph's time)",
                  "  " + dla["note"]]
    for w in summary.get("warnings", []):
        lines.append(f"warning: {w}")
    return "\n".join(lines)
