"""Packaging: the built wheel carries the spec files and validation cases, and the installed CLI finds them.

Builds an sdist and a wheel from a copy of the sources (`python -m build --no-isolation`, so nothing is
downloaded), installs the wheel into a fresh venv that sees this Python's numpy/onnx/pydantic (a .pth file
naming this interpreter's site-packages: like --system-site-packages, but also right when this Python is itself
a venv, and without running that site's .pth files, so an editable dlasim there stays out) and runs the
installed `dlasim` from a folder outside the repository.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from dlasim.hardware import spec_names
from dlasim.validate import load_cases

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "dlasim", "hardware_specs", "validation")


def _missing_tools() -> str:
    if importlib.util.find_spec("build") is None:
        return "the 'build' package is not installed (pip install -e '.[dev]')"
    if importlib.util.find_spec("venv") is None:
        return "the venv module is not available"
    return ""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv bin folder, built wheel, a working folder outside the repository)."""
    why = _missing_tools()
    if why:
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:   # a clean copy: no stale build/ folder can leak into the wheel
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        else:
            shutil.copy2(p, src / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = lambda *cmd, cwd=tmp: subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    r = run(sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"), str(src))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    wheel = next((tmp / "dist").glob("dlasim-*.whl"))
    venv = tmp / "venv"
    r = run(sys.executable, "-m", "venv", "--without-pip", str(venv))
    assert r.returncode == 0, r.stderr
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    r = run(str(bindir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    assert r.returncode == 0, r.stderr
    outer = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (Path(r.stdout.strip()) / "_outer_site.pth").write_text("".join(f"{p}\n" for p in outer))
    # pip comes from the outer site; --ignore-installed: a dlasim there must not count as installed
    r = run(str(bindir / "python"), "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--ignore-installed",
            str(wheel))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    work = tmp / "elsewhere"
    work.mkdir()
    return bindir, wheel, work, env


def _dlasim(installed, *args):
    bindir, _, work, env = installed
    return subprocess.run([str(bindir / "dlasim"), *args], cwd=work, env=env, capture_output=True, text=True)


def test_wheel_carries_specs_and_cases(installed):
    names = zipfile.ZipFile(installed[1]).namelist()
    for stem in spec_names():
        assert f"dlasim/_data/hardware_specs/{stem}.toml" in names
    assert "dlasim/_data/validation/cases.csv" in names
    assert "dlasim/_data/validation/models.py" in names
    assert "dlasim/_data/validation/data/seeds/kernel_1x1.prototxt" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [n for n in names if n.startswith("dlasim/_data/validation/fit_specs")]  # scripts stay in the repo


def test_installed_package_is_the_wheel(installed):
    bindir, _, work, env = installed
    r = subprocess.run([str(bindir / "python"), "-c", "import dlasim; print(dlasim.__file__)"], cwd=work, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).resolve().is_relative_to(bindir.parent.resolve())


def test_installed_specs_list(installed):
    r = _dlasim(installed, "specs", "list")
    assert r.returncode == 0, r.stderr
    listed = [line.split()[0] for line in r.stdout.splitlines() if line and not line.startswith("(")]
    assert set(spec_names()) <= set(listed)
    assert str(installed[0].parent.resolve()) in r.stdout      # the spec folder inside the venv, not the repo


def test_installed_estimate(installed):
    r = _dlasim(installed, "estimate", "zoo:resnet50", "--format", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["hardware"].startswith("xavier-agx") and d["total_ms"] > 0


def test_installed_validate_runs_every_case(installed):
    r = _dlasim(installed, "validate", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["cases"]) == len(load_cases())
