"""The small dialogs of the review: the new score of a "change" decision, a note, and a read
typed in the review (its rater and score). Students' text never reaches them as markup."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.input import Selection
from textual.widgets.option_list import Option

from engine.core.text import safe_text
from parm_tui import keymap
from parm_tui.widgets.plain import plain

# How a score is chosen in the review's dialogs: the list chooses, enter confirms.
PICK_HINT = "type or ↑↓ chooses · enter confirms · esc cancels"


class ScaleList(OptionList):
    """The scores of an item's scale, lowest first, each with what it is to this answer (the
    human score, the model's, a rater's read) beside it. Typing a score's first characters
    highlights it (4, then .5: 4.5; "par" a text label); only enter picks, so a key pressed to
    look never records anything."""

    DEFAULT_CSS = """
    ScaleList {
        height: auto;
        max-height: 75vh;
        margin: 1 0 0 0;
    }
    """

    # Keys typed within this many seconds of each other spell one score.
    TYPE_AHEAD_SECONDS = 1.0

    def __init__(self, labels, marks: dict[str, str] | None = None, **kwargs) -> None:
        marks = marks or {}
        width = max((len(label) for label in labels), default=0)
        options = []
        for n, label in enumerate(labels):
            text = Text(f"{label:<{width}}")
            if label in marks:
                text.append(f"  ◂ {marks[label]}", style="italic")
            options.append(Option(text, id=f"score-{n}"))
        super().__init__(*options, compact=True, **kwargs)
        self.labels = list(labels)
        self.typed = ""
        self.typed_at = 0.0

    def highlight_label(self, label: str | None) -> None:
        """Highlight `label` (when it is on the scale) and keep it in view."""
        if label in self.labels:
            self.highlighted = self.labels.index(label)
        self.call_after_refresh(self.scroll_to_highlight)

    def match(self, typed: str) -> int | None:
        """The first score spelt by `typed` (its exact label first, else the first it starts)."""
        folded = [label.casefold() for label in self.labels]
        typed = typed.casefold()
        if typed in folded:
            return folded.index(typed)
        return next((n for n, label in enumerate(folded) if label.startswith(typed)), None)

    def on_key(self, event) -> None:
        character = event.character
        if not character or not character.isprintable() or character == " ":
            return
        event.stop()
        event.prevent_default()
        now = time.monotonic()
        go_on = now - self.typed_at < self.TYPE_AHEAD_SECONDS
        typed = self.typed + character if go_on else character
        found = self.match(typed)
        if found is None and go_on:  # a fresh start: "4" then "2" is 2 when no "42" exists
            typed, found = character, self.match(character)
        self.typed, self.typed_at = typed, now
        if found is None:
            self.app.bell()
        else:
            self.highlighted = found


class ScoreModal(ModalScreen[str | None]):
    """Pick the new score for a "change" decision: every score on the item's scale, the human
    score marked (picking it changes nothing: the dialog says so and stays open); arrows or
    the score's first characters choose, enter confirms."""

    BINDINGS = keymap.CANCEL

    def __init__(self, row: int, labels, human: str, suggested: str | None) -> None:
        super().__init__()
        self.row = row
        self.labels = list(labels)
        self.choices = [label for label in self.labels if label != human]
        self.human = human
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text(f"New score for row {self.row} (human score: ")
            title.append(self.human, style="bold")
            title.append(")")
            yield Label(title)
            marks = {self.human: "human score"}
            if self.suggested is not None and self.suggested != self.human:
                marks[self.suggested] = "model's score"
            yield ScaleList(self.labels, marks)
            yield Label(Text(PICK_HINT, style="dim"), id="score-hint")

    def on_mount(self) -> None:
        options = self.query_one(ScaleList)
        start = self.suggested if self.suggested in self.choices else None
        options.highlight_label(start or (self.choices[0] if self.choices else None))
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        score = self.labels[event.option_index]
        if score == self.human:
            self.query_one("#score-hint", Label).update(
                Text(f"{score} is the human score: pick another, or esc and o to keep it.",
                     style="bold yellow")
            )  # fmt: skip
            return
        self.dismiss(score)

    def action_cancel(self) -> None:
        self.dismiss(None)


class NoteModal(ModalScreen[str | None]):
    """Add or edit the note on a decision; enter saves, escape cancels. waiting: the response
    is not decided yet, so the note is saved with the decision that follows."""

    BINDINGS = keymap.CANCEL

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
    """Add a read of the answer: who read it first (the rater field has the keys, `rater` filled
    in and selected, so typing replaces it; the session's raters are suggested), then the score
    (any label of the item's scale, the answer's reads marked beside theirs). Enter in the rater
    field goes on to the score; enter on a score adds the read. Dismissed with (rater, score),
    or None."""

    BINDINGS = keymap.CANCEL

    def __init__(
        self,
        row: int,
        labels,
        rater: str,
        raters=(),
        reads: Text | None = None,
        marks=None,
        title: str | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title or f"Add a read of row {row}"
        self.row = row
        self.choices = list(labels)
        self.rater = rater
        self.raters = list(raters)
        self.reads = reads
        self.marks = dict(marks or {})

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(plain(self.title_text, style="bold"))
            if self.reads is not None:
                yield Static(self.reads)
            yield Label(Text("Rater (→ completes a session rater · enter: on to the score)", "dim"))
            yield Input(
                value=self.rater,
                placeholder="who gave this read",
                id="read-rater",
                compact=True,
                suggester=SuggestFromList(self.raters, case_sensitive=False),
            )
            yield ScaleList(self.choices, self.marks, id="read-scores")
            yield Label(Text(PICK_HINT, style="dim"))

    def on_mount(self) -> None:
        self.query_one(ScaleList).highlight_label(None)
        rater = self.query_one(Input)
        rater.focus()
        # Focus from the app selects nothing: the name offered is selected here, so the first
        # key typed replaces it and enter keeps it.
        rater.selection = Selection(0, len(rater.value))

    def chosen_rater(self) -> str:
        return safe_text(self.query_one(Input).value, one_line=True).strip()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.chosen_rater():
            self.notify("Name the rater who gave the read first.", severity="warning")
            return
        self.query_one(ScaleList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        rater = self.chosen_rater()
        if not rater:
            self.notify("Name the rater who gave the read first.", severity="warning")
            self.query_one(Input).focus()
            return
        self.dismiss((rater, self.choices[event.option_index]))

    def action_cancel(self) -> None:
        self.dismiss(None)
