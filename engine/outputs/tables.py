"""The rows of the CSV outputs: predictions.csv (one row per response), tuning.csv (one row per
configuration tried) and decisions.csv (one row per review decision)."""

from __future__ import annotations

import numpy as np

from engine.core.text import safe_text
from engine.model.metrics import metric_names
from engine.results.decision import DECISION_COLUMNS, Decision, Decisions, RunContext
from engine.results.item import AuditResult


def evidence_text(result: AuditResult, i: int) -> str:
    """Compact evidence for predictions.csv: `row:score:weight` for each of the neighbours that
    drove the prediction (strongest first, separated by `;`). row is the neighbour's data row in
    the input file, score its human score, weight its edge weight in the fitted graph (normalised
    similarity to the power p); ids and raw similarities are in report.md and on `Neighbour`."""
    responses = result.responses
    return _evidence_text(result.evidence[i], responses.labels, responses.scores, responses.rows)


def _evidence_text(neighbours, labels, scores, rows) -> str:
    """`evidence_text` of one response's neighbours; scores and rows: arrays or lists (a
    table of N rows passes lists: numpy's one-element reads cost more than the rest)."""
    return ";".join(
        f"{rows[nb.index]}:{labels[scores[nb.index]]}:{nb.weight:.3f}" for nb in neighbours
    )


def prediction_table(result: AuditResult) -> tuple[list[str], list[list]]:
    """Header and rows of predictions.csv, one row per response in input order."""
    responses = result.responses
    labels = responses.labels
    proba = result.fitted.proba
    header = ["row", "id", "text", "score", "predicted"]
    header += [f"p_{label}" for label in labels]
    header += ["severity", "flagged", "evidence"]
    second = responses.second_scores
    if second is not None:
        header += ["score2", "raters_disagree"]
    rows = []
    flagged = result.flagged.tolist()  # once: the property compares all N scores on every access
    # Python lists, read element by element below (the same numbers as the arrays').
    scores, data_rows = responses.scores.tolist(), responses.rows.tolist()
    predicted = np.asarray(result.predicted).tolist()
    severity = np.asarray(result.severity, dtype=float).tolist()
    for i in range(len(responses)):
        row = [data_rows[i], responses.ids[i], responses.texts[i], labels[scores[i]],
               labels[predicted[i]]]  # fmt: skip
        row += [f"{p:.6f}" for p in proba[i].tolist()]
        evidence = _evidence_text(result.evidence[i], labels, scores, data_rows)
        row += [f"{severity[i]:.6f}", flagged[i], evidence]
        if second is not None:
            code = second[i]
            row += [
                "" if code < 0 else labels[code],
                "" if code < 0 else bool(code != responses.scores[i]),
            ]
        rows.append(row)
    return header, rows


def tuning_table(result: AuditResult) -> tuple[list[str], list[list]]:
    names = metric_names(result.responses.ordered)
    header = ["top_k", "power", *names, "selected"]
    rows = [
        [
            "" if r.top_k is None else r.top_k,
            f"{r.power:.6g}",
            *(f"{r.metrics[m]:.6f}" for m in names),
            r.selected,
        ]
        for r in result.tuning.rows
    ]
    return header, rows


def decisions_table(store: Decisions, result: AuditResult) -> tuple[list[str], list[list]]:
    """Header and rows of decisions.csv: one row per decision, and one per answer with reads
    typed in the review but no decision (its decision cells empty), in input-row order.

    predicted and severity are the exported run's; the decided_* columns say which run the
    decision was made on and what the model predicted then (empty for decisions saved before
    parm recorded it)."""
    responses = result.responses
    labels = responses.labels
    index = {int(r): i for i, r in enumerate(responses.rows)}
    rows = []
    decided = store.all()
    # An answer with reads typed in the review gets a row too, without a decision.
    typed = {read.row for read in store.added_reads()} - set(decided)
    for row in sorted(set(decided) | typed):
        decision = decided.get(row, UNDECIDED)
        i = index.get(row)
        if i is None:
            continue
        rows.append(
            [
                row,
                responses.ids[i],
                responses.texts[i],
                labels[responses.scores[i]],
                labels[result.predicted[i]],
                f"{result.severity[i]:.6f}",
                decision.action,
                decision.new_score or "",
                safe_text(decision.note),  # pasted from anywhere: no control characters
                decision.decided_at,
                safe_text(decision.reviewer),
                *_decided_on(decision.context),
                _conflicts(store.conflicts(row)),
            ]
        )
    return list(DECISION_COLUMNS), rows


# The decision cells of a row that is there for its typed reads alone.
UNDECIDED = Decision(0, "", "", None, "", "")


def _conflicts(others) -> str:
    """Other reviewers' unsettled decisions, one cell: "ana: change to 2 (why); ben: keep"."""
    return "; ".join(
        f"{safe_text(d.reviewer) or 'someone'}: {d.action}"
        + (f" to {d.new_score}" if d.new_score else "")
        + (f" ({safe_text(d.note)})" if d.note else "")
        for d in others
    )


def _decided_on(context: RunContext | None) -> list:
    if context is None:
        return ["", "", "", ""]
    return [
        context.run_id,
        context.settings_digest,
        context.predicted,
        f"{context.severity:.6f}",
    ]
