"""The expected score of each answer from a model that never saw its rater's scores.

A lenient rater's scores sit in the training data of every model fitted on the whole item (and,
through PARM's features, in the neighbourhoods of their own answers), so a model fitted on
everyone expects a little of that rater's leniency and the measured effect shrinks. Here every
rater's answers are predicted by a model fitted without any of that rater's scores: the raters of
an item are dealt to at most `RATER_FOLDS` folds (whole raters, the largest first, each to the
fold with the fewest scores so far), and each fold's answers get their probabilities from the
severity's embedding classifier (engine.model.classifier: multinomial logistic regression on the
embeddings, C = 10, unweighted, so its probabilities estimate how likely each score is) fitted on
the other folds' answers and scores.

Chosen by simulation (tests/benchmarks/bench_raters.py; docs/explanation/raters.md), over
PARM's own in-sample probabilities (what leniency used before), PARM refitted with each fold's
scores masked out of every answer's neighbour features (engine.model.cross_fit.masked_features),
the equal mixture of that and this classifier, and the mixture cross-fitted over stratified folds
(which sees the rater's other scores). On 100 held-out simulated sessions the in-sample
probabilities measured planted leniency at 0.94 of its size (0.31 on Mohler's items of 30
answers, where the fit follows its few scores); the rater-left-out models at 1.13-1.15 (above 1
because the reference raters' expectations still carry a little of the lenient rater's scores).
Among those, the classifier found as many planted effects as the best at the same false-alarm
rate, and noisy raters on nominal labels far more often (1.00 against 0.61 and 0.81); it is also
the cheapest (one logistic regression per fold).

Every read is one row (engine.audit.raters.every_read, engine.pipeline): a rater's reads are
predicted by a model fitted on every read of the other folds' raters, so a grader whose reads
are never the audited ones (a third score column) has their expectation like everyone else;
with one read per answer this is one row per answer, as before.

Probabilities are mixed with a uniform 0.001 so that a score no training answer had keeps a
finite standardised residual.
"""

from __future__ import annotations

import numpy as np

from engine.audit.queue.severity import EMBEDDING_C
from engine.core.progress import Reporter
from engine.model.classifier import out_of_fold_proba

RATER_FOLDS = 5
SMOOTHING = 1e-3
METHOD = (
    "E and W from the review queue's embedding classifier (logistic regression, C = 10) "
    f"cross-fitted by rater: raters dealt to at most {RATER_FOLDS} folds, each rater's answers "
    "predicted by a model fitted without any of that rater's scores"
)


def rater_folds(raters, max_folds: int = RATER_FOLDS) -> list[np.ndarray]:
    """Held-out positions of each fold, whole raters per fold: raters (the unassigned "" one
    too) by decreasing count, each to the fold with the fewest scores so far (ties to the
    first). [] when there is a single rater: nobody else to learn from."""
    names, rater_of, counts = np.unique(np.asarray(raters, dtype=object), return_inverse=True,
                                        return_counts=True)  # fmt: skip
    folds = min(max_folds, names.size)
    if folds < 2:
        return []
    load = np.zeros(folds, dtype=np.int64)
    fold_of_rater = np.empty(names.size, dtype=np.int64)
    for r in sorted(range(names.size), key=lambda r: (-counts[r], str(names[r]))):
        fold_of_rater[r] = int(np.argmin(load))
        load[fold_of_rater[r]] += counts[r]
    fold_of = fold_of_rater[rater_of]
    return [np.flatnonzero(fold_of == k) for k in range(folds)]


def smooth(proba: np.ndarray, amount: float = SMOOTHING) -> np.ndarray:
    """(1 - amount) p + amount / (C+1): no score is impossible."""
    return (1.0 - amount) * proba + amount / proba.shape[1]


def rater_left_out_proba(
    vectors: np.ndarray,
    scores: np.ndarray,
    n_classes: int,
    raters,
    reporter: Reporter | None = None,
    parts: list[np.ndarray] | None = None,
) -> np.ndarray | None:
    """(N, C+1) probabilities of each answer's score from a model fitted without its rater's
    scores (see the module docstring); None with a single rater.

    vectors: (N, d) embeddings; scores: (N,) codes; raters: N rater names ("" where none is
    recorded); parts: other held-out folds (the benchmark compares stratified ones).
    """
    parts = rater_folds(raters) if parts is None else parts
    if not parts:
        return None
    proba = out_of_fold_proba(
        vectors, scores, n_classes, parts, EMBEDDING_C, reporter=reporter or Reporter(),
        what="raters: embedding classifier by rater",
    )  # fmt: skip
    return smooth(proba)
