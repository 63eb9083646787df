"""Sessions: for each input file (by the SHA-256 of its bytes), the settings and results of its
last run, so reopening the file can resume that audit without running it again.

A session lives in `<data dir>/sessions/<file digest>/`: `session.json` (the settings, the date,
one entry per result and where the review stopped) and two files per result
(engine.saved.archive). A run of a file (a SessionResult) holds a list of results, one per
audited item; each entry names its item (None for a file audited as a whole) and keeps the data
rows it flagged, and the rows the previous run flagged, so a re-run can say which flags are new.
A save writes the new result files and then session.json in one all-or-nothing batch, and only
then removes the files of the run it replaces.

Finding a session reads only session.json, so the app can ask about it before numpy and the
pipeline are loaded; the results load with engine.saved.archive, and `restore_session` makes
the SessionResult the app resumes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from engine.core.errors import ConfigError, ParmError, ResumeError
from engine.core.files import atomic_write_files
from engine.core.places import data_dir
from engine.input.config import AuditConfig, config_from_dict, settings_digest

if TYPE_CHECKING:  # only for annotations: finding a session must not load numpy
    from engine.input.items import Items
    from engine.input.responses import Responses
    from engine.results.item import AuditResult
    from engine.results.session import SessionResult

FORMAT = "parm-session"
SCHEMA_VERSION = 1
SESSION_FILE = "session.json"
SESSIONS_FOLDER = "sessions"


@dataclass(frozen=True)
class SavedResult:
    """One saved result of a run: its files' `name`, the `item` it audits (None: the whole
    file), its run id and settings digest, counts, and the data rows flagged by it and by the
    previous run of the same item (None when there was none)."""

    name: str
    item: str | None
    run_id: str
    settings_digest: str
    responses: int
    flagged_rows: tuple[int, ...]
    previous_flagged_rows: tuple[int, ...] | None = None

    @property
    def flagged(self) -> int:
        return len(self.flagged_rows)


@dataclass(frozen=True)
class SavedSession:
    """The saved session of one input file. settings: the settings the run was started with
    (JSON form); saved_at: UTC ISO 8601; review_row: the data row the review last showed."""

    folder: Path
    file_digest: str
    source: str
    saved_at: str
    settings: dict
    results: tuple[SavedResult, ...]
    review_row: int | None = None

    def config(self) -> AuditConfig:
        """The saved settings, validated again (ResumeError when this parm refuses them)."""
        try:
            return config_from_dict(self.settings)
        except ConfigError as exc:
            raise ResumeError(
                f"The settings saved in {self.folder / SESSION_FILE} are not valid here: {exc}"
            ) from None

    @property
    def run_ids(self) -> tuple[str, ...]:
        return tuple(entry.run_id for entry in self.results)


def session_folder(digest: str, base: Path | None = None) -> Path:
    return (Path(base) if base is not None else data_dir()) / SESSIONS_FOLDER / digest


def find_session(digest: str, base: Path | None = None) -> SavedSession | None:
    """The saved session of the file with this digest; None when there is none. ResumeError
    (naming the file) when it exists but cannot be used."""
    path = session_folder(digest, base) / SESSION_FILE
    if not path.exists():
        return None
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResumeError(f"The saved session {path} cannot be read ({exc}).") from None
    if not isinstance(values, dict) or values.get("format") != FORMAT:
        raise ResumeError(f"{path} is not a parm session file.")
    if values.get("schema") != SCHEMA_VERSION:
        raise ResumeError(
            f"The saved session {path} has schema {values.get('schema')!r}; this parm reads "
            f"schema {SCHEMA_VERSION} (a different parm wrote it)."
        )
    try:
        return _session(path.parent, values)
    except (KeyError, TypeError, ValueError) as exc:
        raise ResumeError(
            f"The saved session {path} is damaged ({type(exc).__name__}: {exc})."
        ) from None


def _session(folder: Path, values: dict) -> SavedSession:
    results = []
    for entry in values["results"]:
        previous = entry["previous_flagged_rows"]
        results.append(
            SavedResult(
                name=_safe_name(entry["name"]),
                item=None if entry["item"] is None else str(entry["item"]),
                run_id=str(entry["run_id"]),
                settings_digest=str(entry["settings_digest"]),
                responses=int(entry["responses"]),
                flagged_rows=tuple(int(r) for r in entry["flagged_rows"]),
                previous_flagged_rows=None if previous is None else tuple(int(r) for r in previous),
            )
        )
    review_row = values["review_row"]
    if not isinstance(values["settings"], dict):
        raise TypeError("settings is not an object")
    return SavedSession(
        folder=folder,
        file_digest=str(values["file_digest"]),
        source=str(values["source"]),
        saved_at=str(values["saved_at"]),
        settings=values["settings"],
        results=tuple(results),
        review_row=None if review_row is None else int(review_row),
    )


def _safe_name(name) -> str:
    """A result's file name stem, refused when it could point outside the session folder."""
    name = str(name)
    if not name or Path(name).name != name or name.startswith("."):
        raise ValueError(f"result name {name!r} is not a plain file name")
    return name


