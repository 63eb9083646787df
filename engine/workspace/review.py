"""The review of a file's responses: its decision store (engine.saved.decisions: found by the
file's bytes, then its path) with what to tell the user about it, a colleague's decisions
brought in, and reads typed in the review counted in the consensus."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.workspace.prepare import Prepared

if TYPE_CHECKING:
    from engine.results.added_reads import AddedRead
    from engine.results.review import ReviewSet
    from engine.saved.decisions import DecisionStore
    from engine.saved.review_import import ImportReport
    from engine.saved.store import SavedSession


@dataclass(frozen=True)
class Review:
    """The decision store (None when it cannot be opened) and the sentences to say about it:
    which review it opened, decisions that no longer match, why there is none."""

    store: DecisionStore | None
    notes: tuple[str, ...] = ()
    problem: str | None = None


def open_review(prepared: Prepared, database: Path | None = None) -> Review:
    """The decision store of the prepared responses (the `reviewer` setting names who decides);
    a store that cannot be opened is a problem to show, never a stop."""
    from engine.core.errors import ParmError
    from engine.saved.decisions import open_store

    file = prepared.file
    try:
        store = open_store(
            file.path,
            prepared.responses,
            database,
            on_scale=prepared.on_scale,
            digest=file.digest,
            reviewer=prepared.config.reviewer,
        )
    except (ParmError, OSError) as exc:
        return Review(None, problem=f"Review decisions cannot be saved or read: {exc}")
    notes = tuple(note for note in (store.found_elsewhere(), store.stale_message()) if note)
    return Review(store, notes)


def import_review(store: DecisionStore, path: str | Path) -> ImportReport:
    """A colleague's decisions.csv applied to the same answers (engine.saved.review_import)."""
    from engine.saved.review_import import import_decisions

    return import_decisions(store, path)


def add_read(store: DecisionStore, review: ReviewSet, i: int, rater: str, score: str,
             kind: str = "resolution") -> AddedRead:  # fmt: skip
    """Keep `rater`'s read `score` of response i of `review`, typed in the review, of `kind`:
    "resolution" (a third read) or "backread" (a supervisor's; engine.results.added_reads.KINDS)
    (ReviewError, with the reason, when it cannot be: engine.results.added_reads.check_added)."""
    from engine.results.added_reads import check_added

    name = check_added(review, i, rater, score, kind)
    responses = review.responses
    return store.reads.add(int(responses.rows[i]), responses.ids[i], responses.texts[i], name,
                           str(score), kind)  # fmt: skip


def with_added_reads(review: ReviewSet, added: Sequence[AddedRead]) -> ReviewSet:
    """The run's review set with the reads typed in its review (`store.added_reads()`) counted:
    the consensus and third-read ranks recomputed (engine.results.added_reads; a whole session
    takes about a second at 100,000 reads, so the app calls this off its UI thread)."""
    from engine.results.added_reads import review_with_added

    return review_with_added(review, added)


def remember_review_row(saved: SavedSession, row: int | None) -> SavedSession:
    """Keep the data row the review of this saved run shows (where to continue); the run as now
    saved (ResumeError when it cannot be written: only where to continue is lost)."""
    from engine.saved.store import save_review_row

    return save_review_row(saved, row)
