"""Which scores to look at first: the severity of each response's score under the fitted model,
and the flags (the model prefers another score)."""

from __future__ import annotations

import numpy as np


def severity(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """1 - p(human score), in [0, 1] (a candidate the severity benchmark compares)."""
    return 1.0 - proba[np.arange(scores.shape[0]), scores]


def margin_severity(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """max_{c != x_i} p_ic - p_{i, x_i}, in [-1, 1].

    This is the severity parm ships (chosen by tests/benchmarks/bench_severity.py): it is positive
    exactly when the model prefers another score to the human one, so the flagged responses are
    the ones with positive severity, and it ranks them by how clearly the model prefers another.
    proba: (N, C+1); scores: (N,) codes. Returns (N,).
    """
    rows = np.arange(scores.shape[0])
    chosen = proba[rows, scores]
    others = proba.copy()
    others[rows, scores] = -np.inf
    return others.max(axis=1) - chosen


def flags(predicted: np.ndarray, scores: np.ndarray) -> np.ndarray:
    return predicted != scores


def queue_order(severity: np.ndarray, flagged: np.ndarray) -> np.ndarray:
    """The review queue: flagged responses first, most severe first; then the rest by severity."""
    return np.lexsort((-severity, ~flagged))
