"""The review list: the paged table of responses (which ones, and in what order, is
engine.audit.queue.review_view). The stock DataTable freezes with many thousands of rows, so it only
ever holds one page; moving past a page's edge asks the screen for the next page."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import DataTable

from engine.audit.queue import review_view

PAGE_SIZE = 200

__all__ = ["PAGE_SIZE", "ReviewTable", "review_view"]


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
