"""One monitor run at a time on a session: a lock on a file in the session's folder, held for
the whole run (files added, figures, the run's record, its outputs). A second run waits for it
(saying so once), so two runs never interleave their files or take each other's run for the
last one. The database's own locking guards each statement besides (engine.live.intake.store).

The lock is the operating system's (fcntl on Linux and macOS, msvcrt on Windows), released when
the process ends however it ends: a killed run never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from engine.core.errors import SessionError
from engine.core.files import reason

LOCK_NAME = "parm-session.lock"


@contextlib.contextmanager
def session_lock(folder: str | Path, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the session's lock; `on_wait()` is called once if another run holds it first."""
    folder = Path(folder).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / LOCK_NAME, "a+b")  # noqa: SIM115 - held for the block
    except OSError as exc:
        raise SessionError(f"The session {folder} cannot be locked: {reason(exc)}.") from None
    try:
        if not _try_lock(handle):
            if on_wait is not None:
                on_wait()
            _lock(handle)
        yield
    finally:
        _unlock(handle)
        handle.close()


# sys.platform, not os.name: the test mypy follows (win32 exactly when os.name is nt).
if sys.platform == "win32":  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(handle) -> bool:
        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _lock(handle) -> None:
        while not _try_lock(handle):
            import time

            time.sleep(0.2)

    def _unlock(handle) -> None:
        with contextlib.suppress(OSError):
            msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(handle) -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _lock(handle) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)

    def _unlock(handle) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
