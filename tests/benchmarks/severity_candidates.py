"""The severity candidates bench_severity.py compares. Each is built from one default run_audit
(whose own `severity` is the shipped one), an unweighted refit and cross-fit of the same graph,
and parm's out-of-fold embedding classifier at two penalties; none sees anything but the scores
being audited and the embeddings."""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.stats import rankdata

from engine.audit.severity import LOG_FLOOR, SEVERITY_FOLDS, severity, stack_features
from engine.embedding.vectors import Embedded
from engine.model.classifier import out_of_fold_proba, stratified_folds
from engine.model.cross_fit import cross_fit
from engine.model.pseudo_likelihood import fit
from engine.pipeline import run_audit
from engine.results.item import AuditResult

WEIGHTS = tuple(round(w, 1) for w in np.arange(0.1, 1.0, 0.1))
PENALTIES = (1.0, 10.0)  # C of the embedding classifier: scikit-learn's default, and 10
SHIPPED_AS = "stack: PARM features + classifier C=10"  # what run_audit computes


@dataclasses.dataclass
class Pieces:
    """Everything the candidates are built from, for one set of scores."""

    scores: np.ndarray
    result: AuditResult
    parts: list[np.ndarray]  # the stratified folds the shipped severity uses
    parm: dict[str, np.ndarray]  # PARM's probabilities, (N, C+1) each
    classifier: dict[float, np.ndarray]  # out-of-fold classifier probabilities by C

    @classmethod
    def build(cls, responses, vectors, config) -> Pieces:
        result = run_audit(responses, config, embedded=Embedded.precomputed(vectors))
        scores, n_classes = responses.scores, responses.n_classes
        t, s = result.tuning.features
        plain = fit(t, s, scores, None, result.fitted.theta).proba
        plain_cross = cross_fit(result.graph, scores, n_classes, config.updated(class_weight=None))
        parm = {
            "PARM in-sample balanced": result.fitted.proba,
            "PARM in-sample unweighted": plain,
            "PARM cross-fitted balanced": result.cross_fit.proba,
            "PARM cross-fitted unweighted": plain_cross.proba,
        }
        parts = stratified_folds(scores, SEVERITY_FOLDS, config.seed)
        classifier = {c: out_of_fold_proba(vectors, scores, n_classes, parts, c) for c in PENALTIES}
        return cls(scores, result, parts, parm, classifier)


def margin(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """max_{c != x_i} p_ic - p_{i, x_i}: parm's severity before this benchmark."""
    rows = np.arange(scores.size)
    others = proba.copy()
    others[rows, scores] = -np.inf
    return others.max(axis=1) - proba[rows, scores]


def stacked(pieces: Pieces, features: np.ndarray) -> np.ndarray:
    """1 - p(human) from the standardised logistic stacker, cross-fitted on the shipped folds."""
    n_classes = pieces.classifier[PENALTIES[0]].shape[1]
    proba = out_of_fold_proba(
        features, pieces.scores, n_classes, pieces.parts, 1.0, standardise=True, max_iter=1000
    )
    return severity(proba, pieces.scores)


def mixtures(pieces: Pieces) -> dict[str, np.ndarray]:
    """PARM and the classifier averaged: probabilities (then 1 - p) or ranks of 1 - p."""
    scores, out = pieces.scores, {}
    for c, classifier in pieces.classifier.items():
        ranked = rankdata(severity(classifier, scores))
        for name, parm in pieces.parm.items():
            for w in WEIGHTS:
                mixed = w * parm + (1 - w) * classifier
                out[f"mix {name} + classifier C={c:g}, w={w}"] = severity(mixed, scores)
                ranks = w * rankdata(severity(parm, scores)) + (1 - w) * ranked
                out[f"rank mix {name} + classifier C={c:g}, w={w}"] = ranks / scores.size
    return out


def candidates(pieces: Pieces) -> dict[str, np.ndarray]:
    scores = pieces.scores
    out = {"shipped": pieces.result.severity}
    for name, p in pieces.parm.items():
        out[f"{name}, 1-p"] = severity(p, scores)
        out[f"{name}, margin"] = margin(p, scores)
    for c, p in pieces.classifier.items():
        out[f"classifier C={c:g}, 1-p"] = severity(p, scores)
        out[f"classifier C={c:g}, margin"] = margin(p, scores)
    t, s = pieces.result.tuning.features
    out["kNN vote, selected K and p"] = severity(t / np.maximum(s, 1e-12)[:, None], scores)
    out.update(mixtures(pieces))
    for c, p in pieces.classifier.items():
        out[f"stack: PARM features + classifier C={c:g}"] = stacked(pieces, stack_features(p, t, s))
    logs = [pieces.parm["PARM cross-fitted unweighted"], pieces.classifier[10.0]]
    features = np.hstack([np.log(np.maximum(p, LOG_FLOOR)) for p in logs])
    out["stack: PARM cross-fitted unweighted + classifier C=10"] = stacked(pieces, features)
    return out
