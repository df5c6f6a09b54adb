"""Without onnx: tests/test_importers.py skips only its ONNX tests (the Caffe and load_model tests still run),
and an ONNX model, read or written, stops with one line (exit 2 at the CLI), a missing file with its own."""
import gzip
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# `import onnx` raises ImportError when sys.modules holds None for it, as when onnx is not installed
RUN = ("import sys; sys.modules['onnx'] = None; import pytest; "
       "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-rs', 'tests/test_importers.py']))")


def test_importer_tests_without_onnx_skip_only_the_onnx_tests():
    out = subprocess.run([sys.executable, "-c", RUN], cwd=ROOT, capture_output=True, text=True, timeout=300).stdout
    summary = out.strip().splitlines()[-1]
    passed = int(re.search(r"(\d+) passed", summary).group(1)) if "passed" in summary else 0
    skipped = int(re.search(r"(\d+) skipped", summary).group(1)) if "skipped" in summary else 0
    source = (ROOT / "tests" / "test_importers.py").read_text(encoding="utf-8")
    assert "failed" not in summary and "error" not in summary, out[-2000:]
    assert skipped == source.count("@needs_onnx")           # each ONNX test, and nothing else
    assert passed >= 10                                     # the Caffe prototxt tests among them
    assert "test_prototxt_fixture" not in out and "onnx is not installed" in out


# Two ways onnx can be missing, each set up before dlasim is imported: sys.modules holding None (as pip
# uninstall leaves `import onnx` failing) and an __import__ that raises ModuleNotFoundError for onnx only.
HIDE_ONNX = {
    "sys.modules": "import sys; sys.modules['onnx'] = None",
    "__import__": (
        "import builtins\n"
        "_real = builtins.__import__\n"
        "def _import(name, globals=None, locals=None, fromlist=(), level=0):\n"
        "    if level == 0 and name.split('.')[0] == 'onnx':\n"
        "        raise ModuleNotFoundError(\"No module named 'onnx'\", name='onnx')\n"
        "    return _real(name, globals, locals, fromlist, level)\n"
        "builtins.__import__ = _import"),
}
CLI = "\nimport sys\nfrom dlasim.cli import main\nsys.exit(main(sys.argv[1:]))"


def _cli(prelude: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", prelude + CLI, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def onnx_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("onnx") / "resnet18.onnx"
    path.write_bytes(gzip.decompress((ROOT / "tests" / "fixtures" / "exports" / "tv_resnet18.onnx.gz").read_bytes()))
    return path


@pytest.mark.parametrize("how", sorted(HIDE_ONNX))
def test_an_onnx_model_without_the_onnx_package_is_one_line_and_exit_2(how, onnx_file):
    r = _cli(HIDE_ONNX[how], "estimate", str(onnx_file))
    assert r.returncode == 2, r.stderr
    assert r.stdout == "" and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"dlasim: error: {onnx_file}: reading ONNX needs the 'onnx' package")
    assert "pip install" in r.stderr


@pytest.mark.parametrize("how", ["", *sorted(HIDE_ONNX)])
def test_a_missing_onnx_file_is_named_with_or_without_the_package(how, tmp_path):
    missing = tmp_path / "nowhere" / "model.onnx"
    for args in (["estimate", str(missing)], ["explain", f"--onnx={missing}"], ["inspect", str(missing)]):
        r = _cli(HIDE_ONNX.get(how, ""), *args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr == f"dlasim: error: {missing}: cannot read model (no such file)\n", args


def test_the_prototxt_and_zoo_paths_need_no_onnx():
    r = _cli(HIDE_ONNX["sys.modules"], "estimate", "zoo:resnet18", "--format", "json")
    assert r.returncode == 0, r.stderr
    r = _cli(HIDE_ONNX["sys.modules"], "inspect", str(ROOT / "validation" / "data" / "seeds" / "kernel_1x1.prototxt"))
    assert r.returncode == 0, r.stderr


def test_writing_onnx_without_the_package_raises_a_model_error(tmp_path):
    code = (HIDE_ONNX["__import__"] + "\nimport dlasim\n"
            "try:\n"
            f"    dlasim.load('zoo:resnet18').to_onnx({str(tmp_path / 'x.onnx')!r})\n"
            "except dlasim.ModelError as e:\n"
            "    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{tmp_path / 'x.onnx'}: writing ONNX needs the 'onnx' package")
    assert not (tmp_path / "x.onnx").exists()
