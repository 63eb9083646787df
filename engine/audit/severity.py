"""Which scores to look at first: the review queue's severity, and the flags (the model prefers
another score).

Severity is 1 - p(human score) under a stacked model that never saw that response's score: a
multinomial logistic model, cross-fitted over stratified folds, whose inputs are the out-of-fold
probabilities of a logistic regression on the embeddings (engine.model.classifier) and PARM's
own features for the selected graph: the neighbours' score shares T_i(c) / S_i and log(1 + S_i).
tests/benchmarks/bench_severity.py chose it by leave-one-prompt-out on eight ASAP prompts over
PARM's own probabilities (in-sample and cross-fitted, balanced and unweighted, 1 - p and margin),
mixtures with the classifier and the classifier alone; it beats both a similarity-weighted kNN
vote and the out-of-fold classifier on prompts it was not chosen on.
"""

from __future__ import annotations

import numpy as np

from engine.core.progress import Reporter
from engine.model.classifier import out_of_fold_proba, stratified_folds

SEVERITY_FOLDS = 5
# C of the embedding classifier: 10 (less penalty than scikit-learn's default 1) ranked better
# on held-out prompts; the stacker keeps C = 1 on its few standardised features.
CLASSIFIER_C = 10.0
STACKER_C = 1.0
STACKER_MAX_ITER = 1000
LOG_FLOOR = 1e-6
CLASSIFIER_STEP = "severity: embedding classifier"


def severity(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """1 - p(human score), in [0, 1]. proba: (N, C+1); scores: (N,) codes. Returns (N,)."""
    return 1.0 - proba[np.arange(scores.shape[0]), scores]


def stack_features(classifier: np.ndarray, t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """(N, 2(C+1) + 1): log p_oof(c) of the embedding classifier (floored at 1e-6 for scores it
    never saw), the neighbours' shares T_i(c) / S_i, and log(1 + S_i)."""
    shares = t / np.maximum(s, np.finfo(float).tiny)[:, None]
    return np.hstack([np.log(np.maximum(classifier, LOG_FLOOR)), shares, np.log1p(s)[:, None]])


def stacked_severity(
    vectors: np.ndarray,
    features: tuple[np.ndarray, np.ndarray],
    scores: np.ndarray,
    n_classes: int,
    seed: int,
    reporter: Reporter | None = None,
) -> np.ndarray | None:
    """Severity in [0, 1]: 1 - p_stack(human score), every response predicted by models fitted
    on the other folds' scores only (the same stratified folds for the embedding classifier and
    the stacker). vectors: (N, d) embeddings; features: PARM's T (N, C+1) and S (N,) for the
    selected graph. None when there are too few responses for two folds."""
    parts = stratified_folds(scores, SEVERITY_FOLDS, seed)
    if not parts:
        return None
    classifier = out_of_fold_proba(
        vectors, scores, n_classes, parts, CLASSIFIER_C, reporter=reporter, what=CLASSIFIER_STEP
    )
    stacked = out_of_fold_proba(
        stack_features(classifier, *features),
        scores,
        n_classes,
        parts,
        STACKER_C,
        standardise=True,
        max_iter=STACKER_MAX_ITER,
        reporter=reporter,
        what="severity: stacked model",
    )
    return severity(stacked, scores)


def flags(predicted: np.ndarray, scores: np.ndarray) -> np.ndarray:
    return predicted != scores


def queue_order(severity: np.ndarray) -> np.ndarray:
    """The review queue: most severe first, ties in input order. Whether a response is flagged
    (the PARM fit prefers another score) does not change its place."""
    return np.argsort(-severity, kind="stable")
