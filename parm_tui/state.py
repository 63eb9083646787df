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

from engine import workspace
from engine.core.errors import ParmError
from engine.workspace import OpenedFile, Prepared
from engine.workspace.settings import CHOSEN_KEYS

if TYPE_CHECKING:  # the app's first screen must not load numpy and pandas
    from engine.input.responses import Responses
    from engine.results.session import SessionResult
    from engine.saved.decisions import DecisionStore
    from engine.saved.store import SavedSession
    from engine.workspace.settings import AuditConfig


@dataclass(frozen=True)
class Note:
    """Something a transition has to tell the user (the app shows it as a notification)."""

    text: str
    severity: str = "information"


@dataclass(frozen=True, eq=False)
class AppState:
    """Everything the screens share.

    config: the settings a run uses (the Settings form's, with the Load screen's columns);
    settings_problem: why the Settings form's values are not applied (a run waits for it);
    file: the file read (engine.workspace.OpenedFile); columns: the columns chosen for it
    ({setting: column or None}); prepared: its items under `config` (engine.workspace.Prepared:
    the items, their responses pooled as the review pools them and which labels each may take;
    None while its columns give no usable responses: `file_problem` says why);
    store: the decision store of those responses (None when it could not be opened);
    result: the last run's, or the resumed session's; saved: the saved run of the result on
    show (or the newest one, when the result was not kept); runs: the file's saved runs,
    newest first (engine.saved.store.list_runs); declined: the saved sessions (by file digest)
    the user chose not to resume.
    """

    config: AuditConfig
    settings_problem: str | None = None
    file: OpenedFile | None = None
    columns: dict[str, str | None] | None = None
    prepared: Prepared | None = None
    file_problem: str | None = None
    store: DecisionStore | None = None
    result: SessionResult | None = None
    saved: SavedSession | None = None
    runs: tuple[SavedSession, ...] = ()
    declined: frozenset[str] = frozenset()

    # What the screens read of the prepared file: its items, their pooled responses and which
    # labels each may take (None while there is none; not fields: no annotation).
    items = property(lambda self: _of_prepared(self, "items"))
    responses = property(lambda self: _of_prepared(self, "responses"))
    on_scale = property(lambda self: _of_prepared(self, "on_scale"))

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
    def file_opened(self, file: OpenedFile) -> AppState:
        """A file was read, with its saved runs; its items follow when its columns are
        chosen."""
        return replace(self, file=file, columns=None, file_problem=None, runs=file.runs)

    def columns_chosen(self, columns: dict[str, str | None]) -> AppState:
        """The columns chosen for the file (its items follow: items_loaded or items_refused)."""
        return replace(self, columns=dict(columns))

    def items_reloaded(self) -> tuple[AppState, list[Note]]:
        """The file's items under the settings and the chosen columns, or why there are none;
        their decision store; a result of other responses closes."""
        if self.columns["text_column"] is None or self.columns["score_column"] is None:
            return self.items_refused("Choose the text and the score column."), []
        try:
            prepared = workspace.prepare(self.file, self.config.updated(**self.columns))
        except ParmError as exc:
            return self.items_refused(str(exc)), []
        store, notes = self.store_for(prepared)
        new = self.items_loaded(prepared, store)
        if self.result is not None and new.result is None:
            notes.append(Note("New data loaded: the previous results were closed."))
        return new, notes

    def store_for(self, prepared: Prepared) -> tuple[DecisionStore | None, list[Note]]:
        """The decision store of the prepared responses: the open one when they are the
        responses it was opened for, else the file's review opened for them (None, with a
        note, when it cannot be opened)."""
        if self.store is not None and self.holds(prepared.responses):
            return self.store, []
        review = workspace.open_review(prepared)
        if review.store is None:
            return None, [Note(review.problem, "warning")]
        return review.store, [Note(note) for note in review.notes]

    def items_loaded(self, prepared: Prepared, store: DecisionStore | None) -> AppState:
        """The file's items under their settings; the result stays only when it is of these
        responses."""
        state = self
        if self.result is not None and not self.result.review.responses.same_as(prepared.responses):
            state = self.results_closed()
        return replace(
            state, config=prepared.config, prepared=prepared, file_problem=None, store=store
        )

    def items_refused(self, problem: str) -> AppState:
        """The chosen columns give no usable responses (the store and result stay, unused)."""
        return replace(self, prepared=None, file_problem=problem)

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
        prepared, result = workspace.restore(self.file, saved)
        store, notes = self.store_for(prepared)
        columns = {key: getattr(prepared.config, key) for key in CHOSEN_KEYS}
        # A workbook's run may have read another sheet than the one open: its file is the run's.
        loaded = replace(self, file=prepared.file, columns=columns, settings_problem=None)
        new = replace(loaded.items_loaded(prepared, store), result=result, saved=saved)
        return new, notes

    def results_closed(self) -> AppState:
        return replace(self, result=None)

    def session_declined(self, digest: str) -> AppState:
        return replace(self, declined=self.declined | {digest})

    def saved_run_updated(self, saved: SavedSession) -> AppState:
        """The saved run on show was written again (where its review stopped, where its outputs
        went)."""
        runs = tuple(saved if run.run_id == saved.run_id else run for run in self.runs)
        return replace(self, saved=saved, runs=runs)


def _of_prepared(state: AppState, name: str):
    return None if state.prepared is None else getattr(state.prepared, name)
