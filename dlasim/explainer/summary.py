"""Ranked cause entries of explain and compare, and the examples that name the steps carrying a cause."""
from __future__ import annotations

from collections import Counter

from ..report import StepRow
from .classify import OUTCOME_CODES, SPARSE_CODES, channels, outcome
from .expectation import Expectation
from .gap import step_parts
from .texts import listed


def _examples(rows: list[StepRow], ctx: Expectation, code: str, n: int = 3, fallback=()) -> str:
    """'; N step(s), e.g. a (why), b' naming the steps that carry most of `code` (and why, for whole-step
    causes, the most common reasons). `fallback`: the estimate's Fallback records, whose reasons say why a
    fallback step's layer is on the GPU (a step's own reason may add why it runs the precision it runs)."""
    if code in ("reformat", "transition"):
        k = sum(r.kind == code for r in rows)
        return f"; {k} step(s)" if k else ""
    if code in OUTCOME_CODES:
        hits = sorted((r for r in rows if outcome(r, ctx) == code), key=lambda r: -r.time_ms)
    else:
        parts = [(step_parts(r, ctx).get(code, 0.0), r) for r in rows]
        hits = [r for ms, r in sorted(parts, key=lambda x: -x[0]) if ms > 1e-9]
    if not hits:
        return ""
    shaped = code in SPARSE_CODES + ("tile_quantization", "wave_quantization", "channel_padding")
    chans = [channels(r) if shaped else None for r in hits]
    names = [(r.layers[0] if r.layers else r.name) + (f" ({ck[0]}->{ck[1]} ch)" if ck else "")
             for r, ck in zip(hits, chans)]
    text = f"; {len(hits)} step(s), e.g. {listed(names, n)}"
    if code in SPARSE_CODES:
        by_ch = Counter(f"{c}->{k}" for c, k in filter(None, chans))
        text += "; channels C->K: " + ", ".join(f"{ck} ({k})" for ck, k in by_ch.most_common(8))
    if code in ("fallback", "precision_unsupported") + SPARSE_CODES:
        placed = {f.name: f.reason for f in fallback} if code == "fallback" else {}
        why = Counter(r.parts.sparse_reason if code in SPARSE_CODES
                      else placed.get(r.layers[0] if r.layers else r.name, r.reason) for r in hits)
        told = [f"{w} ({k})" for w, k in why.most_common(4) if w][:3]
        text += f" ({'; '.join(told)})" if told else ""
    return text + (_wide_io(rows, ctx, n) if code == "precision_unsupported" else "")


def _wide_io(rows: list[StepRow], ctx: Expectation, n: int = 3) -> str:
    """INT8 layers that write (and read their fused residual in) FP16/FP32 because no Q follows them
    (passes/qdq.py rule 3): their extra DRAM time, the part of precision_unsupported they carry."""
    hits = [(step_parts(r, ctx).get("precision_unsupported", 0.0), r) for r in rows
            if r.kind == "layer" and r.parts.float_io_s and outcome(r, ctx) is None]
    hits = sorted([h for h in hits if h[0] > 1e-9], key=lambda h: -h[0])
    if not hits:
        return ""
    ms = sum(h[0] for h in hits)
    why = "; ".join(f"{w} ({k})" for w, k in Counter(r.reason for _, r in hits).most_common(2))
    return (f"; {len(hits)} INT8 layer(s) write wider outputs / read wider residuals ({why}): {ms:.3f} ms of "
            f"DRAM time, e.g. {listed([r.layers[0] if r.layers else r.name for _, r in hits], n)}")


def _cause(code: str, ms: float, gap: float, text: str) -> dict:
    return {"code": code, "ms": ms, "share": ms / gap if abs(gap) > 1e-12 else 0.0, "text": text}


def _ranked(causes: list[dict], gap: float, minor: float, unexplained: float = 0.0) -> list[dict]:
    """Largest first; entries under `minor` x |gap| and the unexplained rest (the "other" entry given)
    fold into one "other" entry (last) so the list still sums."""
    keep = [c for c in causes if abs(c["ms"]) >= minor * abs(gap) and abs(c["ms"]) > 1e-9 and c["code"] != "other"]
    rest = sum(c["ms"] for c in causes) - sum(c["ms"] for c in keep)
    if abs(rest) > 1e-9:
        keep.append(_cause("other", rest, gap, f"smaller causes together {rest - unexplained:.4f} ms, left "
                                               f"unexplained by the mechanisms {unexplained:.4f} ms"))
    return sorted(keep, key=lambda c: (c["code"] == "other", -c["ms"]))


def _advice_lines(advice: list[dict]) -> list[str]:
    if not advice:
        return []
    return ["what would recover it (re-estimated):"] + [
        f"  - {a['text']}  [-{a['gain_ms']:.3f} ms, -{a['gain_pct']:.0f}%]" for a in advice]

