"""Standard errors of the PARM parameters beyond the sandwich that `fit` computes."""

from __future__ import annotations

import numpy as np

from engine.model.pseudo_likelihood import fit


def bootstrap_fit_se(
    t: np.ndarray,
    s: np.ndarray,
    scores: np.ndarray,
    class_weight: str | None,
    samples: int,
    seed: int = 0,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Bootstrap standard errors (3C,) of theta: refit on responses (T_i, S_i, x_i) resampled with
    replacement; the features are held fixed, as the sandwich assumes."""
    rng = np.random.default_rng(seed)
    n = scores.shape[0]
    thetas = []
    for _ in range(samples):
        pick = rng.integers(0, n, size=n)
        thetas.append(fit(t[pick], s[pick], scores[pick], class_weight, start, with_se=False).theta)
    return np.std(np.array(thetas), axis=0, ddof=1)
