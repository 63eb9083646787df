"""Reading and writing files safely. Reading: a path given as input must be a regular file,
checked on the open file itself, so a named pipe, a device or a folder is refused instead of
hanging or reading forever. Writing: readers never see half a file; each file is written in
full to a temporary file beside its target, flushed to disk, and only then renamed into place.

Settings files, exports and caches all write through here, so an error, a full disk, Ctrl+C or
SIGTERM leaves the previous files as they were and no temporary file behind.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from engine.core.errors import ExportError, ParmError

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


def refuse_non_regular_targets(paths) -> None:
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


def _stage(path: Path, text: str | bytes) -> Path:
    """Write `text` (or bytes) to a temporary file beside `path` (flushed to disk); returns its
    path."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ExportError(f"Cannot write to {path.parent}: {reason(exc)}") from None
    try:
        # mkstemp creates 0600 files; outputs are shared, so give them the usual umask mode.
        os.fchmod(fd, 0o666 & ~_umask())
        # Lone surrogates cannot be encoded; replacing one character beats losing the export.
        handle = (
            os.fdopen(fd, "wb")
            if isinstance(text, bytes)
            else os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="")
        )
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        _remove(Path(tmp))
        if isinstance(exc, OSError):
            raise ExportError(f"Could not write {path}: {reason(exc)}") from None
        raise
    return Path(tmp)


def atomic_write_files(files: dict[Path, str | bytes]) -> None:
    """Write several files (text or bytes) all-or-nothing as far as the file system allows.

    Every file is first written in full to a temporary file beside its target; only when all
    are written are they renamed into place. A failure (full disk, Ctrl+C) before the renames
    leaves every previous file untouched, and no temporary file is left behind. Files are
    renamed in the order given, so a file that refers to the others can come last.
    """
    refuse_non_regular_targets(files)
    staged: dict[Path, Path] = {}
    try:
        for path, text in files.items():
            staged[Path(path)] = _stage(Path(path), text)
        for path, tmp in list(staged.items()):
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise ExportError(f"Could not write {path}: {reason(exc)}") from None
            del staged[path]
    finally:
        for tmp in staged.values():
            _remove(tmp)


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


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def reason(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full (no space left on device)"
    return exc.strerror or str(exc)
