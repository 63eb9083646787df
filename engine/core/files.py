"""Reading and writing files safely. Reading: a path given as input must be a regular file,
checked on the open file itself, so a named pipe, a device or a folder is refused instead of
hanging or reading forever. Writing: readers never see half a file; each file is written in
full to a temporary file beside its target, flushed to disk, and only then renamed into place.

Settings files, exports, sessions and caches all write through here, so an error, a full disk,
Ctrl+C or SIGTERM leaves the previous files as they were and no temporary file behind; a
temporary file that a killed process left (its name says which process) is removed by the next
write into the same folder. Every message about a failed write or read says the true cause
(`reason`: disk full, read-only file system, permission denied).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import tempfile
import time
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from engine.core.errors import ExportError, ParmError

if TYPE_CHECKING:
    from typing_extensions import Buffer

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words ("a folder", "a named pipe (FIFO)", ...)."""
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def open_regular(path: Path, what: str, error: type[ParmError]) -> BinaryIO:
    """Open `path` for binary reading, refusing anything that is not a regular file.

    The file is opened without blocking (opening a FIFO would otherwise wait for a writer) and
    checked with fstat on the open descriptor, so nothing can be swapped in between. Errors are
    `error` with a message that starts with `what` and names the path.
    """
    nonblocking = getattr(os, "O_NONBLOCK", 0)  # POSIX: opening a FIFO then returns at once
    try:
        fd = os.open(path, os.O_RDONLY | nonblocking)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise error(f"{what} {path} is a folder, not a file.") from None
        raise error(f"{what} {path} cannot be read: {reason(exc)}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise error(f"{what} {path} is {file_kind(mode)}, not a regular file.")
    if nonblocking:
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def refuse_non_regular_targets(paths: Iterable[Path]) -> None:
    """Before anything is written: every target that exists must be a regular file (or a link),
    so an export never renames some files into place and then fails on a folder."""
    for path in paths:
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue  # nothing there yet (the folder is checked, or created, when writing)
        except OSError as exc:
            raise ExportError(f"Cannot write {path}: {reason(exc)}") from None
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise ExportError(f"Cannot write {path}: it is {file_kind(mode)}; nothing was written.")


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename; errors name the path."""
    atomic_write_files({Path(path): text})


def stage(path: Path, text: str | bytes | tuple[Buffer, ...]) -> Path:
    """Write `text` (or bytes, or a tuple of bytes-like parts written one after another, so a
    large array need not be copied into one bytes object) to a temporary file beside `path`,
    flushed to disk; returns its path. The name (`.NAME.parm-PID-XXXXXXXX.tmp`) says it is parm's and which process wrote
    it, so `remove_stale_temporaries` can tell a killed run's leftovers from a live one's."""
    return _stage(Path(path), text)


def _stage(path: Path, text: str | bytes | tuple[Buffer, ...]) -> Path:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            prefix=f".{path.name}.parm-{os.getpid()}-", suffix=".tmp", dir=path.parent
        )
    except OSError as exc:
        raise ExportError(f"Cannot write to {path.parent}: {reason(exc)}") from None
    try:
        # mkstemp creates 0600 files; outputs are shared, so give them the usual umask mode.
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o666 & ~_umask())
        # Lone surrogates cannot be encoded; replacing one character beats losing the export.
        handle = (
            os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="")
            if isinstance(text, str)
            else os.fdopen(fd, "wb")
        )
        with handle:
            for part in text if isinstance(text, tuple) else (text,):
                handle.write(part)  # type: ignore[arg-type]  # str to text, parts to binary
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        remove_quietly(Path(tmp))
        if isinstance(exc, OSError):
            raise ExportError(f"Could not write {path}: {reason(exc)}") from None
        raise
    return Path(tmp)


def atomic_write_files(files: Mapping[Path, str | bytes | tuple[Buffer, ...]]) -> None:
    """Write several files (text, bytes or parts, as `stage` takes them) all-or-nothing as far as the file system allows.

    Every file is first written in full to a temporary file beside its target; only when all
    are written are they renamed into place, with Ctrl+C and SIGTERM held until the last rename
    (engine.core.signals), so a signal cannot stop the renames half-way. A failure (full disk,
    Ctrl+C) before the renames leaves every previous file untouched, and no temporary file is
    left behind. Files are renamed in the order given, so a file that refers to the others can
    come last. (An output set has its own switch: engine.outputs.sets.)
    """
    from engine.core.signals import deferred_signals

    refuse_non_regular_targets(files)
    for folder in {Path(path).parent for path in files}:
        remove_stale_temporaries(folder)
    staged: dict[Path, Path] = {}
    try:
        for path, text in files.items():
            staged[Path(path)] = _stage(Path(path), text)
        with deferred_signals():
            for path, tmp in list(staged.items()):
                try:
                    os.replace(tmp, path)
                except OSError as exc:
                    raise ExportError(f"Could not write {path}: {reason(exc)}") from None
                del staged[path]
    finally:
        for tmp in staged.values():
            remove_quietly(tmp)


# parm's temporary files: `.NAME.parm-PID-XXXXXXXX.tmp` (and the folders of an output set being
# written, `.NAME.parm-PID-XXXXXXXX.set`); before this naming, `.NAME.XXXXXXXX.tmp`.
TEMPORARY = re.compile(r"\.(?P<name>.+)\.parm-(?P<pid>\d+)-[a-z0-9_]{8}\.(?P<kind>tmp|set)")
_LEGACY_TEMPORARY = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp")
# A legacy temporary file names no process: it is stale once no write could still be going on.
LEGACY_STALE_SECONDS = 600


def is_stale_temporary(entry: Path, names: Collection[str] | None = None) -> bool:
    """Whether `entry` is a temporary file (or set folder) parm left behind: parm's own name, and
    the process that wrote it no longer runs (where that cannot be asked, and for the older
    names, which say no process and must be one of `names`: untouched for 10 minutes)."""
    found = TEMPORARY.fullmatch(entry.name)
    if found is not None:
        alive = pid_alive(int(found["pid"]))
        return not alive if alive is not None else _untouched(entry)
    legacy = _LEGACY_TEMPORARY.fullmatch(entry.name)
    return (
        legacy is not None and names is not None and legacy["name"] in names and _untouched(entry)
    )


def _untouched(entry: Path) -> bool:
    try:
        return time.time() - os.lstat(entry).st_mtime > LEGACY_STALE_SECONDS
    except OSError:
        return False


def remove_stale_temporaries(folder: Path, names: Collection[str] | None = None) -> list[Path]:
    """Remove the temporary files in `folder` that killed parm runs left (see
    `is_stale_temporary`; `names`: the file names whose older-style temporaries count too).
    Nothing else is touched, and nothing is an error: this is tidying. Returns what went."""
    removed: list[Path] = []
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return removed
    for entry in entries:
        if entry.name.endswith(".tmp") and is_stale_temporary(entry, names):
            try:
                if stat.S_ISREG(os.lstat(entry).st_mode):
                    os.unlink(entry)
                    removed.append(entry)
            except OSError:
                pass
    return removed


def pid_alive(pid: int) -> bool | None:
    """Whether a process with this id runs on this machine; None where that cannot be asked
    (not POSIX). A process of another user counts as running."""
    if pid == os.getpid():
        return True
    if os.name != "posix":
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by someone else
    return True


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entries (the renames into it) to disk; best effort, POSIX only."""
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes (hex), read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(Path(path).expanduser(), "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def remove_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# The true cause of a failed read or write, by errno (an OSError) or by SQLite's result code.
_CAUSES = {
    errno.ENOSPC: "the disk is full (no space left on device)",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied (operation not permitted)",
    errno.ENOENT: "no such file or folder",
    errno.EIO: "input/output error (a failing disk or a lost network drive)",
}
if hasattr(errno, "EDQUOT"):
    _CAUSES[errno.EDQUOT] = "the disk quota is exceeded"
# SQLite's primary result codes (https://sqlite.org/rescode.html) for the same causes.
_SQLITE_CAUSES = {
    13: _CAUSES[errno.ENOSPC],  # SQLITE_FULL
    8: "read-only: the database or its folder cannot be written",  # SQLITE_READONLY
    3: _CAUSES[errno.EACCES],  # SQLITE_PERM
    23: _CAUSES[errno.EACCES],  # SQLITE_AUTH
    10: _CAUSES[errno.EIO],  # SQLITE_IOERR
    14: "the file cannot be opened (its folder is missing or not writable)",  # SQLITE_CANTOPEN
}
# Python 3.10 has no sqlite_errorcode: SQLite's own words for the codes above.
_SQLITE_WORDS = {
    "disk is full": 13,
    "readonly database": 8,
    "disk i/o error": 10,
    "unable to open database": 14,
}


def reason(exc: BaseException) -> str:
    """Why a read or write failed, in words a user acts on: "the disk is full", "read-only file
    system", "permission denied", ... for an OSError by its errno, for an sqlite3 error by its
    result code; otherwise the error's own text."""
    if isinstance(exc, OSError):
        if exc.errno in _CAUSES:
            return _CAUSES[exc.errno]
        return exc.strerror or str(exc)
    code = storage_code(exc)
    return _SQLITE_CAUSES.get(code, str(exc)) if code is not None else str(exc)


def storage_code(exc: BaseException) -> int | None:
    """SQLite's primary result code of an sqlite3 error when it is about the storage (full,
    read-only, permission, I/O, cannot open) rather than the database's content; else None."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        text = str(exc).lower()
        code = next((c for words, c in _SQLITE_WORDS.items() if words in text), None)
    if code is None:
        return None
    code &= 0xFF  # an extended code (SQLITE_IOERR_WRITE, ...) carries its primary code
    return code if code in _SQLITE_CAUSES else None
