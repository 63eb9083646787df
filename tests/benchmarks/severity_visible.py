"""Severity candidates that learn from the answers whose second read is visible (issue 35,
point 3), for bench_severity_visible.py.

A session is one dataset (its items pooled, as the review queue merges them). In each item a
random share of the answers with a second read has it visible; the candidates are trained on
the visible answers' label "another read differs" and rank the other (held-out) answers, whose
second reads they never see. Features per answer, all from the audited scores, the embeddings
and the visible labels (a visible answer's own label is left out of its own features, so the
training rows look like the rows that are ranked):

  sev       logit of today's severity (run_audit)
  knn       logit of the kNN vote (1 - share of the neighbours that carry the answer's score)
  lr        logit of OOF LR's 1 - p(score)
  entropy   entropy of OOF LR's probabilities over log(C+1)
  distance  |E_LR[score] - score| / (number of scores - 1)
  seen      cosine-weighted share of the answer's SEEN_K nearest visible answers that disagree,
            shrunk (weight SEEN_PRIOR) to the item's rate
  item      the item's visible disagreement rate, shrunk (ITEM_PRIOR answers) to the session's
  by score  the visible rate among the item's answers with the same audited score, shrunk
            (SCORE_PRIOR answers) to the item's rate
  size      log of the item's answers, and the number of scores

Each candidate is a logistic regression (standardised features, C = 1) fitted on the visible
answers of all the session's items, so its severities are on one scale across items. CHOSEN
picks, per session, the candidate (or today's severity) with the best 5-fold cross-validated
AUROC on the visible answers. ENGINE is what parm ships (engine.audit.queue.read_severity: "sev + item
and score offsets" with the engine's own logistic regression). With fewer than 5 visible disagreements (or agreements) every
candidate is today's severity, unchanged.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from engine.audit.queue.read_severity import learned_severity

SEEN_K = 10
SEEN_PRIOR = 1.0
ITEM_PRIOR = 20.0
SCORE_PRIOR = 10.0
CLIP = 1e-4
CHOICE_FOLDS = 5
CHOSEN = "chosen on the visible answers"
ENGINE = "parm: engine.audit.queue.read_severity"

CANDIDATES = {
    "stack: all": (
        "sev",
        "knn",
        "lr",
        "entropy",
        "distance",
        "seen",
        "item",
        "by score",
        "log n",
        "scores",
    ),
    "stack: peers + seen (the probe)": ("knn", "lr", "entropy", "distance", "seen"),
    "stack: sev + peers, no seen reads": ("sev", "knn", "lr", "entropy", "distance"),
    "sev + item offset": ("sev", "item"),
    "sev + item and score offsets": ("sev", "item", "by score"),
    "sev + seen": ("sev", "seen"),
    "sev + seen + item": ("sev", "seen", "item"),
    "sev + seen + item and score offsets": ("sev", "seen", "item", "by score"),
    "sev + kNN + seen + item and score offsets": ("sev", "knn", "seen", "item", "by score"),
}


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, CLIP, 1 - CLIP)
    return np.log(p / (1 - p))


def seen_rate(vectors, visible, disagree, prior) -> np.ndarray:
    """(N,) cosine-weighted disagreement share of each answer's SEEN_K nearest visible answers
    (itself excluded), shrunk to `prior` (per answer) with weight SEEN_PRIOR."""
    shown = np.flatnonzero(visible)
    if shown.size == 0:
        return prior.copy()
    sims = vectors @ vectors[shown].T
    sims[shown, np.arange(shown.size)] = -np.inf  # a visible answer is not its own neighbour
    k = min(SEEN_K, shown.size)
    nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    weights = np.maximum(np.take_along_axis(sims, nearest, axis=1), 0.0)
    weights[~np.isfinite(weights)] = 0.0
    hits = (weights * disagree[shown][nearest]).sum(axis=1)
    return (hits + SEEN_PRIOR * prior) / (weights.sum(axis=1) + SEEN_PRIOR)


def left_out_rate(mask, visible, disagree, prior, weight) -> np.ndarray:
    """(N,) shrunk disagreement rate of the visible answers in `mask` (an (N,) group label
    array's matches, or all), each visible answer's own label left out."""
    count = (visible & mask).sum() - (visible & mask).astype(float)
    hits = (visible & mask & disagree).sum() - (visible & mask & disagree).astype(float)
    return (hits + weight * prior) / (count + weight)


def features(item, visible: np.ndarray, session_rate: float) -> dict[str, np.ndarray]:
    """Every feature of one item's answers (module docstring)."""
    scores, proba, d = item.scores, item.lr_proba, item.disagree
    n, top = scores.size, item.n_classes
    rows = np.arange(n)
    everyone = np.ones(n, dtype=bool)
    item_rate = left_out_rate(everyone, visible, d, session_rate, ITEM_PRIOR)
    by_score = np.zeros(n)
    for s in np.unique(scores):
        same = scores == s
        by_score[same] = left_out_rate(same, visible, d, item_rate, SCORE_PRIOR)[same]
    p = np.clip(proba, 1e-12, 1.0)
    entropy = -(p * np.log(p)).sum(axis=1) / np.log(max(top, 2))
    expected = proba @ np.arange(top)
    return {
        "sev": logit(item.severity),
        "knn": logit(item.knn),
        "lr": logit(1.0 - proba[rows, scores]),
        "entropy": entropy,
        "distance": np.abs(expected - scores) / max(top - 1, 1),
        "seen": logit(seen_rate(item.vectors, visible, d, item_rate)),
        "item": logit(item_rate),
        "by score": logit(by_score),
        "log n": np.full(n, np.log(n)),
        "scores": np.full(n, float(top)),
    }


def _fit(train, labels):
    mean, sd = train.mean(axis=0), train.std(axis=0)
    sd[sd == 0] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LogisticRegression(max_iter=1000).fit((train - mean) / sd, labels)
    return lambda x: model.predict_proba((x - mean) / sd)[:, 1]


def visible_auroc(train, labels, folds: int = CHOICE_FOLDS) -> float:
    """Cross-validated AUROC of a candidate's logistic regression on the visible answers."""
    out = np.zeros(labels.size)
    for fit, held in StratifiedKFold(folds, shuffle=True, random_state=0).split(train, labels):
        out[held] = _fit(train[fit], labels[fit])(train[held])
    return float(roc_auc_score(labels, out))


def session_rankings(items, visible: list[np.ndarray]) -> list[dict[str, np.ndarray]]:
    """Every candidate's severity for every answer of every item of one session, trained on the
    visible answers (today's severity where no answer is visible or all agree), and CHOSEN: the
    candidate (or today's severity) with the best cross-validated AUROC on the visible answers."""
    shown = np.concatenate(visible)
    labels = np.concatenate([i.disagree for i in items])[shown]
    rate = float(labels.mean()) if labels.size else 0.0
    found = [features(i, v, rate) for i, v in zip(items, visible)]
    out = [{} for _ in items]
    usable = labels.size and np.bincount(labels.astype(int), minlength=2).min() >= CHOICE_FOLDS
    sev = np.concatenate([i.severity for i in items])[shown]
    figures = {None: roc_auc_score(labels, sev) if usable else 1.0}
    for name, columns in CANDIDATES.items():
        matrices = [np.column_stack([f[c] for c in columns]) for f in found]
        if not usable:
            for o, i in zip(out, items):
                o[name] = i.severity
            continue
        train = np.vstack(matrices)[shown]
        predict = _fit(train, labels)
        figures[name] = visible_auroc(train, labels)
        for o, m in zip(out, matrices):
            o[name] = predict(m)
    best = max(figures, key=figures.get)
    learned = learned_severity(
        [i.severity for i in items], [i.scores for i in items], visible, [i.disagree for i in items]
    )
    for k, (o, i) in enumerate(zip(out, items)):
        o[CHOSEN] = i.severity if best is None else o[best]
        o[ENGINE] = i.severity if learned is None else learned[k]
    return out
