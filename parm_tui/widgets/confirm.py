"""One yes/no question over the screen (harlequin's ConfirmModal): the question's lines, two
buttons, the focus on the safe or the likely answer; the answer dismisses it (True: yes).
A question subclasses it with its keys (BINDINGS calling `answer(True)` / `answer(False)`),
its lines (`lines()`) and its buttons (`YES`, `NO`, each label and variant; `FOCUS_YES`)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button


class ConfirmModal(ModalScreen[bool]):
    """A yes/no question; `WARNING`: the box drawn in the warning colour, narrower (an answer
    that replaces files). Its styles: parm.tcss, under ConfirmModal."""

    YES: tuple[str, str] = ("Yes (y)", "primary")
    NO: tuple[str, str] = ("No (n)", "default")
    FOCUS_YES = True
    WARNING = False

    def lines(self) -> list[Widget]:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with Vertical(classes="-warning" if self.WARNING else ""):
            yield from self.lines()
            with Horizontal():
                yield Button(self.YES[0], variant=self.YES[1], id="confirm-yes")
                yield Button(self.NO[0], variant=self.NO[1], id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-yes" if self.FOCUS_YES else "#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
