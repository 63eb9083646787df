"""Review: the flagged responses, most severe first, one decision per response.

The list is paged (PAGE_SIZE rows in the table at a time) because the stock DataTable freezes
with many thousands of rows; up/down cross page edges, pgup/pgdn turn pages, g/G jump to the
first/last response. Each decision is saved to the store before the list shows it.
"""

from __future__ import annotations

import numpy as np
from rich.markup import escape
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Footer, Header, Input, Select, Static
from textual.widgets.data_table import CellDoesNotExist, RowDoesNotExist

from engine.core.errors import ParmError
from parm_tui.widgets.neighbours import NeighbourList, snippet
from parm_tui.widgets.review_detail import (
    NoteModal,
    ScoreModal,
    decision_cell,
    response_header,
    second_rater_cell,
)
from parm_tui.widgets.review_list import PAGE_SIZE, ReviewTable, review_view

NO_STORE = (
    "Decisions are off: no decision store is open for this result (no input file, or its "
    "database could not be opened)."
)


class ReviewScreen(Screen):
    """Flagged responses with their evidence, and the rater-lead's decisions."""

    SUB_TITLE = "Review"

    BINDINGS = [
        Binding("k", "decide('keep')", "Keep"),
        Binding("c", "decide('change')", "Change"),
        Binding("u", "decide('unsure')", "Unsure"),
        Binding("n", "note", "Note"),
        Binding("x", "clear", "Clear"),
        Binding("y", "copy", "Copy"),
        Binding("a", "toggle_all", "All"),
        Binding("slash", "search", "Search"),
        Binding("escape", "back", "Back"),
        Binding("right_square_bracket", "scroll_detail(1)", "Detail ↓", show=False),
        Binding("left_square_bracket", "scroll_detail(-1)", "Detail ↑", show=False),
    ]

    def __init__(self, result, store=None) -> None:
        super().__init__()
        self.result = result
        self.store = store
        self.view = np.zeros(0, dtype=int)
        self.page = 0
        self._folded: list[str] | None = None
        self._search_timer = None

    # --- layout -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        labels = self.result.responses.labels
        human = [(Text(f"human {label}"), code) for code, label in enumerate(labels)]
        model = [(Text(f"model {label}"), code) for code, label in enumerate(labels)]
        yield Header()
        yield Static(id="review-status")
        with Horizontal(id="review-filters"):
            yield Input(placeholder="/ search answers or ids", id="review-search", compact=True)
            yield Select(human, prompt="human: any", id="filter-human", compact=True)
            yield Select(model, prompt="model: any", id="filter-model", compact=True)
            yield Checkbox("off by ≥2", id="filter-off2", compact=True)
            yield Checkbox("all", id="filter-all", compact=True)
        with Horizontal(id="review-body"):
            yield ReviewTable(cursor_type="row", zebra_stripes=True, id="review-table")
            with VerticalScroll(id="review-detail"):
                yield Static(id="detail-header")
                yield Static("Answer", classes="detail-title")
                yield Static(id="detail-text")
                yield Static("Nearest neighbours (evidence)", classes="detail-title")
                yield NeighbourList(id="detail-neighbours")
        # Without the palette hint the footer fits every key at 80 columns (ctrl+p still works).
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        table = self.query_one(ReviewTable)
        columns = [("row", "row"), ("human", "human")]
        if self.result.raters_disagree is not None:
            columns.append(("second", "2nd"))
        columns += [
            ("model", "model"),
            ("severity", "sev"),
            ("decision", "decision"),
            ("answer", "answer"),
        ]
        for key, label in columns:
            table.add_column(label, key=key)
        self.refresh_view()
        table.focus()
        if self.store is None:
            self.notify(NO_STORE, severity="warning", timeout=6)
        elif self.store.stale:
            self.notify(escape(self.store.stale_message()), severity="warning", timeout=10)

    def on_screen_resume(self) -> None:
        # A dialog's result may have changed the detail while this screen was underneath;
        # redraw it once this screen is laid out again.
        self.call_after_refresh(self.show_detail)

    # --- the list -----------------------------------------------------------------------
    def refresh_view(self) -> None:
        """Recompute the filtered list, staying on the same response when it is still listed."""
        current = self.current()
        human = self.query_one("#filter-human", Select).value
        model = self.query_one("#filter-model", Select).value
        search = self.query_one("#review-search", Input).value.strip()
        if search and self._folded is None:
            self._folded = [t.casefold() for t in self.result.responses.texts]
        self.view = review_view(
            self.result,
            show_all=self.query_one("#filter-all", Checkbox).value,
            human=human if isinstance(human, int) else None,
            predicted=model if isinstance(model, int) else None,
            off_by_two=self.query_one("#filter-off2", Checkbox).value,
            search=search,
            folded=self._folded,
        )
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
            table.add_row(*self._cells(int(i)), key=str(int(i)))
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1), animate=False)
        self._update_status()
        self.show_detail()

    def _cells(self, i: int) -> list[Text]:
        responses = self.result.responses
        labels = responses.labels
        human, model = int(responses.scores[i]), int(self.result.predicted[i])
        row = int(responses.rows[i])
        cells = [Text(str(row), justify="right"), Text(labels[human], justify="center")]
        if self.result.raters_disagree is not None:
            cells.append(second_rater_cell(self.result, i))
        return cells + [
            Text(labels[model], justify="center", style="bold yellow" if model != human else ""),
            Text(f"{float(self.result.severity[i]):.2f}", justify="right"),
            decision_cell(self._decision(i)),
            Text(snippet(responses.texts[i], 60)),
        ]

    def current(self) -> int | None:
        """Index (in the responses) of the highlighted response, or None when the list is empty."""
        table = self.query_one(ReviewTable)
        position = self.page * PAGE_SIZE + table.cursor_row
        if not table.row_count or not 0 <= position < len(self.view):
            return None
        return int(self.view[position])

    def _update_status(self) -> None:
        n, shown = len(self.result.responses), len(self.view)
        flagged = int(self.result.flagged.sum())
        text = Text()
        text.append(f"{flagged:,} flagged of {n:,}", style="bold")
        start = self.page * PAGE_SIZE
        text.append(f" · listed {shown:,}")
        if shown:
            text.append(f" · {start + 1:,}–{min(start + PAGE_SIZE, shown):,}")
        text.append(f" · page {self.page + 1}/{self.pages}")
        if self.store is None:
            text.append(" · decisions off", style="yellow")
        else:
            text.append(f" · {len(self.store.all()):,} decided")
        self.query_one("#review-status", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail()

    def show_detail(self) -> None:
        i = self.current()
        header = self.query_one("#detail-header", Static)
        if i is None:
            header.update(Text("No responses match the filters.", style="dim"))
            self.query_one("#detail-text", Static).update("")
            self.query_one(NeighbourList).update("")
            return
        header.update(response_header(self.result, i, self._decision(i)))
        self.query_one("#detail-text", Static).update(Text(self.result.responses.texts[i]))
        self.query_one(NeighbourList).show(self.result, i)

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

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self.refresh_view()

    def action_toggle_all(self) -> None:
        box = self.query_one("#filter-all", Checkbox)
        box.value = not box.value

    def action_search(self) -> None:
        self.query_one("#review-search", Input).focus()

    async def action_back(self) -> None:
        table = self.query_one(ReviewTable)
        if self.focused is not table:
            table.focus()
        elif hasattr(self.app, "action_show"):
            # ParmApp switches between installed screens; Results is where Review is opened from.
            await self.app.run_action("show('results')")
        elif len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    # --- decisions ----------------------------------------------------------------------
    def _decision(self, i: int):
        if self.store is None:
            return None
        return self.store.get(int(self.result.responses.rows[i]))

    def _target(self) -> int | None:
        """The highlighted response when decisions can be recorded, else None (after saying why)."""
        if self.store is None:
            self.notify(NO_STORE, severity="warning")
            return None
        return self.current()

    def action_decide(self, action: str) -> None:
        i = self._target()
        if i is None:
            return
        if action != "change":
            self._record(i, action, None, advance=True)
            return
        responses = self.result.responses
        labels = responses.labels
        modal = ScoreModal(
            int(responses.rows[i]),
            labels,
            labels[responses.scores[i]],
            labels[self.result.predicted[i]],
        )
        self.app.push_screen(
            modal, lambda score: score is not None and self._record(i, "change", score, True)
        )

    def action_note(self) -> None:
        i = self._target()
        if i is None:
            return
        decision = self._decision(i)
        row = int(self.result.responses.rows[i])

        def save(note: str | None) -> None:
            if note is None:
                return
            if decision is None:
                # A note on an undecided answer marks it for another look.
                self._record(i, "unsure", None, advance=False, note=note)
                self.notify("Saved as unsure with the note.")
            else:
                self._record(i, decision.action, decision.new_score, False, note=note)

        self.app.push_screen(NoteModal(row, decision.note if decision else ""), save)

    def action_clear(self) -> None:
        i = self._target()
        if i is None or self._decision(i) is None:
            return
        try:
            self.store.clear(int(self.result.responses.rows[i]))
        except ParmError as exc:
            self.notify(escape(str(exc)), severity="error", timeout=10)
        self._refresh_row(i)

    def _record(self, i: int, action: str, new_score, advance: bool, note=None) -> None:
        responses = self.result.responses
        earlier = self._decision(i)
        if note is None:
            note = earlier.note if earlier else ""
        try:
            self.store.record(
                int(responses.rows[i]),
                responses.ids[i],
                responses.texts[i],
                action,
                new_score,
                note,
            )
        except ParmError as exc:
            self.notify(escape(str(exc)), severity="error", timeout=10)
            return
        self._refresh_row(i)
        if advance:
            self.query_one(ReviewTable).action_cursor_down()

    def _refresh_row(self, i: int) -> None:
        table = self.query_one(ReviewTable)
        try:
            table.update_cell(str(i), "decision", decision_cell(self._decision(i)))
        except (CellDoesNotExist, RowDoesNotExist):
            pass  # the row is on another page now; the page shows it when it is built
        self._update_status()
        self.show_detail()

    def action_scroll_detail(self, direction: int) -> None:
        detail = self.query_one("#review-detail", VerticalScroll)
        detail.scroll_relative(y=direction * max(1, detail.size.height - 2), animate=False)

    def action_copy(self) -> None:
        i = self.current()
        if i is None:
            return
        self.app.copy_to_clipboard(self.result.responses.texts[i])
        self.notify(f"Copied the answer in row {int(self.result.responses.rows[i])}.")
