"""`-o FILE` targets that are not plain new files: a device node or FIFO is written in place (a rename over it
would replace the node itself: `-o /dev/full` once turned /dev/full into a regular file), a FIFO without a
reader is a one-line error rather than a hang, a symbolic link keeps pointing at the file it names, and a
failed write leaves neither a temporary file nor a changed older file."""
from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from dlasim import calibrate as C
from dlasim.cli import main
from dlasim.errors import DlasimError, SpecError
from dlasim.safeio import write_text
from cli_errors import one_line_error

ROOT = Path(__file__).resolve().parents[1]
SMALL = str(ROOT / "validation" / "data" / "seeds" / "kernel_1x1.prototxt")
XAVIER = ROOT / "hardware_specs" / "xavier-agx.toml"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_device_is_a_one_line_error_and_stays_a_device(capsys):
    assert "No space left on device" in one_line_error(["estimate", SMALL, "-o", "/dev/full"], capsys)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_null_device_is_written_in_place(capsys):
    assert main(["estimate", SMALL, "--format", "json", "-o", os.devnull]) == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_without_reader_is_an_error_not_a_hang(tmp_path, capsys):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    assert "cannot write" in one_line_error(["estimate", SMALL, "-o", str(fifo)], capsys)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and os.listdir(tmp_path) == ["f"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_with_a_reader_receives_the_output(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    try:
        for _ in range(200):                   # the reader's open() must come first
            try:
                write_text(fifo, "x" * 100_000 + "\n")
                break
            except DlasimError:
                threading.Event().wait(0.01)
    finally:
        reader.join(timeout=10)
    assert got == ["x" * 100_000 + "\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_symlink_keeps_pointing_at_its_file(tmp_path, capsys):
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    link.symlink_to(real.name)
    assert main(["estimate", SMALL, "--format", "json", "-o", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == real.name
    assert real.read_text().startswith("{")
    assert sorted(os.listdir(tmp_path)) == ["link.json", "real.json"]


def test_failed_rename_leaves_no_temporary_file(tmp_path, capsys):
    target = tmp_path / "d"
    target.mkdir()
    assert "Is a directory" in one_line_error(["estimate", SMALL, "-o", str(target)], capsys)
    assert os.listdir(tmp_path) == ["d"] and os.listdir(target) == []


def test_refused_spec_leaves_the_older_file_and_no_temporary(tmp_path):
    dst = tmp_path / "x.toml"
    dst.write_text("older")
    with pytest.raises(SpecError, match="does not load"):
        C.write_spec(XAVIER, dst, {"gpu.memory_efficiency": -1.0}, {"gpu.memory_efficiency": "bad"})
    assert dst.read_text() == "older" and os.listdir(tmp_path) == ["x.toml"]


def test_written_file_gets_the_usual_mode(tmp_path):
    umask = os.umask(0o022)
    try:
        write_text(tmp_path / "a.txt", "a")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "a.txt").st_mode) == 0o644
