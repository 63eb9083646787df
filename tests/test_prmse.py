"""PRMSE (engine/audit/reads/prmse.py) against a direct implementation of RSMTool's formulas on a wide
table of human scores (one column per read, NaN where missing); where it is not estimable and
why; its Fieller interval (engine/audit/resample.py ratio_interval) against the inequality it
solves; and, on random designs, PRMSE <= 1 with a bounded interval that contains it."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import read_design, simulated_reads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from engine.audit.reads.item_reads import ItemReads
from engine.audit.reads.prmse import (
    FOLLOWS_READS,
    MIN_READ_TWICE,
    NO_SYSTEM,
    NOMINAL,
    session_true_score,
    true_score_fit,
)
from engine.audit.resample import ratio_interval


def rsmtool_prmse(system: np.ndarray, human: np.ndarray) -> dict[str, float]:
    """RSMTool's true-score evaluation (rsmtool.utils.prmse), written out on a wide table."""
    counts = np.sum(~np.isnan(human), axis=1)
    several = counts > 1
    errors = np.average(np.nanvar(human[several], ddof=1, axis=1), weights=counts[several] - 1)
    means = np.nanmean(human, axis=1)
    total = counts.sum()
    deviations = np.sum(counts * (means - np.nanmean(human)) ** 2)
    true = (deviations - (len(human) - 1) * errors) / (total - np.sum(counts**2) / total)
    mse = (np.sum(counts * (means - system) ** 2) - len(system) * errors) / total
    return {"prmse": 1 - mse / true, "mse": mse, "true": true, "errors": errors}


def wide(reads: ItemReads) -> np.ndarray:
    table = np.full((reads.n_answers, int(reads.rater.max()) + 1), np.nan)
    table[reads.answer, reads.rater] = reads.points[reads.score]
    return table


@pytest.mark.parametrize("seed", range(5))
def test_prmse_equals_rsmtool_formula(seed):
    rng = np.random.default_rng(seed)
    values = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    reads, truth = simulated_reads(rng, 300, np.array([0.9, 0.7, 0.6, 0.8]),
                                   np.full(5, 0.2), (2, 3), values=values, missing=0.6)  # fmt: skip
    system = values[truth] + rng.normal(0, 0.4, 300)
    fit = true_score_fit(reads, system, samples=0)
    expected = rsmtool_prmse(system, wide(reads))
    assert fit.prmse.estimate == pytest.approx(expected["prmse"], abs=1e-10)
    assert fit.mse_true == pytest.approx(expected["mse"], abs=1e-10)
    assert fit.true_variance == pytest.approx(expected["true"], abs=1e-10)
    assert fit.error_variance == pytest.approx(expected["errors"], abs=1e-10)
    assert fit.answers == 300 and 0 < fit.multiple < 300


def test_answers_without_reads_are_left_out():
    rng = np.random.default_rng(7)
    reads, truth = simulated_reads(rng, 200, np.array([0.9, 0.7, 0.8]), np.full(4, 0.25))
    system = truth + rng.normal(0, 0.5, 200)
    padded = ItemReads(reads.answer, reads.rater, reads.score, 230, 4, True)
    with_gap = true_score_fit(padded, np.r_[system, np.zeros(30)], samples=0)
    assert with_gap.prmse.estimate == pytest.approx(true_score_fit(reads, system, 0).prmse.estimate)


def test_no_prmse_for_nominal_labels_single_reads_or_in_sample_scores():
    rng = np.random.default_rng(8)
    nominal, _ = simulated_reads(rng, 50, np.array([0.9, 0.7]), np.full(3, 1 / 3), (2,), False)
    fit = true_score_fit(nominal, np.zeros(50))
    assert fit.prmse is None and fit.reason == NOMINAL
    single = ItemReads(np.arange(10), np.zeros(10), np.arange(10) % 3, 10, 3, True)
    fit = true_score_fit(single, np.zeros(10))
    assert fit.prmse is None and fit.reason.startswith("0 answers read twice")
    ordered, truth = simulated_reads(rng, 50, np.array([0.9, 0.7]), np.full(3, 1 / 3), (2,))
    assert true_score_fit(ordered, None).reason == NO_SYSTEM


