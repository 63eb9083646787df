"""Drift from co-raters (engine/audit/pair_drift.py): simulated double reads with known truth."""

from __future__ import annotations

import numpy as np

from engine.audit.drift import Drift
from engine.audit.pair_drift import MIN_DRIFT_PAIRS, combined, paired_drift
from engine.audit.rater_pairs import co_reads, join


def timed_reads(rng, lenience: np.ndarray, drift: np.ndarray, answers: int, sd: float = 0.6):
    """Answers read by two distinct raters at random, each at a random time in 0..100: a true
    score plus the rater's leniency plus drift x time / 100 plus noise; the second read's time
    is unrecorded on a third of the answers (as in a wide file)."""
    raters = np.array([f"R{j}" for j in range(lenience.size)])
    parts = []
    for k in range(answers):
        who = rng.choice(lenience.size, 2, replace=False)
        when = rng.uniform(0, 100, 2)
        value = rng.integers(0, 4) + lenience[who] + drift[who] * when / 100 + rng.normal(0, sd, 2)
        if k % 3 == 0:
            when[1] = np.nan
        parts.append(co_reads(np.zeros(2, int), raters[who], value, k, when))
    return raters, join(parts)


def test_a_planted_drift_is_found_and_neutral_raters_are_not():
    """Six raters, one drifting 0.8 points over the session (and one lenient, which the co-raters'
    leniency correction takes out): its paired slope is within 3 SE of 0.8 and far from 0; the
    other raters' |z| stay small."""
    rng = np.random.default_rng(3)
    lenience = np.array([0.0, 0.5, 0.0, 0.0, 0.0, 0.0])
    drift = np.array([0.8, 0.0, 0.0, 0.0, 0.0, 0.0])
    raters, co = timed_reads(rng, lenience, drift, 1500)
    start, span = np.zeros(raters.size), np.full(raters.size, 100.0)
    slope, se, m = paired_drift(co, raters, start, span)
    assert np.all(m >= MIN_DRIFT_PAIRS)
    assert abs(slope[0] - 0.8) < 3 * se[0] and slope[0] / se[0] > 5
    # The drifting rater's reads are the others' co-reads: each neutral one takes about a fifth
    # of its drift, against 0.8 for the rater itself.
    assert np.all(np.abs(slope[1:] / se[1:]) < 3)


def test_no_drift_holds_its_level():
    """Over 300 sessions without drift, |z| >= 1.96 in about 5% of the raters' paired slopes."""
    rng = np.random.default_rng(4)
    lenience = np.array([0.3, -0.2, 0.0, 0.0, 0.1])
    z = []
    for _ in range(300):
        raters, co = timed_reads(rng, lenience, np.zeros(5), 120)
        slope, se, _ = paired_drift(co, raters, np.zeros(5), np.full(5, 100.0))
        z.extend((slope / se)[np.isfinite(slope)])
    assert len(z) > 1000
    assert 0.03 <= np.mean(np.abs(z) >= 1.96) <= 0.075


def test_too_few_or_untimed_pairs_give_no_paired_drift():
    """Without times, below MIN_DRIFT_PAIRS timed reads, or with no span: NaN; an untimed
    CoReads leaves the model's drift as it is."""
    rng = np.random.default_rng(5)
    raters, co = timed_reads(rng, np.zeros(4), np.zeros(4), 20)
    slope, se, m = paired_drift(co, raters, np.zeros(4), np.full(4, 100.0))
    assert np.all(m < MIN_DRIFT_PAIRS) and np.all(np.isnan(slope)) and np.all(np.isnan(se))
    untimed = co_reads(np.array([0, 0]), ["A", "B"], np.array([1.0, 2.0]), 0)
    assert np.isnan(paired_drift(untimed, np.array(["A"]), np.zeros(1), np.ones(1))[0][0])
    raters, co = timed_reads(rng, np.zeros(4), np.zeros(4), 400)
    assert np.all(np.isnan(paired_drift(co, raters, np.zeros(4), np.zeros(4))[0]))
    model = Drift(100, 0.6, 0.2, 3.0, 0.003, [])
    assert combined(model, np.nan, np.nan, 0) is model
    assert combined(model, 0.5, np.inf, 30) is model
    assert combined(None, 0.5, 0.2, 30) is None


def test_combined_is_the_inverse_variance_mean():
    """0.6 +- 0.2 and 0.2 +- 0.4: (0.6 x 25 + 0.2 x 6.25) / 31.25 = 0.52, SE 1 / sqrt(31.25)."""
    both = combined(Drift(100, 0.6, 0.2, 3.0, 0.003, [], 4), 0.2, 0.4, 30)
    assert abs(both.change - 0.52) < 1e-12 and abs(both.se - 31.25**-0.5) < 1e-12
    assert abs(both.t - 0.52 * 31.25**0.5) < 1e-12 and both.co_reads == 30 and both.untimed == 4
