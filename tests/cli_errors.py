"""The CLI's contract for bad input, shared by the input and output tests: exit 2 and one line on stderr."""
from __future__ import annotations

from dlasim.cli import main


def one_line_error(argv, capsys) -> str:
    """Run the CLI on `argv`, check it refused with exit 2 and one 'dlasim: error: ' line; return that line."""
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("dlasim: error: ") and err.count("\n") == 1, err
    return err
