"""Reading the files users hand dlasim: regular files only, with a size cap and a one-line error; writing
dlasim's outputs whole or not at all.

A FIFO opened for reading blocks until a writer appears, and a link to /dev/zero reads forever, so the
path is checked with stat() before it is opened, opened without blocking, and checked again with fstat()
on the open descriptor (the file may have been swapped in between). At most `limit` bytes are read.

An output (`-o FILE`) goes to a temporary file beside its target, renamed over it once complete, so a failure
leaves any older file as it was; through a symbolic link the file it names is replaced, not the link. A target
that exists and is no regular file (/dev/stdout, a terminal, a FIFO, /dev/null) is written in place: a rename
would replace the device node itself.
"""
from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from collections.abc import Callable

from .errors import DlasimError, ModelError

MiB = 1 << 20
TEXT_LIMIT = 256 * MiB            # prototxt, JSON profiles and layer info, TOML specs, trtexec logs
ONNX_LIMIT = (2 << 30) - 1        # protobuf cannot parse a message of 2 GiB or more (protobuf's kint32max)

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _size(n: int) -> str:
    return f"{n / MiB:.1f} MiB" if n >= MiB else f"{n} bytes"


def read_bytes(path, what: str = "file", limit: int = TEXT_LIMIT,
               error: type[DlasimError] = ModelError) -> bytearray:
    """The contents of the regular file `path`, at most `limit` bytes; else `error` with one line.

    Read into one buffer of the file's size (a 2 GB model costs 2 GB here, not twice that)."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{p}: cannot read {what} ({_kind(st.st_mode)}, expected a regular file)")
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"{p}: cannot read {what} (no such file)") from None
    except (OSError, ValueError) as e:  # ValueError: a NUL byte in the path
        raise error(f"{p}: cannot read {what} ({getattr(e, 'strerror', None) or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{p}: cannot read {what} ({_kind(st.st_mode)}, expected a regular file)")
        if st.st_size > limit:
            raise error(f"{p}: {what} is {_size(st.st_size)} ({st.st_size:,} bytes), more than the {limit:,} "
                        f"bytes dlasim reads")
        buf = bytearray(st.st_size + 1)   # one spare byte tells a file that grew since fstat
        view, total = memoryview(buf), 0
        while total <= st.st_size:
            n = os.readv(fd, [view[total:]])
            if not n:
                break
            total += n
        view.release()
        del buf[total:]
        while total > st.st_size and total <= limit:   # grown since fstat, or a /proc file of size 0
            more = os.read(fd, min(16 * MiB, limit + 1 - total))
            if not more:
                break
            buf += more
            total += len(more)
        if total > limit:
            raise error(f"{p}: {what} is more than the {limit:,} bytes dlasim reads")
        return buf
    except OSError as e:
        raise error(f"{p}: cannot read {what} ({e.strerror or e})") from None
    finally:
        os.close(fd)


def read_text(path, what: str = "file", limit: int = TEXT_LIMIT, error: type[DlasimError] = ModelError,
              encoding: str = "utf-8") -> str:
    """read_bytes decoded; a decoding error is one line naming the byte offset."""
    data = read_bytes(path, what, limit, error)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        raise error(f"{os.fspath(path)}: {what} is not {encoding.split('-')[0].upper()} text "
                    f"({e.reason} at byte {e.start})") from None


def load_toml(path, what: str = "TOML file", error: type[DlasimError] = ModelError) -> dict:
    """Parse a TOML file (regular, capped) or raise one line; nesting beyond Python's recursion limit is
    refused like load_json's."""
    try:
        import tomllib
    except ModuleNotFoundError:        # Python 3.10
        import tomli as tomllib
    p = os.fspath(path)
    text = read_text(p, what, error=error)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"{p}: not valid TOML ({e})") from None
    except RecursionError:
        raise error(f"{p}: not valid TOML (arrays or tables nest too deeply)") from None


def load_json(path, what: str = "JSON file", error: type[DlasimError] = ModelError):
    """Parse a JSON file (regular, capped) or raise one line; nesting beyond Python's recursion limit is
    refused (json raises RecursionError there; real trtexec / trex files nest 6 levels at most)."""
    p = os.fspath(path)
    text = read_text(p, what, error=error)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{p}: malformed JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise error(f"{p}: JSON nests too deeply (more than about {sys.getrecursionlimit()} levels)") from None


def write_text(path, text: str, check: Callable[[str], None] | None = None, suffix: str = "",
               error: type[DlasimError] = DlasimError) -> None:
    """Write `text` to `path` (see the module docstring); `check(tmp_path)` may refuse the written text by
    raising before it replaces anything (the temporary file's name ends in `suffix`). An OS error is `error`
    with one line; nothing is left half-written."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except (OSError, ValueError) as e:
        raise error(f"{p}: cannot write ({getattr(e, 'strerror', None) or e})") from None
    if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        if check is not None:
            _write_temp(tempfile.gettempdir(), text, check, None, p, suffix, error)
        _write_in_place(p, text, error)
        return
    target = os.path.realpath(p)
    _write_temp(os.path.dirname(target), text, check, target, p, suffix, error)


def _write_temp(folder: str, text: str, check, target: str | None, p: str, suffix: str,
                error: type[DlasimError]) -> None:
    """Write a temporary file in `folder`, check it, rename it to `target` (None: only check); always cleaned."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".dlasim-", suffix=suffix)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if check is not None:
            check(tmp)
        if target is not None:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)       # mkstemp makes 0600; give the file the usual mode
            os.replace(tmp, target)
            tmp = None
    except (OSError, ValueError) as e:
        raise error(f"{p}: cannot write ({getattr(e, 'strerror', None) or e})") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def _write_in_place(p: str, text: str, error: type[DlasimError]) -> None:
    """Write to an existing non-regular file; a FIFO without a reader is an error, not a hang."""
    try:
        fd = os.open(p, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        os.set_blocking(fd, True)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise error(f"{p}: cannot write ({e.strerror or e})") from None
