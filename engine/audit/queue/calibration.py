"""The severity on one scale across items (issue 44, point 3): the probability that another read
of the answer would give another score.

The raw severity (engine.audit.queue.severity) ranks an item's answers, but its level follows how well
the classifiers fit the item: a wide scale or a hard item reads as more severe everywhere, with
no more disagreement. A fixed map puts it on one scale:

    P(another read differs) = sigmoid(b0 + b1 logit(raw) + b2 mean_item logit(raw)
                                      + b3 log(C+1) + b4 H(item's scores))

(C+1 the item's number of scores, H the entropy of its audited scores' shares; the benchmark
chooses which of them enter, the others' coefficients are 0), fitted by tests/benchmarks/bench_severity_errors.py on the
real second reads of the shared data, every kind weighted equally; held out one kind at a time,
its expected calibration error is in docs/explanation/severity.md. Where the session's own
answers read twice teach it (engine.audit.queue.read_severity), they relearn it.
"""

from __future__ import annotations

import numpy as np

CLIP = 1e-4
# Fitted on the real second reads of ASAP-SAS, the ASAP essays, Mohler and Powergrading, each
# kind weighted equally; of the candidate features (bench_severity_errors.py's FEATURE_SETS) the
# logit alone had the lowest ECE with each kind held out in turn, so the item's columns are 0
# (the benchmark prints them as "map fitted on every kind").
COEFFICIENTS = np.array([-0.684927, 0.555283, 0.0, 0.0, 0.0])
NEWTON_STEPS = 50
RIDGE = 1e-6


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, CLIP, 1 - CLIP)
    return np.log(p / (1 - p))


def map_features(raw: np.ndarray, n_classes: int, scores: np.ndarray) -> np.ndarray:
    """(N, 5): 1, logit(raw), the item's mean logit(raw), log(number of scores), and the
    entropy of the item's audited scores (the log of how many scores it effectively uses)."""
    z = logit(np.asarray(raw, dtype=np.float64))
    ones = np.ones_like(z)
    shares = np.bincount(scores, minlength=n_classes) / max(scores.size, 1)
    used = shares[shares > 0]
    entropy = float(-(used * np.log(used)).sum())
    return np.column_stack([ones, z, ones * z.mean(), ones * np.log(n_classes), ones * entropy])


def predict_map(coef: np.ndarray, features: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(features @ coef)))


def fit_map(features: np.ndarray, target: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted maximum likelihood of the map (Newton's method; a tiny ridge keeps it defined
    when a feature is constant)."""
    coef = np.zeros(features.shape[1])
    y = np.asarray(target, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64) / np.sum(weights)
    for _ in range(NEWTON_STEPS):
        p = predict_map(coef, features)
        gradient = features.T @ (w * (p - y)) + RIDGE * coef
        hessian = (features * (w * p * (1 - p))[:, None]).T @ features
        step = np.linalg.solve(hessian + RIDGE * np.eye(coef.size), gradient)
        coef -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return coef


def calibrated(raw: np.ndarray, scores: np.ndarray, n_classes: int, coef=COEFFICIENTS):
    """(N,) the item's severities on the session's one scale. scores: (N,) audited codes."""
    return predict_map(coef, map_features(raw, n_classes, scores))
