"""Review: the flagged responses, most severe first, one decision per response.

The list is paged (PAGE_SIZE rows in the table at a time) because the stock DataTable freezes
with many thousands of rows; up/down cross page edges, pgup/pgdn turn pages, g/G jump to the
first/last response. A decision key acts on the response the detail pane shows (not on the
row under the cursor at that instant, which may have moved on before the pane was redrawn) and
is saved to the store, with the run it was made on, before the list shows it. `n` moves on
without recording anything.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Select, Static
from textual.widgets.data_table import CellDoesNotExist, RowDoesNotExist

from engine.core.errors import ParmError
from engine.results.queue import rerun_changes
from engine.results.review import ReviewSet
from parm_tui.widgets.footer import ParmFooter
from parm_tui.widgets.review_detail import ReviewDetail
from parm_tui.widgets.review_dialogs import NoteModal, ScoreModal
from parm_tui.widgets.review_filters import ReviewFilters
from parm_tui.widgets.review_list import PAGE_SIZE, ReviewTable, review_view
from parm_tui.widgets.toggles import MarkedCheckbox

# How often the review screen looks for decisions saved by another parm on the same database.
OTHER_WRITER_CHECK_SECONDS = 2.0
NO_STORE = (
    "Decisions are off: no decision store is open for this result (no input file, or its "
    "database could not be opened)."
)


class ReviewScreen(Screen):
    """Flagged responses with their evidence, and the rater-lead's decisions.

    review: the session's review set (every item's responses in one queue; a file of one item is
    a set of one); previous_flagged_rows: the data rows the previous run of this file flagged (None when this
    is its first run), for the re-run counts and views; start_row: the data row to open at
    (where the review stopped), else the first undecided response.
    """

    SUB_TITLE = "Review"

    BINDINGS = [
        Binding("k", "decide('keep')", "Keep"),
        Binding("c", "decide('change')", "Change"),
        Binding("u", "decide('unsure')", "Unsure"),
        Binding("n", "next", "Next"),
        Binding("e", "note", "Note"),
        Binding("x", "clear", "Clear"),
        Binding("slash", "search", "Search"),
        Binding("y", "copy", "Copy", show=False),
        Binding("a", "toggle_all", "All", show=False),
        Binding("escape", "back", "Back", show=False),
        Binding("right_square_bracket", "scroll_detail(1)", "Detail ↓", show=False),
        Binding("left_square_bracket", "scroll_detail(-1)", "Detail ↑", show=False),
    ]

    def __init__(
        self, review: ReviewSet, store=None, previous_flagged_rows=None, start_row=None
    ) -> None:
        super().__init__()
        self.review = review
        self.store = store
        self.previous_flagged_rows = previous_flagged_rows
        self.start_row = start_row
        self.view = np.zeros(0, dtype=int)
        self.page = 0
        self.pending_notes: dict[int, str] = {}
        self.changes = None
        self._folded: list[str] | None = None
        self._search_timer = None

    # --- layout -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="review-status")
        yield Static(id="review-rerun")
        responses = self.review.responses
        yield ReviewFilters(
            responses.labels,
            self.is_rerun(),
            responses.ordered,
            items=self.item_names(),
            raters=self.rater_names(),
            id="review-filters",
        )
        with Horizontal(id="review-body"):
            yield ReviewTable(self.review, id="review-table")
            yield ReviewDetail(id="review-detail")
        yield ParmFooter()

    def item_names(self) -> list[str]:
        """The items to filter by (none for a file of one item)."""
        return [r.responses.item for r in self.review.results] if self.review.by_item else []

    def rater_names(self) -> list[str]:
        raters = self.review.responses.raters
        return sorted({r for r in raters if r}) if raters is not None else []

    def is_rerun(self) -> bool:
        """A previous run of the file, or decisions made on another run than this one."""
        if self.previous_flagged_rows is not None:
            return True
        decisions = {} if self.store is None else self.store.all()
        run_id = self.review.run_id
        return any(d.context is None or d.context.run_id != run_id for d in decisions.values())

    def on_mount(self) -> None:
        table = self.query_one(ReviewTable)
        table.fit(table.size.width or int(self.app.size.width * 0.6))
        self.query_one("#review-rerun").display = self.is_rerun()
        self.update_changes()
        self.refresh_view()
        self.open_at_start()
        table.focus()
        if self.store is None:
            self.notify(NO_STORE, severity="warning", timeout=6)
        elif self.store.stale:
            self.notify(self.store.stale_message(), severity="warning", timeout=10)
        self.set_interval(OTHER_WRITER_CHECK_SECONDS, self.check_other_writers)
        self.watch(self.app, "state", self.follow_store, init=False)

    def check_other_writers(self) -> None:
        """When another parm (another window on the same file) saved decisions, read them
        again and say so: the list never shows decisions the database no longer holds."""
        if self.store is None:
            return
        try:
            changed = self.store.changed_elsewhere()
        except ParmError:
            return
        if changed:
            self.refresh_view()
            self.notify(
                "Decisions were saved by another parm window on this file; the list now shows "
                "them (the latest decision on a response wins).",
                severity="warning",
                timeout=8,
            )

    def open_at_start(self) -> None:
        """Where the review stopped (start_row), else the first undecided response listed."""
        rows = self.review.responses.rows
        if self.start_row is not None:
            hits = np.flatnonzero(rows[self.view] == self.start_row)
            if hits.size:
                self.go_to(int(hits[0]))
                return
        undecided = [n for n, i in enumerate(self.view) if self._decision(int(i)) is None]
        self.go_to(undecided[0] if undecided else 0)

    def on_resize(self) -> None:
        table = self.query_one(ReviewTable)
        if table.size.width and table.fit(table.size.width):
            self._show_page(self.page, table.cursor_row)

    def on_screen_resume(self) -> None:
        # A dialog's result may have changed the detail while this screen was underneath.
        self.call_after_refresh(self.show_detail)

    class Stopped(Message):
        """The review was left at data row `row` (None: nothing was on show)."""

        def __init__(self, row: int | None) -> None:
            super().__init__()
            self.row = row

    def on_screen_suspend(self) -> None:
        self.post_message(self.Stopped(self.shown_row()))

    def follow_store(self, old, new) -> None:
        """The app's state changed: a new decision store (another file's, or the same file's
        opened again) replaces the one this screen writes to."""
        if new.store is not old.store:
            self.store = new.store

    # --- the list -----------------------------------------------------------------------
    def refresh_view(self, prefer: int | None = None) -> None:
        """Recompute the filtered list, staying on `prefer` (default: the response shown) when
        it is still listed."""
        current = prefer if prefer is not None else self.shown()
        criteria = self.query_one(ReviewFilters).criteria(self.changes)
        if criteria["search"] and self._folded is None:
            self._folded = [t.casefold() for t in self.review.responses.texts]
        self.view = review_view(self.review, folded=self._folded, **criteria)
        hits = np.flatnonzero(self.view == current) if current is not None else []
        self.go_to(int(hits[0]) if len(hits) else 0)

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.view) // PAGE_SIZE))

    def go_to(self, position: int) -> None:
        """Show the page holding `position` in the list (negative counts from the end)."""
        if position < 0:
            position = max(0, len(self.view) + position)
        self._show_page(position // PAGE_SIZE, position % PAGE_SIZE)

    def turn_page(self, step: int, at_end: bool = False) -> None:
        page = self.page + step
        if 0 <= page < self.pages:
            self._show_page(page, PAGE_SIZE - 1 if at_end else 0)

    def _show_page(self, page: int, cursor: int) -> None:
        table = self.query_one(ReviewTable)
        self.page = page
        table.clear()
        for i in self.view[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]:
            table.add_row(*table.cells(int(i), self._decision(int(i))), key=str(int(i)))
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1), animate=False)
        self._update_status()
        self.show_detail()

    def current(self) -> int | None:
        """Index (in the responses) of the highlighted response, or None when the list is empty."""
        table = self.query_one(ReviewTable)
        position = self.page * PAGE_SIZE + table.cursor_row
        if not table.row_count or not 0 <= position < len(self.view):
            return None
        return int(self.view[position])

    def shown(self) -> int | None:
        """Index of the response in the detail pane: the one decisions act on."""
        return self.query_one(ReviewDetail).shown

    def shown_row(self) -> int | None:
        i = self.shown()
        return None if i is None else int(self.review.responses.rows[i])

    def _update_status(self) -> None:
        n, shown = len(self.review.responses), len(self.view)
        text = Text()
        text.append(f"{int(self.review.flagged.sum()):,} flagged of {n:,}", style="bold")
        if self.store is None:
            text.append(" · decisions off", style="yellow")
        else:
            text.append(f" · {len(self.store.all()):,} decided")
        text.append(f" · listed {shown:,}")
        if self.pages > 1:
            start = self.page * PAGE_SIZE
            text.append(f" ({start + 1:,}–{min(start + PAGE_SIZE, shown):,}, ")
            text.append(f"page {self.page + 1}/{self.pages})")
        self.query_one("#review-status", Static).update(text)
        self._update_rerun()

    def _update_rerun(self) -> None:
        if self.changes is None:
            return
        unflagged = int(self.changes.no_longer_flagged.sum())
        new = int(self.changes.newly_flagged.sum())
        text = Text("Re-run: ", style="bold")
        text.append(f"{unflagged:,} decided no longer flagged", style="yellow" if unflagged else "")
        text.append(" · ")
        text.append(f"{new:,} newly flagged undecided", style="yellow" if new else "")
        text.append(" (view ▾)", style="dim")
        self.query_one("#review-rerun", Static).update(text)

    def update_changes(self) -> None:
        """Recount the re-run changes (decisions change them); the list is left as it is."""
        if self.is_rerun():
            decisions = {} if self.store is None else self.store.all()
            self.changes = rerun_changes(self.review, decisions, self.previous_flagged_rows)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail()

    def show_detail(self) -> None:
        detail = self.query_one(ReviewDetail)
        i = self.current()
        if i is None:
            detail.clear("No responses match the filters.")
            return
        row = int(self.review.responses.rows[i])
        detail.show(self.review, i, self._decision(i), self.pending_notes.get(row))

    # --- filters ------------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "review-search":
            return
        if self._search_timer is not None:
            self._search_timer.stop()
        # Wait for a pause in typing: searching 100,000 answers per key would lag.
        self._search_timer = self.set_timer(0.25, self.refresh_view)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "review-search":
            self.refresh_view()
            self.query_one(ReviewTable).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        self.refresh_view()

    def on_checkbox_changed(self, event: MarkedCheckbox.Changed) -> None:
        self.refresh_view()

    def action_toggle_all(self) -> None:
        self.query_one(ReviewFilters).toggle_all()

    def action_search(self) -> None:
        self.query_one("#review-search", Input).focus()

    async def action_back(self) -> None:
        table = self.query_one(ReviewTable)
        if self.focused is not table:
            table.focus()
        # ParmApp switches between installed screens (Results is where Review is opened from);
        # an app without that action shows this screen over another.
        elif not await self.app.run_action("show('results')") and len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    # --- moving on ----------------------------------------------------------------------
    def advance_from(self, i: int) -> None:
        """Show the response listed after response i (staying put at the end of the list)."""
        hits = np.flatnonzero(self.view == i)
        if not hits.size:
            return
        if int(hits[0]) + 1 < len(self.view):
            self.go_to(int(hits[0]) + 1)
        else:
            self.notify("That was the last response in the list.")

    def action_next(self) -> None:
        i = self.shown()
        if i is not None:
            self.advance_from(i)

    # --- decisions ----------------------------------------------------------------------
    def _decision(self, i: int):
        if self.store is None:
            return None
        return self.store.get(int(self.review.responses.rows[i]))

    def _target(self) -> int | None:
        """The response on screen when decisions can be recorded, else None (after saying why)."""
        if self.store is None:
            self.notify(NO_STORE, severity="warning")
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
        try:
            self.store.clear(int(self.review.responses.rows[i]))
        except ParmError as exc:
            self.notify(str(exc), severity="error", timeout=10)
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
        self.pending_notes.pop(row, None)
        self._refresh_row(i)
        if advance:
            self.advance_from(i)

    def _refresh_row(self, i: int) -> None:
        table = self.query_one(ReviewTable)
        try:
            table.update_cell(str(i), "decision", table.decision_cell(self._decision(i)))
        except (CellDoesNotExist, RowDoesNotExist):
            pass  # the row is on another page now; the page shows it when it is built
        self.update_changes()
        self._update_status()
        self.show_detail()

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
