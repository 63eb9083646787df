"""The review's keys: moving through the list and deciding. ReviewScreen takes these methods.

Movement keys only ever move: j/k and the arrows a row, ctrl+d/ctrl+u half a screen,
pgdn/pgup a screen (on any list, of one page or many), g/G and home/end to either end, `n` to
the next undecided response. Decisions sit on keys of their own (o keep, c change, ? unsure,
x clear, e note; r adds a read, parm_tui.screens.review_reads) and act on the response the detail pane shows (not on the row under the cursor
at that instant, which may have moved on before the pane was redrawn); each is saved to the
store, with the run it was made on, before the list shows it, and then the cursor goes to the
next undecided response of the view. `u` undoes the last change made here: the decision that
was there before comes back as it was (or none), or a read typed with `r` is taken away
(parm_tui.screens.review_reads), and the cursor goes back to it; `U` makes the undone change
again. The state all this changes is the screen's ReviewModel (parm_tui.review_model).
"""

from __future__ import annotations

from engine.core.errors import ParmError
from parm_tui.review_model import ALL_DECIDED, Undo, UndoRead, decision_words
from parm_tui.widgets.review_detail import ReviewDetail
from parm_tui.widgets.review_dialogs import NoteModal, ScoreModal
from parm_tui.widgets.review_list import ReviewTable


class ReviewKeys:
    """Moving and deciding for ReviewScreen (which has its model, go_to, show_detail and the
    status line)."""

    # --- moving ---------------------------------------------------------------------------
    def position(self) -> int | None:
        """Where the response shown is in the list (None when it is not listed)."""
        return self.model.position_of(self.shown())

    def move_by(self, step: int) -> None:
        """Move the cursor `step` rows (negative: up), stopping at either end of the list."""
        position = self.model.step(self.position(), step)
        if position is not None:
            self.go_to(position)

    def screenful(self) -> int:
        """Rows a page key moves: what the list shows, less one row kept in view."""
        return max(1, self.query_one(ReviewTable).size.height - 2)

    def advance_from(self, i: int) -> None:
        """After response i: the next undecided response of the view (staying put, and saying
        so, when there is none)."""
        at = self.model.position_of(i)
        if at is None:
            return
        position = self.model.next_undecided(at)
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
        return self.model.decision(i)

    def _target(self) -> int | None:
        """The response on screen when decisions can be recorded, else None (after saying why)."""
        why = self.model.why_not()
        if why is not None:
            self.notify(why, severity="warning")
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
        row = self.model.row_of(i)
        waiting = self.model.pending_notes

        def save(note: str | None) -> None:
            if note is None:
                return
            if decision is None:
                waiting[row] = note
                self.show_detail()
            else:
                self._record(i, decision.action, decision.new_score, False, note=note)

        if decision is None:
            modal = NoteModal(row, waiting.get(row, ""), waiting=True)
        else:
            modal = NoteModal(row, decision.note)
        self.app.push_screen(modal, save)

    def action_clear(self) -> None:
        i = self._target()
        if i is None:
            return
        try:
            self.model.clear(i)
        except ParmError as exc:
            self.notify(str(exc), severity="error", timeout=10)

    def _record(self, i: int, action: str, new_score, advance: bool, note=None) -> None:
        try:
            self.model.record(i, action, new_score, note)
        except ParmError as exc:
            self.notify(str(exc), severity="error", timeout=10)
            return
        if advance:
            self.advance_from(i)

    def action_undo(self) -> None:
        """Put back what the last change made here replaced (a decision, or no added read), and
        go back to that response."""
        self._step_back_or_forth(undo=True)

    def action_redo(self) -> None:
        """Make the last undone change again, and go back to that response."""
        self._step_back_or_forth(undo=False)

    def _step_back_or_forth(self, undo: bool) -> None:
        if self._target() is None:
            return
        try:
            done = self.model.undo() if undo else self.model.redo()
        except ParmError as exc:
            self.notify(str(exc), severity="error", timeout=10)
            return
        if done is None:
            self.notify(f"Nothing to {'undo' if undo else 'redo'}.")
            return
        if isinstance(done, UndoRead):  # a read typed in the review (ReviewReads)
            self.read_undone(done, undo)
            return
        position = self.model.position_of(done.i)
        if position is not None:
            self.go_to(position)
        after = done.before if undo else done.after
        word = "Undone" if undo else "Redone"
        self.notify(f"{word}: row {done.row} is back to {decision_words(after)}.")

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


__all__ = ["ReviewKeys", "Undo", "decision_words"]
