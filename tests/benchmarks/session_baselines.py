"""The two fits bench_session_model.py compares the session model with, cross-fitted.

Per item (today's parm): `engine.model.cross_fit.cross_fit` on each item's audited reads coded
on the item's own labels, with parm's default settings (the K grid without the values not below
N, p = 1, balanced weights, K by in-sample kappa within each fold), its held-out probabilities
mapped back to the file's scale.

Pooled: one PARM fit of every item's audited reads of a scale group, each read's features from
its own item's graph (engine.model.cross_fit.masked_features: the training answers' scores
only), the parameters shared; per fold, K chosen by in-sample kappa of the training reads as
today's cross-fitting does, over the same folds as the session model (answers within items).

Both return, per audited read, the held-out probabilities on the file's scale and the category
shares of the reads its model was fitted on, so that the session model's decision rule
(engine.model.session.cross_fit.decide) can be applied to them too: class_weight None with a
balance chosen as the session model's is the same decision rule on today's models.
"""

from __future__ import annotations

import numpy as np
from session_data import BenchItem

from engine.input.settings.config import fit_top_k, load_defaults
from engine.model.cross_fit import cross_fit, masked_features
from engine.model.metrics import agreement
from engine.model.pseudo_likelihood import fit, proba
from engine.model.session.cross_fit import SessionOptions, answer_folds, distinct_top_k


def _shares(scores: np.ndarray, n_classes: int) -> np.ndarray:
    return np.bincount(scores, minlength=n_classes) / max(scores.size, 1)


def per_item_probabilities(item: BenchItem, class_weight: str | None) -> np.ndarray:
    """(N, 2 (C+1)): today's cross-fitted p of each answer's audited read on the file's scale
    (0 for the labels the item lacks) and its fold's training shares."""
    defaults = load_defaults().updated(bootstrap_samples=0, class_weight=class_weight)
    config, _ = fit_top_k(defaults, item.local.size)
    result = cross_fit(
        item.session.graph,
        item.local,
        item.to_scale.size,
        config,
        ordered=item.session.ordered,
    )
    n, k = item.local.size, item.session.n_classes
    out = np.zeros((n, 2 * k))
    out[:, item.to_scale] = result.proba
    for fold in result.folds:
        train = np.ones(n, bool)
        train[fold.held_out] = False
        out[np.ix_(fold.held_out, k + item.to_scale)] = _shares(
            item.local[train], item.to_scale.size
        )
    return out


def _features(group: list[BenchItem], top_k: int, train: list[np.ndarray], power: float):
    parts = []
    for item, kept in zip(group, train):
        k = min(top_k, item.session.graph.k_max)
        parts.append(
            masked_features(
                item.session.graph,
                item.audited,
                np.flatnonzero(kept),
                item.session.n_classes,
                k,
                power,
                True,
            )
        )
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def pooled_probabilities(group: list[BenchItem], options: SessionOptions) -> np.ndarray:
    """(sum N_g, 2 (C+1)): the pooled fit's cross-fitted p of each audited read and its fold's
    training shares (options.class_weight is the fit's)."""
    sessions = [item.session for item in group]
    folds = answer_folds(sessions, options.folds, options.seed)
    fold_of = np.concatenate(folds)
    scores = np.concatenate([item.audited for item in group])
    n_classes = group[0].session.n_classes
    out = np.zeros((scores.size, 2 * n_classes))
    grid = distinct_top_k(sessions, options.top_k_values)
    for fold in range(options.folds):
        train = [f != fold for f in folds]
        mask = fold_of != fold
        best, start = None, None
        for top_k in grid:
            t, s = _features(group, top_k, train, options.power)
            fitted = fit(t[mask], s[mask], scores[mask], options.class_weight, start)
            start = fitted.theta
            kappa = agreement(scores[mask], fitted.predicted, n_classes)["kappa"]
            if best is None or kappa > best[0]:
                best = (kappa, fitted.theta, t[~mask], s[~mask])
        out[~mask, :n_classes] = proba(best[1], best[2], best[3])
        out[~mask, n_classes:] = _shares(scores[mask], n_classes)
    return out
