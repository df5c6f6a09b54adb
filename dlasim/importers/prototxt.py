"""Protobuf text format (the `.prototxt` of Caffe's NetParameter) -> nested dicts, with no protobuf dependency.

`key: value`, `key { ... }` with or without a colon, `key: [a, b]` lists, repeated fields, `#` comments, and
quoted strings, including the curly quotes that forum copies carry. Every field maps to the list of its values
(str, int, float or a nested Message); `repeated` and `single` read them.
"""
from __future__ import annotations

import re

from ..errors import ModelError

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\f\v]+)
  | (?P<newline>\n)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[“”„][^“”"\n]*[“”"]|[‘’][^‘’'\n]*[‘’'])
  | (?P<word>[A-Za-z0-9_.+\-]+)
  | (?P<punct>[{}:\[\],;<>])
""", re.X)
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?f?")
_CLOSE = {"{": "}", "<": ">"}

Message = dict  # field name -> list of values (str, int, float or Message)


def _tokens(text: str, source: str) -> list[tuple[str, str, int]]:
    out, pos, line = [], 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            what = "unterminated string" if ch in "\"'“”‘’„" else f"unexpected character {ch!r}"
            raise ModelError(f"{source}:{line}: {what}")
        kind = m.lastgroup
        if kind == "newline":
            line += 1
        elif kind == "string":
            body = m.group()[1:-1]
            out.append(("string", body.replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\"), line))
        elif kind in ("word", "punct"):
            out.append((kind, m.group(), line))
        pos = m.end()
    return out


def _scalar(kind: str, text: str):
    if kind == "word" and _NUMBER.fullmatch(text):
        t = text.rstrip("f")
        try:
            return int(t)
        except ValueError:
            return float(t)
    return text


MAX_DEPTH = 64  # nested blocks; real prototxts nest 3 (layer { convolution_param { weight_filler {} } })


class _Parser:
    def __init__(self, tokens, source: str):
        self.toks, self.i, self.source = tokens, 0, source
        self.depth = 0

    def _err(self, line: int, what: str) -> ModelError:
        return ModelError(f"{self.source}:{line}: {what}")

    def _peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def message(self, closing: str | None = None, open_line: int = 0) -> Message:
        msg: Message = {}
        while True:
            tok = self._peek()
            if tok is None:
                if closing:
                    opener = "{" if closing == "}" else "<"
                    raise self._err(open_line, f"'{opener}' is never closed")
                return msg
            kind, text, line = tok
            self.i += 1
            if kind == "punct" and text in "}>":
                if closing is None:
                    raise self._err(line, f"unexpected '{text}' (no block is open)")
                if text != closing:
                    raise self._err(line, f"expected '{closing}', got '{text}'")
                return msg
            if kind == "punct" and text in ",;":
                continue
            if kind != "word" or _NUMBER.fullmatch(text):
                raise self._err(line, f"expected a field name, got {text!r}")
            msg.setdefault(text, []).extend(self._value(text, line))

    def _value(self, key: str, line: int) -> list:
        tok = self._peek()
        colon = tok is not None and tok[1] == ":"
        if colon:
            self.i += 1
            tok = self._peek()
        if tok is None:
            raise self._err(line, f"field {key!r} has no value")
        kind, text, vline = tok
        self.i += 1
        if text in _CLOSE and kind == "punct":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self._err(vline, f"blocks nest deeper than {MAX_DEPTH} levels")
            value = self.message(_CLOSE[text], vline)
            self.depth -= 1
            return [value]
        if not colon:
            raise self._err(vline, f"expected ':' or '{{' after {key!r}, got {text!r}")
        if text == "[" and kind == "punct":
            values = []
            while True:
                tok = self._peek()
                if tok is None:
                    raise self._err(vline, "'[' is never closed")
                self.i += 1
                if tok[1] == "]":
                    return values
                if tok[1] == ",":
                    continue
                if tok[0] == "punct":
                    raise self._err(tok[2], f"unexpected {tok[1]!r} in the list of {key!r}")
                values.append(_scalar(tok[0], tok[1]))
        if kind == "punct":
            raise self._err(vline, f"expected a value for {key!r}, got {text!r}")
        return [_scalar(kind, text)]


def parse_prototxt(text: str, source: str = "prototxt") -> Message:
    """Parse protobuf text format into nested dicts: every field maps to the list of its values."""
    return _Parser(_tokens(text, source), source).message()


# ---- field access --------------------------------------------------------------------------------
def repeated(msg: Message, key: str) -> list:
    """Every value of a field (empty when absent)."""
    return msg.get(key, [])


def single(msg: Message, key: str, default=None):
    """The value of a field; the last one when repeated, as protobuf keeps for a singular field."""
    v = msg.get(key)
    return v[-1] if v else default


def boolean(v) -> bool:
    return v is True or v == 1 or str(v).lower() == "true"


def enum_name(v, names: list[str], default: str) -> str:
    """An enum given by name or number (Caffe allows both)."""
    if v is None:
        return default
    if isinstance(v, int) and 0 <= v < len(names):
        return names[v]
    return str(v).upper()
