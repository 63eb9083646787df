"""Saved runs: for each input file (by the SHA-256 of its bytes), the settings and results of
its latest runs, so reopening the file resumes its audit without running it again, and an
earlier run can be opened again or exported.

The API (what the app and the command line use):

- `save_session(digest, source, result, base=None, keep=None) -> SavedSession`: keep a finished
  run (a `SessionResult`) as the file's newest; only the newest `keep` runs are kept (default:
  the run's `saved_runs` setting), the files of older ones are removed.
- `find_session(digest, base=None) -> SavedSession | None`: the file's newest run (the one
  reopening the file offers to resume); None when it has none.
- `list_runs(digest, base=None) -> tuple[SavedSession, ...]`: every kept run, newest first.
- `find_run(digest, run_id, base=None) -> SavedSession`: one kept run by its run id
  (ResumeError naming the kept ones when there is no such run).
- `restore_session(session, items, config) -> SessionResult`: a saved run as a result again,
  bound to the file's items read with `session.config()` (nothing is run again).
- `save_review_row(session, row) -> SavedSession`: where the review of that run stopped.
- `save_out_folder(session, folder) -> SavedSession`: the folder the run's outputs were last
  written to (`parm audit --out`, an export), where the next export is offered.

A `SavedSession` is one saved run: its run id, settings, date, one `SavedResult` per audited
item (with the data rows it flagged, and those the run before it flagged), where its review
stopped, and its figures (`engine.results.figures.RunFigures`: responses, flagged, kappa, QWK,
each item's selected K and p; None for a run saved by a parm before this one). `base` is the
data folder (default: `engine.core.places.data_dir()`).

On disk a file's runs live in `<data dir>/sessions/<file digest>/`: `session.json` (schema 2:
the file, then one entry per run, newest first) and two files per item of each run
(engine.saved.archive, named after the run id). A save writes the new result files and then
session.json in one all-or-nothing batch, and only then removes the files of the runs it no
longer keeps. A schema 1 session.json (one run, written by an earlier parm) is read as a
history of one run and rewritten as schema 2 by the next save.

Finding runs reads only session.json, so the app can ask about them before numpy and the
pipeline are loaded; the results load with engine.saved.archive.
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
from engine.input.settings.config import AuditConfig, config_from_dict, settings_digest
from engine.results.figures import RunFigures
from engine.saved.method import method_version

if TYPE_CHECKING:  # only for annotations: finding a session must not load numpy
    from engine.input.items import Items
    from engine.input.responses import Responses
    from engine.results.item import AuditResult
    from engine.results.session import SessionResult

FORMAT = "parm-session"
SCHEMA_VERSION = 2
# Schema 1 held one run per file; it is still read.
READABLE_SCHEMAS = (1, 2)
SESSION_FILE = "session.json"
SESSIONS_FOLDER = "sessions"


@dataclass(frozen=True)
class SavedResult:
    """One item's saved result in a run: its files' `name`, the `item` it audits (None: the
    whole file), its run id and settings digest, counts, and the data rows flagged by it and by
    the previous run of the same item (None when there was none)."""

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
    """One saved run of an input file. settings: the settings the run was started with (JSON
    form); saved_at: UTC ISO 8601; review_row: the data row its review last showed; figures:
    what the run is known by (None for a run an earlier parm saved); session_model: the session
    model's figures as engine.model.session.figures.SessionModelFigures.to_dict writes them
    (None where the run did not fit it), restored with the run; out_folder: the absolute folder
    its outputs were last written to (None: not yet, or a run an earlier parm saved); timings:
    the run's stages in seconds (engine.core.stages; None for a run an earlier parm saved);
    method: what computed it (engine.saved.method; None for a run an earlier parm saved)."""

    folder: Path
    file_digest: str
    source: str
    saved_at: str
    settings: dict
    results: tuple[SavedResult, ...]
    review_row: int | None = None
    figures: RunFigures | None = None
    session_model: dict | None = None
    out_folder: str | None = None
    timings: dict | None = None
    method: str | None = None

    def config(self) -> AuditConfig:
        """The saved settings, validated again (ResumeError when this parm refuses them)."""
        try:
            return config_from_dict(self.settings)
        except ConfigError as exc:
            raise ResumeError(
                f"The settings saved in {self.folder / SESSION_FILE} are not valid here: {exc}"
            ) from None

    @property
    def run_id(self) -> str:
        return self.results[0].run_id

    @property
    def run_ids(self) -> tuple[str, ...]:
        return tuple(entry.run_id for entry in self.results)


def session_folder(digest: str, base: Path | None = None) -> Path:
    return (Path(base) if base is not None else data_dir()) / SESSIONS_FOLDER / digest


def list_runs(digest: str, base: Path | None = None) -> tuple[SavedSession, ...]:
    """Every kept run of the file with this digest, newest first (() when there is none).
    ResumeError (naming the file) when its session.json exists but cannot be used."""
    return _read_runs(session_folder(digest, base))


def _read_runs(folder: Path) -> tuple[SavedSession, ...]:
    path = folder / SESSION_FILE
    if not path.exists():
        return ()
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResumeError(f"The saved session {path} cannot be read ({exc}).") from None
    if not isinstance(values, dict) or values.get("format") != FORMAT:
        raise ResumeError(f"{path} is not a parm session file.")
    if values.get("schema") not in READABLE_SCHEMAS:
        raise ResumeError(
            f"The saved session {path} has schema {values.get('schema')!r}; this parm reads "
            f"schemas {', '.join(map(str, READABLE_SCHEMAS))} (a different parm wrote it)."
        )
    try:
        runs = values["runs"] if values["schema"] == 2 else [values]
        return tuple(_session(path.parent, values, run) for run in runs)
    except (KeyError, TypeError, ValueError) as exc:
        raise ResumeError(
            f"The saved session {path} is damaged ({type(exc).__name__}: {exc})."
        ) from None


def find_session(digest: str, base: Path | None = None) -> SavedSession | None:
    """The newest kept run of the file with this digest; None when there is none.
    ResumeError (naming the file) when its record exists but cannot be used."""
    runs = list_runs(digest, base)
    return runs[0] if runs else None


def find_run(digest: str, run_id: str, base: Path | None = None) -> SavedSession:
    """The kept run of the file with this digest and run id; ResumeError when there is none
    (the message names the runs that are kept)."""
    runs = list_runs(digest, base)
    for run in runs:
        if run.run_id == run_id:
            return run
    kept = ", ".join(run.run_id for run in runs) or "none"
    raise ResumeError(f"No saved run {run_id} of this file (kept runs: {kept}).")


def _session(folder: Path, file: dict, values: dict) -> SavedSession:
    """One run's record (`values`) of the file record `file` (the same dict in schema 1)."""
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
    if not results:
        raise ValueError("a run without results")
    review_row = values["review_row"]
    if not isinstance(values["settings"], dict):
        raise TypeError("settings is not an object")
    figures = values.get("figures")
    return SavedSession(
        folder=folder,
        file_digest=str(file["file_digest"]),
        source=str(file["source"]),
        saved_at=str(values["saved_at"]),
        settings=values["settings"],
        results=tuple(results),
        review_row=None if review_row is None else int(review_row),
        figures=None if figures is None else RunFigures.from_dict(figures),
        session_model=_session_model(values.get("session_model")),
        out_folder=_out_folder(values.get("out_folder")),
        timings=_timings(values.get("timings")),
        method=_method(values.get("method")),
    )


