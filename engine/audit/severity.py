"""Which scores to look at first: the review queue's severity, and the flags (the model prefers
another score).

Severity is 1 - p(human score) under models that never saw that response's score, all
cross-fitted over the same stratified folds:

1. a logistic regression on the embeddings (engine.model.classifier, C = 10);
2. a logistic regression on the answers' words and character n-grams (TF-IDF,
   engine.model.lexical, C = 10), fitted through their Gram matrix;
3. on an item with at least ROWS_PER_PARAMETER responses per parameter of the stacker, a
   stacked multinomial logistic model whose inputs are both models' out-of-fold
   log-probabilities and PARM's own features for the selected graph (the neighbours' score
   shares T_i(c) / S_i and log(1 + S_i)): (C+1)(3C+5) parameters, 8 with two scores, so 80
   responses with two scores, 330 on a 0-2 scale, 1,200 on six scores; on a smaller item, whose
   folds are too small to fit the stacker, the mean of the two models' probabilities.

tests/benchmarks/bench_severity.py chose this by leaving one dataset out, over every kind of file
in the shared data (short answers on ordinal scales, many small items with text labels, long
essays on wide scales, tiny items with eleven half-point scores), against a kNN vote and
out-of-fold logistic regression computed per item on the same embeddings; docs/explanation/severity.md
gives the held-out table.
"""

from __future__ import annotations

import numpy as np

from engine.core.progress import CHECKS, Reporter
from engine.model.classifier import narrow, out_of_fold_proba, stratified_folds
from engine.model.lexical import gram_features, lexical_features

SEVERITY_FOLDS = 5
# C of both classifiers: 10 (less penalty than scikit-learn's default 1) ranked best held out;
# the stacker keeps C = 1 on its few standardised features.
EMBEDDING_C = 10.0
LEXICAL_C = 10.0
STACKER_C = 1.0
STACKER_MAX_ITER = 1000
# Items with fewer responses per stacker parameter use the mean of the two classifiers.
ROWS_PER_PARAMETER = 10
# Up to this many responses the lexical model's Gram matrix is exact (every item of the
# benchmark, at most 1,800 answers); above, it sees the answers through LEXICAL_LANDMARKS of
# them (Nystrom), so its cost grows with N x 500, not N x N. On the eight ASAP prompts (1,023-
# 1,447 answers, real disagreement) Nystrom with 250, 500 or 1,000 landmarks ranked as well as
# the exact Gram matrix (mean AUROC 0.709, 0.708, 0.707 against 0.710; no prompt apart by more
# than 0.007); with 2,000 landmarks a 100,000-answer item spent 154 s in the severity.
LEXICAL_EXACT_UP_TO = 2000
LEXICAL_LANDMARKS = 500
# The lexical model is fitted in float32 like the embeddings: its (N, N) Gram features are read
# twice per optimiser step, and half the bytes is a quarter less time on a 1,500-answer item.
LEXICAL_DTYPE = np.float32
LOG_FLOOR = 1e-6
CLASSIFIER_STEP = "severity: embedding classifier"
LEXICAL_STEP = "severity: word and character classifier"


def severity(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """1 - p(human score), in [0, 1]. proba: (N, C+1); scores: (N,) codes. Returns (N,)."""
    return 1.0 - proba[np.arange(scores.shape[0]), scores]


def stack_features(
    embedded: np.ndarray, lexical: np.ndarray, t: np.ndarray, s: np.ndarray
) -> np.ndarray:
    """(N, 3(C+1) + 1): log p_oof(c) of the embedding and the lexical classifier (floored at
    1e-6 for scores a fold never saw), the neighbours' shares T_i(c) / S_i, and log(1 + S_i)."""
    shares = t / np.maximum(s, np.finfo(float).tiny)[:, None]
    logs = [np.log(np.maximum(p, LOG_FLOOR)) for p in (embedded, lexical)]
    return np.hstack([logs[0], shares, np.log1p(s)[:, None], logs[1]])


def stacker_parameters(n_classes: int) -> int:
    """Parameters of the stacker on an item with `n_classes` scores: per free category, one
    coefficient per input (3 per score and log(1 + S)) and an intercept."""
    free = n_classes if n_classes > 2 else 1
    return free * (3 * n_classes + 2)


def stacks(n_responses: int, n_classes: int) -> bool:
    """Whether an item is large enough for the stacker (else: the mean of the classifiers)."""
    return n_responses >= ROWS_PER_PARAMETER * stacker_parameters(n_classes)


def classifier_proba(
    vectors: np.ndarray,
    texts: list[str],
    scores: np.ndarray,
    n_classes: int,
    parts: list[np.ndarray],
    seed: int,
    reporter: Reporter,
) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold probabilities (N, C+1) of the embedding and of the lexical classifier."""
    embedded = out_of_fold_proba(
        narrow(vectors),
        scores,
        n_classes,
        parts,
        EMBEDDING_C,
        reporter=reporter,
        what=CLASSIFIER_STEP,
    )
    reporter(CHECKS, 0, len(parts), f"{LEXICAL_STEP}: n-grams")
    landmarks = len(texts) if len(texts) <= LEXICAL_EXACT_UP_TO else LEXICAL_LANDMARKS
    words = gram_features(lexical_features(texts), landmarks, seed, LEXICAL_DTYPE)
    reporter.check()
    lexical = out_of_fold_proba(
        words, scores, n_classes, parts, LEXICAL_C, reporter=reporter, what=LEXICAL_STEP
    )
    return embedded, lexical


def review_severity(
    vectors: np.ndarray,
    texts: list[str],
    features: tuple[np.ndarray, np.ndarray],
    scores: np.ndarray,
    n_classes: int,
    seed: int,
    reporter: Reporter | None = None,
) -> np.ndarray | None:
    """Severity in [0, 1] (see the module docstring), every response predicted by models fitted
    on the other folds' scores only. vectors: (N, d) embeddings; texts: the N answers;
    features: PARM's T (N, C+1) and S (N,) for the selected graph. None when there are too few
    responses for two folds."""
    reporter = reporter or Reporter()
    parts = stratified_folds(scores, SEVERITY_FOLDS, seed)
    if not parts:
        return None
    embedded, lexical = classifier_proba(vectors, texts, scores, n_classes, parts, seed, reporter)
    if not stacks(scores.shape[0], n_classes):
        return severity((embedded + lexical) / 2, scores)
    stacked = out_of_fold_proba(
        stack_features(embedded, lexical, *features),
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


def queue_order(severity: np.ndarray, confirmed: np.ndarray | None = None) -> np.ndarray:
    """The review queue: most severe first, ties in input order. Whether a response is flagged
    (the PARM fit prefers another score) does not change its place. confirmed: (N,) answers
    whose every read (two or more) gave the audited score; they come after all the others, in
    the same order among themselves: their second look was taken and agreed (on Mohler 143 of
    the 313 flags were such answers)."""
    order = np.argsort(-severity, kind="stable")
    if confirmed is None:
        return order
    return order[np.argsort(confirmed[order], kind="stable")]
