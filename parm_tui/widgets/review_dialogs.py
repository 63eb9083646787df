"""The two small dialogs of the review: the new score of a "change" decision, and a note.
Students' text never reaches them as markup."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from engine.core.text import safe_text


class ScoreModal(ModalScreen[str | None]):
    """Pick the new score for a "change" decision: arrows + enter, or the label's key."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, row: int, labels, human: str, suggested: str | None) -> None:
        super().__init__()
        self.row = row
        self.choices = [label for label in labels if label != human]
        self.human = human
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text(f"New score for row {self.row} (human score: ")
            title.append(self.human, style="bold")
            title.append(")")
            yield Label(title)
            yield OptionList(
                *[Option(Text(label), id=f"score-{n}") for n, label in enumerate(self.choices)]
            )
            yield Label(Text("enter or the score's key picks · esc cancel", style="dim"))

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.suggested in self.choices:
            options.highlighted = self.choices.index(self.suggested)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.choices[event.option_index])

    def on_key(self, event) -> None:
        if event.character and event.character in self.choices:
            event.stop()
            self.dismiss(event.character)

    def action_cancel(self) -> None:
        self.dismiss(None)


class NoteModal(ModalScreen[str | None]):
    """Add or edit the note on a decision; enter saves, escape cancels. waiting: the response
    is not decided yet, so the note is saved with the decision that follows."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, row: int, note: str, waiting: bool = False) -> None:
        super().__init__()
        self.row = row
        self.note = note
        self.waiting = waiting

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"Note for row {self.row}"))
            yield Input(value=self.note, placeholder="why this decision…", id="note-input")
            hint = "enter keeps it for your decision (o, c, ?)" if self.waiting else "enter save"
            yield Label(Text(f"{hint} · esc cancel", style="dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        # A pasted note may carry control characters; it is shown and exported, so not those.
        self.dismiss(safe_text(event.value, one_line=True).strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
