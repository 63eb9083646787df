"""Writing files so that readers never see half of one: each file is written in full to a
temporary file beside its target, flushed to disk, and only then renamed into place.

Settings files, exports and caches all write through here, so an error, a full disk or Ctrl+C
leaves the previous files as they were and no temporary file behind.
"""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
from pathlib import Path

from engine.core.errors import ExportError


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
