"""The review's keys: moving through the list and deciding. ReviewScreen takes these methods.

Movement keys only ever move: j/k and the arrows a row, ctrl+d/ctrl+u half a screen,
pgdn/pgup a screen (on any list, of one page or many), g/G and home/end to either end, `n` to
the next undecided response. Decisions sit on keys of their own (o keep, c change, ? unsure,
x clear, e note; r adds a read, parm_tui.screens.review_reads) and act on the response the detail pane shows (not on the row under the cursor
at that instant, which may have moved on before the pane was redrawn); each is saved to the
store, with the run it was made on, before the list shows it, and then the cursor goes to the
next undecided response of the view. `u` undoes the last change made here: the decision that
was there before comes back as it was (or none), or a read typed with `r` is taken away
(parm_tui.screens.review_reads), and the cursor goes back to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.errors import ParmError
from parm_tui.widgets.review_detail import ReviewDetail
from parm_tui.widgets.review_dialogs import NoteModal, ScoreModal
from parm_tui.widgets.review_list import ReviewTable

NO_STORE = (
    "Decisions are off: no decision store is open for this result (no input file, or its "
    "database could not be opened)."
)
ALL_DECIDED = "Every response listed is decided."


def decision_words(decision) -> str:
    """'undecided', 'keep', 'unsure' or 'change to 2'."""
    if decision is None:
        return "undecided"
    if decision.action == "change":
        return f"change to {decision.new_score}"
    return decision.action


@dataclass(frozen=True)
class Undo:
    """What a decision replaced: the response (its position in the responses and data row) and
    the decision there before (None: none)."""

    i: int
    row: int
    before: object


class ReviewKeys:
    """Moving and deciding for ReviewScreen (which has view, review, store, read_only, go_to,
    show_detail and the status line)."""

    # --- moving ---------------------------------------------------------------------------
    def position(self) -> int | None:
        """Where the response shown is in the list (None when it is not listed)."""
        i = self.shown()
        hits = np.flatnonzero(self.view == i) if i is not None else []
        return int(hits[0]) if len(hits) else None

    def move_by(self, step: int) -> None:
        """Move the cursor `step` rows (negative: up), stopping at either end of the list."""
        if not len(self.view):
            return
        start = self.position()
        start = 0 if start is None else start
        self.go_to(min(max(start + step, 0), len(self.view) - 1))

    def screenful(self) -> int:
        """Rows a page key moves: what the list shows, less one row kept in view."""
        return max(1, self.query_one(ReviewTable).size.height - 2)

    def next_undecided(self, after: int) -> int | None:
        """The position of the first undecided response listed after `after`, from the top
        again when there is none below it; None when every one is decided."""
        n = len(self.view)
        for position in [*range(after + 1, n), *range(0, min(after + 1, n))]:
            if position != after and self._decision(int(self.view[position])) is None:
                return position
        return None

    def advance_from(self, i: int) -> None:
        """After response i: the next undecided response of the view (staying put, and saying
        so, when there is none)."""
        hits = np.flatnonzero(self.view == i)
        if not hits.size:
            return
        position = self.next_undecided(int(hits[0]))
        if position is None:
            self.notify(ALL_DECIDED)
        else:
            self.go_to(position)

    def action_next(self) -> None:
        i = self.shown()
        if i is not None:
            self.advance_from(i)

    # --- deciding -------------------------------------------------------------------------
    def _decision(self, i: int):
        if self.store is None:
            return None
        return self.store.get(int(self.review.responses.rows[i]))

    def _target(self) -> int | None:
        """The response on screen when decisions can be recorded, else None (after saying why)."""
        if self.store is None:
            self.notify(NO_STORE, severity="warning")
            return None
        if self.read_only is not None:
            self.notify(self.read_only, severity="warning")
            return None
        return self.shown()

    def action_decide(self, action: str) -> None:
        i = self._target()
        if i is None:
            return
        if action != "change":
            self._record(i, action, None, advance=True)
            return
        responses = self.review.responses
        labels = responses.labels
        modal = ScoreModal(
            int(responses.rows[i]),
            self.review.labels_of(i),  # the item's own scale
            labels[responses.scores[i]],
            labels[self.review.predicted[i]],
        )
        self.app.push_screen(
            modal, lambda score: score is not None and self._record(i, "change", score, True)
        )

    def action_note(self) -> None:
        """A note on the decision shown; before deciding, it waits for the decision."""
        i = self._target()
        if i is None:
            return
        decision = self._decision(i)
        row = int(self.review.responses.rows[i])

        def save(note: str | None) -> None:
            if note is None:
                return
            if decision is None:
                self.pending_notes[row] = note
                self.show_detail()
            else:
                self._record(i, decision.action, decision.new_score, False, note=note)

        if decision is None:
            modal = NoteModal(row, self.pending_notes.get(row, ""), waiting=True)
        else:
            modal = NoteModal(row, decision.note)
        self.app.push_screen(modal, save)

    def action_clear(self) -> None:
        i = self._target()
        if i is None or self._decision(i) is None:
            return
        row = int(self.review.responses.rows[i])
        before = self._decision(i)
        try:
            self.store.clear(row)
        except ParmError as exc:
            self.notify(str(exc), severity="error", timeout=10)
            return
        self.undo_stack.append(Undo(i, row, before))
        self._refresh_row(i)

    def _record(self, i: int, action: str, new_score, advance: bool, note=None) -> None:
        responses = self.review.responses
        row = int(responses.rows[i])
        earlier = self._decision(i)
        if note is None:
            note = self.pending_notes.get(row, earlier.note if earlier else "")
        try:
            self.store.record(
                row,
                responses.ids[i],
                responses.texts[i],
                action,
                new_score,
                note,
                context=self.review.run_context(i),
            )
        except ParmError as exc:
            self.notify(str(exc), severity="error", timeout=10)
            return
        self.undo_stack.append(Undo(i, row, earlier))
        self.pending_notes.pop(row, None)
        self._refresh_row(i)
        if advance:
            self.advance_from(i)

    def action_undo(self) -> None:
        """Put back what the last change made here replaced (a decision, or no added read), and
        go back to that response."""
        if self._target() is None:
            return
        if not self.undo_stack:
            self.notify("Nothing to undo.")
            return
        last = self.undo_stack.pop()
        if not isinstance(last, Undo):  # a read typed in the review (ReviewReads)
            self._undo_read(last)
            return
        undone = self._decision(last.i)
        try:
            if last.before is None:
                self.store.clear(last.row)
            else:
                self.store.restore(last.before)
        except ParmError as exc:
            self.notify(str(exc), severity="error", timeout=10)
            return
        if undone is not None and undone.note and not (last.before and last.before.note):
            # The note typed with the undone decision waits for the next one, as it did before.
            self.pending_notes[last.row] = undone.note
        self._refresh_row(last.i)
        hits = np.flatnonzero(self.view == last.i)
        if hits.size:
            self.go_to(int(hits[0]))
        self.notify(f"Undone: row {last.row} is back to {decision_words(last.before)}.")

    def _refresh_row(self, i: int) -> None:
        self.query_one(ReviewTable).show_decision(i, self._decision(i))
        self.update_changes()
        self._update_status()
        self.show_detail()

    # --- the detail pane ------------------------------------------------------------------
    def action_scroll_detail(self, direction: int) -> None:
        detail = self.query_one(ReviewDetail)
        detail.scroll_relative(y=direction * max(1, detail.size.height - 2), animate=False)
        self.call_after_refresh(detail.mark_overflow)

    def action_copy(self) -> None:
        i = self.shown()
        if i is None:
            return
        self.app.copy_to_clipboard(self.review.responses.texts[i])
        self.notify(f"Copied the answer in row {int(self.review.responses.rows[i])}.")
