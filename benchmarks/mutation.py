"""Mutation check of a package (the cost model, the build passes, the explain layer, the concurrent-engines
model, the importers, NAS, calibration, HTML, the report, batch/sweep): does any test notice a wrong formula or
decision?

    python benchmarks/mutation.py [--package cost|passes|explainer|concurrent|importers|nas|calibrate|html|report|sweep]
                                  [--max 80] [--seed 1]
                                  [--timeout 30]
                                  [--files dlasim/cost/gpu.py ...] [--tests tests/test_cost.py ...]

Each mutant changes one AST node of one file under dlasim/PACKAGE/ (default: every *.py there, package cost;
report and sweep mutate the modules dlasim/report.py, dlasim/batch.py and dlasim/sweep.py, MODULES):
  + <-> -, * <-> /, // -> /, ** -> *, < <-> <=, > <-> >=, == <-> !=, and <-> or,
  min <-> max, a number c -> c*2 (0 -> 1) and c -> c+1, True <-> False,
  a sum a + b -> a or -> b (a term dropped).
All candidate mutants are listed, then --max of them are drawn with --seed (sorted by file and line).
`--named` runs instead the hand-written mutants of NAMED (a wrong unit, a formula left out: changes the
operators above cannot make), each against its package's tests; one whose text is no longer in the file is
reported as stale.
The repository's tracked files are copied once into a temporary directory; each mutant is written there
(ast.unparse) and the package's tests (PACKAGES) are run on the copy with -x and --timeout seconds per
mutant, so the working tree is never touched. Printed: killed / survived / timeout per file, the survival
rate, and each survivor as file:line  mutation. A mutant costs about 3 s (cost), 10 s (passes), 20 s
(concurrent) or 30 s (importers) on one core.
Not a test: it is never collected by pytest.
"""
from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the tests run against each mutant of a package (the golden outputs, tests/test_golden_outputs.py, are left out on
# purpose: they notice any change but pin no fact, so a mutant only they kill is a fact no test states)
PACKAGES = {
    "cost": ("tests/test_cost.py", "tests/test_gpu_classes.py", "tests/test_sm_stream.py", "tests/test_cost_by_hand.py",
             "tests/test_dla_activations.py", "tests/test_dla_sparsity.py", "tests/test_cause_mechanisms.py",
             "tests/test_seeds.py", "tests/test_cost_mutants.py"),
    "passes": ("tests/test_passes.py", "tests/test_pass_mutants.py", "tests/test_qdq.py",
               "tests/test_gpu_fusion_mech.py", "tests/test_dla_sparsity.py", "tests/test_dla_activations.py",
               "tests/test_cost.py", "tests/test_cost_mutants.py", "tests/test_reuse.py"),
    "explainer": ("tests/test_explain.py", "tests/test_cause_mechanisms.py", "tests/test_qdq.py",
                  "tests/test_dla_sparsity.py", "tests/test_cli_trtexec.py", "tests/test_classify.py",
                  "tests/test_explain_texts.py", "tests/test_join.py", "tests/test_explain_records.py"),
    # the contention model (DRAM sharing, time-slicing, pipeline mode), engine sets, advice, validation cases
    "concurrent": ("tests/test_concurrent_by_hand.py", "tests/test_concurrent.py", "tests/test_input_regressions.py",
                   "tests/test_schema.py"),
    # ONNX / Caffe / graph-JSON import, constant folding, attribute normalisation, the model checks
    "importers": ("tests/test_importers_by_hand.py", "tests/test_importers.py", "tests/test_input_validation.py",
                  "tests/test_input_regressions.py", "tests/test_exports.py", "tests/test_optional_onnx.py"),
    # the architecture-search tables and spaces, the spec calibration, the HTML pages, the text/CSV/JSON report,
    # the batch estimates and option sweeps
    "nas": ("tests/test_nas.py",),
    "calibrate": ("tests/test_calibrate.py",),
    "html": ("tests/test_html.py", "tests/test_html_labels.py", "tests/test_concurrent.py"),
    "report": ("tests/test_cli.py", "tests/test_explain_records.py", "tests/test_html_labels.py",
               "tests/test_core_light.py", "tests/test_schema.py"),
    "sweep": ("tests/test_nas.py", "tests/test_build_options.py", "tests/test_schema.py"),
}
# packages that are modules beside the others rather than folders: the files they mutate
MODULES = {"report": ("dlasim/report.py",), "sweep": ("dlasim/batch.py", "dlasim/sweep.py")}

_BINOP_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
               ast.FloorDiv: ast.Div, ast.Pow: ast.Mult}
_CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
             ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
_SYM = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Pow: "**",
        ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


@dataclass(frozen=True)
class Mutant:
    file: str      # path relative to the repository root
    index: int     # position of the node in ast.walk order of the parsed file
    kind: str      # which change (see _apply)
    line: int
    text: str      # human description


@dataclass(frozen=True)
class NamedMutant:
    file: str      # path relative to the repository root
    old: str       # the source text replaced (its first occurrence)
    new: str
    text: str      # what the mutant gets wrong

    @property
    def package(self) -> str:
        return self.file.split("/")[1]

    def line(self, source: str) -> int:
        return source[: source.index(self.old)].count("\n") + 1 if self.old in source else 0

    def apply(self, source: str) -> str:
        return source.replace(self.old, self.new, 1)


NAMED = (
    NamedMutant("dlasim/cost/dla.py", "rate, n = dla.pdp_elems_per_cycle, elems(step.inputs)",
                "rate, n = dla.sdp_elems_per_cycle, elems(step.inputs)", "DLA pooling at the SDP's rate"),
    NamedMutant("dlasim/cost/dla.py", "rate, n = dla.pdp_elems_per_cycle, elems(step.inputs)",
                "rate, n = dla.cdp_elems_per_cycle, elems(step.inputs)", "DLA pooling at the CDP's rate"),
    NamedMutant("dlasim/cost/dla.py", "rate, n = dla.pdp_elems_per_cycle, elems(step.inputs)",
                "rate, n = dla.pdp_elems_per_cycle, elems(step.outputs)", "DLA pooling paced by its outputs"),
    NamedMutant("dlasim/cost/dla.py", "conv_out / dla.pdp_elems_per_cycle if pool",
                "conv_out / dla.sdp_elems_per_cycle if pool", "a pool fused after a DLA conv at the SDP's rate"),
    NamedMutant("dlasim/cost/dla.py", "rate = dla.cdp_elems_per_cycle", "rate = dla.pdp_elems_per_cycle",
                "DLA LRN at the PDP's rate"),
    NamedMutant("dlasim/cost/gpu.py", 'REDUCE_OPS = frozenset({"GlobalAveragePool",',
                'REDUCE_OPS = frozenset({"MaxPool", "AveragePool", "GlobalAveragePool",',
                "GPU windowed pooling priced as a reduction kernel"),
    NamedMutant("dlasim/cost/gpu.py", 'REDUCE_OPS = frozenset({"GlobalAveragePool", "GlobalMaxPool", ',
                'REDUCE_OPS = frozenset({', "GPU global pooling priced as an element-wise kernel"),
    NamedMutant("dlasim/cost/gpu.py", "sp_bytes = sparse_weight_bytes(w_elems, b)", "sp_bytes = w_elems * b",
                "GPU 2:4 sparse weights left uncompressed"),
    NamedMutant("dlasim/cost/dla.py", "sparse_weight_bytes(per_kernel, bpe) if sparse else per_kernel * bpe",
                "per_kernel * bpe", "DLA 2:4 sparse weights left uncompressed"),
)


