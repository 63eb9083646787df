"""The review queue of a `ReviewSet`: which responses to list, and in what order, under the app's
filters; the views by decision (undecided, unsure, changed, kept, noted); the answers of a list
made from the run (today's backreads, engine.actions); and how a re-run moved the flags under the
decisions already made."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from engine.results.decision import Decision
from engine.results.review import ReviewSet


def review_view(
    review: ReviewSet,
    show_all=False,
    human=None,
    predicted=None,
    off_by_two=False,
    search="",
    folded=None,
    subset=None,
    item=None,
    rater=None,
    third_read=False,
) -> np.ndarray:
    """Indices of the responses to list, in the review queue's order (most severe first).

    show_all: every response (the whole queue), else only the flagged ones (the likely wrong
    scores: engine.results.item.AuditResult.flagged), in the same order; human/predicted: score codes to keep (None =
    any); off_by_two: |model - human| >= 2 codes; search: case-insensitive text (or id) to look
    for; folded: texts already casefolded; subset: (N,) bool, list only these (a mask of
    `RerunChanges`) instead of the flagged ones (or all of them with show_all); item: only that
    item's responses; rater: only the answers that rater read (any read; flagged: the model
    prefers another score than theirs); third_read: only the answers
    whose consensus needs a third read, in its order (least sure first) instead of severity's.
    """
    scores, model = review.responses.scores, review.predicted
    order = review.review_order()
    # The queue lists the likely wrong scores (the flags); a rater's view the answers they read,
    # flagged where the model prefers another score than theirs (raters.csv's flagged),
    # whichever read of the answer was theirs.
    given = None if rater is None else review.read_by(rater)
    flagged = review.flagged.copy() if given is None else (given >= 0) & (model != given)
    if subset is not None:
        keep = np.asarray(subset, dtype=bool).copy()
    else:
        keep = np.ones(len(scores), dtype=bool) if show_all else flagged
    if human is not None:
        keep &= scores == human
    if predicted is not None:
        keep &= model == predicted
    if off_by_two:
        keep &= np.abs(model.astype(int) - scores.astype(int)) >= 2
    if item is not None:
        keep &= np.array([name == item for name in review.items])
    if given is not None:
        keep &= given >= 0
    if search:
        needle = search.casefold()
        texts = folded if folded is not None else [t.casefold() for t in review.responses.texts]
        ids = review.responses.ids
        found = [needle in t or needle in ids[i].casefold() for i, t in enumerate(texts)]
        keep &= np.asarray(found, dtype=bool)
    if third_read:
        rank = review.third_read_rank
        if rank is None:
            return np.zeros(0, dtype=np.int64)
        chosen = np.flatnonzero(keep & (rank > 0))
        return chosen[np.argsort(rank[chosen], kind="stable")]
    return order[keep[order]]


# The views by decision, and which decisions each lists ("undecided": none yet).
DECISION_VIEWS = {
    "undecided": None,
    "unsure": "unsure",
    "changed": "change",
    "kept": "keep",
    "noted": "note",
    "conflicts": "conflict",
}


def decision_view(
    review: ReviewSet,
    decisions: dict[int, Decision],
    view: str,
    conflicted: frozenset[int] | set[int] = frozenset(),
) -> np.ndarray:
    """(N,) bool, the responses a view by decision lists (review_view's `subset`): undecided,
    the flagged responses with no decision yet (the work left); unsure, changed, kept, every
    response with that decision, flagged or not; noted, every decision with a note; conflicts,
    the responses (data rows in `conflicted`) where an imported decision of another reviewer
    differs from the one made and is not settled yet."""
    wanted = DECISION_VIEWS[view]
    rows = np.asarray(review.responses.rows, dtype=np.int64)
    if wanted == "conflict":
        return np.isin(rows, np.fromiter(conflicted, dtype=np.int64, count=len(conflicted)))
    position = {int(r): i for i, r in enumerate(rows)}
    chosen = np.zeros(len(rows), dtype=bool)
    for row, decision in decisions.items():
        i = position.get(int(row))
        if i is None:
            continue
        if wanted is None:
            chosen[i] = True
        elif wanted == "note":
            chosen[i] = bool(decision.note)
        else:
            chosen[i] = decision.action == wanted
    return review.flagged & ~chosen if wanted is None else chosen


def rows_view(review: ReviewSet, rows) -> np.ndarray:
    """(N,) bool, the responses whose answers are at these data rows (review_view's `subset`):
    a list made from the run, such as today's backreads (engine.workspace.backread_rows)."""
    wanted = np.fromiter((int(row) for row in rows), dtype=np.int64)
    return np.isin(np.asarray(review.responses.rows, dtype=np.int64), wanted)


@dataclass(frozen=True)
class RerunChanges:
    """How the flags of this run differ from the decisions and the previous run: (N,) bool.

    no_longer_flagged: decided responses that were flagged when decided but are not now;
    newly_flagged: responses flagged now, not flagged in the previous run, not decided yet.
    """

    no_longer_flagged: np.ndarray
    newly_flagged: np.ndarray


def rerun_changes(
    review: ReviewSet,
    decisions: dict[int, Decision],
    previous_flagged_rows: Iterable[int] | None = None,
) -> RerunChanges:
    """Compare this run's flags with the decisions (engine.results.decision.Decision by data row)
    and with the data rows the previous run flagged (None: no previous run, nothing is new).

    A decision knows the model's prediction when it was made (its RunContext); one saved before
    parm recorded that counts as made on a flagged response when the previous run flagged it
    (or when there is no previous run to ask).
    """
    responses = review.responses
    rows = np.asarray(responses.rows, dtype=np.int64)
    previous = None
    if previous_flagged_rows is not None:
        previous = np.isin(rows, np.asarray(list(previous_flagged_rows), dtype=np.int64))
    position = {int(r): i for i, r in enumerate(rows)}
    decided = np.zeros(len(rows), dtype=bool)
    flagged_then = np.zeros(len(rows), dtype=bool)
    for row, decision in decisions.items():
        i = position.get(int(row))
        if i is None:
            continue
        decided[i] = True
        if decision.context is not None:
            human = responses.labels[int(responses.scores[i])]
            flagged_then[i] = decision.context.predicted != human
        else:
            flagged_then[i] = True if previous is None else bool(previous[i])
    flagged = review.flagged
    newly = np.zeros(len(rows), dtype=bool) if previous is None else flagged & ~previous
    return RerunChanges(decided & flagged_then & ~flagged, newly & ~decided)
