"""The review list: the paged table of responses (which ones, and in what order, is
engine.results.queue.review_view). The stock DataTable freezes with many thousands of rows, so it only
ever holds one page; moving past a page's edge asks the screen for the next page.

The answer column takes the width the other columns leave. Wide (the answer keeps at least
FULL_ANSWER_MIN cells, about 145 columns): row, human, 2nd, model, severity, the decision in
words. From about 120 columns: the same with a short decision. Narrower, a compact set: row, the
two scores as `human→model`, a short decision and the answer; the detail pane has the rest.

Moving keys (vim j/k, g/G, ctrl+d/ctrl+u, arrows, page keys, home/end) are bound here and
only move: the screen (parm_tui.screens.review_keys) moves across page edges.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.widgets.data_table import CellDoesNotExist, RowDoesNotExist

from engine.results.queue import review_view
from engine.results.review import ReviewSet
from parm_tui import keymap
from parm_tui.review_model import PAGE_SIZE
from parm_tui.widgets.lists import VimDataTable
from parm_tui.widgets.neighbours import snippet
from parm_tui.widgets.review_detail import ACTION_STYLES, decision_cell

# The full set of columns only when it leaves the answer at least this many cells; the set
# with a short decision when it leaves MEDIUM_ANSWER_MIN; else the compact set.
FULL_ANSWER_MIN = 40
MEDIUM_ANSWER_MIN = 24
ANSWER_MIN = 8
FULL, MEDIUM, COMPACT = "full", "medium", "compact"
# Cells a column takes beyond its content (padding both sides), and the vertical scrollbar.
CELL_PADDING = 2
SCROLLBAR = 2

__all__ = ["PAGE_SIZE", "ReviewTable", "review_view", "short_labels"]


# Text labels longer than this are shortened in the list and the score filters (a 28-letter
# label twice took the whole list at 80 columns); the detail pane and f1 give them whole.
LABEL_LIMIT = 6


def short_labels(labels, limit: int = LABEL_LIMIT) -> list[str]:
    """Each label as the list shows it: as it is when every label fits `limit` cells; else its
    shortest prefix of three or more letters that no other label starts with ("correct" and
    "contradictory": cor, con), else its words' initials (partially_correct_incomplete: pci),
    else its first letters and an ellipsis."""
    labels = [str(label) for label in labels]
    if max((len(label) for label in labels), default=0) <= limit:
        return labels
    short = []
    for label in labels:
        others = [other for other in labels if other != label]
        prefix = next((label[:n] for n in range(min(3, len(label)), len(label) + 1)
                       if not any(o.startswith(label[:n]) for o in others)), label)  # fmt: skip
        initials = "".join(word[0] for word in re.split(r"[\W_]+", label) if word)
        if len(prefix) <= limit:
            short.append(prefix)
        elif len(initials) > 1 and initials not in short:
            short.append(initials[:limit])
        else:
            short.append(label[: limit - 1] + "…")
    return short


def short_decision(decision) -> Text:
    """keep, →new score, or ? (unsure); ✎ when it has a note: at most 5 cells."""
    if decision is None:
        return Text("")
    label = {"keep": "keep", "unsure": "?"}.get(decision.action, f"→{decision.new_score}")
    cell = Text(label, style=ACTION_STYLES.get(decision.action, ""))
    if decision.note:
        cell.append("✎")
    return cell


class ReviewTable(VimDataTable):
    """The page of responses; moving past its edges turns the page. `fit(width)` chooses the
    columns for a width; `cells(i, decision)` are one response's cells in them. j/k/h/l come
    from VimDataTable; g/G and home/end go to the first and last response of the whole queue,
    not of the page."""

    DEFAULT_CSS = """
    ReviewTable {
        width: 1fr;
        height: 1fr;
    }
    """

    BINDINGS = keymap.REVIEW_LIST

    def __init__(self, review: ReviewSet, **kwargs) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)
        self.review = review
        self.tier: str | None = None
        self.answer_width = ANSWER_MIN
        self.labels = short_labels(review.responses.labels)
        self.label_width = max(len(label) for label in self.labels)
        self.row_width = max(3, len(str(int(max(review.responses.rows, default=0)))))
        # {data row: the other reviewers on it now}: marked ◉ in the decision column.
        self.present: dict[int, list[str]] = {}

    @property
    def compact(self) -> bool:
        return self.tier == COMPACT

    def _columns(self, tier: str) -> list[tuple[str, str, int]]:
        """(key, header, width) of every column but the answer."""
        if tier == COMPACT:
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
            ("severity", "sev", 4),
            ("decision", "decision", 8) if tier == FULL else ("decision", "dec", 5),
        ]
        return columns

    def _answer_room(self, width: int, tier: str) -> int:
        columns = self._columns(tier)
        taken = sum(w for _, _, w in columns) + CELL_PADDING * (len(columns) + 1) + SCROLLBAR
        return width - taken

    def fit(self, width: int) -> bool:
        """Choose the columns for `width` cells; True when they changed (rebuild the page)."""
        if self._answer_room(width, FULL) >= FULL_ANSWER_MIN:
            tier = FULL
        elif self._answer_room(width, MEDIUM) >= MEDIUM_ANSWER_MIN:
            tier = MEDIUM
        else:
            tier = COMPACT
        answer = max(ANSWER_MIN, self._answer_room(width, tier))
        if tier == self.tier and answer == self.answer_width and self.columns:
            return False
        self.tier, self.answer_width = tier, answer
        self.clear(columns=True)
        for key, header, column_width in self._columns(tier):
            self.add_column(header, width=column_width, key=key)
        self.add_column("answer", width=answer, key="answer")
        return True

    def cells(self, i: int, decision) -> list[Text]:
        review = self.review
        responses = review.responses
        labels = self.labels
        human, model = int(responses.scores[i]), int(review.predicted[i])
        flagged = "bold yellow" if model != human else ""
        cells = [Text(str(int(responses.rows[i])), justify="right")]
        if self.tier == COMPACT:
            scores = Text(labels[human])
            scores.append("→")
            scores.append(labels[model], style=flagged)
            if review.raters_disagree is not None and review.raters_disagree[i]:
                scores.append("≠", style="bold magenta")
            cells += [scores, self.decision_cell(decision, int(responses.rows[i]))]
        else:
            cells.append(Text(labels[human], justify="center"))
            if review.raters_disagree is not None:
                cells.append(second_rater_cell(review, i, labels))
            cells += [
                Text(labels[model], justify="center", style=flagged),
                Text(f"{float(review.severity[i]):.2f}", justify="right"),
                self.decision_cell(decision, int(responses.rows[i])),
            ]
        return cells + [Text(snippet(responses.texts[i], self.answer_width))]

    def decision_cell(self, decision, row: int | None = None) -> Text:
        """The decision as this width shows it, ◉ after it while another reviewer is on the
        response (data row `row`)."""
        cell = decision_cell(decision) if self.tier == FULL else short_decision(decision)
        if row is not None and self.present.get(row):
            cell.append(" ◉" if cell.plain else "◉", style="bold cyan")
        return cell

    def show_decision(self, i: int, decision) -> None:
        """Response i's decision cell, when its row is on the page shown."""
        row = int(self.review.responses.rows[i])
        try:
            self.update_cell(str(i), "decision", self.decision_cell(decision, row))
        except (CellDoesNotExist, RowDoesNotExist):
            pass  # the row is on another page now; the page shows it when it is built

    # Every movement goes through the screen, which crosses page edges.
    def action_cursor_down(self) -> None:
        self.screen.move_by(1)

    def action_cursor_up(self) -> None:
        self.screen.move_by(-1)

    def action_page_down(self) -> None:
        self.screen.move_by(self.screen.screenful())

    def action_page_up(self) -> None:
        self.screen.move_by(-self.screen.screenful())

    def action_half_page(self, direction: int) -> None:
        self.screen.move_by(direction * max(1, self.screen.screenful() // 2))

    def action_first(self) -> None:
        self.screen.go_to(0)

    def action_last(self) -> None:
        self.screen.go_to(-1)


def second_rater_cell(review: ReviewSet, i: int, labels) -> Text:
    """The second rater's score (as `labels` show it); `≠` (magenta) when the two raters
    disagree."""
    code = int(review.responses.second_scores[i])
    if code < 0:
        return Text("—", justify="center", style="dim")
    label = labels[code]
    if review.raters_disagree[i]:
        return Text(f"{label}≠", justify="center", style="bold magenta")
    return Text(label, justify="center")
