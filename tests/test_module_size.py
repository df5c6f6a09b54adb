"""Every module under dlasim/ stays at most MAX_LINES lines (small modules, one job each)."""
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "dlasim"
MAX_LINES = 500


def _lines(path: Path) -> int:
    with path.open(encoding="utf-8") as f:
        return sum(1 for _ in f)


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_modules_found():
    names = {p.relative_to(PACKAGE).as_posix() for p in _modules()}
    assert {"__init__.py", "ir.py", "trtexec/__init__.py", "importers/onnx.py"} <= names


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_module_size(path):
    name = path.relative_to(PACKAGE).as_posix()
    n = _lines(path)
    assert n <= MAX_LINES, f"dlasim/{name} has {n} lines (at most {MAX_LINES}); split it by job"


def test_line_count_of_a_file_with_and_without_final_newline(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\ny = 2\n")
    b.write_text("x = 1\ny = 2")
    assert _lines(a) == 2 and _lines(b) == 2
