"""The app's state: one typed value, `AppState`, that only its named transitions change.

ParmApp holds it in a reactive attribute (`app.state`) and is the only one to assign it, in its
transition methods (load a file, choose its columns, apply settings, run finished, resume, close
results, ...), which call the transitions below and do what must happen once (open a decision
store, remember a recent file, tell the user). Screens read `app.state` and observe it with
`self.watch(self.app, "state", ...)`; nothing fills a screen by hand from elsewhere.

The transitions return a new state and leave the old one as it was, so a watcher can compare
the two. Reading a saved session's results (engine.saved) happens here; no numerical work does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

# The settings that name the file's columns: chosen on the Load screen, kept in the settings
# (engine.input.column_guess imports neither numpy nor pandas).
from engine.input.column_guess import COLUMN_KEYS

if TYPE_CHECKING:  # the app's first screen must not load numpy and pandas
    import numpy as np
    import pandas as pd

    from engine.input.config import AuditConfig
    from engine.input.items import Items
    from engine.input.responses import Responses
    from engine.results.session import SessionResult
    from engine.saved.decisions import DecisionStore
    from engine.saved.store import SavedSession


@dataclass(frozen=True)
class Note:
    """Something a transition has to tell the user (the app shows it as a notification)."""

    text: str
    severity: str = "information"


@dataclass(frozen=True, eq=False)
class LoadedFile:
    """A file the Load screen read: its path, the SHA-256 of its bytes (the key of its saved
    session; None when it could not be taken) and its table."""

    path: Path
    digest: str | None
    frame: pd.DataFrame


@dataclass(frozen=True, eq=False)
class AppState:
    """Everything the screens share.

    config: the settings a run uses (the Settings form's, with the Load screen's columns);
    settings_problem: why the Settings form's values are not applied (a run waits for it);
    file: the file read; columns: the columns chosen for it ({setting: column or None});
    items: its items under `config` (None while its columns give no usable responses:
    `file_problem` says why); responses: every item's responses pooled on one scale,
    as the review pools them, and on_scale which labels each may take (None for one item);
    store: the decision store of those responses (None when it could not be opened);
    result: the last run's, or the resumed session's; saved: the saved run of the result on
    show (or the newest one, when the result was not kept); runs: the file's saved runs,
    newest first (engine.saved.store.list_runs); declined: the saved sessions (by file digest)
    the user chose not to resume.
    """

    config: AuditConfig
    settings_problem: str | None = None
    file: LoadedFile | None = None
    columns: dict[str, str | None] | None = None
    items: Items | None = None
    responses: Responses | None = None
    on_scale: np.ndarray | None = None
    file_problem: str | None = None
    store: DecisionStore | None = None
    result: SessionResult | None = None
    saved: SavedSession | None = None
    runs: tuple[SavedSession, ...] = ()
    declined: frozenset[str] = frozenset()

    @property
    def source_path(self) -> Path | None:
        return None if self.file is None else self.file.path

    @property
    def source_digest(self) -> str | None:
        return None if self.file is None else self.file.digest

    # -- what the screens ask ------------------------------------------------------------------
    def saved_result(self) -> SavedSession | None:
        """The saved session when it holds the result on show (not another run's)."""
        if self.saved is None or self.result is None:
            return None
        return self.saved if self.result.run_id in self.saved.run_ids else None

    def earlier_run(self) -> SavedSession | None:
        """The saved run on show when it is not the file's newest: an earlier run reopened,
        open read-only (decisions are made on the newest run; they stay with the file)."""
        saved = self.saved_result()
        if saved is None or not self.runs or saved.run_id == self.runs[0].run_id:
            return None
        return saved

    def previous_run(self) -> SavedSession | None:
        """The saved run before the result on show: the one a re-run is compared with (the
        newest kept run when the result on show was not kept)."""
        if self.result is None:
            return None
        ids = [run.run_id for run in self.runs]
        if self.result.run_id not in ids:
            return self.runs[0] if self.runs else None
        k = ids.index(self.result.run_id)
        return self.runs[k + 1] if k + 1 < len(self.runs) else None

    def review_context(self) -> tuple[tuple[int, ...] | None, int | None]:
        """What the Review screen takes from the result's saved session: the data rows the
        previous run flagged (of every item; None when there was no previous run) and the data
        row where the review stopped (None when unknown)."""
        saved = self.saved_result()
        if saved is None:
            return None, None
        previous = [entry.previous_flagged_rows for entry in saved.results]
        if all(rows is None for rows in previous):
            return None, saved.review_row
        return tuple(row for rows in previous for row in rows or ()), saved.review_row

    def holds(self, responses: Responses) -> bool:
        """Whether these are the loaded file's responses as they are now."""
        return self.responses is not None and self.responses.same_as(responses)

    # -- transitions ---------------------------------------------------------------------------
    def file_opened(self, file: LoadedFile, runs: tuple = ()) -> AppState:
        """A file was read, with its saved runs; its items follow when its columns are
        chosen."""
        return replace(self, file=file, columns=None, file_problem=None, runs=tuple(runs))

    def columns_chosen(self, columns: dict[str, str | None]) -> AppState:
        """The columns chosen for the file (its items follow: items_loaded or items_refused)."""
        return replace(self, columns=dict(columns))

    def items_reloaded(self) -> tuple[AppState, list[Note]]:
        """The file's items under the settings and the chosen columns, or why there are none;
        their decision store; a result of other responses closes."""
        from engine.core.errors import ParmError

        if self.columns["text_column"] is None or self.columns["score_column"] is None:
            return self.items_refused("Choose the text and the score column."), []
        try:
            config = self.config.updated(**self.columns)
            items = split_file(self.file, config)
        except ParmError as exc:
            return self.items_refused(str(exc)), []
        store, notes = self.store_for(items, config)
        new = self.items_loaded(config, items, store)
        if self.result is not None and new.result is None:
            notes.append(Note("New data loaded: the previous results were closed."))
        return new, notes

    def store_for(self, items: Items, config: AuditConfig) -> tuple[DecisionStore | None, list]:
        """The decision store of these items' responses: the open one when they are the
        responses it was opened for, else the file's store opened for them (None, with a note,
        when it cannot be opened)."""
        from engine.core.errors import ParmError

        responses, on_scale = pooled(items, config)
        if self.store is not None and self.holds(responses):
            return self.store, []
        from engine.saved.decisions import open_store

        try:
            store = open_store(
                self.source_path,
                responses,
                on_scale=on_scale,
                digest=self.source_digest,
                reviewer=config.reviewer,
            )
        except (ParmError, OSError) as exc:
            return None, [Note(f"Review decisions cannot be saved: {exc}", "warning")]
        elsewhere = store.found_elsewhere()
        return store, [Note(elsewhere)] if elsewhere else []

    def items_loaded(self, config: AuditConfig, items: Items, store: DecisionStore | None):
        """The file's items under `config`; the result stays only when it is of these
        responses."""
        responses, on_scale = pooled(items, config)
        state = self
        if self.result is not None and not self.result.review.responses.same_as(responses):
            state = self.results_closed()
        return replace(
            state,
            config=config,
            items=items,
            responses=responses,
            on_scale=on_scale,
            file_problem=None,
            store=store,
        )

    def items_refused(self, problem: str) -> AppState:
        """The chosen columns give no usable responses (the store and result stay, unused)."""
        return replace(self, items=None, responses=None, on_scale=None, file_problem=problem)

    def settings_applied(self, config: AuditConfig) -> AppState:
        return replace(self, config=config, settings_problem=None)

    def settings_refused(self, problem: str) -> AppState:
        return replace(self, settings_problem=problem)

    def run_finished(
        self, result: SessionResult, saved: SavedSession | None, runs: tuple | None = None
    ) -> AppState:
        """A run's result, its saved run and the file's saved runs now (the earlier ones stay
        when it was not kept)."""
        return replace(
            self,
            result=result,
            saved=saved if saved is not None else self.saved,
            runs=self.runs if runs is None else tuple(runs),
        )

    def resumed(self, saved: SavedSession) -> tuple[AppState, list[Note]]:
        """A saved session of the loaded file opened as it was: its settings and columns, the
        file's items under them, its results (nothing runs again), and the session itself.
        ResumeError when it cannot be used (the state is then as it was)."""
        config, items, result = restore(self, saved)
        store, notes = self.store_for(items, config)
        columns = {key: getattr(config, key) for key in COLUMN_KEYS}
        loaded = replace(self, columns=columns, settings_problem=None)
        new = replace(loaded.items_loaded(config, items, store), result=result, saved=saved)
        return new, notes

    def results_closed(self) -> AppState:
        return replace(self, result=None)

    def session_declined(self, digest: str) -> AppState:
        return replace(self, declined=self.declined | {digest})

    def review_row_saved(self, saved: SavedSession) -> AppState:
        runs = tuple(saved if run.run_id == saved.run_id else run for run in self.runs)
        return replace(self, saved=saved, runs=runs)


def pooled(items: Items, config: AuditConfig) -> tuple[Responses, np.ndarray | None]:
    """Every item's responses as one, on one scale in the stated score order, as the review
    pools them (engine.results.review.review_set): what the decision store keeps decisions for;
    and for several items which labels each response may take."""
    from engine.audit.scale import pool_responses

    responses, _, on_scale = pool_responses(items.audited, config.score_order)
    return responses, on_scale if items.by_item else None


def split_file(file: LoadedFile, config: AuditConfig) -> Items:
    """The file's items under `config` (ParmError subclasses name what is wrong)."""
    from engine.input.items import split_items

    return split_items(file.frame, config, source=str(file.path))


def restore(state: AppState, saved: SavedSession) -> tuple[AuditConfig, Items, SessionResult]:
    """A saved session of the loaded file as it was: its settings, the file's items under them
    and the results, restored without running anything. ResumeError when it cannot be used."""
    from engine.core.errors import ParmError, ResumeError
    from engine.saved.store import restore_session

    config = saved.config()
    try:
        items = split_file(state.file, config)
    except ParmError:
        raise ResumeError(
            "The saved session's columns no longer give usable responses; run the audit again."
        ) from None
    return config, items, restore_session(saved, items, config)


def keep_session(result: SessionResult, file: LoadedFile | None) -> tuple:
    """Save a finished run as its file's newest saved run (in the audit thread): (the saved
    run, the file's saved runs now, None), or (None, None, why it could not be kept); the run
    itself stands either way."""
    from engine.core.errors import ParmError
    from engine.saved.store import list_runs, save_session

    if file is None or file.digest is None:
        return None, None, None
    try:
        saved = save_session(file.digest, file.path, result)
        return saved, list_runs(file.digest), None
    except (ParmError, OSError) as exc:
        return None, None, f"The results could not be kept for resuming: {exc}"
