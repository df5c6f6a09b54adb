"""Render check for `--format html`: write the yolov4 Xavier DLA fallback page and screenshot it headless.

    python validation/html_check.py [--out DIR] [--chromium PATH]

Writes DIR/yolov4_xavier_dla.html (through the CLI, as a user would) and DIR/yolov4_xavier_dla.png (a
1400x2000 headless Chromium screenshot), prints the PNG path, and exits non-zero if the page or the
screenshot is missing, or the screenshot is blank (too small a file, or a single colour). Chromium is not a
dependency of dlasim: install it with `apt-get install -y chromium` where it is missing. Look at the PNG.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zlib

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
MIN_PNG_BYTES = 20_000


def find_chromium(explicit: str | None) -> str | None:
    if explicit:
        return explicit if os.path.exists(explicit) else None
    for c in CANDIDATES:
        if os.path.exists(c):
            return c
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def png_colours(path: str, limit: int = 16) -> int:
    """Number of distinct byte values in the decompressed image data, capped at `limit` (blank -> 1 or 2)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return 0
    pos, idat = 8, b""
    while pos + 8 <= len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    try:
        raw = zlib.decompress(idat)
    except zlib.error:
        return 0
    return min(limit, len(set(raw[: 4_000_000])))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="folder for the HTML and PNG (default: a new folder under /tmp)")
    ap.add_argument("--chromium", default=None)
    a = ap.parse_args(argv)
    out = a.out or tempfile.mkdtemp(prefix="dlasim-html-check-")
    os.makedirs(out, exist_ok=True)
    html_path = os.path.join(out, "yolov4_xavier_dla.html")
    png_path = os.path.join(out, "yolov4_xavier_dla.png")

    from dlasim.cli import main as cli_main
    rc = cli_main(["estimate", "zoo:yolov4", "--hw", "xavier-agx", "--device", "dla", "--fp16",
                   "--allowGPUFallback", "--format", "html", "-o", html_path])
    if rc != 0 or not os.path.exists(html_path):
        print(f"html_check: dlasim estimate --format html failed (exit {rc})", file=sys.stderr)
        return 1
    size = os.path.getsize(html_path)
    print(f"html: {html_path} ({size / 1024:.0f} KiB)")
    if size > 1_000_000:
        print("html_check: page larger than 1 MB", file=sys.stderr)
        return 1

    chromium = find_chromium(a.chromium)
    if chromium is None:
        print("html_check: chromium not found (apt-get install -y chromium)", file=sys.stderr)
        return 1
    if os.path.exists(png_path):
        os.remove(png_path)
    with tempfile.TemporaryDirectory(prefix="dlasim-chromium-") as profile:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", f"--user-data-dir={profile}", f"--screenshot={png_path}",
               "--window-size=1400,2000", "file://" + os.path.abspath(html_path)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            print("html_check: chromium timed out", file=sys.stderr)
            return 1
    if not os.path.exists(png_path):
        print(f"html_check: no screenshot (chromium exit {proc.returncode}): {proc.stderr.strip()[-400:]}",
              file=sys.stderr)
        return 1
    png_size = os.path.getsize(png_path)
    colours = png_colours(png_path)
    if png_size < MIN_PNG_BYTES or colours < 3:
        print(f"html_check: screenshot looks blank ({png_size} bytes, {colours} distinct values): {png_path}",
              file=sys.stderr)
        return 1
    print(png_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
