"""The review list: the paged table of responses (which ones, and in what order, is
engine.results.queue.review_view). The stock DataTable freezes with many thousands of rows, so it only
ever holds one page; moving past a page's edge asks the screen for the next page.

The answer column takes the width the other columns leave. When that is too narrow for the
full set (row, human, 2nd, model, severity, decision), the list shows a compact set: row, the
two scores as `human→model`, a short decision and the answer; the detail pane has the rest.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from engine.results.queue import review_view
from engine.results.review import ReviewSet
from parm_tui.widgets.neighbours import snippet
from parm_tui.widgets.review_detail import ACTION_STYLES, decision_cell

PAGE_SIZE = 200
# The full set of columns only when it leaves the answer at least this many cells.
FULL_ANSWER_MIN = 40
ANSWER_MIN = 8
# Cells a column takes beyond its content (padding both sides), and the vertical scrollbar.
CELL_PADDING = 2
SCROLLBAR = 2

__all__ = ["PAGE_SIZE", "ReviewTable", "review_view"]


def short_decision(decision) -> Text:
    """keep, →new score, or ? (unsure); ✎ when it has a note: at most 5 cells."""
    if decision is None:
        return Text("")
    label = {"keep": "keep", "unsure": "?"}.get(decision.action, f"→{decision.new_score}")
    cell = Text(label, style=ACTION_STYLES.get(decision.action, ""))
    if decision.note:
        cell.append("✎")
    return cell


class ReviewTable(DataTable):
    """The page of responses; moving past its edges turns the page. `fit(width)` chooses the
    columns for a width; `cells(i, decision)` are one response's cells in them."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("g", "first", "First", show=False),
        Binding("G", "last", "Last", show=False),
        Binding("pageup", "page_up", "Prev page", show=False),
        Binding("pagedown", "page_down", "Next page", show=False),
    ]

    def __init__(self, review: ReviewSet, **kwargs) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)
        self.review = review
        self.compact: bool | None = None
        self.answer_width = ANSWER_MIN
        labels = review.responses.labels
        self.label_width = max(len(label) for label in labels)
        self.row_width = max(3, len(str(int(max(review.responses.rows, default=0)))))

    def _columns(self, compact: bool) -> list[tuple[str, str, int]]:
        """(key, header, width) of every column but the answer."""
        if compact:
            scores = 2 * self.label_width + 2  # "0→2" and the ≠ of a second rater
            return [
                ("row", "row", self.row_width),
                ("scores", "h→m", scores),
                ("decision", "dec", 5),
            ]
        columns = [("row", "row", self.row_width), ("human", "human", max(5, self.label_width))]
        if self.review.raters_disagree is not None:
            columns.append(("second", "2nd", max(3, self.label_width + 1)))
        columns += [
            ("model", "model", max(5, self.label_width)),
            ("severity", "sev", 5),
            ("decision", "decision", 8),
        ]
        return columns

    def _answer_room(self, width: int, compact: bool) -> int:
        columns = self._columns(compact)
        taken = sum(w for _, _, w in columns) + CELL_PADDING * (len(columns) + 1) + SCROLLBAR
        return width - taken

    def fit(self, width: int) -> bool:
        """Choose the columns for `width` cells; True when they changed (rebuild the page)."""
        compact = self._answer_room(width, False) < FULL_ANSWER_MIN
        answer = max(ANSWER_MIN, self._answer_room(width, compact))
        if compact == self.compact and answer == self.answer_width and self.columns:
            return False
        self.compact, self.answer_width = compact, answer
        self.clear(columns=True)
        for key, header, column_width in self._columns(compact):
            self.add_column(header, width=column_width, key=key)
        self.add_column("answer", width=answer, key="answer")
        return True

    def cells(self, i: int, decision) -> list[Text]:
        review = self.review
        responses = review.responses
        labels = responses.labels
        human, model = int(responses.scores[i]), int(review.predicted[i])
        flagged = "bold yellow" if model != human else ""
        cells = [Text(str(int(responses.rows[i])), justify="right")]
        if self.compact:
            scores = Text(labels[human])
            scores.append("→")
            scores.append(labels[model], style=flagged)
            if review.raters_disagree is not None and review.raters_disagree[i]:
                scores.append("≠", style="bold magenta")
            cells += [scores, short_decision(decision)]
        else:
            cells.append(Text(labels[human], justify="center"))
            if review.raters_disagree is not None:
                cells.append(second_rater_cell(review, i))
            cells += [
                Text(labels[model], justify="center", style=flagged),
                Text(f"{float(review.severity[i]):.2f}", justify="right"),
                decision_cell(decision),
            ]
        return cells + [Text(snippet(responses.texts[i], self.answer_width))]

    def decision_cell(self, decision) -> Text:
        return short_decision(decision) if self.compact else decision_cell(decision)

    def action_cursor_down(self) -> None:
        if self.cursor_row >= self.row_count - 1:
            self.screen.turn_page(+1)
        else:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        if self.cursor_row <= 0:
            self.screen.turn_page(-1, at_end=True)
        else:
            super().action_cursor_up()

    def action_page_down(self) -> None:
        self.screen.turn_page(+1)

    def action_page_up(self) -> None:
        self.screen.turn_page(-1)

    def action_first(self) -> None:
        self.screen.go_to(0)

    def action_last(self) -> None:
        self.screen.go_to(-1)


def second_rater_cell(review: ReviewSet, i: int) -> Text:
    """The second rater's score; `≠` (magenta) when the two raters disagree."""
    code = int(review.responses.second_scores[i])
    if code < 0:
        return Text("—", justify="center", style="dim")
    label = review.responses.labels[code]
    if review.raters_disagree[i]:
        return Text(f"{label}≠", justify="center", style="bold magenta")
    return Text(label, justify="center")
