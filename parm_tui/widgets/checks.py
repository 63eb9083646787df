"""The audit's checks as Rich renderables: agreement with a second rater and near-duplicate
responses that were scored differently. Numbers are read from the result, never computed here;
students' text only ever goes into Text objects (no markup)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.table import Table
from rich.text import Text

from engine.workspace.reporting import read_pair
from engine.workspace.settings import SINGLE_VECTOR
from parm_tui.widgets.metrics import fmt

if TYPE_CHECKING:
    from engine.results.item import AuditResult


# The rows of the second-rater table: the figures and, by who gave the audited and the
# second reads (engine.input.several_reads.read_pair), their labels.
SECOND_RATER_ROWS = (
    ("human_human", "{first} vs {second}"),
    ("model_vs_first", "model vs {first}"),
    ("model_vs_second", "model vs {second}"),
)
AGREEMENT_COLUMNS = (
    ("exact", "exact"),
    ("adjacent", "adjacent"),
    ("kappa", "kappa"),
    ("qwk", "QWK"),
)
# A Static holding thousands of pairs is slow to lay out; the report has them all.
PAIRS_SHOWN = 200


def second_rater_table(result: AuditResult) -> Table | Text:
    """Human-human agreement beside the model's agreement with each rater."""
    second = result.second_rater
    if second is None:
        column = result.config.second_score_column
        why = "no second score column was chosen" if not column else f"column {column!r} unused"
        return Text(f"Second rater: none ({why}; Load screen, 2nd score).", "dim")
    table = Table(
        title=f"Second rater ({second.rows_with_both:,} responses scored by both)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("")
    # Adjacent agreement and QWK need ordered scores; the engine leaves them out otherwise.
    columns = [(key, header) for key, header in AGREEMENT_COLUMNS if key in second.model_vs_first]
    for _, header in columns:
        table.add_column(header, justify="right")
    first, other = read_pair([result.responses.reads])
    for attribute, label in SECOND_RATER_ROWS:
        values = getattr(second, attribute)
        cells = ["—"] * len(columns)
        if values is not None:
            cells = [fmt(values.get(key)) for key, _ in columns]
        # Rater names come from the data: a Text, never markup.
        table.add_row(Text(label.format(first=first, second=other)), *cells)
    return table


def disagreement_line(result: AuditResult) -> Text:
    second = result.second_rater
    if second is None:
        return Text("")
    count = int(second.disagree.sum())
    text = Text(f"The raters disagree on {count:,} response(s); ")
    text.append("≠", "bold magenta")
    text.append(" marks them in the review (F6).")
    return text


def model_name(result: AuditResult) -> str:
    model = result.embedding.model or result.config.embedding_model
    return model.rstrip("/").split("/")[-1] or model


def consistency_heading(result: AuditResult) -> Text:
    """What was checked: the similarity mode, the model, the threshold and the count."""
    threshold = result.config.near_duplicate_threshold
    text = Text("Near-duplicates scored differently", "bold")
    text.append(f"\nsimilarity: {result.mode} · model: {model_name(result)}", "dim")
    if result.mode != SINGLE_VECTOR:
        text.append(
            "\nNot checked in late-interaction mode: the threshold "
            f"({threshold:g}) is a cosine similarity and MaxSim scores are on another scale."
        )
        return text
    pairs = len(result.near_duplicates)
    text.append(f" · cosine similarity > {threshold:g}", "dim")
    if not pairs:
        text.append("\nNo pair of near-identical answers was scored differently.")
        return text
    text.append(f"\n{pairs:,} pair(s) of near-identical answers have different scores")
    if pairs > PAIRS_SHOWN:
        text.append(f" (the {PAIRS_SHOWN} most similar shown; report.md lists all)")
    text.append(".")
    return text


def consistency_pairs(result: AuditResult) -> Text:
    """Both answers of each pair with their rows and scores, most similar first."""
    responses = result.responses
    labels = responses.labels
    text = Text()
    for n, pair in enumerate(result.near_duplicates[:PAIRS_SHOWN]):
        if n:
            text.append("\n")
        text.append(f"similarity {pair.similarity:.3f}\n", "bold")
        for i in (pair.first, pair.second):
            text.append(f"  row {int(responses.rows[i])}", "bold")
            text.append(" · id ")
            text.append(responses.ids[i])
            text.append(" · score ")
            text.append(labels[responses.scores[i]], "bold yellow")
            text.append("\n    ")
            text.append(" ".join(responses.texts[i].split()))
            text.append("\n")
    text.rstrip()
    return text
