"""The peers every severity candidate is measured against, per item, on the same embeddings:

(a) kNN vote: 1 - the cosine-weighted share of the K = min(34, n - 1) nearest neighbours (own row
    excluded, negative similarities counted as 0) that carry the row's score;
(b) OOF LR: scikit-learn's `LogisticRegression()` with its defaults, out of fold over 5 folds,
    `StratifiedKFold(5)` as `cross_val_predict(cv=5)` builds it when some score has 5 responses,
    else `KFold(min(5, n))`; 1 - P_oof(human score). A fold whose training rows hold one score
    predicts it with probability 1, and a score absent from a fold's training rows gets
    probability 0 there (as cross_val_predict fills it);
(c) with the optional cleanlab installed: `get_label_quality_scores` on (b)'s probabilities, and
    Datalab's label issues from the embeddings alone (not part of the ship rule).
"""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold

KNN = "kNN vote"
OOF_LR = "OOF LR"
PEERS = (KNN, OOF_LR)
CLEANLAB = ("cleanlab label quality", "cleanlab Datalab")
KNN_K = 34


def knn_shares(vectors: np.ndarray, scores: np.ndarray, n_classes: int) -> np.ndarray:
    """(N, C+1): the cosine-weighted share of each score among the K = min(34, n - 1) nearest
    neighbours (own row excluded, negative similarities counted as 0; uniform when all are)."""
    k = min(KNN_K, scores.size - 1)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    weights = np.maximum(np.take_along_axis(sims, nearest, axis=1), 0.0).astype(np.float64)
    shares = np.zeros((scores.size, n_classes))
    np.add.at(
        shares, (np.repeat(np.arange(scores.size), k), scores[nearest].ravel()), weights.ravel()
    )
    total = shares.sum(axis=1, keepdims=True)
    return np.divide(shares, total, out=np.full_like(shares, 1.0 / n_classes), where=total > 0)


def knn_vote_outside(vectors: np.ndarray, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The kNN vote of the neighbours outside the row's own group of similar answers
    (engine.audit.queue.answer_groups): a wording scored the same wrong way throughout its group
    cannot vouch for itself. Where every other row is in the group, or no neighbour outside it
    is similar (weights 0), the plain vote."""
    k = min(KNN_K, scores.size - 1)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    sims[groups[:, None] == groups[None, :]] = -np.inf
    nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    found = np.take_along_axis(sims, nearest, axis=1)
    weights = np.where(np.isfinite(found), np.maximum(found, 0.0), 0.0)
    same = scores[nearest] == scores[:, None]
    total = weights.sum(axis=1)
    share = np.divide(
        (weights * same).sum(axis=1), total, out=np.zeros_like(total), where=total > 0
    )
    return np.where(total > 0, 1.0 - share, knn_vote(vectors, scores))


def knn_vote(vectors: np.ndarray, scores: np.ndarray) -> np.ndarray:
    k = min(KNN_K, scores.size - 1)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    weights = np.maximum(np.take_along_axis(sims, nearest, axis=1), 0.0)
    same = scores[nearest] == scores[:, None]
    total = weights.sum(axis=1)
    share = np.divide(
        (weights * same).sum(axis=1), total, out=np.zeros_like(total), where=total > 0
    )
    return 1.0 - share


def peer_folds(scores: np.ndarray) -> list:
    if np.bincount(scores).max() >= 5:
        with warnings.catch_warnings():  # "the least populated class has only 1 member"
            warnings.simplefilter("ignore", UserWarning)
            return list(StratifiedKFold(5).split(np.zeros(scores.size), scores))
    return list(KFold(min(5, scores.size)).split(np.zeros(scores.size)))


def oof_lr_proba(vectors: np.ndarray, scores: np.ndarray, n_classes: int) -> np.ndarray:
    proba = np.zeros((scores.size, n_classes))
    for train, held in peer_folds(scores):
        seen = np.unique(scores[train])
        if seen.size == 1:
            proba[held, seen[0]] = 1.0
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = LogisticRegression().fit(vectors[train], scores[train])
        proba[np.ix_(held, model.classes_)] = model.predict_proba(vectors[held])
    return proba


def peers(vectors: np.ndarray, scores: np.ndarray, n_classes: int) -> dict[str, np.ndarray]:
    proba = oof_lr_proba(vectors, scores, n_classes)
    rows = np.arange(scores.size)
    out = {KNN: knn_vote(vectors, scores), OOF_LR: 1.0 - proba[rows, scores]}
    try:
        from cleanlab import Datalab
        from cleanlab.rank import get_label_quality_scores
    except ImportError:
        return out
    present = np.unique(scores)
    codes = np.searchsorted(present, scores)  # cleanlab wants labels 0..K-1, all present
    out[CLEANLAB[0]] = 1.0 - get_label_quality_scores(codes, _renormalised(proba[:, present]))
    lab = Datalab(data={"label": codes}, label_name="label", verbosity=0)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lab.find_issues(features=vectors, issue_types={"label": {}})
    out[CLEANLAB[1]] = 1.0 - lab.get_issues("label")["label_score"].to_numpy()
    return out


def _renormalised(proba: np.ndarray) -> np.ndarray:
    total = proba.sum(axis=1, keepdims=True)
    return np.divide(proba, total, out=np.full_like(proba, 1.0 / proba.shape[1]), where=total > 0)
