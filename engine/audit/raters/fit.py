"""How well a rater's scores fit the model's expectation: infit and outfit mean-squares with their
standardised forms, the spread of the rater's scores against the spread the model expects
(central tendency), the over-use of middle categories, the fair average, and for unordered
labels a disagreement ratio.

For each scored answer i, p_i is the model's predictive distribution over the item's score
values v_k (in points; engine.audit.raters.expectation gives it without the rater's own scores):

    E_i = sum_k v_k p_ik,  W_i = sum_k (v_k - E_i)^2 p_ik,  C_i = sum_k (v_k - E_i)^4 p_ik,
    z_i = (X_i - E_i) / sqrt(W_i),
    outfit = (1/n) sum_i z_i^2,           infit = sum_i (X_i - E_i)^2 / sum_i W_i,

both with expectation 1 when the scores are drawn from p. Standardised (ZSTD) by the
Wilson-Hilferty cube root, as FACETS and Winsteps report them (Wright & Masters 1982, Rating
Scale Analysis, ch. 5): t = (MnSq^(1/3) - 1)(3/q) + q/3, with the model variance of the
mean-square q^2 = sum_i C_i / W_i^2 / n^2 - 1/n (outfit) and sum_i (C_i - W_i^2) / (sum_i W_i)^2
(infit). Above 1 (t > 0): noisier than the model expects; below 1: more predictable.

Central tendency. spread = sd(X) / sqrt(mean_i W_i + var_i(E_i)): the standard deviation of the
rater's scores against the one the model expects for the same answers (the law of total
variance over the rater's answers); below 1 the rater uses a narrower range. middle: the share
of the rater's scores strictly inside their item's scale (neither its lowest nor its highest
score) against its expectation sum_i P_i(middle) / n, with z = (O - E) / sqrt(sum_i P_i(1 - P_i)).
The slope of the residual X_i - E_i on E_i within the rater is negative for a central rater
(under the model where it expects high scores, over where it expects low ones); the verdict
(engine.audit.raters.verdicts) reads the middle, both ends and the slope.

Unordered labels have no points, so no E, W, infit, outfit, spread or fair average; their fit
is disagreement = sum_i (1 - p_i(X_i)) / sum_i (1 - sum_k p_ik^2), the model's improbability of
the rater's scores against its expectation (1 when the scores are drawn from p), with
z = (O - E) / sqrt(sum_i (sum_k p_ik^3 - (sum_k p_ik^2)^2)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# W below this (the model all but certain) is floored, so one answer cannot give an infinite z.
MIN_VARIANCE = 1e-6


@dataclass(frozen=True)
class Moments:
    """Per scored answer (N,): the model's expected score E, variance W and fourth central
    moment C, in points; middle: P(a score strictly inside the item's scale); low, high:
    P(the item's lowest score), P(its highest)."""

    expected: np.ndarray
    variance: np.ndarray
    kurtosis: np.ndarray
    middle: np.ndarray
    low: np.ndarray | None = None
    high: np.ndarray | None = None


def moments(proba: np.ndarray, values: np.ndarray) -> Moments:
    """E, W, C of each row of proba (N, C+1) over the score values (C+1,) in points."""
    expected = proba @ values
    deviation = values[None, :] - expected[:, None]
    variance = np.maximum((deviation**2 * proba).sum(axis=1), MIN_VARIANCE)
    kurtosis = (deviation**4 * proba).sum(axis=1)
    inside = (values > values.min()) & (values < values.max())
    low, high = proba[:, values == values.min()], proba[:, values == values.max()]
    return Moments(expected, variance, kurtosis, proba[:, inside].sum(axis=1),
                   low.sum(axis=1), high.sum(axis=1))  # fmt: skip


@dataclass(frozen=True)
class Fit:
    """Infit and outfit mean-squares and their Wilson-Hilferty standardised forms."""

    infit: float
    infit_z: float
    outfit: float
    outfit_z: float


def wilson_hilferty(mean_square: float, q: float) -> float:
    """The standardised mean-square: (MnSq^(1/3) - 1)(3/q) + q/3 (q its model sd)."""
    if not np.isfinite(q) or q <= 0:
        return 0.0
    return float((np.cbrt(mean_square) - 1.0) * (3.0 / q) + q / 3.0)


def mean_squares(observed: np.ndarray, m: Moments) -> Fit:
    """Infit and outfit of scores `observed` (N,) in points against their moments."""
    n = observed.size
    residual2 = (observed - m.expected) ** 2
    w, c = m.variance, m.kurtosis
    outfit = float(np.mean(residual2 / w))
    infit = float(residual2.sum() / w.sum())
    q_out = np.sqrt(max(np.sum(c / w**2) / n**2 - 1.0 / n, 0.0))
    q_in = np.sqrt(max(np.sum(c - w**2) / w.sum() ** 2, 0.0))
    return Fit(infit, wilson_hilferty(infit, q_in), outfit, wilson_hilferty(outfit, q_out))


@dataclass(frozen=True)
class Spread:
    """Central tendency: spread ratio (1 = as the model expects), the fair average (mean E) and
    the observed mean, the middle categories' observed and expected shares with their z, and
    the slope of the residual on E (negative: central) with its robust standard error."""

    spread: float
    fair_average: float
    observed_average: float
    middle_share: float
    middle_expected: float
    middle_z: float
    slope: float
    slope_se: float


def spread(observed: np.ndarray, m: Moments, inside: np.ndarray) -> Spread:
    """Central-tendency figures of one rater's scores (observed in points; inside: whether each
    score is strictly inside its item's scale)."""
    expected_var = np.mean(m.variance) + np.var(m.expected)
    ratio = float(np.sqrt(np.var(observed) / expected_var)) if expected_var > 0 else np.nan
    p = m.middle
    spread_p = np.sqrt(np.sum(p * (1 - p)))
    middle_z = float((inside.sum() - p.sum()) / spread_p) if spread_p > 0 else 0.0
    slope, se = robust_slope(observed - m.expected, m.expected)
    return Spread(
        ratio, float(np.mean(m.expected)), float(np.mean(observed)), float(np.mean(inside)),
        float(np.mean(p)), middle_z, slope, se,
    )  # fmt: skip


def robust_slope(
    y: np.ndarray, x: np.ndarray, weights: np.ndarray | None = None
) -> tuple[float, float]:
    """Least-squares slope of y on x (with an intercept; weighted when weights are given) and
    its heteroscedasticity-robust standard error (HC3, MacKinnon & White 1985); (0, inf) when x
    does not vary."""
    n = y.size
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    total = w.sum()
    # Sums, not BLAS dot products: a long dot product is split between BLAS threads, and its
    # last bits would then depend on their number (engine.core.machine.kernels).
    xc = x - np.sum(w * x) / total
    yc = y - np.sum(w * y) / total
    sxx = float(np.sum(w * xc**2))
    if n < 3 or sxx <= 1e-12 * max(1.0, float(np.sum(w * x**2))):
        return 0.0, float("inf")
    slope = float(np.sum(w * (xc * yc)) / sxx)
    residual = yc - slope * xc
    leverage = w / total + w * xc**2 / sxx
    inflated = residual / np.maximum(1.0 - leverage, 1e-12)
    return slope, float(np.sqrt(np.sum((w * xc * inflated) ** 2)) / sxx)


def weighted_mean_se(values: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """The weighted mean of values and its robust (sandwich) standard error,
    sqrt(n / (n - 1) sum w_i^2 (x_i - mean)^2) / sum w_i: sd / sqrt(n) with equal weights;
    (mean, inf) for fewer than two values."""
    n = values.size
    mean = float(np.average(values, weights=weights))
    if n < 2:
        return mean, float("inf")
    spread = np.sum((weights * (values - mean)) ** 2) * n / (n - 1)
    return mean, float(np.sqrt(spread) / weights.sum())


def infit_se(observed: np.ndarray, m: Moments) -> float:
    """The empirical (delta-method) standard error of infit = sum r_i^2 / sum W_i:
    sqrt(sum (r_i^2 - infit W_i)^2) / sum W_i, which holds when the model's W is off."""
    residual2 = (observed - m.expected) ** 2
    infit = residual2.sum() / m.variance.sum()
    return float(np.sqrt(np.sum((residual2 - infit * m.variance) ** 2)) / m.variance.sum())


@dataclass(frozen=True)
class Disagreement:
    """Observed over expected improbability of the scores, its model z and its empirical
    (delta-method) standard error."""

    ratio: float
    z: float
    se: float


def disagreement(proba: np.ndarray, codes: np.ndarray) -> Disagreement:
    """sum (1 - p_i(X_i)) / sum (1 - sum_k p_ik^2) over one rater's scores, and its z."""
    return disagreement_parts(
        proba[np.arange(codes.size), codes], np.sum(proba**2, axis=1), np.sum(proba**3, axis=1)
    )


def disagreement_parts(own: np.ndarray, square: np.ndarray, cube: np.ndarray) -> Disagreement:
    """The same from p_i(X_i), sum_k p_ik^2 and sum_k p_ik^3 of each score."""
    observed, expected = 1.0 - own, 1.0 - square
    total = expected.sum()
    variance = np.sum(cube - square**2)
    ratio = float(observed.sum() / total) if total > 0 else np.nan
    z = float((observed.sum() - total) / np.sqrt(variance)) if variance > 0 else 0.0
    se = float(np.sqrt(np.sum((observed - ratio * expected) ** 2)) / total) if total > 0 else 0.0
    return Disagreement(ratio, z, se)
