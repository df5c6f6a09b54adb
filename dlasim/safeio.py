"""Reading the files users hand dlasim: regular files only, with a size cap and a one-line error.

A FIFO opened for reading blocks until a writer appears, and a link to /dev/zero reads forever, so the
path is checked with stat() before it is opened, opened without blocking, and checked again with fstat()
on the open descriptor (the file may have been swapped in between). At most `limit` bytes are read.
"""
from __future__ import annotations

import json
import os
import stat
import sys

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
