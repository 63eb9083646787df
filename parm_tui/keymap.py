"""Every key of the app in one place: one list per screen, dialog or widget, each used as that
class's BINDINGS. A reader finds what any key does here; tests/test_keymap.py checks that no
screen's key is taken twice and that each list's actions exist on its class; the docs' key
reference is generated from the classes (docs/make_reference.py), so it follows this file.

Order matters where a footer shows the keys: a list's shown keys appear in its order."""

from __future__ import annotations

from textual.binding import Binding

# The app's: q first, the footer shows a screen's keys, then these in order as far as they fit.
APP = [
    Binding("q", "quit", "Quit"),
    Binding("f1", "keys", "Keys"),
    Binding("f2", "show('load')", "Load"),
    Binding("ctrl+o", "show('load')", "Open file", show=False),
    Binding("f3", "show('settings')", "Settings"),
    Binding("f4", "show('run')", "Run"),
    Binding("f5", "show('results')", "Results"),
    Binding("f6", "show('review')", "Review"),
    Binding("f7", "show('export')", "Export"),
    Binding("f8", "show('monitor')", "Monitor", show=False),
    Binding("ctrl+q", "quit", "Quit", priority=True, show=False),
]

LOAD = [Binding("c", "copy_row", "Copy answer")]

RUN = [
    Binding("escape", "cancel_run", "Cancel"),
    Binding("ctrl+r", "start_run", "Start", show=False),
    Binding("s", "start_run", "Start"),
]

# The results screen adds a key per tab shown (1, 2, 3...; screens/results.py).
RESULTS = [Binding("c", "copy_summary", "Copy")]

REVIEW = [
    Binding("o", "decide('keep')", "Keep"),
    Binding("c", "decide('change')", "Change"),
    Binding("question_mark", "decide('unsure')", "Unsure", key_display="?"),
    Binding("u", "undo", "Undo"),
    Binding("U", "redo", "Redo", show=False),
    Binding("e", "note", "Note"),
    Binding("x", "clear", "Clear"),
    Binding("r", "add_read", "Add read"),
    Binding("T", "third_reads", "Third reads"),
    Binding("n", "next", "Next"),
    Binding("v", "views", "View"),
    Binding("slash", "search", "Search"),
    # Every key, the ones below too, and what the pane's figures mean.
    Binding("f1", "legend", "Help"),
    # The filters, each a key of its own (shift, so no decision key is taken).
    Binding("I", "filter('item')", "Item", show=False),
    Binding("R", "filter('rater')", "Rater", show=False),
    Binding("H", "filter('human')", "Human score", show=False),
    Binding("M", "filter('model')", "Model score", show=False),
    Binding("y", "copy", "Copy", show=False),
    Binding("a", "toggle_all", "All", show=False),
    Binding("escape", "to_list", "List", show=False),
    Binding("right_square_bracket", "scroll_detail(1)", "Detail ↓", show=False),
    Binding("left_square_bracket", "scroll_detail(-1)", "Detail ↑", show=False),
]

# The review's list of answers (widgets/review_list.py), beside VIM_TABLE's keys.
REVIEW_LIST = [
    Binding("g,home", "first", "First", show=False),
    Binding("G,end", "last", "Last", show=False),
    Binding("pageup", "page_up", "Page up", show=False),
    Binding("pagedown", "page_down", "Page down", show=False),
    Binding("ctrl+u", "half_page(-1)", "Half page up", show=False),
    Binding("ctrl+d", "half_page(1)", "Half page down", show=False),
]

EXPORT = [
    Binding("ctrl+s", "export", "Write files"),
    Binding("ctrl+t", "export_lists", "Today's lists"),
    Binding("ctrl+i", "import_decisions", "Import decisions", show=False),
]

MONITOR = [
    Binding("r", "reload", "Reload"),
    Binding("a", "focus_alerts", "Alerts", show=False),
    Binding("s", "focus_since", "Since"),
    Binding("t", "write_lists", "Today's lists"),
]

# Dialogs: the questions (widgets/confirm.py's answer(True) / answer(False)) and the others.
REPLACE_FILES = [
    Binding("y", "answer(True)", "Replace"),
    Binding("n,escape", "answer(False)", "Keep"),
]
RESUME = [
    Binding("r", "answer(True)", "Resume"),
    Binding("n,escape", "answer(False)", "Start fresh"),
]
ERROR = [
    Binding("escape", "dismiss_modal", "Close"),
    Binding("enter", "dismiss_modal", "Close", show=False),
    Binding("c", "copy", "Copy"),
]
KEYS = [Binding("escape,enter,f1", "close", "Close")]
CANCEL = [Binding("escape", "cancel", "Cancel")]

# Widgets: j and k beside the arrow keys in every list and table (posting's vim aliases).
PATH_INPUT = [Binding("tab", "complete", "Complete path", show=False)]
_UP_DOWN = [
    Binding("j", "cursor_down", "Down", show=False),
    Binding("k", "cursor_up", "Up", show=False),
]
VIM_OPTIONS = [
    *_UP_DOWN,
    Binding("g", "first", "First", show=False),
    Binding("G", "last", "Last", show=False),
]
VIM_TABLE = [
    *_UP_DOWN,
    Binding("h", "cursor_left", "Left", show=False),
    Binding("l", "cursor_right", "Right", show=False),
    Binding("g", "scroll_top", "Top", show=False),
    Binding("G", "scroll_bottom", "Bottom", show=False),
]
