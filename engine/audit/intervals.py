"""Intervals for the agreement figures (accuracy, kappa, QWK) of the selected model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.progress import CHECKS, Reporter
from engine.model.metrics import agreement, headline_agreement, headline_metrics

LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """A point estimate and its interval at `level` (low <= estimate <= high, or NaN bounds)."""

    estimate: float
    low: float
    high: float
    level: float = LEVEL

    def as_dict(self) -> dict:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


def bootstrap_agreement(
    human: np.ndarray,
    predicted: np.ndarray,
    n_classes: int,
    samples: int,
    seed: int = 0,
    reporter: Reporter | None = None,
    level: float = LEVEL,
    ordered: bool = True,
) -> dict[str, Interval]:
    """95% intervals for accuracy, kappa and (ordered scores) QWK, as the agreement between
    raters has them (engine.audit.reads.agreement): accuracy, a share of independent responses, with
    Wilson's score interval; kappa and QWK the estimate +- t_{n-1} x the standard deviation of
    `samples` bootstrap draws, kept within [-1, 1] (resample.bootstrap_interval). Each interval
    contains its estimate, which a percentile interval of a skewed statistic need not.

    Responses are resampled with replacement; the model's predictions are held fixed (the fit is
    not repeated), so the intervals describe sampling of responses, not of the tuning.
    human, predicted: (N,) codes. Returns {metric: Interval}.
    """
    from engine.audit.resample import bootstrap_interval, wilson_interval

    reporter = reporter or Reporter()
    rng = np.random.default_rng(seed)
    n = human.shape[0]
    names = headline_metrics(ordered)
    point = agreement(human, predicted, n_classes, ordered)
    draws = np.empty((samples, len(names)))
    for b in range(samples):
        pick = rng.integers(0, n, size=n)
        draws[b] = headline_agreement(human[pick], predicted[pick], n_classes, ordered)
        reporter.tick(CHECKS, b + 1, samples, f"bootstrap {b + 1} of {samples}")
    return {
        m: wilson_interval(float(np.sum(human == predicted)), n, level)
        if m == "accuracy"
        else bootstrap_interval(point[m], draws[:, j], n, level)
        for j, m in enumerate(names)
    }
