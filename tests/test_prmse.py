"""PRMSE (engine/audit/prmse.py) against a direct implementation of RSMTool's formulas on a wide
table of human scores (one column per read, NaN where missing)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import simulated_reads

from engine.audit.prmse import session_true_score, true_score_fit
from engine.audit.reads import ItemReads


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


def test_no_prmse_for_nominal_labels_or_single_reads():
    rng = np.random.default_rng(8)
    nominal, _ = simulated_reads(rng, 50, np.array([0.9, 0.7]), np.full(3, 1 / 3), (2,), False)
    assert true_score_fit(nominal, np.zeros(50)) is None
    single = ItemReads(np.arange(10), np.zeros(10), np.arange(10) % 3, 10, 3, True)
    assert true_score_fit(single, np.zeros(10)) is None


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
    expected = (400 * fits[0].prmse.estimate + 100 * fits[1].prmse.estimate) / 500
    assert pooled.estimate == pytest.approx(expected)
    assert pooled.low <= pooled.estimate <= pooled.high
