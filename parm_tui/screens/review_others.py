"""Other reviewers on the same review, for ReviewScreen: decisions another parm window or browser
saved on the same file are read again and said (check_other_writers, every
OTHER_WRITER_CHECK_SECONDS), and the responses other reviewers are on now are marked
(follow_others; issue 47). The screen's model (parm_tui.review_model) holds the review."""

from __future__ import annotations

import time

from engine.core.errors import ParmError
from engine.core.text import safe_text
from parm_tui.widgets.review_list import ReviewTable

# How often the review screen looks for decisions saved by another parm on the same database.
OTHER_WRITER_CHECK_SECONDS = 2.0
# Another reviewer is "on" a response while seen there this recently (each review says where it
# is at every check, so a closed window or a dropped browser drops out within this).
PRESENCE_SECONDS = 5 * OTHER_WRITER_CHECK_SECONDS


class ReviewOthers:
    """Following the other reviewers for ReviewScreen (which has its model, store, others,
    _said, count_added_reads, refresh_view, shown_row, show_detail)."""

    def check_other_writers(self) -> None:
        """When another parm (another window on the same file) saved decisions, read them
        again and say so: the list never shows decisions the database no longer holds."""
        if self.store is None:
            return
        before = (self.store.all(), self.store.added_reads(), self.store.conflicted_rows())
        try:
            changed = self.store.changed_elsewhere()
        except ParmError:
            return
        # The database holds every file's review: a write for another file is not news here.
        if (
            changed
            and (self.store.all(), self.store.added_reads(), self.store.conflicted_rows()) != before
        ):
            self.count_added_reads()
            self.refresh_view()
            after = self.store.all()
            who = sorted({d.reviewer for row, d in after.items()
                          if before[0].get(row) != d and d.reviewer})  # fmt: skip
            by = f" by {', '.join(who)}" if who else ""
            self.notify(
                safe_text(f"Decisions were saved{by} in another parm window or browser on this "
                          "file; the list now shows them (where two reviewers decided one "
                          "response, the other decision is kept beside it as a conflict)."),
                severity="warning",
                timeout=8,
                markup=False,  # reviewers' names are theirs to type
            )  # fmt: skip
        self.follow_others()

    def follow_others(self) -> None:
        """Say where this reviewer is, and mark the responses other reviewers are on now (seen
        in the last PRESENCE_SECONDS): in the list's decision column and the detail."""
        row = self.shown_row()
        try:
            # Said when the response changes, and again before the others would drop it.
            moment = time.monotonic()
            if row is not None and (
                row != self._said[0] or moment - self._said[1] >= PRESENCE_SECONDS / 2
            ):
                self.store.here(row)
                self._said = (row, moment)
            others = self.store.others_here(PRESENCE_SECONDS)
        except ParmError:
            return
        if others == self.others:
            return
        moved = {r for r in set(others) | set(self.others) if others.get(r) != self.others.get(r)}
        self.others = others
        table = self.query_one(ReviewTable)
        table.present = others
        for r in moved:
            i = self.model.index_of(r)
            if i is not None:
                table.show_decision(i, self._decision(i))
        if row in moved:
            self.show_detail()