def _docstring_ids(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _annotation_ids(tree: ast.AST) -> set[int]:
    """Nodes inside type annotations: mutating them changes nothing at run time."""
    ids = set()
    for node in ast.walk(tree):
        anns = []
        if isinstance(node, ast.AnnAssign):
            anns.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            anns.append(node.returns)
            a = node.args
            anns += [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs]
            anns += [x.annotation for x in (a.vararg, a.kwarg) if x is not None]
        for ann in anns:
            if ann is not None:
                ids.update(id(n) for n in ast.walk(ann))
    return ids


def candidates(rel: str, root: Path = ROOT) -> list[Mutant]:
    tree = ast.parse((root / rel).read_text())
    skip = _docstring_ids(tree) | _annotation_ids(tree)
    out = []
    for i, node in enumerate(ast.walk(tree)):
        if id(node) in skip:
            continue
        line = getattr(node, "lineno", 0)
        add = lambda kind, text: out.append(Mutant(rel, i, kind, line, text))  # noqa: E731
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAP:
            a, b = _SYM[type(node.op)], _SYM[_BINOP_SWAP[type(node.op)]]
            add("binop", f"{a} -> {b} in {ast.unparse(node)}")
            if isinstance(node.op, ast.Add):
                add("drop_right", f"drop term {ast.unparse(node.right)} of {ast.unparse(node)}")
                add("drop_left", f"drop term {ast.unparse(node.left)} of {ast.unparse(node)}")
        elif isinstance(node, ast.AugAssign) and type(node.op) in _BINOP_SWAP:
            a, b = _SYM[type(node.op)], _SYM[_BINOP_SWAP[type(node.op)]]
            add("binop", f"{a}= -> {b}= in {ast.unparse(node)}")
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP_SWAP:
            a, b = _SYM[type(node.ops[0])], _SYM[_CMP_SWAP[type(node.ops[0])]]
            add("cmp", f"{a} -> {b} in {ast.unparse(node)}")
        elif isinstance(node, ast.BoolOp):
            add("boolop", f"{'and -> or' if isinstance(node.op, ast.And) else 'or -> and'} in "
                          f"{ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
            other = "max" if node.func.id == "min" else "min"
            add("minmax", f"{node.func.id} -> {other} in {ast.unparse(node)}")
        elif isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                add("not_bool", f"{v} -> {not v}")
            elif isinstance(v, (int, float)):
                add("times2", f"{v!r} -> {v * 2 if v else 1!r}")
                add("plus1", f"{v!r} -> {v + 1!r}")
    return out


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if item is old:
                        value[k] = new
                        return
    raise LookupError("node has no parent")


def mutate(source: str, m: Mutant) -> str:
    tree = ast.parse(source)
    node = list(ast.walk(tree))[m.index]
    if m.kind == "binop":
        node.op = _BINOP_SWAP[type(node.op)]()
    elif m.kind in ("drop_left", "drop_right"):
        _replace(tree, node, node.left if m.kind == "drop_right" else node.right)
    elif m.kind == "cmp":
        node.ops = [_CMP_SWAP[type(node.ops[0])]()]
    elif m.kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif m.kind == "minmax":
        node.func = ast.Name(id="max" if node.func.id == "min" else "min", ctx=ast.Load())
    elif m.kind == "not_bool":
        node.value = not node.value
    elif m.kind == "times2":
        node.value = node.value * 2 if node.value else 1
    elif m.kind == "plus1":
        node.value = node.value + 1
    else:
        raise ValueError(m.kind)
    return ast.unparse(ast.fix_missing_locations(tree))


def _copy_repo(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split("\n")
    for rel in filter(None, files):
        src = ROOT / rel
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        if src.is_file():
            shutil.copy2(src, dest / rel)


def _run_tests(work: Path, timeout: float, tests: tuple[str, ...]) -> str:
    tests = [t for t in tests if (work / t).exists()]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    try:
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
                           cwd=work, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    return "survived" if r.returncode == 0 else "killed"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--package", choices=sorted(PACKAGES), default="cost",
                   help="the package under dlasim/ to mutate (explainer: the explain layer), and whose tests "
                        "to run (default cost)")
    p.add_argument("--max", type=int, default=80, help="mutants to draw (default 80)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per mutant's test run")
    p.add_argument("--files", nargs="*", default=None, help="files to mutate (default dlasim/PACKAGE/*.py)")
    p.add_argument("--tests", nargs="*", default=None, help="test files to run (default: the package's, PACKAGES)")
    p.add_argument("--list", action="store_true", help="list the drawn mutants and stop")
    p.add_argument("--named", action="store_true", help="run the hand-written mutants (NAMED) instead")
    a = p.parse_args(argv)
    if a.named:
        return _run_named(a.timeout, a.list)
    files = a.files or list(MODULES.get(a.package, ())) or sorted(
        str(f.relative_to(ROOT)) for f in (ROOT / "dlasim" / a.package).glob("*.py"))
    tests = tuple(a.tests) if a.tests else PACKAGES[a.package]
    results: dict[str, dict[str, int]] = {f: {"killed": 0, "survived": 0, "timeout": 0} for f in files}
    survivors = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dlasim-mut-") as tmp:
        # mutants are drawn from, and written into, the copy: edits to the working tree during a run change nothing
        work = Path(tmp)
        _copy_repo(work)
        pool = [m for f in files for m in candidates(f, work)]
        drawn = random.Random(a.seed).sample(pool, min(a.max, len(pool)))
        drawn.sort(key=lambda m: (m.file, m.line, m.index, m.kind))
        print(f"{len(pool)} candidate mutants in {len(files)} files; {len(drawn)} drawn (seed {a.seed}); "
              f"tests: {' '.join(t.split('/')[-1] for t in tests)}")
        if a.list:
            for m in drawn:
                print(f"  {m.file}:{m.line}  {m.text}")
            return 0
        if _run_tests(work, a.timeout * 3, tests) != "survived":
            print("the unmutated tests fail or hang: nothing to measure", file=sys.stderr)
            return 1
        for n, m in enumerate(drawn, 1):
            original = (work / m.file).read_text()
            (work / m.file).write_text(mutate(original, m))
            try:
                outcome = _run_tests(work, a.timeout, tests)
            finally:
                (work / m.file).write_text(original)
            results[m.file][outcome] += 1
            if outcome == "survived":
                survivors.append(m)
            print(f"[{n}/{len(drawn)}] {outcome:8s} {m.file}:{m.line}  {m.text}", flush=True)
    print(f"\n{'file':28s} {'killed':>7s} {'survived':>9s} {'timeout':>8s}")
    tot = {"killed": 0, "survived": 0, "timeout": 0}
    for f, r in results.items():
        if sum(r.values()):
            print(f"{f:28s} {r['killed']:7d} {r['survived']:9d} {r['timeout']:8d}")
        for k in tot:
            tot[k] += r[k]
    n = sum(tot.values())
    print(f"{'total':28s} {tot['killed']:7d} {tot['survived']:9d} {tot['timeout']:8d}")
    if n:
        print(f"survival rate {tot['survived'] / n:.1%} ({tot['survived']}/{n}); "
              f"{time.perf_counter() - t0:.0f} s")
    if survivors:
        print("\nsurvivors:")
        for m in survivors:
            print(f"  {m.file}:{m.line}  {m.text}")
    return 0


def _run_named(timeout: float, list_only: bool) -> int:
    """Each NAMED mutant against its package's tests: killed, survived, timeout or stale."""
    with tempfile.TemporaryDirectory(prefix="dlasim-mut-") as tmp:
        work = Path(tmp)
        _copy_repo(work)
        counts: dict[str, int] = {"killed": 0, "survived": 0, "timeout": 0, "stale": 0}
        for n, m in enumerate(NAMED, 1):
            original = (work / m.file).read_text()
            line = m.line(original)
            if list_only or not line:
                outcome = "listed" if line else "stale"
            else:
                (work / m.file).write_text(m.apply(original))
                try:
                    outcome = _run_tests(work, timeout, PACKAGES[m.package])
                finally:
                    (work / m.file).write_text(original)
            counts[outcome] = counts.get(outcome, 0) + 1
            print(f"[{n}/{len(NAMED)}] {outcome:8s} {m.file}:{line}  {m.text}", flush=True)
    print(", ".join(f"{k} {v}" for k, v in counts.items() if v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
