"""The `parm` console script's first module: quiet on Ctrl+C and SIGTERM from the first moment.

Importing the CLI (Typer, Rich, Click) takes a noticeable part of a second; a Ctrl+C in that
time would print Python's own traceback. Nothing has been read or written yet, so the handler
installed here simply leaves at once with the usual code (130 for Ctrl+C, 143 for SIGTERM) and
no output; once the CLI is imported, Python's own handlers are back and the commands handle
interruption themselves (parm_tui.headless cleans up and reports it in one line).

A command that was interrupted has cleaned up and said so by the time it returns its code; the
process then leaves at once (os._exit) instead of finalising the interpreter, because torch's
threads may still be inside a model when Ctrl+C arrives, and tearing the interpreter down under
them can abort the process ("terminate called without an active exception", exit -6) instead of
leaving with 130 or 143.
"""

from __future__ import annotations

import os
import signal
import sys

# The exit codes of an interrupted command (parm_tui.headless): Ctrl+C, SIGTERM.
INTERRUPTED = (130, 143)


def _leave_quietly(signum, frame) -> None:
    os._exit(128 + signum)


def _leave_now(code: int) -> None:
    """Leave with `code` without finalising the interpreter (see the module docstring)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `parm` script: install the quiet handlers, import the CLI, run it."""
    quiet = [signal.SIGINT] + ([signal.SIGTERM] if hasattr(signal, "SIGTERM") else [])
    previous = {signum: signal.signal(signum, _leave_quietly) for signum in quiet}
    from parm_tui.cli import main as cli_main

    for signum, handler in previous.items():
        signal.signal(signum, handler)
    try:
        cli_main(argv)
    except SystemExit as leaving:
        if leaving.code in INTERRUPTED:
            _leave_now(leaving.code)
        raise


if __name__ == "__main__":
    main()
