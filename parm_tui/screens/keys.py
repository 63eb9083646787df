"""Every key of the screen on show, those the footer leaves out too, in one scrollable dialog:
f1 opens it on every screen (the review adds what its figures mean)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from parm_tui import keymap


def key_rows(screen) -> list[tuple[str, str]]:
    """(keys, what they do) for every key active on `screen` that says what it does: the
    screen's own first (those its class declares), then the focused widget's and Textual's
    (tab, copy), then the app's; keys of one action share a row."""
    own = {b.action for b in type(screen).BINDINGS if isinstance(b, Binding)}

    def rank(active) -> int:
        if active.node is screen.app:
            return 2
        return 0 if active.node is screen and active.binding.action in own else 1

    ordered = sorted(screen.active_bindings.values(), key=rank)
    rows: dict[str, tuple[list[str], str]] = {}
    for active in ordered:
        binding = active.binding
        if not binding.description:
            continue
        keys, _ = rows.setdefault(binding.action, ([], binding.description))
        shown = screen.app.get_key_display(binding)
        if shown not in keys:
            keys.append(shown)
    return [(" ".join(keys), description) for keys, description in rows.values()]


def keys_text(rows: list[tuple[str, str]]) -> Text:
    width = max((len(keys) for keys, _ in rows), default=0)
    text = Text()
    for keys, description in rows:
        text.append(f"{keys:>{width}}  ", style="bold")
        text.append(f"{description}\n")
    text.rstrip()
    return text


class KeysModal(ModalScreen[None]):
    """The keys of a screen (key_rows), and `extra` under them; esc, enter or f1 closes."""

    BINDINGS = keymap.KEYS

    def __init__(self, title: str, rows: list[tuple[str, str]], extra: Text | None = None):
        super().__init__()
        self.title_text = title
        self.rows = rows
        self.extra = extra

    def compose(self) -> ComposeResult:
        with Vertical(id="keys-box"):
            yield Label(Text(self.title_text, style="bold"))
            with VerticalScroll(id="keys-scroll"):
                yield Static(keys_text(self.rows), id="keys-list")
                if self.extra is not None:
                    yield Static(self.extra, id="keys-extra")
            yield Label(Text("↑↓ scroll · esc closes", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#keys-scroll").focus()

    def action_close(self) -> None:
        self.dismiss()
