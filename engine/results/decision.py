"""A review decision as the rest of parm reads it: what was decided on one response, by whom,
on which run; and what outputs need of the decisions of a file (`Decisions`).

The decisions themselves are kept by engine.saved.decisions (SQLite, saved the moment they are
made); the queue, the outputs and the screens read them through these types.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

ACTIONS = ("keep", "change", "unsure")
# decisions.csv's columns, in order (engine.outputs.session.decisions_table writes them).
DECISION_COLUMNS = [
    "row",
    "id",
    "text",
    "score",
    "predicted",
    "severity",
    "action",
    "new_score",
    "note",
    "decided_at",
    # Who decided (the `reviewer` setting, by default the login name).
    "reviewer",
    # The run the decision was made on; predicted and severity above are the exported run's.
    "decided_run_id",
    "decided_settings",
    "decided_predicted",
    "decided_severity",
    # Other reviewers' decisions on the same response, imported and not yet settled.
    "conflicts",
]


@dataclass(frozen=True)
class RunContext:
    """What the rater-lead saw when deciding: the run (its id and settings digest) and the
    model's predicted score (label) and severity for the response in that run."""

    run_id: str
    settings_digest: str
    predicted: str
    severity: float


@dataclass(frozen=True)
class Decision:
    """One decision on one response. row: the 1-based data row in the input file;
    new_score: the original label chosen for "change", else None; decided_at: UTC ISO 8601;
    reviewer: who decided ("" when unknown: decisions saved before parm recorded it);
    context: the run it was made on (None for decisions saved before parm recorded it)."""

    row: int
    response_id: str
    action: str
    new_score: str | None
    note: str
    decided_at: str
    context: RunContext | None = None
    reviewer: str = ""

    def same_call(self, other: Decision) -> bool:
        """The same decision (action, new score, note), whoever made it and whenever."""
        return (self.action, self.new_score, self.note) == (
            other.action,
            other.new_score,
            other.note,
        )


def text_hash(text: str) -> str:
    """The digest a decision keeps of its response's text: a decision applies only to the
    same answer."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Decisions(Protocol):
    """The decisions of one file's responses, as outputs read them (engine.saved.decisions's
    DecisionStore meets it)."""

    def all(self) -> dict[int, Decision]:
        """Decisions that apply to the loaded responses, by data row, in row order."""

    def conflicts(self, row: int) -> list[Decision]:
        """Imported decisions of other reviewers on that row, not yet settled."""

    def added_reads(self) -> list:
        """The reads typed in the review (engine.results.added_reads.AddedRead), by row."""
