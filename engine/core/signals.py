"""Holding Ctrl+C and SIGTERM while a set of files is switched into place.

A switch (renaming the files of an output set into place, or exchanging two folders) is short,
but a signal in its middle would leave some files new and some old. Inside `deferred_signals`
the signals are recorded instead of acted on; when the block ends, the handlers that were in
place before run as they would have (a KeyboardInterrupt, parm audit's Terminated, or the
default action), so the process still stops, just after the switch and not in it.

Python runs signal handlers only in the main thread, so only the main thread can hold them.
The app writes its exports in a worker thread: it waits for a switch in progress
(`wait_for_switch`) before it exits.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_HELD = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))
# Held by whichever thread is switching files into place.
_SWITCHING = threading.RLock()


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Run the block with SIGINT and SIGTERM held (main thread only), then deliver any that came:
    the previous handler is called (raising KeyboardInterrupt or the like), or for the default
    action the signal is sent again."""
    with _SWITCHING:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        pending: list[int] = []
        previous: dict[int, Any] = {}
        for signum in _HELD:
            try:
                previous[signum] = signal.signal(signum, lambda s, _f: pending.append(s))
            except (ValueError, OSError):
                continue  # cannot be set here: it acts as it would have
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            for signum in dict.fromkeys(pending):
                _deliver(signum, previous[signum])


def _deliver(signum: int, handler: object) -> None:
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), signum)
    # SIG_IGN, or None (a handler not set from Python): nothing to do


def wait_for_switch(timeout: float = 30.0) -> bool:
    """Wait until no thread is switching files into place (True), or `timeout` seconds
    (False): called by the app before it exits, so an export is never cut in its switch."""
    if not _SWITCHING.acquire(timeout=timeout):
        return False
    _SWITCHING.release()
    return True
