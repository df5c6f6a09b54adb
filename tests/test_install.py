"""Packaging: the wheel, `pip install .` and `pip install -e .` all find the spec files and validation cases.

Each install goes into a fresh venv that sees this Python's numpy/onnx/pydantic/setuptools (a .pth file naming
this interpreter's site-packages: like --system-site-packages, but also right when this Python is itself a venv,
and without running that site's .pth files, so an editable dlasim there stays out), built from a clean copy of
the sources without build isolation and without an index (nothing is downloaded), and is run from a folder
outside the repository. The copy has no links: the data ship as real files (a Windows checkout without
core.symlinks has none either).
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:
    import tomli as tomllib

from dlasim.hardware import spec_names
from dlasim.validate import load_cases

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "MANIFEST.in", "README.md", "buildtools", "dlasim", "hardware_specs", "validation")
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _missing_tools() -> str:
    if importlib.util.find_spec("build") is None:
        return "the 'build' package is not installed (pip install -e '.[dev]')"
    if importlib.util.find_spec("venv") is None:
        return "the venv module is not available"
    return ""


def _run(*cmd, cwd):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=ENV, capture_output=True, text=True)


def _copy_sources(dest: Path) -> Path:
    dest.mkdir()
    for name in SOURCES:   # a clean copy: no build/ folder of this checkout can leak into a wheel
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        else:
            shutil.copy2(p, dest / name)
    return dest


def _venv(path: Path) -> Path:
    """A fresh venv seeing this interpreter's packages; its bin folder."""
    r = _run(sys.executable, "-m", "venv", "--without-pip", path, cwd=path.parent)
    assert r.returncode == 0, r.stderr
    bindir = path / ("Scripts" if os.name == "nt" else "bin")
    r = _run(bindir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=path.parent)
    assert r.returncode == 0, r.stderr
    outer = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (Path(r.stdout.strip()) / "_outer_site.pth").write_text("".join(f"{p}\n" for p in outer))
    return bindir


def _pip_install(bindir: Path, *what, cwd: Path):
    # pip comes from the outer site; --ignore-installed: a dlasim there must not count as installed
    r = _run(bindir / "python", "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--ignore-installed",
             "--no-build-isolation", *what, cwd=cwd)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def _spec_folder(bindir: Path, work: Path) -> Path:
    r = _run(bindir / "python", "-c", "from dlasim.hardware import SPEC_DIR; print(SPEC_DIR)", cwd=work)
    assert r.returncode == 0, r.stderr
    return Path(r.stdout.strip())


def _listed_specs(bindir: Path, work: Path) -> list[str]:
    r = _run(bindir / "dlasim", "specs", "list", cwd=work)
    assert r.returncode == 0, r.stderr
    return [line.split()[0] for line in r.stdout.splitlines() if line and not line.startswith("(")]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    why = _missing_tools()
    if why:
        pytest.skip(why)
    t = tmp_path_factory.mktemp("install")
    (t / "elsewhere").mkdir()
    return t


@pytest.fixture(scope="module")
def installed(tmp):
    """(venv bin folder, built wheel, a working folder outside the repository): the wheel from the sdist."""
    src = _copy_sources(tmp / "src")
    r = _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", tmp / "dist", src, cwd=tmp)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    wheel = next((tmp / "dist").glob("dlasim-*.whl"))
    bindir = _venv(tmp / "venv")
    _pip_install(bindir, wheel, cwd=tmp)
    return bindir, wheel, tmp / "elsewhere"


def _dlasim(installed, *args):
    bindir, _, work = installed
    return _run(bindir / "dlasim", *args, cwd=work)


def test_the_repository_holds_no_links():
    """A checkout without symlink support (Windows, some archivers) must hold every file the build needs."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    r = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not [line for line in r.stdout.splitlines() if line.startswith("120000 ")]


def test_a_checkout_reads_the_top_level_folders():
    from dlasim.resources import data_root, spec_dir
    assert not (ROOT / "dlasim" / "_data").exists()
    assert data_root() == ROOT and spec_dir() == (ROOT / "hardware_specs").resolve()


def test_every_subpackage_is_listed_in_pyproject():
    """pyproject.toml names the packages one by one (the data package maps to the root): none may be missed."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "dlasim").rglob("__init__.py")}
    assert on_disk | {"dlasim._data"} == listed


