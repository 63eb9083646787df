"""The additive fit every rater effect starts from: d = a_item + b_rater + e by least squares; and
the model's variance of a score floored, as the fits that weigh by it take it."""

from __future__ import annotations

import numpy as np


def two_way(
    d: np.ndarray,
    item_of: np.ndarray,
    rater_of: np.ndarray,
    weights: np.ndarray | None = None,
    sweeps: int = 200,
):
    """Least squares d = a_item + b_rater + e (weighted when weights are given) by alternating
    (weighted) means: (a, b, e). Item and rater indices are 0..K-1 and 0..R-1 (np.unique's
    inverse); b is not centred (a absorbs the mean)."""
    w = np.ones(d.size) if weights is None else weights
    n_rater = np.bincount(rater_of, w)
    n_item = np.bincount(item_of, w)
    b = np.zeros(n_rater.size)
    for _ in range(sweeps):
        a = np.bincount(item_of, w * (d - b[rater_of]), minlength=n_item.size) / n_item
        new_b = np.bincount(rater_of, w * (d - a[item_of]), minlength=n_rater.size) / n_rater
        change = np.max(np.abs(new_b - b))
        b = new_b
        if change < 1e-12:
            break
    a = np.bincount(item_of, w * (d - b[rater_of]), minlength=n_item.size) / n_item
    return a, b, d - a[item_of] - b[rater_of]


def floored(variance: np.ndarray) -> np.ndarray:
    """W floored at 1/100 of its median (and above zero): an over-sure model's few scores cannot
    decide a fit that weighs by it."""
    floor = np.median(variance) / 100 if variance.size else 0.0
    return np.maximum(variance, max(floor, 1e-12))
