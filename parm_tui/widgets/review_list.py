"""The review list: which responses are listed (filters, review order), and the paged table
that shows them. The stock DataTable freezes with many thousands of rows, so it only ever holds
one page; moving past a page's edge asks the screen for the next page."""

from __future__ import annotations

import numpy as np
from textual.binding import Binding
from textual.widgets import DataTable

PAGE_SIZE = 200


def review_view(
    result, show_all=False, human=None, predicted=None, off_by_two=False, search="", folded=None
) -> np.ndarray:
    """Indices of the responses to list, in review order (flagged first, most severe first).

    human/predicted: score codes to keep (None = any); off_by_two: |model - human| >= 2 codes;
    search: case-insensitive text (or id) to look for; folded: texts already casefolded.
    """
    scores, model = result.responses.scores, result.predicted
    order = result.review_order()
    keep = np.ones(len(scores), dtype=bool)
    if not show_all:
        keep &= model != scores
    if human is not None:
        keep &= scores == human
    if predicted is not None:
        keep &= model == predicted
    if off_by_two:
        keep &= np.abs(model.astype(int) - scores.astype(int)) >= 2
    if search:
        needle = search.casefold()
        texts = folded if folded is not None else [t.casefold() for t in result.responses.texts]
        ids = result.responses.ids
        found = [needle in t or needle in ids[i].casefold() for i, t in enumerate(texts)]
        keep &= np.asarray(found, dtype=bool)
    return order[keep[order]]


class ReviewTable(DataTable):
    """The page of responses; moving past its edges turns the page."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("g", "first", "First", show=False),
        Binding("G", "last", "Last", show=False),
        Binding("pageup", "page_up", "Prev page", show=False),
        Binding("pagedown", "page_down", "Next page", show=False),
    ]

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
