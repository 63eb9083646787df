"""Small list and table widgets with posting-style vim aliases beside the arrow keys."""

from __future__ import annotations

from textual.widgets import DataTable, OptionList

from parm_tui import keymap


class VimOptionList(OptionList):
    """An OptionList that also moves with j/k and jumps with g/G."""

    BINDINGS = keymap.VIM_OPTIONS


class VimDataTable(DataTable):
    """A DataTable that also moves with j/k/h/l and jumps with g/G."""

    BINDINGS = keymap.VIM_TABLE
