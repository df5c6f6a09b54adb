"""The `onnx` package, imported on first use (so the CLI starts fast), for the ONNX importer and the exporter
alike: neither imports the other for it (importers/onnx.py reads a Graph, export.py writes one)."""
from __future__ import annotations

from .errors import ModelError


def onnx_module(subject: str, doing: str):
    """The `onnx` package (a core dependency, imported lazily); a one-line ModelError naming `subject` when it
    cannot be imported (not installed, or broken: protobuf mismatches raise other errors than ImportError)."""
    try:
        import onnx
    except Exception as e:
        raise ModelError(f"{subject}: {doing} ONNX needs the 'onnx' package, which cannot be imported "
                         f"({one_line(e)}); install it: pip install 'onnx>=1.14'") from None
    return onnx


def one_line(e: Exception) -> str:
    """An exception's message on one line, at most 200 characters."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) < 200 else text[:197] + "..."
