"""The `parm` console script's first module: quiet on Ctrl+C and SIGTERM from the first moment.

Importing the CLI (Typer, Rich, Click) takes a noticeable part of a second; a Ctrl+C in that
time would print Python's own traceback. Nothing has been read or written yet, so the handler
installed here simply leaves at once with the usual code (130 for Ctrl+C, 143 for SIGTERM) and
no output; once the CLI is imported, Python's own handlers are back and the commands handle
interruption themselves (parm_tui.headless cleans up and reports it in one line).
"""

from __future__ import annotations

import os
import signal


def _leave_quietly(signum, frame) -> None:
    os._exit(128 + signum)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `parm` script: install the quiet handlers, import the CLI, run it."""
    quiet = [signal.SIGINT] + ([signal.SIGTERM] if hasattr(signal, "SIGTERM") else [])
    previous = {signum: signal.signal(signum, _leave_quietly) for signum in quiet}
    from parm_tui.cli import main as cli_main

    for signum, handler in previous.items():
        signal.signal(signum, handler)
    cli_main(argv)


if __name__ == "__main__":
    main()
