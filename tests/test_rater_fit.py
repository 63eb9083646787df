"""Rater fit (engine/audit/raters/fit.py): infit and outfit against hand computations and against
scores drawn from the model (expectation 1), Wilson-Hilferty standardisation, the spread and
middle-category figures, the HC3 slope, and the disagreement ratio for unordered labels."""

from __future__ import annotations

import numpy as np
import pytest

from engine.audit.raters.fit import (
    disagreement,
    infit_se,
    mean_squares,
    moments,
    robust_slope,
    spread,
    weighted_mean_se,
    wilson_hilferty,
)

VALUES = np.array([0.0, 1.0, 2.0, 3.0])


def draw(rng, proba):
    """One score code per row of proba."""
    cumulative = np.cumsum(proba, axis=1)
    return (rng.random((proba.shape[0], 1)) > cumulative).sum(axis=1)


def test_moments_of_a_hand_made_distribution():
    p = np.array([[0.2, 0.3, 0.5, 0.0]])
    m = moments(p, VALUES)
    expected = 0.3 + 1.0  # 0*0.2 + 1*0.3 + 2*0.5
    assert m.expected[0] == pytest.approx(expected)
    assert m.variance[0] == pytest.approx(0.2 * 1.3**2 + 0.3 * 0.3**2 + 0.5 * 0.7**2)
    assert m.kurtosis[0] == pytest.approx(0.2 * 1.3**4 + 0.3 * 0.3**4 + 0.5 * 0.7**4)
    assert m.middle[0] == pytest.approx(0.8)  # scores 1 and 2 lie inside 0..3
    assert m.low[0] == pytest.approx(0.2) and m.high[0] == pytest.approx(0.0)


def test_infit_and_outfit_by_hand():
    p = np.array([[0.5, 0.5, 0, 0], [0, 0.5, 0.5, 0], [0, 0, 0.5, 0.5]])
    m = moments(p, VALUES)  # E = 0.5, 1.5, 2.5; W = 0.25 each
    observed = np.array([1.0, 1.0, 3.0])
    fit = mean_squares(observed, m)
    # every residual is 0.5: z^2 = 0.25 / 0.25 = 1
    assert fit.outfit == pytest.approx(1.0) and fit.infit == pytest.approx(1.0)
    uneven = mean_squares(np.array([0.0, 1.0, 3.0]), moments(np.array(
        [[0.9, 0.1, 0, 0], [0, 0.5, 0.5, 0], [0, 0, 0.5, 0.5]]), VALUES))  # fmt: skip
    w = np.array([0.09, 0.25, 0.25])
    r2 = np.array([0.01, 0.25, 0.25])
    assert uneven.outfit == pytest.approx(np.mean(r2 / w))
    assert uneven.infit == pytest.approx(r2.sum() / w.sum())


def test_wilson_hilferty_is_zero_at_one_minus_the_correction_and_monotone():
    q = 0.2
    assert wilson_hilferty(1.0, q) == pytest.approx(q / 3)
    assert wilson_hilferty(1.5, q) > wilson_hilferty(1.2, q) > 0 > wilson_hilferty(0.7, q)
    assert wilson_hilferty(1.3, 0.0) == 0.0


def test_mean_squares_have_expectation_one_and_standardised_forms_near_standard_normal():
    """Scores drawn from the model's own distributions: infit and outfit average 1, their
    Wilson-Hilferty t about N(0, 1)."""
    rng = np.random.default_rng(0)
    fits = []
    for _ in range(400):
        p = rng.dirichlet([1.0, 2.0, 2.0, 1.0], size=150)
        m = moments(p, VALUES)
        fits.append(mean_squares(VALUES[draw(rng, p)], m))
    infit = np.array([f.infit for f in fits])
    outfit = np.array([f.outfit for f in fits])
    assert infit.mean() == pytest.approx(1.0, abs=0.02)
    assert outfit.mean() == pytest.approx(1.0, abs=0.03)
    for z in (np.array([f.infit_z for f in fits]), np.array([f.outfit_z for f in fits])):
        assert abs(z.mean()) < 0.15 and 0.8 < z.std() < 1.2
        assert np.mean(np.abs(z) > 1.96) < 0.09


def test_noisy_scores_raise_infit_and_compressed_scores_lower_it():
    rng = np.random.default_rng(1)
    p = rng.dirichlet([1.0, 2.0, 2.0, 1.0], size=400)
    m = moments(p, VALUES)
    drawn = VALUES[draw(rng, p)]
    noisy = np.where(rng.random(400) < 0.4, rng.integers(0, 4, 400), drawn)
    central = np.clip(drawn, 1, 2)
    assert mean_squares(noisy, m).infit > 1.3 and mean_squares(noisy, m).infit_z > 3
    assert mean_squares(central, m).infit < 0.9


