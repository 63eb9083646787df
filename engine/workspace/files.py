"""Opening a scoring file: its table, the SHA-256 of its bytes (the key of its saved runs and of
its review) and its saved runs, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from engine.saved.store import SavedSession


@dataclass(frozen=True, eq=False)
class OpenedFile:
    """A file as read: its path, the digest of its bytes (None when they could not be read
    twice), its table, its saved runs (newest first) and why they could not be read (None)."""

    path: Path
    digest: str | None
    frame: pd.DataFrame
    runs: tuple[SavedSession, ...] = ()
    runs_problem: str | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """What reading it noticed (a fallback encoding, replaced control characters)."""
        return tuple(self.frame.attrs.get("warnings", ()))

    def with_runs(self, runs) -> OpenedFile:
        """The same file with its saved runs as they are now (after a run was kept)."""
        return OpenedFile(self.path, self.digest, self.frame, tuple(runs), None)


def open_file(path: str | Path, runs: bool = True) -> OpenedFile:
    """Read `path` (DataError naming what is wrong), take the digest of its bytes and, with
    `runs`, its saved runs (a problem reading them is kept, not raised: the file still opens)."""
    from engine.core.errors import DataError, ResumeError
    from engine.core.files import file_digest
    from engine.input.table import read_table
    from engine.saved.store import list_runs

    path = Path(path).expanduser()
    frame = read_table(path)
    try:
        digest = file_digest(path)
    except OSError as exc:
        raise DataError(f"File {path} cannot be read: {exc.strerror or exc}") from None
    if not runs:
        return OpenedFile(path, digest, frame)
    try:
        return OpenedFile(path, digest, frame, list_runs(digest))
    except ResumeError as exc:
        return OpenedFile(path, digest, frame, (), str(exc))
