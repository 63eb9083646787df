"""Reads typed in the review, for ReviewScreen: `r` asks for a read of the answer on show (its
rater and score) and keeps it with the decisions (engine.workspace.add_read); the consensus is
then counted again with every typed read on a worker thread (about a second at 100,000 reads,
engine.workspace.with_added_reads) and the pane, the list and the third-read view follow. `u`
takes a typed read away (ReviewKeys.action_undo hands it here). In the view of today's backreads
the read is a supervisor's backread: the same score as the rater's accepts it, another fixes it.
"""

from __future__ import annotations

import numpy as np
from textual import work
from textual.message import Message
from textual.worker import Worker, WorkerState, get_current_worker

from engine import workspace
from engine.core.errors import ParmError
from engine.results.added_reads import NO_READS
from engine.results.review import ReviewSet
from engine.workspace.reporting import rater_name
from parm_tui.review_model import UndoRead
from parm_tui.screens.error import ErrorRaised
from parm_tui.widgets.review_detail import reads_text
from parm_tui.widgets.review_dialogs import ReadModal
from parm_tui.widgets.review_filters import VIEW_BACKREADS, VIEW_THIRD, ReviewFilters
from parm_tui.widgets.review_list import ReviewTable


def read_marks(review: ReviewSet, i: int) -> dict[str, str]:
    """Each score the answer was read as, with who read it so ("G1, G3"), for the read dialog."""
    result, j = review.locate(i)
    reads = result.responses.reads
    given: dict[str, list[str]] = {}
    if reads is not None:
        for n, k in enumerate(np.flatnonzero(reads.answer == j)):
            label = result.responses.labels[reads.score[k]]
            # Who read it, named as the pane and every output name them.
            given.setdefault(label, []).append(rater_name(reads.rater[k], n))
    for rater, label in review.added_reads(i):
        given.setdefault(label, []).append(rater)
    return {label: ", ".join(raters) for label, raters in given.items()}


class ReviewReads:
    """Typing reads in for ReviewScreen (which has its model, review, store,
    read_rater, told, counted_reads, go_to, refresh_view and show_detail)."""

    def action_add_read(self) -> None:
        """Ask for a read of the answer shown (rater and score) and keep it; the consensus is
        then counted again with it (count_added_reads)."""
        i = self._target()
        if i is None:
            return
        if self.review.reads is None:
            self.notify(NO_READS, severity="warning", timeout=8)
            return
        raters = [*self.review.reads.raters, *self.store.reads.raters()]
        row = int(self.review.responses.rows[i])
        backread = self.query_one(ReviewFilters).view == VIEW_BACKREADS
        title = None
        if backread:
            given = ", ".join(f"{r} gave {s}" for r, s in self.backreads.get(row, ()))
            title = f"Backread of row {row} ({given}):\nthe same score accepts, another fixes"
        modal = ReadModal(
            row,
            self.review.labels_of(i),
            self.store.reviewer if backread else self.read_rater or self.store.reviewer,
            list(dict.fromkeys(raters)),
            reads_text(self.review, i),
            read_marks(self.review, i),
            title=title,
        )
        kind = "backread" if backread else "resolution"
        self.app.push_screen(
            modal, lambda chosen: chosen is not None and self._add_read(i, *chosen, kind)
        )

    def _add_read(self, i: int, rater: str, score: str, kind: str = "resolution") -> None:
        try:
            read = workspace.add_read(self.store, self.review, i, rater, score, kind)
        except ParmError as exc:
            self.notify(str(exc), severity="error", timeout=10)
            return
        if kind == "backread":
            targets = self.backreads.get(read.row, ())
            self.notify(workspace.backread_words(targets, read.row, read.score), timeout=8)
        else:
            self.read_rater = read.rater  # offered again next time
        self.model.typed(i, read)
        self.count_added_reads(told=None if kind == "backread" else i)

    def read_undone(self, done: UndoRead, undo: bool) -> None:
        """A typed read taken away (undo) or typed again (redo) by the model: the consensus is
        counted again and the list goes back to its answer."""
        read = done.read
        self.count_added_reads(told=done.i)
        position = self.model.position_of(done.i)
        if position is not None:
            self.go_to(position)
        if undo:
            self.notify(f"Undone: {read.rater}'s read {read.score} of row {read.row} is taken "
                        "away.")  # fmt: skip
        else:
            self.notify(f"Redone: {read.rater}'s read {read.score} of row {read.row} is back.")

    def consensus_words(self, i: int) -> str:
        """'Row 24: consensus 0 (p 0.97), sure: off the third-read list' after a recount."""
        review = self.review
        row = int(review.responses.rows[i])
        if review.consensus is None or review.consensus[i] < 0:
            return f"Row {row}: read once, no consensus."
        label = review.responses.labels[int(review.consensus[i])]
        words = f"Row {row}: consensus {label} (p {float(review.consensus_p[i]):.2f})"
        rank = int(review.third_read_rank[i])
        return words + (f", third read #{rank}." if rank else ", sure: off the third-read list.")

    class ReadsCounted(Message):
        """The review set with the reads typed in the review (`added`) counted (engine.results.
        added_reads), or why it could not be."""

        def __init__(self, review: ReviewSet | None, problem: str | None = None, added=()):
            super().__init__()
            self.review = review
            self.problem = problem
            self.added = list(added)

    def uncounted_reads(self, row: int) -> list[tuple[str, str]]:
        """(rater, score) of the reads of data row `row` typed here that the review set on show
        does not count yet: the pane shows them at once (after a resume or a re-run the recount
        takes a moment), the consensus as being counted."""
        if self.store is None:
            return []
        counted = set(self.review_counts)
        return [(read.rater, read.score) for read in self.store.added_reads()
                if read.row == row and read not in counted]  # fmt: skip

    def count_added_reads(self, told: int | None = None) -> None:
        """Count the consensus again with the reads typed here, off the UI thread (about a
        second at 100,000 reads); the pane and the third-read view follow when it is done, and
        response `told`'s new consensus is said."""
        added = [] if self.store is None else self.store.added_reads()
        if not added and self.review is self.model.run_review:
            return
        self.told = told
        self.counted_reads = added
        self.counting(added)

    @work(thread=True, exclusive=True, exit_on_error=False, group="consensus")
    def counting(self, added: list) -> None:
        try:
            review = workspace.with_added_reads(self.model.run_review, added)
        except ParmError as exc:
            self.post_message(self.ReadsCounted(None, str(exc)))
            return
        if not get_current_worker().is_cancelled:  # a later count replaces this one
            self.post_message(self.ReadsCounted(review, added=added))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A recount that failed other than with the engine's message: the error modal."""
        if event.worker.group == "consensus" and event.state == WorkerState.ERROR:
            self.post_message(ErrorRaised(event.worker.error))

    def on_review_reads_reads_counted(self, message: ReadsCounted) -> None:
        if message.review is None:
            self.notify(message.problem, severity="error", timeout=10)
            return
        self.review = message.review
        self.review_counts = message.added
        self.query_one(ReviewTable).review = self.review
        if self.told is not None:
            self.notify(self.consensus_words(self.told), timeout=8)
            self.told = None
        filters = self.query_one(ReviewFilters)
        filters.offer_third_reads(self.model.third_reads())
        # The third-read view is ranked again (an answer now sure leaves it, and the pane shows
        # the one in its place: the cursor may not move, so the pane is drawn here either way);
        # another view keeps its list and its place.
        if filters.view == VIEW_THIRD:
            self.refresh_view()
        self.show_detail()
