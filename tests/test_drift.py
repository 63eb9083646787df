"""Drift (engine/audit/raters/drift.py): the trend test holds its level under no drift, finds a planted
one, measures the change over the span in points, and splits the periods by time."""

from __future__ import annotations

import numpy as np
import pytest

from engine.audit.raters.drift import MIN_DRIFT_SCORES, MIN_PERIOD_SCORES, periods, rater_drift


def test_the_trend_test_holds_its_level_under_no_drift():
    """Skewed, unequal-variance residuals at irregular times: p < 0.05 in about 5% of raters."""
    rng = np.random.default_rng(0)
    p = []
    for _ in range(1000):
        n = int(rng.integers(60, 250))
        times = np.sort(rng.exponential(size=n)).cumsum()
        u = (rng.exponential(size=n) - 1.0) * rng.uniform(0.3, 1.0, n)
        p.append(rater_drift(u, times).p)
    assert 0.035 <= np.mean(np.array(p) < 0.05) <= 0.07


def test_the_weighted_trend_test_holds_its_level_under_no_drift():
    """As parm weighs scores (1 / sqrt(W), the residual's spread growing with W): p < 0.05 in
    about 5% of raters."""
    rng = np.random.default_rng(2)
    p = []
    for _ in range(1000):
        n = int(rng.integers(60, 250))
        times = rng.permutation(n) + 1.0
        variance = rng.uniform(0.05, 1.5, n)
        u = (rng.exponential(size=n) - 1.0) * np.sqrt(variance)
        p.append(rater_drift(u, times, weights=1 / np.sqrt(variance)).p)
    assert 0.035 <= np.mean(np.array(p) < 0.05) <= 0.07


def test_a_drift_of_half_a_point_is_measured_in_points_over_the_span():
    rng = np.random.default_rng(1)
    times = np.sort(rng.uniform(0, 500, 1000))
    u = 0.5 * (times - times.min()) / np.ptp(times) + rng.normal(0, 0.6, 1000)
    found = rater_drift(u, times, reference=0.1)
    assert found.change == pytest.approx(0.5, abs=0.2) and found.t > 3 and found.p < 0.01
    assert [p.n for p in found.periods] == [200] * 5
    assert found.periods[-1].leniency > found.periods[0].leniency
    assert found.periods[0].start == times.min() and found.periods[-1].end == times.max()


def test_periods_are_equal_count_slices_in_time_order_with_the_reference_removed():
    u = np.arange(90, dtype=float)
    when = u[::-1].copy()  # the latest time holds the smallest value
    found = periods(u, when, reference=10.0)
    assert len(found) == 90 // MIN_PERIOD_SCORES
    assert found[0].leniency == pytest.approx(np.mean(np.arange(60, 90)) - 10.0)
    assert periods(u[: 2 * MIN_PERIOD_SCORES - 1], when[: 2 * MIN_PERIOD_SCORES - 1]) == []


def test_too_few_timed_scores_or_a_single_time_give_no_drift():
    u = np.zeros(MIN_DRIFT_SCORES + 5)
    times = np.full(u.size, np.nan)
    times[: MIN_DRIFT_SCORES - 1] = np.arange(MIN_DRIFT_SCORES - 1)
    assert rater_drift(u, times) is None
    assert rater_drift(u, np.ones(u.size)) is None
    times[:] = np.arange(u.size)
    times[0] = np.nan
    assert rater_drift(u, times).untimed == 1
