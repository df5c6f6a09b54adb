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


# ---- the layer order and import cycles -----------------------------------------------------------------
# The estimate path, lowest layer first (docs/DESIGN.md "Data flow": import -> IR -> passes -> Plan -> cost ->
# report): a module imports, at module level or inside a function, only modules of its own layer or a lower
# one. Modules in no layer (explainer, concurrent, validate, sweep, batch, nas, calibrate, html, cli, inspect,
# trtexec, measures, schema, the facade) read estimates and sit above them all. No two modules import each
# other, directly or through others, in any layer.
LAYERS = (
    ("errors", "resources", "safeio", "columns", "onnx_package", "_version", "records", "dims"),
    ("ops", "hardware", "rules", "build_options", "precision"),
    ("ir", "plan", "export"),                 # Graph.to_onnx writes through export (which imports no IR)
    ("importers", "zoo", "filekind"),
    ("passes",), ("cost",), ("report",), ("simulate",), ("builder",), ("api",),
)


def _dotted(rel: str) -> str:
    return ".".join(_module_name(rel))


def import_graph(sources: dict[str, str], known: set[str]) -> dict[str, set[str]]:
    """{module: the package modules it imports anywhere in its text}, from {"dlasim/x.py": source}; `known`:
    every module name of the package (a `from pkg import name` of a submodule counts as that submodule)."""
    graph = {}
    for rel, source in sources.items():
        mod = _module_name(rel)
        package = mod if rel.endswith("__init__.py") else mod[:-1]
        deps = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in known}
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                target = ".".join(base + (node.module.split(".") if node.module else []))
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    if sub in known:
                        deps.add(sub)
                    elif target in known:
                        deps.add(target)
        deps.discard(".".join(mod))
        graph[".".join(mod)] = deps
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def layer_of(module: str) -> int | None:
    for i, names in enumerate(LAYERS):
        if any(module == f"dlasim.{n}" or module.startswith(f"dlasim.{n}.") for n in names):
            return i
    return None


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """'a -> b' for each import of a higher layer, or of a module above the layers, from a layer."""
    bad = []
    for mod, deps in sorted(graph.items()):
        here = layer_of(mod)
        if here is None:
            continue
        for d in sorted(deps):
            there = layer_of(d)
            if d != "dlasim" and (there is None or there > here):
                bad.append(f"{mod} -> {d}")
    return bad


def _package_graph() -> dict[str, set[str]]:
    sources = {p.relative_to(PKG.parent).as_posix(): p.read_text(encoding="utf-8") for p in sorted(PKG.rglob("*.py"))}
    return import_graph(sources, {_dotted(rel) for rel in sources})


def test_no_import_cycles_and_no_import_against_the_layer_order():
    graph = _package_graph()
    assert import_cycles(graph) == []
    assert upward_imports(graph) == []


def test_every_layer_names_modules_that_exist():
    graph = _package_graph()
    for names in LAYERS:
        for n in names:
            assert f"dlasim.{n}" in graph, n


def test_the_checks_find_a_function_level_cycle_and_an_upward_import():
    sources = {"dlasim/validate.py": "def f():\n    from .concurrent.cases import predict_case\n",
               "dlasim/concurrent/cases.py": "def g():\n    from ..validate import parse_options\n",
               "dlasim/concurrent/__init__.py": "",
               "dlasim/report.py": "def r():\n    from .notebook import summary\n",
               "dlasim/notebook.py": "from .report import _si\n",
               "dlasim/ir.py": "from .passes import build_plan\n",
               "dlasim/passes/__init__.py": "def build_plan(): ...\n"}
    known = {_dotted(rel) for rel in sources}
    graph = import_graph(sources, known)
    assert import_cycles(graph) == [["dlasim.concurrent.cases", "dlasim.validate"],
                                    ["dlasim.notebook", "dlasim.report"]]
    assert "dlasim.ir -> dlasim.passes" in upward_imports(graph)
    assert "dlasim.report -> dlasim.notebook" in upward_imports(graph)     # notebook: above the layers
