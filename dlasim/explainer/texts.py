"""The cause texts: one table, one entry per code of docs/DESIGN.md "Cause vocabulary": what the code stands for
(explain, compare), why it does not scale with the naive expectation, and what the predicted time under it is
when it deviates from a measurement (explain --measured); and the number formatting the explain layer's
sentences share."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CauseText:
    what: str          # what the code stands for ("" where explain and compare never report it)
    why: str           # why it does not scale with the naive expectation ("" if there is nothing to add)
    measured: str      # what the predicted time is under this code, for a deviation ("" if never reported)


CAUSES: dict[str, CauseText] = {
    "ok": CauseText(
        "",
        "",
        "within 20% of the measurement"),
    "unmatched": CauseText(
        "",
        "",
        "no counterpart on the other side"),
    "reformat": CauseText(
        "reformat copies (format or precision changes at engine and subgraph boundaries)",
        "copies move bytes, not MACs",
        "format / precision copies"),
    "transition": CauseText(
        "GPU<->DLA hand-overs",
        "hand-overs are copies plus a synchronisation",
        "GPU<->DLA hand-over and synchronisation"),
    "overhead": CauseText(
        "fixed launch and per-layer costs",
        "fixed costs do not shrink",
        "fixed per-kernel / per-launch cost (kernel floor, launch, DLA programming)"),
    "fallback": CauseText(
        "layers that fall back to the GPU",
        "the GPU runs them, not the accelerator the expectation assumed",
        "layer runs on the GPU because the DLA cannot"),
    "memory_bound": CauseText(
        "DRAM waits of memory-bound layers (beyond their compute)",
        "bytes, not MACs, set their time",
        "bytes over the effective bandwidth set the predicted time"),
    "compute_bound": CauseText(
        "losses to kernel efficiency below the peak MAC rate",
        "kernels do not reach peak",
        "MACs over the effective peak set the predicted time"),
    "cbuf_refetch": CauseText(
        "CBUF refetches (weights or inputs read again because they do not fit the convolution buffer)",
        "the re-reads are bytes, not MACs",
        "weights or activations re-read because they do not fit the convolution buffer"),
    "channel_padding": CauseText(
        "MACs wasted on channel padding to the MAC atom or GEMM tile",
        "the padded MACs cost time too",
        "channels rounded up to the MAC atom / tile waste MACs"),
    "tile_quantization": CauseText(
        "partly empty GEMM tiles",
        "empty tile slots cost time too",
        "GPU CTA tiles partly empty"),
    "wave_quantization": CauseText(
        "partly empty waves of CTAs",
        "the last wave runs partly idle",
        "GPU waves partly empty"),
    "sparse_ineligible": CauseText(
        "layers not eligible for 2:4 sparse kernels",
        "they stay dense",
        ""),
    "sparse_too_small": CauseText(
        "layers where the dense kernel is as fast as the 2:4 sparse one",
        "TensorRT keeps the faster dense kernel",
        ""),
    "precision_unsupported": CauseText(
        "layers that run FP16 though INT8 was asked",
        "those layers get no INT8 speed-up",
        ""),
    "other": CauseText(
        "smaller causes together",
        "",
        ""),
}


def deviation_text(code: str) -> str:
    """The explain --measured text of a code (the code itself if it has none)."""
    return CAUSES[code].measured if code in CAUSES and CAUSES[code].measured else code


def si(n: float) -> str:
    """3 significant digits with a k/M/G suffix."""
    return next((f"{n / v:.3g}{u}" for u, v in (("G", 1e9), ("M", 1e6), ("k", 1e3)) if abs(n) >= v), f"{n:.3g}")


def listed(names: list[str], n: int = 3) -> str:
    """'a, b, c and 4 more'."""
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")
