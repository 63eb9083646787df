"""scores_reviewed.csv: the corrected scores to hand back to a scoring platform. Every row of the
input file in input order with all its columns as read, then `final_score` (the review's new
score where a decision changed it, else the score as the file had it), `decision` (keep,
change, unsure, or empty), `note`, `decided_at`, the run's `predicted` score and `severity`
(empty for rows the run did not audit), the `consensus` of an answer read twice or more and
its `consensus_p` (on the row of its audited read; empty otherwise), and `run_id` last, as in
every file of a set. Written with engine.outputs.write.csv_text like every CSV (all fields quoted, formulas
guarded).

An input that already has columns of these names (a scores_reviewed.csv audited again with
`--score-col final_score`) has them replaced by this review's: the score audited is then the
earlier final score, which the new final_score keeps where this review left it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.core.text import safe_text
from engine.outputs import declared
from engine.outputs.report.reads_outputs import consensus_by_row
from engine.outputs.write import RUN_COLUMN

if TYPE_CHECKING:
    import pandas as pd

    from engine.results.decision import Decision
    from engine.results.session import SessionResult

REVIEW_COLUMNS = declared.REVIEWED.header


def reviewed_table(
    session: SessionResult, table: pd.DataFrame, decisions: dict[int, Decision] | None
) -> tuple[list[str], list[list]]:
    """Header and rows of scores_reviewed.csv (without run_id, which run_csv adds): one row per
    row of `table` (the input file as read), in its order. decisions: by data row (None: no
    decision store, so every final score is the file's)."""
    decisions = decisions or {}
    replaced = set(REVIEW_COLUMNS) | {RUN_COLUMN}
    kept = [str(c) for c in table.columns if str(c) not in replaced]
    score_column = session.config.score_column
    original = table[score_column].astype(str).tolist() if score_column in table else None
    run = _run_cells(session)
    consensus = consensus_by_row(session)
    rows = []
    for position, values in enumerate(table[kept].itertuples(index=False, name=None)):
        row = position + 1
        decision = decisions.get(row)
        final = "" if original is None else original[position]
        action = note = decided_at = ""
        if decision is not None:
            # A note is the rater-lead's text, but may have been pasted from anywhere.
            action, note = decision.action, safe_text(decision.note)
            decided_at = decision.decided_at
            if decision.action == "change" and decision.new_score is not None:
                final = decision.new_score
        predicted, severity = run.get(row, ("", ""))
        agreed, agreed_p = consensus.get(row, ("", ""))
        rows.append(
            [*values, final, action, note, decided_at, predicted, severity, agreed, agreed_p]
        )
    return [*kept, *REVIEW_COLUMNS], rows


def _run_cells(session: SessionResult) -> dict[int, tuple[str, str]]:
    """The run's predicted score (its label) and severity by data row."""
    cells = {}
    for result in session.results:
        labels = result.responses.labels
        severities = np.asarray(result.severity, dtype=float).tolist()
        codes = np.asarray(result.predicted).tolist()
        for row, code, severity in zip(result.responses.rows.tolist(), codes, severities):
            cells[row] = (labels[code], f"{severity:.6f}")
    return cells
