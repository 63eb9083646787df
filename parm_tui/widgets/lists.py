"""Small list and table widgets with posting-style vim aliases beside the arrow keys."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import DataTable, OptionList

# j and k beside the arrow keys, in every list and table.
UP_DOWN = [
    Binding("j", "cursor_down", "Down", show=False),
    Binding("k", "cursor_up", "Up", show=False),
]


class VimOptionList(OptionList):
    """An OptionList that also moves with j/k and jumps with g/G."""

    BINDINGS = [
        *UP_DOWN,
        Binding("g", "first", "First", show=False),
        Binding("G", "last", "Last", show=False),
    ]


class VimDataTable(DataTable):
    """A DataTable that also moves with j/k/h/l and jumps with g/G."""

    BINDINGS = [
        *UP_DOWN,
        Binding("h", "cursor_left", "Left", show=False),
        Binding("l", "cursor_right", "Right", show=False),
        Binding("g", "scroll_top", "Top", show=False),
        Binding("G", "scroll_bottom", "Bottom", show=False),
    ]
