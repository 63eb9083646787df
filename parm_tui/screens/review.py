"""Review: the flagged responses, most severe first, one decision per response.

The review's state (what is listed, the page, the response selected, the decisions with their
undo and redo, the re-run's changes) lives in one ReviewModel (parm_tui.review_model), which this
screen draws and watches: a change of the model redraws the row it concerns, the status line
and the detail (`_model_changed`). The list is paged (PAGE_SIZE rows in the table at a time)
because the stock DataTable freezes with many thousands of rows; every movement key crosses page
edges (parm_tui.screens.review_keys has the keys, moving and deciding). The views list the
flagged responses, the whole queue, the undecided, unsure, changed, kept or noted ones, and
after a re-run the decided ones that lost their flag and the new flags (engine.results.queue
computes each).
"""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Select, Static

from engine.results.review import ReviewSet
from parm_tui import keymap
from parm_tui.review_model import DECIDED, LISTED, NO_STORE, PAGE_SIZE, ReviewModel
from parm_tui.screens.keys import KeysModal, key_rows
from parm_tui.screens.review_keys import ReviewKeys
from parm_tui.screens.review_others import OTHER_WRITER_CHECK_SECONDS, ReviewOthers
from parm_tui.screens.review_reads import ReviewReads
from parm_tui.widgets.footer import ParmFooter
from parm_tui.widgets.plain import plain
from parm_tui.widgets.review_detail import LEGEND, ReviewDetail
from parm_tui.widgets.review_filters import VIEW_ALL, VIEW_THIRD, ReviewFilters
from parm_tui.widgets.review_list import ReviewTable, short_labels
from parm_tui.widgets.toggles import MarkedCheckbox

__all__ = ["NO_STORE", "ReviewScreen"]


