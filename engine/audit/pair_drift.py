"""Drift from co-raters: where a rater's timed reads were also read by co-raters, the difference
between the rater's read and the co-raters' reads of the same answer, over the rater's time,
says whether the rater's leniency changed, with no model in between.

For each timed read i of rater r whose answer has other reads, y_i = x_i - mean_j (x_j - c_j)
over the answer's other named reads j (c_j the co-rater's paired leniency,
rater_pairs.least_squares, so a co-rater's constant leniency does not add to the noise). y is
regressed on the time scaled to the span of the rater's audited timed scores (the span the
model's drift, engine.audit.drift, is measured over, so both are the change in points from the
rater's first score to their last): the slope and its HC3 standard error (rater_fit.robust_slope).
One value per read, so an answer read three times does not count twice. A co-rater's own drift
is noise here, not a trend, as long as who reads an answer second does not follow the first
read's time.

Combined with the model's drift by inverse variance (rater_pairs.weigh, as leniency is; a slope
has no arbitrary origin, so nothing is moved first) where the paired figure has at least
MIN_DRIFT_PAIRS reads and a positive, finite standard error. Without co-raters' timed pairs
the model's drift stands unchanged.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import t as student_t

from engine.audit.drift import MIN_DRIFT_SCORES, Drift
from engine.audit.rater_fit import robust_slope
from engine.audit.rater_pairs import CoReads, least_squares, weigh

# A rater needs this many timed reads with co-raters' reads for a paired drift: the model's
# drift needs as many scores (drift.MIN_DRIFT_SCORES); below it an HC3 slope's standard error is
# itself too uncertain to weigh by.
MIN_DRIFT_PAIRS = MIN_DRIFT_SCORES


def paired_drift(co: CoReads, names: np.ndarray, start: np.ndarray, span: np.ndarray):
    """(slope, se, m) for each of `names`: the paired drift (points over the rater's span), its
    HC3 standard error and the rater's timed reads with co-reads; slope and se NaN below
    MIN_DRIFT_PAIRS reads. start, span: (R,) the first time and the length of each rater's
    audited timed scores (span <= 0 or NaN: none)."""
    slope = np.full(names.size, np.nan)
    se = np.full(names.size, np.nan)
    m = np.zeros(names.size, dtype=int)
    if not co.timed():
        return slope, se, m
    everyone, _, _, fitted = least_squares(co)
    level = dict(zip(everyone, fitted))
    # Each read as (rater, answer): its time and the co-raters' leniency-corrected reads.
    reads: dict[tuple, list] = {}
    for k in range(len(co)):
        for me, other, sign, when in ((co.a[k], co.b[k], 1.0, co.time_a[k]),
                                      (co.b[k], co.a[k], -1.0, co.time_b[k])):  # fmt: skip
            if np.isfinite(when):
                entry = reads.setdefault((me, int(co.cluster[k])), [when, []])
                entry[1].append(sign * co.diff[k] + level[other])
    by_rater: dict = {}
    for (me, _), (when, values) in reads.items():
        by_rater.setdefault(me, []).append((when, float(np.mean(values))))
    for r, name in enumerate(names):
        points = by_rater.get(name, [])
        m[r] = len(points)
        if m[r] < MIN_DRIFT_PAIRS or not (np.isfinite(span[r]) and span[r] > 0):
            continue
        when, y = np.array(points).T
        slope[r], se[r] = robust_slope(y, (when - start[r]) / span[r])
    return slope, se, m


def combined(drift: Drift | None, slope: float, se: float, m: int) -> Drift | None:
    """The model's drift with the paired one weighed in (see the module docstring); the model's
    alone where the paired figure is missing or has no usable standard error. Its t is tested
    against Student's t with the two fits' residual degrees of freedom."""
    usable = np.isfinite([slope, se, drift.se if drift else np.nan]).all() and se > 0
    if drift is None or not usable or not drift.se > 0:
        return drift
    value, error = weigh(np.array([drift.change]), np.array([drift.se]), np.array([slope]),
                         np.array([se]))  # fmt: skip
    t = float(value[0] / error[0])
    p = float(2 * student_t.sf(abs(t), drift.n + m - 4))
    return Drift(drift.n, float(value[0]), float(error[0]), t, p, drift.periods, drift.untimed,
                 co_reads=m)  # fmt: skip
