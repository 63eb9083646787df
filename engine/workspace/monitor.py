"""A live scoring session (`parm monitor` and the app's Monitor screen): files read as `parm
audit` reads them (a workbook's sheet, the columns named, from the settings or guessed), added
to the session in a folder, its figures and alerts, and the run's files written into --out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from engine.workspace.files import open_file
from engine.workspace.prepare import choose_columns

if TYPE_CHECKING:
    from engine.input.settings.config import AuditConfig
    from engine.live.monitor import FileInput, MonitorResult


@dataclass
class Monitored:
    """A monitor run: its result (engine.live.monitor.MonitorResult), what was said about each
    file as it was read (guessed columns, how its reads were dated), the files written."""

    result: MonitorResult
    said: list[str] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)


def is_session(path: str | Path) -> bool:
    """Whether `path` is a session's folder (the app opens it on the Monitor screen)."""
    from engine.live.intake.store import session_exists

    path = Path(path).expanduser()
    return path.is_dir() and session_exists(path)


def session_files(paths, config: AuditConfig, given=frozenset(), period: str | None = None):
    """(The files to add, each read and its columns chosen as `parm audit` chooses them; the
    sentences to say about them). DataError: a file that cannot be read, a doubtful guess."""
    from engine.core.errors import DataError
    from engine.live.intake.periods import file_day
    from engine.live.monitor import FileInput

    files: list[FileInput] = []
    said: list[str] = []
    for path in paths:
        file = open_file(path, runs=False, sheet=config.sheet)
        if file.sheet_question() is not None:
            raise DataError(f"File {file.path}: {file.sheet_question()} Name it with --sheet.")
        choice = choose_columns(file, config, given)
        if choice.question() is not None:
            raise DataError(f"{file.path}: {choice.question()} Name it with --score-col COLUMN.")
        chosen = config.updated(**choice.columns)
        if choice.sentence() is not None:
            said.append(f"{file.path.name}: {choice.sentence()}")
        day = file_day(period, file.path.stat().st_mtime)
        files.append(FileInput(file.path, file.digest or "", file.frame, chosen, day))
    return files, said


def monitor(
    session: str | Path,
    paths: list[str | Path],
    config: AuditConfig,
    out: str | Path | None = None,
    since: str | None = None,
    period: str | None = None,
    given=frozenset(),
    force: bool = False,
    record: bool = True,
    on_wait: Callable[[], None] | None = None,
    on_switched: Callable[[list[Path]], None] | None = None,
) -> Monitored:
    """Add `paths` to the session in `session`, judge it and (with `out`) write the run's files
    (engine.live.outputs). record: keep the run (the app's look at a session keeps nothing)."""
    from engine.live.monitor import monitor_session
    from engine.live.outputs import check_out, write_monitor

    files, said = session_files(paths, config, given, period)
    if out is not None:  # before anything is added: a run that cannot write changes nothing
        runs = [r["run_id"] for r in session_runs(session)] if is_session(session) else []
        check_out(out, runs, force)
    result = monitor_session(session, files, config, since, record, on_wait=on_wait)
    said += [f"{Path(a.path).name}: {a.dating}" for a in result.added]
    done = Monitored(result, said)
    if out is not None:
        done.written = write_monitor(result, out, force, on_switched)
    return done


def monitor_lists(result: MonitorResult, out: str | Path) -> list[Path]:
    """The lead's three lists of a run (or of the app's look) alone, written into `out`
    (engine.live.outputs.write_lists)."""
    from engine.live.outputs import write_lists

    return write_lists(result, out)


def monitor_trends(result: MonitorResult) -> dict:
    """Each item's and rater's exact agreement by day (engine.live.outputs.trends)."""
    from engine.live.outputs import trends

    return trends(result)


def session_runs(session: str | Path) -> list[dict]:
    """The runs kept in a session, oldest first (their records: id, time, counts, alerts)."""
    from engine.live.intake.store import open_store

    with open_store(session, create=False) as store:
        return store.runs()


def changes_since(result: MonitorResult, run_id: str | None):
    """What changed from run `run_id` (None: the session's first run) to `result`."""
    from engine.live.changes import changes_between
    from engine.live.intake.store import open_store

    base = next((r for r in result.earlier if r["run_id"] == run_id), None)
    with open_store(result.folder, create=False) as store:
        return changes_between(result.record, base, store)


__all__ = [
    "Monitored",
    "changes_since",
    "is_session",
    "monitor",
    "monitor_trends",
    "session_files",
    "session_runs",
]
