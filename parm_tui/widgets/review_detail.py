"""Pieces of the review screen: the detail of one response as Rich Text, how a decision shows in
the list, and the two small dialogs (new score, note). Students' text is always put in Text
objects, never parsed as markup."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

BAR_WIDTH = 8
ACTION_STYLES = {"keep": "green", "change": "bold yellow", "unsure": "magenta"}


def decision_cell(decision) -> Text:
    """How a decision shows in the list: keep, → new score, or ?; ✎ when it has a note."""
    if decision is None:
        return Text("")
    label = {"keep": "keep", "unsure": "unsure"}.get(decision.action)
    if decision.action == "change":
        label = f"→ {decision.new_score}"
    cell = Text(label, style=ACTION_STYLES.get(decision.action, ""))
    if decision.note:
        cell.append(" ✎")
    return cell


def second_rater_cell(result, i: int) -> Text:
    """The second rater's score; `≠` (magenta) when the two raters disagree."""
    code = int(result.responses.second_scores[i])
    if code < 0:
        return Text("—", justify="center", style="dim")
    label = result.responses.labels[code]
    if result.raters_disagree[i]:
        return Text(f"{label}≠", justify="center", style="bold magenta")
    return Text(label, justify="center")


def severity_text(value: float) -> Text:
    """The severity and a one-line legend: 1 - p(human score) from a model that never saw that
    score, so 0 means the score looks right and 1 that it should be checked first."""
    text = Text("severity ")
    text.append(f"{value:.3f}", style="bold")
    text.append(
        " (1 − p(human score) from a model that never saw it; 0 looks right … 1 check first)",
        style="dim",
    )
    return text


def decision_text(decision) -> Text:
    if decision is None:
        return Text("not decided yet", style="dim")
    text = Text()
    text.append(decision.action, style=ACTION_STYLES.get(decision.action, ""))
    if decision.new_score is not None:
        text.append(" → new score ")
        text.append(decision.new_score, style="bold")
    when = decision.decided_at[:16].replace("T", " ")
    text.append(f"  {when} UTC", style="dim")
    if decision.note:
        text.append("\nnote: ")
        text.append(decision.note, style="italic")
    return text


def probability_lines(result, i: int) -> Text:
    """One bar per score label; the human score and the model's choice are marked."""
    responses = result.responses
    proba = result.fitted.proba[i]
    human, model = int(responses.scores[i]), int(result.predicted[i])
    width = max(len(label) for label in responses.labels)
    text = Text()
    for code, label in enumerate(responses.labels):
        filled = int(round(float(proba[code]) * BAR_WIDTH))
        style = "bold" if code == model else ""
        text.append(f"  {label:>{width}} ", style=style)
        text.append("█" * filled, style="cyan")
        text.append("░" * (BAR_WIDTH - filled), style="dim")
        text.append(f" {proba[code]:.3f}", style=style)
        mark = {(True, True): "both", (True, False): "human", (False, True): "model"}.get(
            (code == human, code == model)
        )
        if mark:
            text.append(f" ◂ {mark}", style="dim")
        text.append("\n")
    text.rstrip()
    return text


def response_header(result, i: int, decision) -> Text:
    """Row, id, scores (human, model, second rater), severity and the decision."""
    responses = result.responses
    labels = responses.labels
    human, model = int(responses.scores[i]), int(result.predicted[i])
    text = Text()
    text.append(f"Row {int(responses.rows[i])}", style="bold")
    text.append(" · id ")
    text.append(responses.ids[i], style="bold")
    if human != model:
        text.append(" · flagged", style="bold red")
    text.append("\nhuman ")
    text.append(labels[human], style="bold")
    text.append(" · model ")
    text.append(labels[model], style="bold yellow" if human != model else "bold")
    if responses.second_scores is not None:
        second = int(responses.second_scores[i])
        text.append(" · 2nd rater ")
        text.append("—" if second < 0 else labels[second], style="bold")
        if result.raters_disagree is not None and result.raters_disagree[i]:
            text.append(" · raters disagree", style="bold magenta")
    text.append("\n")
    text.append_text(severity_text(float(result.severity[i])))
    text.append("\n\n")
    text.append("Class probabilities\n", style="underline")
    text.append_text(probability_lines(result, i))
    text.append("\n\nDecision: ")
    text.append_text(decision_text(decision))
    return text


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
    """Add or edit the note on a decision; enter saves, escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, row: int, note: str) -> None:
        super().__init__()
        self.row = row
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"Note for row {self.row}"))
            yield Input(value=self.note, placeholder="why this decision…", id="note-input")
            yield Label(Text("enter save · esc cancel", style="dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
