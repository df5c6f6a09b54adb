"""Writing fitted values into a spec file: the source TOML text with `key = value` patched in the right [table]
and the field's line in the matching [table.sources], so comments and formatting survive; written atomically and
checked by loading it.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import SpecError
from ..hardware import hardware
from ..safeio import write_text

def _toml_float(v: float) -> str:
    text = f"{float(v):.4g}"
    if not any(c in text for c in ".eE") and text not in ("inf", "-inf", "nan"):
        text += ".0"
    return text


def _section_range(lines: list[str], table: str) -> tuple[int, int] | None:
    """(first line after the header, end) of [table] in `lines`, or None."""
    head = re.compile(r"^\s*\[\s*" + re.escape(table) + r"\s*\]\s*(#.*)?$")
    any_head = re.compile(r"^\s*\[")
    start = next((i for i, ln in enumerate(lines) if head.match(ln)), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if any_head.match(lines[i])), len(lines))
    return start + 1, end


def _set_key(lines: list[str], table: str, key: str, value_text: str) -> list[str]:
    rng = _section_range(lines, table)
    if rng is None:
        # a new table at the end of the file
        return lines + ["", f"[{table}]", f"{key} = {value_text}"]
    a, b = rng
    pat = re.compile(r"^(\s*" + re.escape(key) + r"\s*=\s*)(\"(?:[^\"\\]|\\.)*\"|[^#]*?)(\s*(#.*)?)$")
    for i in range(a, b):
        m = pat.match(lines[i])
        if m:
            lines[i] = f"{m.group(1)}{value_text}{m.group(3)}"
            return lines
    last = a - 1
    for i in range(a, b):
        if lines[i].strip():
            last = i
    return lines[:last + 1] + [f"{key} = {value_text}"] + lines[last + 1:]


def _set_source(lines: list[str], table: str, key: str, text: str) -> list[str]:
    src = f"{table}.sources"
    quoted = json.dumps(text, ensure_ascii=False)
    if _section_range(lines, src) is None:
        rng = _section_range(lines, table)
        if rng is None:
            return lines + ["", f"[{src}]", f"{key} = {quoted}"]
        a, b = rng
        last = a - 1
        for i in range(a, b):
            if lines[i].strip():
                last = i
        return lines[:last + 1] + ["", f"[{src}]", f"{key} = {quoted}"] + lines[last + 1:]
    return _set_key(lines, src, key, quoted)


def patch_spec_text(text: str, values: dict[str, float], source_text: dict[str, str]) -> str:
    """The spec text with each dotted parameter's value and source line replaced (or added)."""
    lines = text.split("\n")
    for name, v in values.items():
        table, _, key = name.rpartition(".")
        lines = _set_key(lines, table, key, _toml_float(v))
        if name in source_text:
            lines = _set_source(lines, table, key, source_text[name])
    return "\n".join(lines)


def write_spec(src_path, dst_path, values: dict[str, float], source_text: dict[str, str]) -> Path:
    """Copy the spec at `src_path` to `dst_path` with `values` patched in and their sources replaced.

    Only the named `key = value` lines and their [table.sources] lines change; comments and layout
    survive. The file is written atomically and must load with hardware(), else SpecError.
    """
    src, dst = Path(src_path), Path(dst_path)
    try:
        text = src.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{src}: cannot read spec file ({e.strerror})") from None

    def loads(tmp: str) -> None:
        try:
            hardware(tmp)
        except SpecError as e:
            raise SpecError(f"{dst}: the patched spec does not load: {str(e).replace(tmp, str(dst))}") from None

    write_text(dst, patch_spec_text(text, values, source_text), check=loads, suffix=".toml")
    return dst
