"""What the answers read twice teach the review queue about the answers read once (issue 35,
point 3).

In a session where some answers have two or more reads, each such answer is a labelled example:
its reads disagree or they all agree with the audited score. A logistic regression, pooled over
the session's items, learns P(another read differs) from three features of every answer:

  logit of today's severity (engine.audit.queue.severity);
  the item's rate of disagreement among its answers read twice, shrunk towards the session's
      (ITEM_PRIOR answers' worth);
  the rate among the item's answers read twice that carry the same audited score, shrunk
      towards the item's (SCORE_PRIOR answers' worth).

No answer's severity depends on its own reads: the answers read twice are split at random into
FOLDS parts, and each part is ranked by a regression fitted on the other parts, with rates
counted over the other parts only (`learned_severity`); the answers read once get the mean of
the FOLDS regressions (the folds are dealt over the whole session, each holding about a
FOLDS-th of the disagreements, so no fold's regression lacks them). Leaving out the answer's own label alone is not enough: within an item
every answer's rate is then (the item's disagreements minus its own) over the same count, so the
rate is lower exactly where the reads differ, and the regression learned each answer's own label
from it (AUROC 1.0 against those labels on ASAP-SAS prompt 10, every answer read twice, until
2026-11-29; tests/test_read_severity.py). The model's probability is the new severity of every
answer, on one scale across the session's items (the queue is one list). With fewer than
MIN_EACH disagreements or agreements among the answers read twice, nothing changes: single-read
sessions keep today's severity exactly.

tests/benchmarks/bench_severity_visible.py measured it: with 10%, 20% or 50% of each item's
answers' second reads visible, on the others' real disagreements it ranks above both peers (kNN
vote, out-of-fold logistic regression) on ASAP-SAS, the ASAP essays, Mohler and Powergrading
(docs/explanation/severity.md, "Second reads").
"""

from __future__ import annotations

import numpy as np

from engine.model.classifier import fit_logistic, predict_logistic

ITEM_PRIOR = 20.0
SCORE_PRIOR = 10.0
MIN_EACH = 5
CLIP = 1e-4
MAX_ITER = 1000
FOLDS = 5


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, CLIP, 1 - CLIP)
    return np.log(p / (1 - p))


def answer_folds(read: list[np.ndarray], differs: list[np.ndarray], seed: int) -> list[np.ndarray]:
    """Each item's (N,) fold of its answers read twice, 0..FOLDS-1 (-1: read once): the whole
    session's answers read twice, those whose reads differ and the others apart, dealt at random
    (from the seed) into FOLDS parts, so every part holds about a FOLDS-th of each kind, however
    few each item has (a session of one backread per item included)."""
    flat_read = np.concatenate(read)
    flat_differs = np.concatenate(differs) & flat_read
    fold = np.full(flat_read.size, -1)
    rng = np.random.default_rng(seed)
    for kind in (flat_differs, flat_read & ~flat_differs):
        where = np.flatnonzero(kind)
        fold[where[rng.permutation(where.size)]] = np.arange(where.size) % FOLDS
    return np.split(fold, np.cumsum([r.size for r in read])[:-1])


def left_out_rate(mask, fold, differs, prior, weight, held: int = -1) -> np.ndarray:
    """(N,) the disagreement rate among the answers in `mask` read twice (fold >= 0), shrunk
    towards `prior` with `weight` answers' worth; no answer counts the answers of fold `held`
    (-1: none), and an answer read twice does not count those of its own fold either."""
    counted = mask & (fold >= 0) & (fold != held)
    hits = counted & differs
    by_fold = np.bincount(fold[counted], minlength=FOLDS)
    hits_by_fold = np.bincount(fold[hits], minlength=FOLDS)
    own = (fold >= 0) & (fold != held)
    at = np.maximum(fold, 0)
    left_hits = hits.sum() - np.where(own, hits_by_fold[at], 0)
    left_count = counted.sum() - np.where(own, by_fold[at], 0)
    return (left_hits + weight * prior) / (left_count + weight)


def features(severity, scores, fold, differs, session_rate: float, held: int = -1) -> np.ndarray:
    """(N, 3): logit severity, logit item rate, logit rate of the answer's audited score; fold:
    `answer_folds`; held: the fold no rate counts (`left_out_rate`)."""
    item = left_out_rate(np.ones(scores.size, bool), fold, differs, session_rate, ITEM_PRIOR, held)
    by_score = np.zeros(scores.size)
    for s in np.unique(scores):
        same = scores == s
        by_score[same] = left_out_rate(same, fold, differs, item, SCORE_PRIOR, held)[same]
    return np.column_stack([logit(severity), logit(item), logit(by_score)])


def learned_severity(
    severities: list[np.ndarray],
    scores: list[np.ndarray],
    read: list[np.ndarray],
    differs: list[np.ndarray],
    seed: int = 0,
) -> list[np.ndarray] | None:
    """Each item's new severity in [0, 1] (module docstring), or None when the answers read
    twice hold fewer than MIN_EACH disagreements or agreements. Per item: severities (N,) of
    today; scores (N,) audited codes; read (N,) bool, answers with two or more reads; differs
    (N,) bool, answers whose reads do not all give the audited score (only read ones count);
    seed: the folds' (`answer_folds`).

    Cross-fitted: for each fold, a regression fitted on the other folds' answers read twice
    (their rates from neither that fold nor their own) ranks that fold's answers (their rates
    from the other folds), so no answer's severity depends on its own reads or its fold's; the
    answers read once get the mean of the FOLDS regressions' probabilities."""
    labels = np.concatenate([d[r] for d, r in zip(differs, read)])
    if labels.size == 0 or min(labels.sum(), (~labels).sum()) < MIN_EACH:
        return None
    rate = float(labels.mean())
    folds = answer_folds(read, differs, seed)
    out = [np.zeros(r.size) for r in read]
    for held in range(FOLDS):
        matrices = [
            features(v, s, f, d & r, rate, held)
            for v, s, f, r, d in zip(severities, scores, folds, read, differs)
        ]
        proba = _fold_model(matrices, folds, differs, held)
        for p, f, new in zip(proba, folds, out):
            new[f == held] = p[f == held]
            new[f < 0] += p[f < 0] / FOLDS
    return out


def _fold_model(matrices, folds, differs, held: int) -> list[np.ndarray]:
    """Each item's P(another read differs) from a regression on the answers read twice outside
    fold `held`; their rate where those answers hold only one kind (too few to split)."""
    train_rows = [(f >= 0) & (f != held) for f in folds]
    train = np.vstack([m[t] for m, t in zip(matrices, train_rows)])
    labels = np.concatenate([d[t] for d, t in zip(differs, train_rows)])
    if labels.all() or not labels.any():
        return [np.full(m.shape[0], float(labels.mean())) for m in matrices]
    mean, sd = train.mean(axis=0), train.std(axis=0)
    sd[sd == 0] = 1.0
    coef = fit_logistic((train - mean) / sd, labels.astype(int), 2, 1.0, MAX_ITER)
    return [predict_logistic(coef, (m - mean) / sd)[:, 1] for m in matrices]