def _entry_dict(entry: SavedResult) -> dict:
    previous = entry.previous_flagged_rows
    return {
        "name": entry.name,
        "item": entry.item,
        "run_id": entry.run_id,
        "settings_digest": entry.settings_digest,
        "responses": entry.responses,
        "flagged_rows": list(entry.flagged_rows),
        "previous_flagged_rows": None if previous is None else list(previous),
    }


def _session_text(session: SavedSession) -> str:
    values = {
        "format": FORMAT,
        "schema": SCHEMA_VERSION,
        "file_digest": session.file_digest,
        "source": session.source,
        "saved_at": session.saved_at,
        "settings": session.settings,
        "results": [_entry_dict(entry) for entry in session.results],
        "review_row": session.review_row,
    }
    return json.dumps(values, ensure_ascii=False, indent=1) + "\n"


def save_session(
    digest: str, source: str | Path, result: SessionResult, base: Path | None = None
) -> SavedSession:
    """Save a finished run of the file with this digest: the settings it was started with and
    every item's result. Replaces the previous run of the file, keeping which rows that run
    flagged. Raises ResumeError when it cannot write."""
    from engine.saved.archive import result_files

    folder = session_folder(digest, base)
    earlier = _previous_run(digest, base)
    files: dict[Path, str | bytes] = {}
    entries = []
    for k, item in enumerate(result.results):
        name = f"result-{item.run_id}-{k}"
        files.update(result_files(item, folder, name))
        previous = earlier.get(item.responses.item)
        entries.append(
            SavedResult(
                name=name,
                item=item.responses.item,
                run_id=item.run_id,
                settings_digest=settings_digest(item.config),
                responses=len(item.responses),
                flagged_rows=tuple(int(r) for r in item.responses.rows[item.flagged]),
                previous_flagged_rows=None if previous is None else previous.flagged_rows,
            )
        )
    session = SavedSession(
        folder=folder,
        file_digest=digest,
        source=str(source),
        saved_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        settings=result.config.to_dict(),
        results=tuple(entries),
    )
    # session.json goes last, so it never names result files that are not there yet.
    files[folder / SESSION_FILE] = _session_text(session)
    _write(files)
    _remove_other_results(folder, {entry.name for entry in entries})
    return session


def _previous_run(digest: str, base: Path | None) -> dict:
    """The previous run's entries by item; a session that cannot be read counts as none."""
    try:
        earlier = find_session(digest, base)
    except ResumeError:
        return {}
    return {} if earlier is None else {entry.item: entry for entry in earlier.results}


def _write(files: dict[Path, str | bytes]) -> None:
    try:
        atomic_write_files(files)
    except ParmError as exc:
        raise ResumeError(f"The session could not be saved: {exc}") from None


def _remove_other_results(folder: Path, keep: set[str]) -> None:
    """Remove the result files of earlier runs (best effort: a leftover is only disk space)."""
    for path in folder.glob("result-*"):
        if path.suffix in (".json", ".npz") and path.stem not in keep:
            try:
                path.unlink()
            except OSError:
                pass


def load_results(session: SavedSession, responses: list[Responses]) -> list[AuditResult]:
    """The session's AuditResults, each bound to its item's Responses (`responses`, in the
    order of session.results). Raises ResumeError when one cannot be used."""
    from engine.saved.archive import load_result

    if len(responses) != len(session.results):
        raise ResumeError(
            f"The saved session {session.folder / SESSION_FILE} holds {len(session.results)} "
            f"result(s), but {len(responses)} set(s) of responses were loaded."
        )
    loaded = []
    for entry, item_responses in zip(session.results, responses):
        result = load_result(session.folder, entry.name, item_responses)
        if result.run_id != entry.run_id:
            raise ResumeError(
                f"The saved session {session.folder / SESSION_FILE} names run {entry.run_id}, "
                f"but {entry.name}.json holds run {result.run_id}; run the audit again."
            )
        loaded.append(result)
    return loaded


def restore_session(session: SavedSession, items: Items, config: AuditConfig) -> SessionResult:
    """The saved run as a SessionResult of the file's items as they are now (read with the
    session's settings, `config`), with nothing run again: every item's result bound to its
    responses, in the file's order of items. Raises ResumeError when it cannot be used."""
    from engine.results.session import session_result

    by_item = {responses.item: responses for responses in items.audited}
    if sorted(by_item, key=str) != sorted((e.item for e in session.results), key=str):
        raise ResumeError("The saved session's items are not the file's items now.")
    loaded = load_results(session, [by_item[entry.item] for entry in session.results])
    order = {entry.item: k for k, entry in enumerate(session.results)}
    results = [loaded[order[responses.item]] for responses in items.audited]
    return session_result(items, results, config)


def save_review_row(session: SavedSession, row: int | None) -> SavedSession:
    """Remember the data row the review shows (where to continue); returns the new session."""
    updated = replace(session, review_row=None if row is None else int(row))
    _write({session.folder / SESSION_FILE: _session_text(updated)})
    return updated
