"""The detail pane of the review screen: one response of a ReviewSet (engine.results.review) as
Rich Text (header with its item and rater, answer, scores on its item's scale, evidence) and
how a decision shows in the list. Students' text is always put in Text objects,
never parsed as markup."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from engine.core.text import safe_text
from engine.results.review import ReviewSet
from engine.workspace.reporting import rater_name
from parm_tui.widgets.neighbours import NEIGHBOURS_LEGEND, NeighbourList
from parm_tui.widgets.plain import plain

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


def severity_text(value: float) -> Text:
    """The severity in words, and what its scale means: how strongly the evidence doubts the
    human score (the probability that another read would give another score, from models that
    never saw that score, engine.audit.queue.severity; docs/explanation/severity.md says more)."""
    text = Text("severity ")
    text.append(f"{value:.3f}", style="bold")
    text.append(f": {severity_words(value)}")
    return text


# What the pane's figures mean: shown once, on F1, not under every answer.
LEGEND = Text.assemble(
    ("severity: ", "bold"),
    "how much the evidence doubts the human score, 0 not at all, 1 most (a model that never "
    "saw the score: PARM's neighbours and two classifiers).\n",
    ("PARM's probabilities: ", "bold"),
    "the fit's own chances of each score on the item's scale; severity also weighs the "
    "classifiers, so a severity near 1 may sit beside a bar that is not empty.\n",
    ("reads: ", "bold"),
    'every score the answer was given, with its rater; "added" marks a read typed here (r), '
    "which the consensus counts at once (u takes it away).\n",
    ("neighbours: ", "bold"),
    NEIGHBOURS_LEGEND.plain,
    style="dim",
)


def severity_words(value: float) -> str:
    """How doubtful a score is, in a word or two (quarters of the severity's range)."""
    if value >= 0.75:
        return "very doubtful"
    if value >= 0.5:
        return "doubtful"
    if value >= 0.25:
        return "somewhat doubtful"
    return "looks right"


def decision_text(decision, pending_note: str | None = None, conflicts=(), others=(),
                  me: str = "") -> Text:  # fmt: skip
    """The decision (by whom, where another reviewer made it) and its note; a note typed before
    deciding shows as waiting for it; other reviewers' differing decisions (imported, or made
    at the same time, not settled) under it; `others`: the reviewers on this response now."""
    text = Text()
    if decision is None:
        text.append("not decided yet", style="dim")
    else:
        text.append(decision.action, style=ACTION_STYLES.get(decision.action, ""))
        if decision.new_score is not None:
            text.append(" → new score ")
            text.append(decision.new_score, style="bold")
        if decision.reviewer and decision.reviewer != me:
            text.append(" by ")
            text.append_text(plain(decision.reviewer, style="bold"))
        when = decision.decided_at[:16].replace("T", " ")
        text.append(f"  {when} UTC", style="dim")
        if decision.note:
            text.append("\nnote: ")
            text.append(safe_text(decision.note), style="italic")
    if pending_note:
        text.append("\nnote (saved with your decision): ")
        text.append(safe_text(pending_note), style="italic")
    for other in conflicts:
        text.append("\nconflict: ", style="bold magenta")
        text.append_text(plain(other.reviewer or "another reviewer", style="bold"))
        text.append(f" {other.action}")
        if other.new_score is not None:
            text.append(" → ")
            text.append(other.new_score, style="bold")
        if other.note:
            text.append(" · ")
            text.append(safe_text(other.note), style="italic")
    if conflicts:
        text.append("\n(your next decision here settles it)", style="dim")
    if others:
        text.append("\n◉ now on it: ", style="bold cyan")
        text.append_text(plain(", ".join(others), style="bold"))
    return text


def probability_lines(review: ReviewSet, i: int) -> Text:
    """One bar per score label; the human score and the model's choice are marked."""
    responses = review.responses
    proba = review.proba[i]
    human, model = int(responses.scores[i]), int(review.predicted[i])
    on_scale = review.on_scale[i]
    width = max(len(label) for label in responses.labels)
    text = Text()
    for code, label in enumerate(responses.labels):
        if not on_scale[code]:
            continue  # a score of another item's scale
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


def response_header(
    review: ReviewSet, i: int, decision, pending_note: str | None = None, conflicts=(),
    uncounted=(), others=(), me: str = "",
) -> Text:  # fmt: skip
    """Row, id, the scores (human, model, second rater, every read) and the decision;
    `uncounted`: (rater, label) of reads typed here that `review` does not count yet."""
    responses = review.responses
    labels = responses.labels
    human, model = int(responses.scores[i]), int(review.predicted[i])
    text = Text()
    text.append(f"Row {int(responses.rows[i])}", style="bold")
    text.append(" · id ")
    text.append_text(plain(responses.ids[i], style="bold"))
    if review.items[i] is not None:
        text.append(" · item ")
        text.append_text(plain(review.items[i], style="bold"))
    if responses.raters is not None and responses.raters[i]:
        text.append(" · rater ")
        text.append_text(plain(responses.raters[i], style="bold"))
    if review.flagged[i]:  # likely wrong (engine.audit.queue.flagging), not "the model differs"
        text.append(" · flagged", style="bold red")
    text.append("\nhuman ")
    text.append(labels[human], style="bold")
    text.append(" · model ")
    text.append(labels[model], style="bold yellow" if human != model else "bold")
    reads = reads_text(review, i, uncounted)
    if reads is not None:
        text.append("\n")
        text.append_text(reads)
    elif responses.second_scores is not None:
        second = int(responses.second_scores[i])
        text.append(" · 2nd rater ")
        text.append("—" if second < 0 else labels[second], style="bold")
    if review.raters_disagree is not None and review.raters_disagree[i]:
        text.append(" · raters disagree", style="bold magenta")
    text.append_text(item_texts(review, i))
    text.append("\nDecision: ")
    text.append_text(decision_text(decision, pending_note, conflicts, others, me))
    return text


def reads_text(review: ReviewSet, i: int, uncounted=()) -> Text | None:
    """Every read of the answer with its rater ("reads: G1 1 · G2 0 · G3 1"), those typed in the
    review marked "added", then the reads' consensus; None when it was read once or the file
    has no reads to show. `uncounted`: (rater, label) of typed reads the review set does not
    count yet (the recount is under way): shown at once, the consensus said to be counting."""
    result, j = review.locate(i)
    reads = result.responses.reads
    if reads is None:
        return None
    mine = np.flatnonzero(reads.answer == j)
    added = review.added_reads(i)
    if mine.size + len(added) + len(uncounted) < 2:
        return None
    labels = result.responses.labels
    text = Text("reads: ")
    for n, k in enumerate(mine):
        if n:
            text.append(" · ")
        # Who read it, named as every output names them (engine.input.several_reads.rater_name).
        text.append_text(plain(rater_name(reads.rater[k], n), style="dim"))
        text.append(f" {labels[reads.score[k]]}", style="bold")
    for rater, label in [*added, *uncounted]:
        text.append(" · ")
        text.append_text(plain(rater, style="dim"))
        text.append(f" {label}", style="bold")
        text.append(" (added)", style="italic green")
    if uncounted:
        text.append(" · consensus: counting…", style="dim")
    else:
        text.append_text(consensus_text(review, i))
    return text


def consensus_text(review: ReviewSet, i: int) -> Text:
    """ " · consensus 2 (p 0.83) · third read #4": the reads' consensus with its probability and,
    when it is unsure, the answer's place in the third-read queue (empty without one)."""
    text = Text()
    if review.consensus is None or review.consensus[i] < 0:
        return text
    text.append(" · consensus ")
    text.append(review.responses.labels[int(review.consensus[i])], style="bold cyan")
    text.append(f" (p {float(review.consensus_p[i]):.2f})")
    rank = int(review.third_read_rank[i])
    if rank:
        text.append(f" · third read #{rank}", style="bold magenta")
    return text


def item_texts(review: ReviewSet, i: int) -> Text:
    """The item's question and reference answer, when the file has them (what a rater sees)."""
    responses = review.locate(i)[0].responses
    text = Text()
    for name, value in (("question", responses.question), ("reference", responses.reference)):
        if value:
            text.append(f"\n{name}: ", style="bold cyan")
            text.append_text(plain(value))
    return text


def scores_text(review: ReviewSet, i: int) -> Text:
    """Severity and one probability bar per score."""
    text = severity_text(float(review.severity[i]))
    for _, sentence in review.notes(i):
        text.append("\nNote: ", style="bold yellow")
        text.append_text(plain(sentence, style="yellow"))  # labels come from the file
    # The bars are PARM's fit alone; severity also weighs the two classifiers, so a severity of
    # 1.000 can sit beside a human-score bar that is not empty.
    text.append("\nPARM's probabilities:\n", style="dim")
    text.append_text(probability_lines(review, i))
    return text


class ReviewDetail(VerticalScroll):
    """The response the decision keys act on. `show` puts a response on screen from the top
    (header, then the whole answer, then scores and evidence) and records it as `shown`."""

    DEFAULT_CSS = """
    ReviewDetail .detail-title {
        margin-top: 1;
        text-style: bold underline;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.shown: int | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="detail-header")
        yield Static("Answer", id="detail-answer-title", classes="detail-title")
        yield Static(id="detail-text")
        # The evidence right under the answer, so it is in view at 80x24; what the figures
        # mean is said once, on F1 (LEGEND).
        yield Static("Evidence: neighbours (F1 explains)", classes="detail-title")
        yield NeighbourList(id="detail-neighbours")
        yield Static("Scores", classes="detail-title")
        yield Static(id="detail-scores")

    def show(
        self, review: ReviewSet, i: int, decision, pending_note: str | None = None, conflicts=(),
        uncounted=(), others=(), me: str = "",
    ) -> None:  # fmt: skip
        moved = i != self.shown
        self.query_one("#detail-header", Static).update(
            response_header(review, i, decision, pending_note, conflicts, uncounted, others, me)
        )
        if moved:
            self.query_one("#detail-text", Static).update(plain(review.responses.texts[i]))
            self.query_one("#detail-scores", Static).update(scores_text(review, i))
            self.query_one(NeighbourList).show(review, i)
            # A new response opens at its start, never where the previous one was scrolled to.
            self.scroll_home(animate=False, immediate=True)
            self.call_after_refresh(self.mark_overflow)
        self.shown = i

    def clear(self, message: str) -> None:
        self.shown = None
        self.query_one("#detail-header", Static).update(Text(message, style="dim"))
        for selector in ("#detail-text", "#detail-scores", "#detail-neighbours"):
            self.query_one(selector, Static).update("")

    def answer_cut_off(self) -> bool:
        """Whether the end of the answer is below the visible part of the pane."""
        answer = self.query_one("#detail-text", Static)
        return answer.virtual_region.bottom > self.scroll_y + self.scrollable_content_region.height

    def mark_overflow(self) -> None:
        title = Text("Answer", style="bold underline")
        if self.shown is not None and self.answer_cut_off():
            title.append("  continues below: ] scrolls", style="dim")
        self.query_one("#detail-answer-title", Static).update(title)
