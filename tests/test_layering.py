"""Layering: no module inside the package imports the facade (dlasim/__init__.py) or the CLI; they import
functions from the modules that define them (dlasim.api, dlasim.hardware, ...). The facade re-exports."""
import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "dlasim"


def _module_name(rel: str) -> list[str]:
    parts = list(Path(rel).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _is_submodule(package: list[str], name: str) -> bool:
    base = PKG.parent.joinpath(*package)
    return (base / f"{name}.py").exists() or (base / name / "__init__.py").exists()


def _facade_names() -> set[str]:
    """The names dlasim/__init__.py binds (`from .hardware import hardware` shadows the module hardware)."""
    names = set()
    for node in ast.parse((PKG / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names - {"annotations"}


FACADE = _facade_names()


def facade_and_cli_imports(source: str, rel: str) -> list[str]:
    """'LINE: what' for each import in `source`, the text of module `rel` ("dlasim/validate.py"), of the facade
    (`import dlasim`, or a name that dlasim/__init__.py defines) or of dlasim.cli from outside dlasim/cli."""
    mod = _module_name(rel)
    package = mod if rel.endswith("__init__.py") else mod[:-1]
    in_cli = mod[:2] == ["dlasim", "cli"] or mod == ["dlasim", "__main__"]
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "dlasim":
                    bad.append(f"{node.lineno}: import dlasim")
                elif (a.name == "dlasim.cli" or a.name.startswith("dlasim.cli.")) and not in_cli:
                    bad.append(f"{node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = base + (node.module.split(".") if node.module else [])
            if target[:2] == ["dlasim", "cli"] and not in_cli:
                bad.append(f"{node.lineno}: from {'.'.join(target)} import ...")
            if target == ["dlasim"]:
                for a in node.names:
                    if a.name in FACADE or not _is_submodule(target, a.name):
                        bad.append(f"{node.lineno}: from dlasim import {a.name} (the facade)")
                    elif a.name == "cli" and not in_cli:
                        bad.append(f"{node.lineno}: from dlasim import cli")
    return bad


def test_no_module_imports_the_facade_or_the_cli():
    found = {}
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG.parent).as_posix()
        if rel != "dlasim/__init__.py":
            found[rel] = facade_and_cli_imports(p.read_text(encoding="utf-8"), rel)
    assert {k: v for k, v in found.items() if v} == {}


@pytest.mark.parametrize("source, where", [
    ("import dlasim\n", "dlasim/validate.py"),
    ("from .. import estimate\n", "dlasim/concurrent/model.py"),
    ("from dlasim import load\n", "dlasim/sweep.py"),
    ("from . import __version__\n", "dlasim/batch.py"),
    ("from .. import hardware\n", "dlasim/nas/table.py"),   # the facade's function, not the module
    ("from .cli import main\n", "dlasim/sweep.py"),
    ("def f():\n    from ..cli.commands import cmd_estimate\n", "dlasim/html/pages.py"),
])
def test_the_check_finds_facade_and_cli_imports(source, where):
    assert facade_and_cli_imports(source, where)


@pytest.mark.parametrize("source, where", [
    ("from . import api, ops\n", "dlasim/validate.py"),
    ("from ..api import estimate, load\n", "dlasim/concurrent/model.py"),
    ("from .hardware import hardware\n", "dlasim/sweep.py"),
    ("from . import commands\n", "dlasim/cli/__init__.py"),
])
def test_the_check_lets_module_imports_through(source, where):
    assert facade_and_cli_imports(source, where) == []
