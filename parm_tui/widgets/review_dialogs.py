"""The small dialogs of the review: the new score of a "change" decision, a note, and a read
typed in the review (its rater and score). Students' text never reaches them as markup."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from engine.core.text import safe_text
from parm_tui.widgets.plain import plain


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


class ReadModal(ModalScreen[tuple[str, str] | None]):
    """Add a read of the answer: who read it (typed, the session's raters suggested; `rater`
    filled in) and the score (any label of the item's scale: arrows + enter, or its key).
    Dismissed with (rater, score), or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, row: int, labels, rater: str, raters=(), reads: Text | None = None,
                 title: str | None = None) -> None:  # fmt: skip
        super().__init__()
        self.title_text = title or f"Add a read of row {row}"
        self.row = row
        self.choices = list(labels)
        self.rater = rater
        self.raters = list(raters)
        self.reads = reads

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(plain(self.title_text, style="bold"))
            if self.reads is not None:
                yield Static(self.reads)
            yield Label(Text("Rater (→ completes a session rater; shift+tab: here)", "dim"))
            yield Input(
                value=self.rater,
                placeholder="who gave this read",
                id="read-rater",
                suggester=SuggestFromList(self.raters, case_sensitive=False),
            )
            yield OptionList(
                *[Option(Text(label), id=f"read-score-{n}") for n, label in enumerate(self.choices)]
            )
            yield Label(Text("enter or the score's key adds it · esc cancel", style="dim"))

    def on_mount(self) -> None:
        if self.rater:
            self.query_one(OptionList).focus()
        else:
            self.query_one(Input).focus()

    def chosen_rater(self) -> str:
        return safe_text(self.query_one(Input).value, one_line=True).strip()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.pick(self.choices[event.option_index])

    def on_key(self, event) -> None:
        if self.query_one(OptionList).has_focus and event.character in self.choices:
            event.stop()
            self.pick(event.character)

    def pick(self, score: str) -> None:
        rater = self.chosen_rater()
        if not rater:
            self.notify("Name the rater who gave the read first.", severity="warning")
            self.query_one(Input).focus()
            return
        self.dismiss((rater, score))

    def action_cancel(self) -> None:
        self.dismiss(None)
