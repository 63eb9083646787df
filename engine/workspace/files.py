"""Opening a scoring file: its table (a CSV/TSV, or a workbook's sheet), the SHA-256 of its bytes
(the key of its saved runs and of its review, whichever sheet is read) and its saved runs,
newest first."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from engine.saved.store import SavedSession


@dataclass(frozen=True, eq=False)
class OpenedFile:
    """A file as read: its path, the digest of its bytes (None when they could not be read
    twice), its table, its saved runs (newest first) and why they could not be read (None);
    for a workbook, the sheet read, every sheet's name and, when the guess of the sheet is
    doubtful, the sheets that could be the table (engine.input.workbook); seconds: how long
    reading it and taking its digest took (the run's "reading" stage starts here)."""

    path: Path
    digest: str | None
    frame: pd.DataFrame
    runs: tuple[SavedSession, ...] = ()
    runs_problem: str | None = None
    sheet: str | None = None
    sheets: tuple[str, ...] = ()
    sheet_candidates: tuple[str, ...] = ()
    seconds: float = 0.0

    def sheet_question(self) -> str | None:
        """What to ask when two or more sheets could hold the answers, else None."""
        from engine.input.workbook import Sheets

        return Sheets(self.frame, self.sheet, self.sheets, self.sheet_candidates).question()

    def on_sheet(self, sheet: str | None) -> OpenedFile:
        """The same file with `sheet` read (itself when it is the sheet read, or not a
        workbook)."""
        if sheet is None or not self.sheets or sheet == self.sheet:
            return self
        from engine.input.workbook import read_sheets

        read = read_sheets(self.path, sheet)
        return dataclasses.replace(self, frame=read.frame, sheet=read.sheet, sheet_candidates=())

    @property
    def warnings(self) -> tuple[str, ...]:
        """What reading it noticed (a fallback encoding, replaced control characters)."""
        return tuple(self.frame.attrs.get("warnings", ()))

    def with_runs(self, runs) -> OpenedFile:
        """The same file with its saved runs as they are now (after a run was kept)."""
        return dataclasses.replace(self, runs=tuple(runs), runs_problem=None)


def open_file(path: str | Path, runs: bool = True, sheet: str | None = None) -> OpenedFile:
    """Read `path` (DataError naming what is wrong; a workbook's `sheet`, or the guessed one),
    take the digest of its bytes and, with `runs`, its saved runs (a problem reading them is
    kept, not raised: the file still opens)."""
    from engine.core.errors import DataError, ResumeError
    from engine.core.files import file_digest
    from engine.core.stages import READING, StageTimer
    from engine.input.workbook import read_sheets
    from engine.saved.store import list_runs

    path = Path(path).expanduser()
    timer = StageTimer()
    with timer.stage(READING):
        read = read_sheets(path, sheet)
        try:
            digest = file_digest(path)
        except OSError as exc:
            raise DataError(f"File {path} cannot be read: {exc.strerror or exc}") from None
    file = OpenedFile(path, digest, read.frame, (), None, read.sheet, read.names, read.candidates,
                      timer.timings[READING])  # fmt: skip
    if not runs:
        return file
    try:
        return file.with_runs(list_runs(digest))
    except ResumeError as exc:
        return dataclasses.replace(file, runs_problem=str(exc))
