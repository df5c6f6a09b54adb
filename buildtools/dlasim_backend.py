"""dlasim's build backend: setuptools' own, run so that a build writes nothing into the source tree.

setuptools builds a wheel (`pip install .`, `pip wheel .`, `python -m build`) and an editable install in
`build/` and `dlasim.egg-info/` of the source folder and never prunes them: a file deleted from
`hardware_specs/` or `validation/` since the last build would still ride along in the next wheel from
`build/lib`. Here those two folders go to a fresh temporary folder per build (the `[build] build_base` and
`[egg_info] egg_base` options, given through the config file that DIST_EXTRA_CONFIG names; setuptools >= 65.5
reads it). The sdist is setuptools' unchanged: it needs its egg-info beside the sources it lists.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import Iterator

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401  (hooks passed through unchanged)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
)


@contextmanager
def _outside_the_tree() -> Iterator[None]:
    with tempfile.TemporaryDirectory(prefix="dlasim-build-") as tmp:
        base = tmp.replace("\\", "/").replace("%", "%%")      # a config value: no escapes, no interpolation
        cfg = os.path.join(tmp, "build.cfg")
        with open(cfg, "w", encoding="utf-8") as f:
            f.write(f"[build]\nbuild_base = {base}/build\n[egg_info]\negg_base = {base}\n")
        old = os.environ.get("DIST_EXTRA_CONFIG")
        os.environ["DIST_EXTRA_CONFIG"] = cfg
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("DIST_EXTRA_CONFIG", None)
            else:
                os.environ["DIST_EXTRA_CONFIG"] = old


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with _outside_the_tree():
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    with _outside_the_tree():
        return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    with _outside_the_tree():
        return _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    with _outside_the_tree():
        return _setuptools.prepare_metadata_for_build_editable(metadata_directory, config_settings)
