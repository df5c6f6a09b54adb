"""Where the files that ship with dlasim live: the hardware spec files and the validation cases and data.

They are package data under `dlasim/_data/` and are found through importlib.resources, the same way in a
wheel, a `pip install .` and an editable install. In the source repository `dlasim/_data/hardware_specs` and
`dlasim/_data/validation` are links to the top-level `hardware_specs/` and `validation/` folders (the
sources); a build copies their files into the package (pyproject.toml, `[tool.setuptools.package-data]`).
"""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def data_root() -> Path:
    """The folder that holds `hardware_specs/` and `validation/` (a real directory: pip unpacks wheels)."""
    root = files("dlasim") / "_data"
    return Path(str(root))


def spec_dir() -> Path:
    """The built-in hardware spec files (`NAME.toml`); in a checkout, the top-level folder the link names."""
    return (data_root() / "hardware_specs").resolve()
