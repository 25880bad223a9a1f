"""The ``workbench`` command run in the test's process (no interpreter start): its exit status and output."""

import contextlib
import io
import sys


def workbench(*args: object) -> tuple[int, str, str]:
    """Run the ``workbench`` command in this process: (exit status, stdout, stderr)."""
    from workbench.cli import main

    out, err, argv = io.StringIO(), io.StringIO(), sys.argv
    sys.argv = ["workbench", *map(str, args)]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
                code = 0
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    finally:
        sys.argv = argv
    return code, out.getvalue(), err.getvalue()


def refused(run: tuple[int, str, str], expected: str) -> None:
    """One line `error: ...` holding ``expected``, exit 2."""
    code, _, err = run
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and expected in err, run