class ReviewScreen(ReviewKeys, ReviewReads, ReviewOthers, Screen):
    """Flagged responses with their evidence, and the rater-lead's decisions.

    review: the session's review set (every item's responses in one queue; a file of one item is
    a set of one); previous_flagged_rows: the data rows the previous run of this file flagged
    (None when this is its first run), for the re-run counts and views; start_row: the data row
    to open at (where the review stopped), else the first undecided response; read_only: why no
    decision can be made here (an earlier run on show), None when they can.
    """

    SUB_TITLE = "Review"
    # Under 100 columns the detail pane takes most of the width, under 32 rows its titles lose
    # their blank line: the question, the reads and the evidence in view at 80x24 (parm.tcss).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    BINDINGS = keymap.REVIEW

    def __init__(
        self,
        review: ReviewSet,
        store=None,
        previous_flagged_rows=None,
        start_row=None,
        read_only: str | None = None,
        backreads=None,
    ) -> None:
        super().__init__()
        # {data row: (rater, score) to backread} today (engine.workspace.backread_rows).
        self.backreads = dict(backreads or {})
        self.model = ReviewModel(review, store, read_only, previous_flagged_rows, start_row)
        self.model.listen(self._model_changed)
        # Where the other reviewers are now: {data row: their names} (follow_others).
        self.others: dict[int, list[str]] = {}
        self._said: tuple[int | None, float] = (None, 0.0)  # the row told, and when
        # Who the last read typed here was by: the rater offered for the next one.
        self.read_rater = ""
        # The response whose new consensus the recount in progress will tell, the typed reads
        # last sent to be counted, and those `review` counts.
        self.told: int | None = None
        self.counted_reads: list = []
        self.review_counts: list = []
        # The page the table holds now (None: it must be built again, the view changed).
        self.built: int | None = None
        self._search_timer = None

    # The model's state, as the keys, the reads and the tests read it.
    @property
    def review(self) -> ReviewSet:
        return self.model.review

    @review.setter
    def review(self, review: ReviewSet) -> None:
        self.model.review = review

    @property
    def store(self):
        return self.model.store

    @store.setter
    def store(self, store) -> None:
        self.model.store = store

    @property
    def view(self) -> np.ndarray:
        return self.model.view

    def _model_changed(self, what: str, i: int | None) -> None:
        """The model changed: a decision redraws its row, the re-run's counts, the status line
        and the detail; a new list is built again when next shown (built None). Typed reads are
        counted again by count_added_reads."""
        if not self.is_mounted:
            return
        if what == DECIDED and i is not None:
            self.query_one(ReviewTable).show_decision(i, self._decision(i))
            self.model.update_changes()
            self._update_status()
            self.show_detail()
        elif what == LISTED:
            self.built = None

    # --- layout -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="review-status")
        yield Static(id="review-rerun")
        responses = self.review.responses
        yield ReviewFilters(
            responses.labels,
            self.model.is_rerun(),
            responses.ordered,
            items=self.model.item_names(),
            raters=self.review.rater_names(),
            third_reads=self.model.third_reads(),
            backreads=self.backreads,
            id="review-filters",
        )
        with Horizontal(id="review-body"):
            yield ReviewTable(self.review, id="review-table")
            yield ReviewDetail(id="review-detail")
        yield ParmFooter()

    def on_mount(self) -> None:
        table = self.query_one(ReviewTable)
        table.fit(table.size.width or int(self.app.size.width * 0.6))
        self.query_one("#review-rerun").display = (
            self.model.is_rerun() or self.model.read_only is not None
        )
        self.model.update_changes()
        self.refresh_view()
        self.go_to(self.model.start_position())
        table.focus()
        if self.store is None:
            self.notify(NO_STORE, severity="warning", timeout=6)
        elif self.store.stale_message():
            self.notify(self.store.stale_message(), severity="warning", timeout=10)
        if self.store is not None and self.store.added_reads():
            raters = self.store.reads.raters()
            self.read_rater = raters[-1] if raters else ""
            self.count_added_reads()
        self.set_interval(OTHER_WRITER_CHECK_SECONDS, self.check_other_writers)
        self.watch(self.app, "state", self.follow_store, init=False)

    def on_resize(self) -> None:
        table = self.query_one(ReviewTable)
        cursor = table.cursor_row  # fit() clears the table, and with it the cursor
        if table.size.width and table.fit(table.size.width):
            self._show_page(self.model.page, cursor)

    def on_screen_resume(self) -> None:
        # A dialog's result may have changed the detail while this screen was underneath, and
        # an import (Export screen) may have brought typed reads in.
        self.call_after_refresh(self.show_detail)
        if self.store is not None and self.store.added_reads() != self.counted_reads:
            self.count_added_reads()

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
            self.count_added_reads()

    # --- the list -----------------------------------------------------------------------
    def refresh_view(self, prefer: int | None = None) -> None:
        """Recompute the filtered list, staying on `prefer` (default: the response shown) when
        it is still listed."""
        current = prefer if prefer is not None else self.shown()
        decisions = {} if self.store is None else self.store.all()
        conflicted = frozenset() if self.store is None else frozenset(self.store.conflicted_rows())
        criteria = self.query_one(ReviewFilters).criteria(
            self.review, self.model.changes, decisions, conflicted
        )
        self.model.list_by(criteria)
        self.built = None
        position = self.model.position_of(current)
        self.go_to(0 if position is None else position)

    def go_to(self, position: int) -> None:
        """Show `position` in the list (negative counts from the end): on the page shown, only
        the cursor moves; another page is built first."""
        page, row = self.model.place(position)
        table = self.query_one(ReviewTable)
        if page != self.built or not table.row_count:
            self._show_page(page, row)
            return
        table.move_cursor(row=min(row, table.row_count - 1), animate=False)
        self.show_detail()

    def _show_page(self, page: int, cursor: int) -> None:
        table = self.query_one(ReviewTable)
        self.model.page = self.built = page
        table.clear()
        for i in self.model.on_page():
            table.add_row(*table.cells(int(i), self._decision(int(i))), key=str(int(i)))
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1), animate=False)
        self._update_status()
        self.show_detail()

    def current(self) -> int | None:
        """Index (in the responses) of the highlighted response, or None when the list is empty."""
        table = self.query_one(ReviewTable)
        return self.model.at(self.model.page, table.cursor_row) if table.row_count else None

    def shown(self) -> int | None:
        """Index of the response in the detail pane: the one decisions act on (the model's
        selected response)."""
        return self.model.selected

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
        if self.model.pages > 1:
            start = self.model.page * PAGE_SIZE
            text.append(f" ({start + 1:,}–{min(start + PAGE_SIZE, shown):,}, ")
            text.append(f"page {self.model.page + 1}/{self.model.pages})")
        self.query_one("#review-status", Static).update(text)
        self._update_rerun()

    def _update_rerun(self) -> None:
        if self.model.read_only is not None:
            self.query_one("#review-rerun", Static).update(
                Text(self.model.read_only, "bold yellow")
            )
            return
        changes = self.model.changes
        if changes is None:
            return
        unflagged = int(changes.no_longer_flagged.sum())
        new = int(changes.newly_flagged.sum())
        # A re-run that changed nothing under the decisions has nothing to say: no line.
        self.query_one("#review-rerun").display = bool(unflagged or new)
        text = Text("Re-run: ", style="bold")
        text.append(f"{unflagged:,} decided no longer flagged", style="yellow" if unflagged else "")
        text.append(" · ")
        text.append(f"{new:,} newly flagged undecided", style="yellow" if new else "")
        text.append(" (v: views)", style="dim")
        self.query_one("#review-rerun", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail()

    def show_detail(self) -> None:
        detail = self.query_one(ReviewDetail)
        i = self.current()
        self.model.selected = i
        if i is None:
            detail.clear("No responses match the filters.")
            return
        row = self.model.row_of(i)
        conflicts = [] if self.store is None else self.store.conflicts(row)
        me = "" if self.store is None else self.store.reviewer
        detail.show(self.review, i, self._decision(i), self.model.pending_notes.get(row), conflicts,
                    self.uncounted_reads(row), self.others.get(row, ()), me)  # fmt: skip

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
        """A filter chosen: the list follows, and its keys work at once. The third-read list
        opens at its top, the least sure consensus (other views stay on the answer shown)."""
        third = event.select.id == "filter-view" and event.value == VIEW_THIRD
        self.refresh_view(prefer=-1 if third else None)
        self.query_one(ReviewTable).focus()

    def on_checkbox_changed(self, event: MarkedCheckbox.Changed) -> None:
        self.refresh_view()

    def filter_to(self, item: str | None = None, rater: str | None = None, whole=False) -> None:
        """List one item's or one rater's responses (both: that rater's scores on the item,
        and `whole`: every one of them, flagged or not): what Results opens the review on."""
        filters = self.query_one(ReviewFilters)
        filters.choose(item=item, rater=rater)
        if whole:
            filters.set_view(VIEW_ALL)
        self.refresh_view()
        if self.view.size:
            self.go_to(0)
        self.query_one(ReviewTable).focus()

    def action_toggle_all(self) -> None:
        self.query_one(ReviewFilters).toggle_all()

    def action_third_reads(self) -> None:
        """The answers whose consensus needs a third read, least sure first (T again: back)."""
        if not self.query_one(ReviewFilters).toggle_third_reads():
            self.notify("No answer needs a third read: every answer read twice has a sure "
                        "consensus, or none is read twice.")  # fmt: skip

    def action_views(self) -> None:
        """Open the view dropdown (the list keys work again once a view is chosen)."""
        select = self.query_one("#filter-view", Select)
        select.focus()
        select.expanded = True

    def action_search(self) -> None:
        self.query_one("#review-search", Input).focus()

    def action_filter(self, which: str) -> None:
        """Open a filter's dropdown (item, rater, human or model score) from the keyboard."""
        found = self.query(f"#filter-{which}")
        if not found or not found.first().display:
            self.notify(f"There is no {which} filter here (a file without {which}s).")
            return
        select = found.first(Select)
        select.focus()
        select.expanded = True

    def action_legend(self) -> None:
        """Every key of the review, and what the detail pane's figures mean (said once, here,
        not under every answer)."""
        rows = key_rows(self)
        legend = LEGEND.copy()
        labels = self.review.responses.labels
        short = short_labels(labels)
        if list(short) != list(labels):  # the list's shortened labels, spelled out
            legend.append("\nscores in the list: ", style="bold dim")
            pairs = [f"{s} = {label}" for s, label in zip(short, labels) if s != label]
            legend.append_text(plain(", ".join(pairs), style="dim"))
        self.app.push_screen(KeysModal("Review: keys, and what the figures mean", rows, legend))

    def action_to_list(self) -> None:
        """esc: back to the list from a filter; on the list itself it does nothing (F5 leads
        to Results), so two presses never leave the review."""
        self.query_one(ReviewTable).focus()
