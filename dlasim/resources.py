"""Where the files that ship with dlasim live: the hardware spec files and the validation cases and data.

An installed dlasim (a wheel, `pip install .`) carries them as real files in the package, `dlasim/_data/`
(pyproject.toml maps the package `dlasim._data` to the repository root and lists the files). Run from a
checkout (PYTHONPATH or an editable install) there is no `dlasim/_data/`: the files are the top-level
`hardware_specs/` and `validation/` folders beside the package, the sources to edit.
"""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def data_root() -> Path:
    """The folder that holds `hardware_specs/` and `validation/`."""
    package = Path(str(files("dlasim")))     # a real directory: pip unpacks wheels
    installed = package / "_data"
    return installed if (installed / "hardware_specs").is_dir() else package.parent


def spec_dir() -> Path:
    """The built-in hardware spec files (`NAME.toml`)."""
    return (data_root() / "hardware_specs").resolve()