def _timings(values) -> dict | None:
    if values is None:
        return None
    if not isinstance(values, dict):
        raise TypeError("timings is not an object")
    return {str(stage): float(seconds) for stage, seconds in values.items()}


def _method(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError("method is not a string")
    return value


def _out_folder(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError("out_folder is not a string")
    return value


def _session_model(values) -> dict | None:
    if values is not None and not isinstance(values, dict):
        raise TypeError("session_model is not an object")
    return values


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


def _run_dict(run: SavedSession) -> dict:
    return {
        "saved_at": run.saved_at,
        "settings": run.settings,
        "results": [_entry_dict(entry) for entry in run.results],
        "review_row": run.review_row,
        "figures": None if run.figures is None else run.figures.to_dict(),
        "session_model": run.session_model,
        "out_folder": run.out_folder,
        "timings": run.timings,
        "method": run.method,
    }


def _runs_text(runs: tuple[SavedSession, ...]) -> str:
    """session.json of a file's runs (newest first; all of one file)."""
    values = {
        "format": FORMAT,
        "schema": SCHEMA_VERSION,
        "file_digest": runs[0].file_digest,
        "source": runs[0].source,
        "runs": [_run_dict(run) for run in runs],
    }
    # Unindented: json's C encoder writes it (with an indent its Python one does, 0.1 s a
    # write for ten kept runs of a 15,000-answer file, twice a run).
    return json.dumps(values, ensure_ascii=False) + "\n"


def save_session(
    digest: str,
    source: str | Path,
    result: SessionResult,
    base: Path | None = None,
    keep: int | None = None,
) -> SavedSession:
    """Keep a finished run of the file with this digest as its newest: the settings it was
    started with, every item's result and the run's figures, remembering which rows the run
    before it flagged. Only the newest `keep` runs stay (default: the run's `saved_runs`
    setting). Raises ResumeError when it cannot write."""
    from engine.results.figures import run_figures
    from engine.saved.archive import result_files

    folder = session_folder(digest, base)
    earlier = _earlier_runs(folder)
    latest = {} if not earlier else {entry.item: entry for entry in earlier[0].results}
    files: dict[Path, str | bytes] = {}
    entries = []
    for k, item in enumerate(result.results):
        name = f"result-{item.run_id}-{k}"
        files.update(result_files(item, folder, name))
        previous = latest.get(item.responses.item)
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
        figures=run_figures(result),
        session_model=None if result.session_model is None else result.session_model.to_dict(),
        timings=dict(result.timings),
        method=method_version(),
    )
    keep = result.config.saved_runs if keep is None else max(1, int(keep))
    others = tuple(run for run in earlier if run.run_id != session.run_id)
    runs = (session, *others)[:keep]
    # session.json goes last, so it never names result files that are not there yet.
    files[folder / SESSION_FILE] = _runs_text(runs)
    _write(files)
    _remove_other_results(folder, {entry.name for run in runs for entry in run.results})
    return session


def _earlier_runs(folder: Path) -> tuple[SavedSession, ...]:
    """The runs kept so far; a record that cannot be read counts as none (it is replaced)."""
    try:
        return _read_runs(folder)
    except ResumeError:
        return ()


def _write(files: dict[Path, str | bytes]) -> None:
    try:
        atomic_write_files(files)
    except ParmError as exc:
        raise ResumeError(f"The session could not be saved: {exc}") from None


def _remove_other_results(folder: Path, keep: set[str]) -> None:
    """Remove the result files of runs no longer kept (best effort: a leftover is only disk
    space)."""
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
    from engine.model.session.figures import SessionModelFigures
    from engine.results.session import session_result

    by_item = {responses.item: responses for responses in items.audited}
    if sorted(by_item, key=str) != sorted((e.item for e in session.results), key=str):
        raise ResumeError("The saved session's items are not the file's items now.")
    loaded = load_results(session, [by_item[entry.item] for entry in session.results])
    order = {entry.item: k for k, entry in enumerate(session.results)}
    results = [loaded[order[responses.item]] for responses in items.audited]
    try:  # the session model's figures as the run found them (its graphs are not kept)
        modelled = None
        if session.session_model is not None:
            modelled = SessionModelFigures.from_dict(session.session_model)
    except (KeyError, TypeError, ValueError) as exc:
        raise ResumeError(f"The saved session's session-model figures are damaged: {exc}") from None
    return session_result(items, results, config, session.timings, modelled)


def save_review_row(session: SavedSession, row: int | None) -> SavedSession:
    """Remember the data row the review of this run shows (where to continue); returns the run
    as now saved. The other kept runs are left as they are."""
    return _saved_again(session, review_row=None if row is None else int(row))


def save_out_folder(session: SavedSession, folder: str | Path) -> SavedSession:
    """Remember the folder this run's outputs were written to (made absolute), where the next
    export of the run is offered; returns the run as now saved."""
    return _saved_again(session, out_folder=str(Path(folder).expanduser().absolute()))


def _saved_again(session: SavedSession, **changes) -> SavedSession:
    """The run with `changes` written into its file's session.json, over the run as saved there
    (so a copy held since it was read loses nothing written after it), the other kept runs as
    they are; nothing is written when the run is no longer kept (a newer run replaced it)."""
    try:
        runs = _read_runs(session.folder)
    except ResumeError:
        runs = ()
    saved = next((run for run in runs if run.run_id == session.run_id), None)
    if saved is None:
        return replace(session, **changes)  # no longer kept: nothing to remember it in
    updated = replace(saved, **changes)
    runs = tuple(updated if run.run_id == session.run_id else run for run in runs)
    _write({session.folder / SESSION_FILE: _runs_text(runs)})
    return updated
