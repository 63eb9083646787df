"""Drift: whether a rater's leniency changes over the scoring session (with `time_column`).

For rater r's scores with a time t_i, the residual u_i = X_i - E_i - a_item (the score against
the model's expectation, the item's effect removed as for leniency) is regressed on the time
scaled to the rater's own span, s_i = (t_i - min t) / (max t - min t), by least squares:
u_i = c + drift s_i + e_i, each score weighted as for leniency (1/sqrt(W_i), see
engine.audit.raters.effects.certainty_weights). `drift` is the change in leniency from the
rater's first score to their last, in score points. Its standard error is
heteroscedasticity-robust (HC3), and the test is drift / se against Student's t with n - 2
degrees of freedom (two-sided); under no drift it holds its level (tests/test_drift.py simulates
it, with and without weights).

Periods: the rater's timed scores split in time order into the most equal-count periods of at
least MIN_PERIOD_SCORES (at most MAX_PERIODS), each with its leniency (mean u minus the same
reference the rater's leniency is centred on) and standard error, so a rater-lead sees the
course, not only the trend.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import stdtr

from engine.audit.raters.fit import robust_slope, weighted_mean_se

MIN_DRIFT_SCORES = 20
MIN_PERIOD_SCORES = 30
MAX_PERIODS = 5
METHOD = (
    "drift: least-squares slope of (score - E - item effect) on time scaled to the rater's "
    "span (points from first to last score), HC3 robust SE, t test with n - 2 df"
)


@dataclass(frozen=True)
class Period:
    """One stretch of a rater's scores in time order: first and last time, scores, leniency."""

    start: float
    end: float
    n: int
    leniency: float
    se: float


@dataclass(frozen=True)
class Drift:
    """A rater's drift: change in points over their span, its SE, t and p, and the periods.
    untimed: scores of the rater without a time (left out)."""

    n: int
    change: float
    se: float
    t: float
    p: float
    periods: list[Period]
    untimed: int = 0


def rater_drift(
    residual: np.ndarray,
    times: np.ndarray,
    reference: float = 0.0,
    weights: np.ndarray | None = None,
) -> Drift | None:
    """The drift of one rater's residuals (N,) over their times (N,; NaN = none), weighted
    least squares when weights (N,) are given; None with fewer than MIN_DRIFT_SCORES timed
    scores or a single distinct time."""
    timed = np.isfinite(times)
    u, when = residual[timed], times[timed]
    if u.size < MIN_DRIFT_SCORES or np.ptp(when) <= 0:
        return None
    span = (when - when.min()) / np.ptp(when)
    change, se = robust_slope(u, span, None if weights is None else weights[timed])
    t = change / se if se > 0 else 0.0
    p = float(2 * stdtr(u.size - 2, -abs(t)))  # two-sided Student t
    w = None if weights is None else weights[timed]
    return Drift(int(u.size), change, se, float(t), p, periods(u, when, reference, w),
                 int((~timed).sum()))  # fmt: skip


def periods(
    u: np.ndarray, when: np.ndarray, reference: float = 0.0, weights: np.ndarray | None = None
) -> list[Period]:
    """Equal-count periods in time order (see the module docstring), each a weighted mean when
    weights are given (as the rater's leniency is); [] when fewer than two fit."""
    w = np.ones(u.size) if weights is None else weights
    count = min(MAX_PERIODS, u.size // MIN_PERIOD_SCORES)
    if count < 2:
        return []
    order = np.argsort(when, kind="stable")
    out = []
    for part in np.array_split(order, count):
        mean, se = weighted_mean_se(u[part], w[part])
        out.append(Period(float(when[part].min()), float(when[part].max()), int(part.size),
                          mean - reference, se))  # fmt: skip
    return out
