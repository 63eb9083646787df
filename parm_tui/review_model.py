"""The review's state apart from any widget (issue 48): what is listed and in which order, the
page on show, the response selected, the decisions with their undo and redo, the notes waiting
for a decision and the re-run's changes. ReviewScreen (parm_tui/screens/review.py) draws it and
watches it: every change the model makes is announced to its listeners (`listen`), with the
response it concerns, so the screen redraws that row, the status line and the detail from one
place. Plain Python over the engine's review set and decision store; tested on its own
(tests/test_review_model.py), no app needed.

Undo puts back what the last change made here replaced (a decision, or no typed read); redo makes
the undone change again. A new change clears the redo stack, as in any editor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.results.queue import rerun_changes, review_view
from engine.results.review import ReviewSet

# The list is paged: the stock DataTable freezes with many thousands of rows.
PAGE_SIZE = 200

# What a listener hears: which part of the state changed.
DECIDED = "decided"  # a decision of response i recorded, cleared or put back
LISTED = "listed"  # the view (filters, search) computed again
READS = "reads"  # reads typed in the review changed (a recount follows)


def decision_words(decision) -> str:
    """'undecided', 'keep', 'unsure' or 'change to 2'."""
    if decision is None:
        return "undecided"
    if decision.action == "change":
        return f"change to {decision.new_score}"
    return decision.action


@dataclass(frozen=True)
class Undo:
    """What a decision replaced: the response (its position in the responses and data row), the
    decision there before (None: none) and the one made (None: a clear)."""

    i: int
    row: int
    before: object
    after: object = None


@dataclass(frozen=True)
class UndoRead:
    """A read typed in the review (engine.results.added_reads.AddedRead) of response i: undoing
    it takes it away, redoing it types it again."""

    i: int
    read: object


@dataclass
class ReviewModel:
    """One review's state. review: the run's review set (`review` becomes it with the reads typed
    in the review counted); store: the decision store (None: decisions off); read_only: why no
    decision can be made (an earlier run on show); previous_flagged_rows: the data rows the run
    before flagged (None: the file's first run); start_row: where the review stopped."""

    run_review: ReviewSet
    store: object = None
    read_only: str | None = None
    previous_flagged_rows: object = None
    start_row: int | None = None
    review: ReviewSet = field(init=False)
    view: np.ndarray = field(init=False)
    page: int = 0
    # The response the detail shows: the one decisions act on.
    selected: int | None = None
    pending_notes: dict[int, str] = field(default_factory=dict)
    undo_stack: list = field(default_factory=list)
    redo_stack: list = field(default_factory=list)
    changes: object = None
    _folded: list[str] | None = None
    _listeners: list[Callable[[str, int | None], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.review = self.run_review
        self.view = np.zeros(0, dtype=int)

    # --- listening ----------------------------------------------------------------------
    def listen(self, listener: Callable[[str, int | None], None]) -> None:
        """Call `listener(what, i)` after every change (DECIDED, LISTED, READS)."""
        self._listeners.append(listener)

    def _changed(self, what: str, i: int | None = None) -> None:
        for listener in self._listeners:
            listener(what, i)

    # --- the responses ------------------------------------------------------------------
    def row_of(self, i: int) -> int:
        return int(self.review.responses.rows[i])

    def index_of(self, row: int) -> int | None:
        """The index of the response at data row `row` (None when the review has none)."""
        found = np.flatnonzero(self.review.responses.rows == row)
        return int(found[0]) if found.size else None

    def decision(self, i: int):
        """The decision recorded for response i (None: undecided, or decisions off)."""
        if self.store is None:
            return None
        return self.store.get(self.row_of(i))

    def decisions(self) -> dict:
        return {} if self.store is None else self.store.all()

    def item_names(self) -> list[str]:
        """The items to filter by (none for a file of one item)."""
        review = self.review
        return [r.responses.item for r in review.results] if review.by_item else []

    def third_reads(self) -> bool:
        """Whether some answer's consensus needs a third read (the third-read view)."""
        rank = self.review.third_read_rank
        return rank is not None and bool(np.any(rank > 0))

    def is_rerun(self) -> bool:
        """A previous run of the file, or decisions made on another run than this one."""
        if self.previous_flagged_rows is not None:
            return True
        run_id = self.review.run_id
        return any(d.context is None or d.context.run_id != run_id
                   for d in self.decisions().values())  # fmt: skip

    def update_changes(self) -> None:
        """Recount the re-run changes (decisions change them); the list is left as it is."""
        if self.is_rerun():
            self.changes = rerun_changes(self.review, self.decisions(), self.previous_flagged_rows)

    # --- the list -----------------------------------------------------------------------
    def list_by(self, criteria: dict) -> None:
        """List the responses the filters' criteria pick (engine.results.queue.review_view)."""
        if criteria.get("search") and self._folded is None:
            self._folded = [t.casefold() for t in self.review.responses.texts]
        self.view = review_view(self.review, folded=self._folded, **criteria)
        self._changed(LISTED)

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.view) // PAGE_SIZE))

    def position_of(self, i: int | None) -> int | None:
        """Where response i is in the list (None when it is not listed)."""
        hits = np.flatnonzero(self.view == i) if i is not None else []
        return int(hits[0]) if len(hits) else None

    def place(self, position: int) -> tuple[int, int]:
        """(page, row on the page) of a position in the list; negative counts from the end."""
        if position < 0:
            position = max(0, len(self.view) + position)
        return divmod(position, PAGE_SIZE)

    def on_page(self, page: int | None = None) -> np.ndarray:
        page = self.page if page is None else page
        return self.view[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]

    def at(self, page: int, row: int) -> int | None:
        """The response at `row` of page `page` (None past the list's end)."""
        position = page * PAGE_SIZE + row
        return int(self.view[position]) if 0 <= position < len(self.view) else None

    def step(self, start: int | None, by: int) -> int | None:
        """The position `by` rows from `start` (the top when None), within the list."""
        if not len(self.view):
            return None
        return min(max((0 if start is None else start) + by, 0), len(self.view) - 1)

    def next_undecided(self, after: int) -> int | None:
        """The position of the first undecided response listed after `after`, from the top
        again when there is none below it; None when every one is decided."""
        n = len(self.view)
        for position in [*range(after + 1, n), *range(0, min(after + 1, n))]:
            if position != after and self.decision(int(self.view[position])) is None:
                return position
        return None

    def start_position(self) -> int:
        """Where the review stopped (start_row) when listed, else the first undecided response
        listed, else the top."""
        rows = self.review.responses.rows
        if self.start_row is not None:
            hits = np.flatnonzero(rows[self.view] == self.start_row)
            if hits.size:
                return int(hits[0])
        undecided = [n for n, i in enumerate(self.view) if self.decision(int(i)) is None]
        return undecided[0] if undecided else 0

    # --- deciding -----------------------------------------------------------------------
    def why_not(self) -> str | None:
        """Why no decision can be made here (None: they can)."""
        if self.store is None:
            return NO_STORE
        return self.read_only

    def record(self, i: int, action: str, new_score=None, note: str | None = None) -> None:
        """Record a decision of response i (ParmError when the store cannot): the note waiting
        for it goes with it, else the earlier decision's."""
        responses = self.review.responses
        row = self.row_of(i)
        earlier = self.decision(i)
        if note is None:
            note = self.pending_notes.get(row, earlier.note if earlier else "")
        self.store.record(row, responses.ids[i], responses.texts[i], action, new_score, note,
                          context=self.review.run_context(i))  # fmt: skip
        self._did(Undo(i, row, earlier, self.decision(i)))
        self.pending_notes.pop(row, None)
        self._changed(DECIDED, i)

    def clear(self, i: int) -> bool:
        """Clear response i's decision; False when it had none."""
        before = self.decision(i)
        if before is None:
            return False
        row = self.row_of(i)
        self.store.clear(row)
        self._did(Undo(i, row, before))
        self._changed(DECIDED, i)
        return True

    def typed(self, i: int, read) -> None:
        """A read typed in the review (kept in the store by the caller), to undo."""
        self._did(UndoRead(i, read))
        self._changed(READS, i)

    def _did(self, change) -> None:
        self.undo_stack.append(change)
        self.redo_stack.clear()

    def undo(self):
        """Put back what the last change made here replaced; the change undone (Undo or
        UndoRead), None when there is nothing to undo. ParmError leaves it to undo."""
        if not self.undo_stack:
            return None
        last = self.undo_stack[-1]
        if isinstance(last, UndoRead):
            self.store.reads.remove(last.read.row, last.read.rater)
            what = READS
        else:
            undone = self.decision(last.i)
            self._put(last.row, last.before)
            if undone is not None and undone.note and not (last.before and last.before.note):
                # The note typed with the undone decision waits for the next one, as before.
                self.pending_notes[last.row] = undone.note
            last = Undo(last.i, last.row, last.before, undone)
            what = DECIDED
        self.undo_stack.pop()
        self.redo_stack.append(last)
        self._changed(what, last.i)
        return last

    def redo(self):
        """Make the last undone change again; the change redone, None when there is none."""
        if not self.redo_stack:
            return None
        last = self.redo_stack[-1]
        if isinstance(last, UndoRead):
            self.store.reads.restore(last.read)
            what = READS
        else:
            self.pending_notes.pop(last.row, None)
            self._put(last.row, last.after)
            what = DECIDED
        self.redo_stack.pop()
        self.undo_stack.append(last)
        self._changed(what, last.i)
        return last

    def _put(self, row: int, decision) -> None:
        if decision is None:
            self.store.clear(row)
        else:
            self.store.restore(decision)


ALL_DECIDED = "Every response listed is decided."
NO_STORE = (
    "Decisions are off: no decision store is open for this result (no input file, or its "
    "database could not be opened)."
)

__all__ = ["ALL_DECIDED", "DECIDED", "LISTED", "NO_STORE", "PAGE_SIZE", "READS", "ReviewModel", "Undo",
           "UndoRead", "decision_words"]  # fmt: skip