def test_infit_standard_error_matches_its_spread_over_samples():
    rng = np.random.default_rng(2)
    p = rng.dirichlet([1.0, 2.0, 2.0, 1.0], size=200)
    m = moments(p, VALUES)
    samples = [VALUES[draw(rng, p)] for _ in range(500)]
    spread_of_infit = np.std([mean_squares(x, m).infit for x in samples])
    assert np.mean([infit_se(x, m) for x in samples]) == pytest.approx(spread_of_infit, rel=0.15)


def test_spread_and_middle_share_under_the_model_and_for_a_central_rater():
    rng = np.random.default_rng(3)
    p = rng.dirichlet([1.0, 1.0, 1.0, 1.0], size=3000)
    m = moments(p, VALUES)
    drawn = VALUES[draw(rng, p)]
    inside = (drawn > 0) & (drawn < 3)
    model = spread(drawn, m, inside)
    assert model.spread == pytest.approx(1.0, abs=0.03)
    assert abs(model.middle_z) < 3.5 and abs(model.slope / model.slope_se) < 3.5
    assert model.fair_average == pytest.approx(np.mean(m.expected))
    central = np.clip(drawn, 1, 2)
    squeezed = spread(central, m, (central > 0) & (central < 3))
    assert squeezed.spread < 0.85 and squeezed.middle_z > 10
    assert squeezed.slope / squeezed.slope_se < -5
    assert squeezed.observed_average == pytest.approx(central.mean())


def test_robust_slope_matches_the_hc3_sandwich_written_out():
    rng = np.random.default_rng(4)
    x = rng.normal(size=60)
    y = 0.5 * x + rng.normal(size=60) * (1 + np.abs(x))
    design = np.column_stack([np.ones_like(x), x])
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    bread = np.linalg.inv(design.T @ design)
    residual = y - design @ beta
    hat = np.einsum("ij,jk,ik->i", design, bread, design)
    meat = design.T @ (design * (residual / (1 - hat))[:, None] ** 2)
    se = np.sqrt((bread @ meat @ bread)[1, 1])
    slope, slope_se = robust_slope(y, x)
    assert slope == pytest.approx(beta[1]) and slope_se == pytest.approx(se)
    assert robust_slope(y, np.ones_like(x))[1] == np.inf


def test_the_weighted_robust_slope_is_weighted_least_squares_with_an_hc3_sandwich():
    """By matrix algebra: beta = (X'WX)^-1 X'Wy, h_i = w_i x_i'(X'WX)^-1 x_i, meat = sum
    (w_i r_i / (1 - h_i))^2 x_i x_i'."""
    rng = np.random.default_rng(6)
    x = rng.uniform(size=80)
    w = rng.uniform(0.2, 3.0, 80)
    y = 0.3 * x + rng.normal(size=80) / np.sqrt(w)
    design = np.column_stack([np.ones_like(x), x])
    bread = np.linalg.inv(design.T @ (design * w[:, None]))
    beta = bread @ design.T @ (w * y)
    residual = y - design @ beta
    hat = w * np.einsum("ij,jk,ik->i", design, bread, design)
    meat = design.T @ (design * ((w * residual / (1 - hat)) ** 2)[:, None])
    slope, slope_se = robust_slope(y, x, w)
    assert slope == pytest.approx(beta[1])
    assert slope_se == pytest.approx(np.sqrt((bread @ meat @ bread)[1, 1]))
    assert robust_slope(y, x, np.ones(80)) == pytest.approx(robust_slope(y, x))


def test_the_weighted_mean_se_is_sd_over_root_n_with_equal_weights_and_covers_in_simulation():
    rng = np.random.default_rng(8)
    x = rng.normal(size=50)
    assert weighted_mean_se(x, np.ones(50)) == pytest.approx(
        (x.mean(), x.std(ddof=1) / np.sqrt(50))
    )
    covered = []
    for _ in range(2000):
        w = rng.uniform(0.2, 3.0, 80)
        values = 0.4 + rng.standard_t(5, 80) / w  # noise shrinking with the weight
        mean, se = weighted_mean_se(values, w)
        covered.append(abs(mean - 0.4) <= 1.96 * se)
    assert 0.93 <= np.mean(covered) <= 0.965
    assert weighted_mean_se(np.array([1.0]), np.array([2.0]))[1] == np.inf


def test_disagreement_has_expectation_one_under_the_model_and_rises_for_noise():
    rng = np.random.default_rng(5)
    ratios, zs = [], []
    for _ in range(300):
        p = rng.dirichlet([3.0, 1.0, 1.0, 0.5, 0.2], size=120)
        found = disagreement(p, draw(rng, p))
        ratios.append(found.ratio)
        zs.append(found.z)
    assert np.mean(ratios) == pytest.approx(1.0, abs=0.02)
    assert abs(np.mean(zs)) < 0.15 and 0.85 < np.std(zs) < 1.15
    p = rng.dirichlet([3.0, 1.0, 1.0, 0.5, 0.2], size=300)
    codes = np.where(rng.random(300) < 0.4, rng.integers(0, 5, 300), draw(rng, p))
    assert disagreement(p, codes).z > 3