def test_fewer_than_the_minimum_of_answers_read_twice_is_not_estimable():
    rng = np.random.default_rng(11)
    for twice in (MIN_READ_TWICE - 1, MIN_READ_TWICE):
        reads, truth = simulated_reads(rng, 200, np.array([0.9, 0.8]), np.full(4, 0.25), (2,))
        # simulated_reads lists every answer's first read, then the second reads.
        keep = (np.arange(reads.answer.size) < 200) | (reads.answer < twice)
        reads = ItemReads(reads.answer[keep], reads.rater[keep], reads.score[keep], 200, 4, True)
        fit = true_score_fit(reads, truth + rng.normal(0, 0.3, 200), samples=100)
        assert fit.multiple == twice
        assert (fit.prmse is None) == (twice < MIN_READ_TWICE)
        if fit.prmse is None:
            assert fit.reason == f"{twice} answers read twice, {MIN_READ_TWICE} needed"


def test_a_true_score_variance_not_above_zero_is_not_estimable():
    # Every answer read 0 and 2 (or 2 and 0): all means equal, the raters' error is everything.
    n = 40
    answer, rater = np.repeat(np.arange(n), 2), np.tile([0, 1], n)
    score = np.tile([0, 2, 2, 0], n // 2)
    reads = ItemReads(answer, rater, score, n, 3, True)
    fit = true_score_fit(reads, np.ones(n), samples=50)
    assert fit.prmse is None and fit.true_variance < 0
    assert fit.reason.startswith("true-score variance -") and fit.reason.endswith("not above 0")


def test_a_true_score_variance_whose_interval_reaches_zero_is_not_estimable():
    # Raters at chance on 30 answers: V_T's estimate is above 0 by sampling, its interval not.
    found = []
    for seed in range(40):
        reads, truth = simulated_reads(np.random.default_rng(seed), 30, np.array([0.3, 0.3]),
                                       np.full(4, 0.25), (2,))  # fmt: skip
        fit = true_score_fit(reads, truth.astype(float), samples=200, seed=seed)
        if fit.true_variance > 0 and fit.prmse is None:
            found.append(fit)
    assert found, "no design of this kind had a positive V_T with an interval reaching 0"
    assert all(fit.reason.startswith("true-score variance unsure, -") for fit in found)


def test_a_system_closer_than_the_raters_error_allows_is_capped_at_one_or_not_estimable():
    # The true score itself: MSE_T's estimate is 0 +- sampling error, below 0 in some samples,
    # where PRMSE counts it as 0.
    below = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        reads, truth = simulated_reads(rng, 200, np.array([0.8, 0.75]), np.full(4, 0.25), (2,))
        fit = true_score_fit(reads, truth.astype(float), samples=200, seed=seed)
        if fit.mse_true < 0:
            below.append(fit)
            assert fit.prmse.estimate == 1.0 and fit.prmse.high == 1.0 and fit.prmse.low < 1.0
    assert below
    # The mean of the reads: MSE_T = -N V_e / M, below 0 throughout its interval.
    means = np.bincount(reads.answer, reads.points[reads.score]) / np.bincount(reads.answer)
    fit = true_score_fit(reads, means, samples=200)
    assert fit.mse_true < 0 and fit.prmse is None and fit.reason == FOLLOWS_READS


def test_fieller_bounds_solve_their_inequality_and_bracket_the_ratio():
    rng = np.random.default_rng(13)
    for _ in range(200):
        mean = rng.normal(0, 1, 2) + np.array([0, 2])
        cov = rng.uniform(0.01, 0.5) * np.array([[1, rng.uniform(-0.9, 0.9)], [0, 1]])
        cov[1, 0] = cov[0, 1]
        draws = rng.multivariate_normal(mean, cov, 300)
        top, bottom = float(mean[0]), float(abs(mean[1]) + 1e-3)
        n = int(rng.integers(5, 400))
        found = ratio_interval(top, bottom, draws, n)
        v_top, c, v_bottom = np.cov(draws, rowvar=False)[[0, 0, 1], [0, 1, 1]]
        t = stats.t.ppf(0.975, n - 1)
        if bottom <= t * np.sqrt(v_bottom):
            assert found is None
            continue
        low, high = found
        assert low <= top / bottom <= high
        for r in (low, high):  # the bounds are where (top - r bottom)^2 = t^2 var
            gap = (top - r * bottom) ** 2 - t**2 * (v_top - 2 * r * c + r * r * v_bottom)
            assert gap == pytest.approx(0, abs=1e-8 * (1 + top**2 + r * r * bottom**2))


def test_a_better_system_has_a_higher_prmse_and_the_session_weights_items_by_answers():
    rng = np.random.default_rng(9)
    reads, truth = simulated_reads(rng, 400, np.array([0.8, 0.7, 0.75]), np.full(4, 0.25))
    close, far = (truth + rng.normal(0, s, 400) for s in (0.3, 1.0))
    assert (
        true_score_fit(reads, close, 0).prmse.estimate
        > true_score_fit(reads, far, 0).prmse.estimate
    )
    other, truth2 = simulated_reads(rng, 100, np.array([0.8, 0.7, 0.75]), np.full(4, 0.25))
    fits, pooled = session_true_score([reads, other], [close, truth2 + 0.1], samples=50)
    weights = np.array([400, 100])
    mse = np.array([f.mse_true for f in fits]) @ weights
    true = np.array([f.true_variance for f in fits]) @ weights
    assert pooled.prmse.estimate == pytest.approx(1 - mse / true)
    assert pooled.answers == 500 and pooled.multiple == fits[0].multiple + fits[1].multiple
    assert pooled.prmse.low <= pooled.prmse.estimate <= pooled.prmse.high <= 1


def test_the_session_pools_items_too_small_for_their_own_prmse():
    rng = np.random.default_rng(14)
    items, systems = [], []
    for j in range(12):  # Mohler-sized items: 15 answers, each read twice
        reads, truth = simulated_reads(rng, 15, np.array([0.85, 0.8]), np.full(4, 0.25), (2,),
                                       name=f"item {j}")  # fmt: skip
        items.append(reads)
        systems.append(truth + rng.normal(0, 0.5, 15))
    fits, pooled = session_true_score(items, systems, samples=200)
    assert all(f.prmse is None and f.reason == "15 answers read twice, 20 needed" for f in fits)
    assert pooled.prmse is not None and pooled.multiple == 180
    assert pooled.prmse.low <= pooled.prmse.estimate <= pooled.prmse.high <= 1
    _, none = session_true_score(items, [None] * 12, samples=20)
    assert none.prmse is None and none.reason == NO_SYSTEM


# Random designs: item sizes 2-200, 1-4 reads, half points, 0-3, binary, nominal labels; a
# system from the truth's neighbourhood to far off.
DESIGNS = st.tuples(
    st.integers(0, 2**31), st.integers(2, 200), st.integers(1, 4),
    st.sampled_from(["half points", "0-3", "binary", "nominal"]), st.floats(0.0, 3.0),
)  # fmt: skip
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _system(reads: ItemReads, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    means = np.bincount(reads.answer, reads.points[reads.score], reads.n_answers)
    count = np.maximum(np.bincount(reads.answer, minlength=reads.n_answers), 1)
    return means / count + rng.normal(0, noise, reads.n_answers)


def _check(fit) -> None:
    if fit.prmse is None:
        assert fit.reason
        return
    assert not fit.reason and fit.multiple >= MIN_READ_TWICE and fit.true_variance > 0
    interval = fit.prmse
    assert np.isfinite([interval.estimate, interval.low, interval.high]).all()
    assert interval.low <= interval.estimate <= interval.high <= 1.0


@PROPERTY
@given(st.lists(DESIGNS, min_size=1, max_size=3))
def test_prmse_is_at_most_one_with_a_bounded_interval_containing_it_or_not_estimable(designs):
    items, systems = [], []
    for seed, n, reads, scale, noise in designs:
        item, _ = read_design(seed, n, reads, scale)
        items.append(item)
        systems.append(_system(item, noise, seed))
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # no overflow, no 0 / 0
        fits, pooled = session_true_score(items, systems, samples=30, seed=1)
    for fit in (*fits, pooled):
        _check(fit)
