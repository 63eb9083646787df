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

An answer read twice never sees its own reads: its own label is left out of both rates. The
model's probability is the new severity of every answer, on one scale across the session's
items (the queue is one list). With fewer than MIN_EACH disagreements or agreements among the
answers read twice, nothing changes: single-read sessions keep today's severity exactly.

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


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, CLIP, 1 - CLIP)
    return np.log(p / (1 - p))


def left_out_rate(mask, read, differs, prior, weight) -> np.ndarray:
    """(N,) the disagreement rate among the answers in `mask` read twice, shrunk towards
    `prior` with `weight` answers' worth; an answer read twice leaves its own label out."""
    counted = read & mask
    hits = counted & differs
    return (hits.sum() - hits + weight * prior) / (counted.sum() - counted + weight)


def features(severity, scores, read, differs, session_rate: float) -> np.ndarray:
    """(N, 3): logit severity, logit item rate, logit rate of the answer's audited score."""
    item = left_out_rate(np.ones(scores.size, bool), read, differs, session_rate, ITEM_PRIOR)
    by_score = np.zeros(scores.size)
    for s in np.unique(scores):
        same = scores == s
        by_score[same] = left_out_rate(same, read, differs, item, SCORE_PRIOR)[same]
    return np.column_stack([logit(severity), logit(item), logit(by_score)])


def learned_severity(
    severities: list[np.ndarray],
    scores: list[np.ndarray],
    read: list[np.ndarray],
    differs: list[np.ndarray],
) -> list[np.ndarray] | None:
    """Each item's new severity in [0, 1] (module docstring), or None when the answers read
    twice hold fewer than MIN_EACH disagreements or agreements. Per item: severities (N,) of
    today; scores (N,) audited codes; read (N,) bool, answers with two or more reads; differs
    (N,) bool, answers whose reads do not all give the audited score (only read ones count)."""
    labels = np.concatenate([d[r] for d, r in zip(differs, read)])
    if labels.size == 0 or min(labels.sum(), (~labels).sum()) < MIN_EACH:
        return None
    rate = float(labels.mean())
    matrices = [
        features(v, s, r, d & r, rate) for v, s, r, d in zip(severities, scores, read, differs)
    ]
    train = np.vstack([m[r] for m, r in zip(matrices, read)])
    mean, sd = train.mean(axis=0), train.std(axis=0)
    sd[sd == 0] = 1.0
    coef = fit_logistic((train - mean) / sd, labels.astype(int), 2, 1.0, MAX_ITER)
    return [predict_logistic(coef, (m - mean) / sd)[:, 1] for m in matrices]
