"""The evidence for one prediction: the response's strongest neighbours in the fitted graph,
with their row and id, human scores, similarities and edge weights (explained in a legend)."""

from __future__ import annotations

import math

from rich.text import Text
from textual.widgets import Static

from engine.core.text import safe_text
from engine.results.review import ReviewSet

SNIPPET_CHARS = 160
NEIGHBOURS_LEGEND = Text(
    "similarity: cosine of the two answers · weight: how much the neighbour's score counts in "
    "the model's prediction (the similarity, rescaled to 0-1, to the power p)",
    style="dim",
)


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """One line of a response: whitespace collapsed, cut at `limit` characters."""
    flat = " ".join(safe_text(text, one_line=True).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def neighbour_rows(review: ReviewSet, i: int) -> list[dict]:
    """The evidence neighbours of response i as plain values, strongest first."""
    responses = review.responses
    labels = responses.labels
    rows = []
    for nb in review.evidence[i]:
        j = nb.index
        rows.append(
            {
                "row": int(responses.rows[j]),
                "id": responses.ids[j],
                "score": labels[responses.scores[j]],
                "predicted": labels[review.predicted[j]],
                # NaN when the pair is in neither neighbour list (an edge kept only by
                # symmetrisation beyond Kmax), so the raw similarity is unknown.
                "similarity": None if math.isnan(nb.similarity) else nb.similarity,
                "weight": nb.weight,
                "text": responses.texts[j],
            }
        )
    return rows


def neighbour_text(review: ReviewSet, i: int) -> Text:
    """Two lines per neighbour (numbers, then the answer), so it reads in a narrow pane.
    Students' text goes in as Text, never as markup."""
    text = Text()
    for n, nb in enumerate(neighbour_rows(review, i)):
        if n:
            text.append("\n")
        similarity = "—" if nb["similarity"] is None else f"{nb['similarity']:.2f}"
        text.append(f"row {nb['row']}", style="bold")
        text.append(" · id ")
        text.append(safe_text(nb["id"], one_line=True), style="bold")
        text.append(" · score ")
        text.append(nb["score"], style="bold")
        text.append(f"\n  similarity {similarity} · weight {nb['weight']:.2f}\n")
        text.append("  " + snippet(nb["text"]) + "\n", style="dim")
    return text


class NeighbourList(Static):
    """Shows the evidence neighbours of one response; call `show(review, i)`."""

    DEFAULT_CSS = """
    NeighbourList {
        height: auto;
    }
    """

    def show(self, review: ReviewSet, i: int) -> None:
        if not review.evidence[i]:
            self.update(Text("No neighbours in the fitted graph.", style="dim"))
            return
        self.update(neighbour_text(review, i))