def test_wheel_carries_specs_and_cases(installed):
    names = zipfile.ZipFile(installed[1]).namelist()
    for stem in spec_names():
        assert f"dlasim/_data/hardware_specs/{stem}.toml" in names
    for rule in (ROOT / "hardware_specs" / "rules").glob("*.toml"):
        assert f"dlasim/_data/hardware_specs/rules/{rule.name}" in names
    assert "dlasim/_data/validation/cases.csv" in names
    assert "dlasim/_data/validation/models.py" in names
    assert "dlasim/_data/validation/data/seeds/kernel_1x1.prototxt" in names
    for module in (ROOT / "dlasim").rglob("*.py"):
        assert module.relative_to(ROOT).as_posix() in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [n for n in names if n.startswith("dlasim/_data/validation/fit_specs")]  # scripts stay in the repo
    assert not [n for n in names if n.startswith(("buildtools", "dlasim/_data/buildtools", "dlasim/_data/tests"))]


def test_sdist_holds_real_files_and_the_backend(installed):
    """The wheel above was built from this sdist (python -m build), so it is complete; it holds no links."""
    sdist = next(installed[1].parent.glob("dlasim-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        members = tar.getmembers()
    assert not [m.name for m in members if m.issym() or m.islnk()]
    names = {m.name.split("/", 1)[1] for m in members if "/" in m.name}
    assert {"buildtools/dlasim_backend.py", "hardware_specs/xavier-agx.toml", "validation/cases.csv",
            "pyproject.toml"} <= names


def test_installed_package_is_the_wheel(installed):
    bindir, _, work = installed
    r = _run(bindir / "python", "-c", "import dlasim; print(dlasim.__file__)", cwd=work)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).resolve().is_relative_to(bindir.parent.resolve())


def test_installed_specs_list(installed):
    bindir, _, work = installed
    assert set(spec_names()) <= set(_listed_specs(bindir, work))
    r = _dlasim(installed, "specs", "list")
    assert str(bindir.parent.resolve()) in r.stdout      # the spec folder inside the venv, not the repo
    assert _spec_folder(bindir, work).is_relative_to(bindir.parent.resolve())


def test_installed_estimate(installed):
    r = _dlasim(installed, "estimate", "zoo:resnet50", "--format", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["hardware"].startswith("xavier-agx") and d["total_ms"] > 0


def test_installed_validate_runs_every_case(installed):
    r = _dlasim(installed, "validate", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["cases"]) == len(load_cases())


def test_pip_install_dot_leaves_no_build_folder_and_no_stale_file(tmp):
    """`pip install .` builds in a temporary folder: nothing is left in the source tree, and a spec file
    deleted since an earlier build is not in the next one (setuptools never prunes an in-tree build/lib)."""
    src = _copy_sources(tmp / "src-dot")
    ghost = src / "hardware_specs" / "ghost.toml"
    shutil.copy2(src / "hardware_specs" / "a40.toml", ghost)
    r = _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-index", "--no-deps", "--no-build-isolation",
             "-w", tmp / "ghost-wheel", src, cwd=tmp)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    first = next((tmp / "ghost-wheel").glob("*.whl"))
    assert "dlasim/_data/hardware_specs/ghost.toml" in zipfile.ZipFile(first).namelist()
    ghost.unlink()
    bindir = _venv(tmp / "venv-dot")
    _pip_install(bindir, src, cwd=tmp)
    assert sorted(p.name for p in src.iterdir()) == sorted(SOURCES)       # no build/, no dlasim.egg-info/
    listed = _listed_specs(bindir, tmp / "elsewhere")
    assert set(spec_names()) <= set(listed) and "ghost" not in listed
    assert _spec_folder(bindir, tmp / "elsewhere").is_relative_to(bindir.parent.resolve())


def test_editable_install_reads_the_source_folders(tmp):
    """`pip install -e .`: the package has no `_data/`, so the top-level folders are read, and an edit there
    shows at once."""
    src = _copy_sources(tmp / "src-e")
    bindir = _venv(tmp / "venv-e")
    _pip_install(bindir, "-e", src, cwd=tmp)
    work = tmp / "elsewhere"
    assert _spec_folder(bindir, work) == (src / "hardware_specs").resolve()
    shutil.copy2(src / "hardware_specs" / "a40.toml", src / "hardware_specs" / "edited.toml")
    assert "edited" in _listed_specs(bindir, work)
    r = _run(bindir / "python", "-c", "from dlasim.validate import CASES, load_cases; print(CASES, len(load_cases()))",
             cwd=work)
    assert r.returncode == 0, r.stderr
    cases, n = r.stdout.split()
    assert Path(cases) == src / "validation" / "cases.csv" and int(n) == len(load_cases())
    assert sorted(p.name for p in src.iterdir()) == sorted(SOURCES)       # no build/, no dlasim.egg-info/
