"""The cause texts: one entry per code of docs/DESIGN.md "Cause vocabulary" (what the code stands for, why it
does not scale with the expectation, and what it means for a deviation from a measurement), and the number
formatting the explain layer's sentences share."""
from __future__ import annotations

WHAT = {
    "reformat": "reformat copies (format or precision changes at engine and subgraph boundaries)",
    "transition": "GPU<->DLA hand-overs",
    "overhead": "fixed launch and per-layer costs",
    "fallback": "layers that fall back to the GPU",
    "memory_bound": "DRAM waits of memory-bound layers (beyond their compute)",
    "compute_bound": "losses to kernel efficiency below the peak MAC rate",
    "cbuf_refetch": "CBUF refetches (weights or inputs read again because they do not fit the convolution buffer)",
    "channel_padding": "MACs wasted on channel padding to the MAC atom or GEMM tile",
    "tile_quantization": "partly empty GEMM tiles",
    "wave_quantization": "partly empty waves of CTAs",
    "sparse_ineligible": "layers not eligible for 2:4 sparse kernels",
    "sparse_too_small": "layers where the dense kernel is as fast as the 2:4 sparse one",
    "precision_unsupported": "layers that run FP16 though INT8 was asked",
    "other": "smaller causes together",
}
WHY = {
    "reformat": "copies move bytes, not MACs",
    "transition": "hand-overs are copies plus a synchronisation",
    "overhead": "fixed costs do not shrink",
    "fallback": "the GPU runs them, not the accelerator the expectation assumed",
    "memory_bound": "bytes, not MACs, set their time",
    "compute_bound": "kernels do not reach peak",
    "cbuf_refetch": "the re-reads are bytes, not MACs",
    "channel_padding": "the padded MACs cost time too",
    "tile_quantization": "empty tile slots cost time too",
    "wave_quantization": "the last wave runs partly idle",
    "sparse_ineligible": "they stay dense",
    "sparse_too_small": "TensorRT keeps the faster dense kernel",
    "precision_unsupported": "those layers get no INT8 speed-up",
    "other": "",
}


CAUSE_TEXT = {
    "ok": "within 20% of the measurement",
    "unmatched": "no counterpart on the other side",
    "overhead": "fixed per-kernel / per-launch cost (kernel floor, launch, DLA programming)",
    "memory_bound": "bytes over the effective bandwidth set the predicted time",
    "compute_bound": "MACs over the effective peak set the predicted time",
    "channel_padding": "channels rounded up to the MAC atom / tile waste MACs",
    "cbuf_refetch": "weights or activations re-read because they do not fit the convolution buffer",
    "tile_quantization": "GPU CTA tiles partly empty",
    "wave_quantization": "GPU waves partly empty",
    "reformat": "format / precision copies",
    "transition": "GPU<->DLA hand-over and synchronisation",
    "fallback": "layer runs on the GPU because the DLA cannot",
}



def si(n: float) -> str:
    """3 significant digits with a k/M/G suffix."""
    return next((f"{n / v:.3g}{u}" for u, v in (("G", 1e9), ("M", 1e6), ("k", 1e3)) if abs(n) >= v), f"{n:.3g}")


def listed(names: list[str], n: int = 3) -> str:
    """'a, b, c and 4 more'."""
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")

