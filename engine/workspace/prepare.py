"""A file's items under the settings: the columns chosen (named, or guessed as both front ends
guess them), the items read, their responses pooled as the review pools them; and a saved run
restored as it was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.workspace.files import OpenedFile

if TYPE_CHECKING:
    import numpy as np

    from engine.core.run_warnings import RunWarning
    from engine.input.column_guess import ColumnChoice
    from engine.input.items import Items
    from engine.input.responses import Responses
    from engine.input.settings.config import AuditConfig
    from engine.results.session import SessionResult
    from engine.saved.store import SavedSession


@dataclass(frozen=True, eq=False)
class Prepared:
    """The file's items under `config`; `responses`: every item's responses pooled on one scale
    in the stated score order (what the review and its decisions are about); `on_scale`: for
    several items, which labels each response may take (None for one item); seconds: reading
    the file and its items (the run's "reading" stage)."""

    file: OpenedFile
    config: AuditConfig
    items: Items
    responses: Responses
    on_scale: np.ndarray | None
    seconds: float = 0.0

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(self.items.warnings)

    @property
    def notes(self) -> tuple[RunWarning, ...]:
        """The same warnings as data, one per item (engine.core.run_warnings)."""
        return tuple(self.items.notes)


def choose_columns(
    file: OpenedFile, config: AuditConfig, given: frozenset[str] | set[str] = frozenset()
) -> ColumnChoice:
    """The columns to read (engine.input.column_guess): those in `given` as the settings name
    them, the settings' where the file has them, the guess for the rest. Its `sentence()` says
    what was guessed."""
    from engine.input.column_guess import choose_columns as chosen

    return chosen(file.frame, config, given)


def prepare(file: OpenedFile, config: AuditConfig) -> Prepared:
    """The file's items under `config` (ParmError subclasses name what is wrong): a score
    column that cannot hold scores (engine.input.score_check) and a run that would not fit in
    memory (the session model's arrays, engine.core.machine.memory) stop here, before anything is
    embedded or loaded."""
    from engine.model.session.figures import check_session_memory

    prepared = _prepare(file, config)
    audited = prepared.items.audited
    check_session_memory(audited, config.session_model, config.cross_fit_folds, config.score_order)
    return prepared


def _prepare(file: OpenedFile, config: AuditConfig) -> Prepared:
    from engine.core.stages import READING, StageTimer
    from engine.input.items import split_items
    from engine.input.scale import pool_responses

    timer = StageTimer({READING: file.seconds})
    with timer.stage(READING):
        file = file.on_sheet(config.sheet)  # a saved run's sheet, or one chosen since
        items = split_items(file.frame, config, source=str(file.path))
        responses, _, on_scale = pool_responses(items.audited, config.score_order)
    scale = on_scale if items.by_item else None
    return Prepared(file, config, items, responses, scale, timer.timings[READING])


def saved_run(file: OpenedFile, run_id: str | None = None) -> SavedSession:
    """The file's newest saved run, or the one with that id (ResumeError naming the runs that
    are kept, or saying the file has none)."""
    from engine.core.errors import ResumeError
    from engine.saved.store import find_run, find_session

    if file.digest is None:
        raise ResumeError(f"{file.path} cannot be read twice: no saved run can be found for it.")
    saved = find_session(file.digest) if run_id is None else find_run(file.digest, run_id)
    if saved is None:
        raise ResumeError(
            f"{file.path} has no saved audit (with these exact contents): audit it first with "
            f"`parm audit {file.path}` or in the app; parm export writes a saved run again."
        )
    return saved


def restore(file: OpenedFile, saved: SavedSession) -> tuple[Prepared, SessionResult]:
    """A saved run of the file as it was: its settings, the file's items under them and the
    results, restored without running anything. ResumeError when it cannot be used."""
    from engine.core.errors import ParmError, ResumeError
    from engine.saved.store import restore_session

    config = saved.config()
    try:  # nothing is fitted again: no memory check
        prepared = _prepare(file, config)
    except ParmError as exc:
        raise ResumeError(
            f"The saved run's columns no longer give usable responses in {file.path} ({exc}); "
            "run the audit again."
        ) from None
    return prepared, restore_session(saved, prepared.items, config)
