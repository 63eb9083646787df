"""Running the audit of a prepared file and keeping the run as the file's newest saved run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.workspace.files import OpenedFile
from engine.workspace.prepare import Prepared

if TYPE_CHECKING:
    from engine.core.progress import CancelToken
    from engine.results.session import SessionResult
    from engine.saved.store import SavedSession


def reused_words(reused: int, items: int) -> str:
    """'2 of 3 items unchanged since an earlier run'."""
    from engine.results.session import reused_words as words

    return words(reused, items)


def preload(prepared: Prepared, precomputed: bool = False) -> None:
    """Start loading the model a run of these items will need, in the background (nothing when
    the vectors are given or cached)."""
    from engine.embedding.loading import preload_for

    preload_for(prepared.items, prepared.config, precomputed=precomputed)


def run(
    prepared: Prepared,
    progress=None,
    cancel: CancelToken | None = None,
    embeddings: str | Path | None = None,
    reuse_items: bool = True,
) -> SessionResult:
    """Audit every item (embedding them, or with the vectors of `embeddings`, a .npy of one row
    per data row that `parm embed` writes); progress: a callable taking ProgressEvents; cancel:
    the token the engine polls (Cancelled when it is set). Its timings count reading the file
    (engine.core.stages). reuse_items: an item whose inputs and settings are those of an item
    audited before is not audited again (engine.saved.items; never with given vectors or late
    interaction; off for --rerun)."""
    from engine.core.machine.collector import new_objects_only

    with new_objects_only():  # engine.core.machine.collector: 0.2 s at N = 15,000
        return _run(prepared, progress, cancel, embeddings, reuse_items)


def _run(prepared, progress, cancel, embeddings, reuse_items) -> SessionResult:
    from engine.core.stages import READING, StageTimer, with_stage
    from engine.embedding.precomputed import load_for_items
    from engine.session import run_session

    timer = StageTimer({READING: prepared.seconds})
    vectors = None
    if embeddings is not None:
        with timer.stage(READING):  # the given vectors are read with the file
            vectors = load_for_items(embeddings, prepared.items, prepared.config.text_column)
    reused, keep, model = _item_store(prepared, reuse_items and embeddings is None)
    session = run_session(prepared.items, prepared.config, progress=progress, cancel=cancel,
                          embeddings=vectors, reused=reused, keep=keep, reused_model=model[0],
                          keep_model=model[1])  # fmt: skip
    session.timings = with_stage(session.timings, READING, timer.timings[READING])
    return session


def _item_store(prepared: Prepared, wanted: bool):
    """The items' audits kept from earlier runs (None each where there is none) and how to keep
    this run's, and the session model's figures kept and how to keep them (engine.saved.items);
    Nones where items are not reused."""
    from engine.saved.items import item_key, keep, keep_model, kept, kept_model, model_key

    config = prepared.config
    if not wanted or config.late_interaction:
        return None, None, (None, None)
    audited = prepared.items.audited
    keys = [item_key(responses, config) for responses in audited]
    reused = [kept(key, responses, config=config) for key, responses in zip(keys, audited)]
    modelled = model_key(keys, config)
    model = (kept_model(modelled), lambda figures: keep_model(modelled, figures))
    return reused, lambda k, result: keep(keys[k], result), model


@dataclass(frozen=True)
class Kept:
    """A run kept as its file's newest saved run: the saved run and the file's saved runs now
    (None, with the problem, when it could not be kept; the run itself stands either way)."""

    saved: SavedSession | None
    runs: tuple[SavedSession, ...] | None
    problem: str | None = None


def keep(file: OpenedFile, result: SessionResult) -> Kept:
    """Save a finished run as the file's newest saved run (the file's digest is its key)."""
    from engine.core.errors import ParmError
    from engine.saved.store import list_runs, save_session

    if file.digest is None:
        return Kept(None, None)
    try:
        saved = save_session(file.digest, file.path, result)
        return Kept(saved, list_runs(file.digest))
    except (ParmError, OSError) as exc:
        return Kept(None, None, f"The results could not be kept for resuming: {exc}")
