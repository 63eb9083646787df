"""The flagged list sized to the errors (issue 44): the estimate of wrong scores from second
reads (Wilson's interval, against scipy) or from calibrated severities (its interval covers
the true count in a simulation with known probabilities), the flag count (as many as estimated,
or the longest top reaching a precision, against brute force), and the severity's one scale
(the calibration map against scikit-learn's weighted logistic regression)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.linear_model import LogisticRegression

from engine.audit.queue import flagging
from engine.audit.queue.calibration import calibrated, fit_map, map_features, predict_map


def test_the_estimate_from_second_reads_is_the_share_that_differ_with_wilson_interval():
    n = 500
    read = np.zeros(n, bool)
    read[:80] = True
    differs = np.zeros(n, bool)
    differs[:12] = True
    differs[300] = True  # not read twice: does not count
    found = flagging.wrong_estimate(np.full(n, 0.5), read, differs)
    ci = binomtest(12, 80).proportion_ci(method="wilson")
    assert found.source == flagging.SECOND_READS
    assert found.count == pytest.approx(n * 12 / 80)
    assert found.low == pytest.approx(n * ci.low) and found.high == pytest.approx(n * ci.high)


def test_the_estimate_from_severities_is_their_sum_and_its_interval_covers_the_truth(monkeypatch):
    # With exact probabilities (no calibration error) the interval is Poisson-binomial's.
    monkeypatch.setattr(flagging, "CALIBRATION_SPREAD", 0.0)
    rng = np.random.default_rng(0)
    p = rng.beta(0.3, 3.0, size=400)
    found = flagging.wrong_estimate(p)
    assert found.source == flagging.SEVERITIES
    assert found.count == pytest.approx(p.sum())
    assert 0 <= found.low <= found.count <= found.high <= p.size
    truth = (rng.random((2000, p.size)) < p).sum(axis=1)
    covered = np.mean((found.low <= truth) & (truth <= found.high))
    assert 0.93 <= covered <= 0.97


def test_the_calibrations_own_error_widens_the_interval_by_its_factor():
    p = np.full(1000, 0.1)
    found = flagging.wrong_estimate(p)
    factor = np.exp(flagging.Z * flagging.CALIBRATION_SPREAD)
    spread = flagging.Z * np.sqrt(1000 * 0.1 * 0.9)
    assert found.low == pytest.approx(max(0.0, 100 / factor - spread))
    assert found.high == pytest.approx(min(1000.0, 100 * factor + spread))


def test_a_sessions_estimate_from_severities_carries_the_calibrations_factor_on_its_sum():
    """One map's error moves every item the same way: 135 items estimated from severities
    (SciEntsBank's shape) get the factor on their sum, not a root-sum-of-squares that shrinks
    it to a few percent; the Poisson-binomial parts still add in quadrature."""
    rng = np.random.default_rng(1)
    items = [rng.beta(0.3, 3.0, size=37) for _ in range(135)]
    found = flagging.combined([flagging.wrong_estimate(p) for p in items])
    whole = np.concatenate(items)
    factor = np.exp(flagging.Z * flagging.CALIBRATION_SPREAD)
    spread = flagging.Z * np.sqrt(np.sum(whole * (1 - whole)))
    assert found.count == pytest.approx(whole.sum())
    assert found.low == pytest.approx(max(0.0, whole.sum() / factor - spread))
    assert found.high == pytest.approx(min(whole.size, whole.sum() * factor + spread))
    # As wide, relatively, as one item's: about a factor 7 each way, never a few percent.
    assert found.high / found.count > 5 and found.count / max(found.low, 1e-9) > 5


def test_a_sessions_estimate_from_second_reads_adds_its_items_intervals_in_quadrature():
    read = np.zeros(200, bool)
    read[:50] = True
    parts = [flagging.wrong_estimate(np.full(200, 0.3), read, np.arange(200) < k) for k in (5, 9)]
    found = flagging.combined(parts)
    assert found.source == flagging.SECOND_READS
    assert found.count == pytest.approx(sum(p.count for p in parts))
    assert found.high - found.count == pytest.approx(np.hypot(*[p.high - p.count for p in parts]))
    assert found.count - found.low == pytest.approx(np.hypot(*[p.count - p.low for p in parts]))
    # Both kinds: the severities' part is one more independent term.
    mixed = flagging.combined([*parts, flagging.wrong_estimate(np.full(100, 0.2))])
    assert mixed.source == "second reads and severities" and mixed.high > found.high


def test_as_many_are_flagged_as_estimated_from_the_top_of_the_queue():
    severity = np.array([0.1, 0.9, 0.3, 0.7, 0.05])
    order = np.argsort(-severity, kind="stable")
    estimate = flagging.WrongEstimate(2.4, 1.0, 4.0, flagging.SEVERITIES)
    mask = flagging.flagged(order, severity, estimate)
    assert mask.tolist() == [False, True, False, True, False]
    everything = flagging.WrongEstimate(9.0, 8.0, 10.0, flagging.SEVERITIES)
    assert flagging.flagged(order, severity, everything).all()


@pytest.mark.parametrize("precision", [0.2, 0.5, 0.8, 0.95])
def test_a_precision_flags_the_longest_top_whose_mean_severity_reaches_it(precision):
    rng = np.random.default_rng(3)
    severity = rng.random(50) ** 3
    order = np.argsort(-severity, kind="stable")
    estimate = flagging.wrong_estimate(severity)
    count = int(flagging.flagged(order, severity, estimate, precision).sum())
    ordered = severity[order]
    longest = max((k for k in range(1, 51) if ordered[:k].mean() >= precision), default=0)
    assert count == longest


def test_the_calibration_map_is_scikit_learns_weighted_logistic_regression():
    rng = np.random.default_rng(1)
    items = [(rng.beta(a, 4, size=150), c) for a, c in ((1, 2), (2, 2), (1, 4), (3, 5), (1, 11))]
    x = np.vstack([map_features(raw, c, np.arange(raw.size) % c) for raw, c in items])
    x = x[:, :4]  # the entropy column repeats log(C) here (every score equally used)
    raw = np.concatenate([raw for raw, _ in items])
    classes = np.repeat([c for _, c in items], 150)
    truth = rng.random(raw.size) < 0.5 * raw + 0.02 * np.log(classes)
    weights = rng.uniform(0.5, 2.0, size=raw.size)
    ours = fit_map(x, truth, weights)
    theirs = LogisticRegression(C=1e8, max_iter=10_000, tol=1e-12).fit(
        x[:, 1:], truth, sample_weight=weights
    )
    np.testing.assert_allclose(ours[1:], theirs.coef_[0], atol=1e-4)
    assert ours[0] == pytest.approx(theirs.intercept_[0], abs=1e-4)
    p = predict_map(ours, x)
    assert np.all((p > 0) & (p < 1))


def test_the_maps_item_features_are_its_mean_logit_scale_and_score_entropy():
    raw = np.array([0.2, 0.5, 0.8, 0.5])
    x = map_features(raw, 3, np.array([0, 0, 1, 1]))
    np.testing.assert_allclose(x[:, 1], np.log(raw / (1 - raw)))
    np.testing.assert_allclose(x[:, 2], np.log(raw / (1 - raw)).mean())
    np.testing.assert_allclose(x[:, 3], np.log(3))
    np.testing.assert_allclose(x[:, 4], np.log(2))  # two scores used, equally often
    np.testing.assert_allclose(x[:, 0], 1.0)


def test_calibrated_severity_is_a_probability_and_keeps_the_items_order():
    raw = np.array([0.01, 0.5, 0.2, 0.99])
    p = calibrated(raw, np.array([0, 1, 1, 3]), 4)
    assert np.all((p > 0) & (p < 1))
    np.testing.assert_array_equal(np.argsort(p), np.argsort(raw))


def test_every_answer_read_twice_gives_the_count_seen_not_an_interval():
    """Mohler reads every answer twice: 1,010 of 2,246 differ is a count, not an estimate."""
    from engine.results.lead import wrong_phrase

    severity = np.full(10, 0.3)
    differs = np.array([True, False] * 5)
    found = flagging.wrong_estimate(severity, np.ones(10, bool), differs)
    assert (found.count, found.low, found.high) == (5.0, 5.0, 5.0)
    assert wrong_phrase(found) == "5 whose reads differ (every answer read twice or more)"
    some = flagging.wrong_estimate(severity, np.arange(10) < 8, differs)
    assert some.low < some.count < some.high and wrong_phrase(some).startswith("about ")
