"""Bootstrap draws that resample answers, and the intervals made from them.

Every agreement figure of a multi-read session is a function of per-answer totals (a pair's
confusion cells, an answer's coincidences, its reads' sums), so a draw is a vector of answer
multiplicities and the figure's totals in that draw are the multiplicity-weighted sums. Draws
come in blocks so that 40,000 answers x 200 draws never sit in memory at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from engine.audit.intervals import LEVEL, Interval

if TYPE_CHECKING:
    from scipy import sparse

# Draws per block: 64 x 40,000 answers of float64 is 20 MB.
BLOCK = 64


def answer_weights(n_answers: int, samples: int, seed) -> Iterator[np.ndarray]:
    """Blocks (b, N) of bootstrap multiplicities: each row counts how often each of the N
    answers was drawn, N draws with replacement. The same seed gives the same draws."""
    rng = np.random.default_rng(seed)
    for start in range(0, samples, BLOCK):
        size = min(BLOCK, samples - start)
        picks = rng.integers(0, max(n_answers, 1), size=(size, n_answers))
        picks += np.arange(size)[:, None] * n_answers
        counts = np.bincount(picks.ravel(), minlength=size * n_answers)
        yield counts.reshape(size, n_answers).astype(np.float64)


def weighted_totals(per_answer: sparse.csr_matrix, weights: np.ndarray) -> np.ndarray:
    """(b, F) totals of the (N, F) per-answer contributions under each row of weights (b, N).
    A sparse product sums in a fixed order (no threaded BLAS), so results repeat exactly."""
    return np.asarray((per_answer.T @ weights.T).T)


@lru_cache(maxsize=4096)
def _student_quantile(n: float, level: float) -> float:
    """t_{n-1} at the upper tail of `level` (the normal quantile for n <= 1)."""
    # scipy.special's quantiles are scipy.stats' (t.ppf, norm.ppf), without its second-long import.
    from scipy.special import ndtri, stdtrit

    upper = 1 - (1 - level) / 2
    return float(stdtrit(n - 1, upper) if n > 1 else ndtri(upper))


def bootstrap_interval(
    estimate: float,
    draws: np.ndarray,
    n: float,
    level: float = LEVEL,
    ceiling: float = 1.0,
    floor: float = -1.0,
) -> Interval:
    """estimate +- t_{n-1} x the bootstrap standard error (the draws' sd), kept within the
    figure's range [floor, ceiling] (kappa, QWK and alpha lie in [-1, 1]); NaN draws ignored, NaN
    bounds with fewer than two finite draws. An estimate more than rounding outside the range
    is a caller's error (ValueError): clipping the bounds would leave it outside its interval.

    Why not the percentile interval: over n = 30-330 answers per figure in
    tests/benchmarks/bench_agreement_coverage.py, percentiles (plain or expanded for small n)
    covered kappa and QWK 91-93% of the time, this interval 93-95%; and a percentile interval
    of a skewed statistic can miss its own estimate."""
    if np.isfinite(estimate) and not floor - 1e-9 <= estimate <= ceiling + 1e-9:
        raise ValueError(f"estimate {estimate} outside its range [{floor}, {ceiling}]")
    # Rounding leaves a QWK of -1 at -1 - 4e-16: the figure is on its bound.
    estimate = float(np.clip(estimate, floor, ceiling)) if np.isfinite(estimate) else estimate
    finite = draws[np.isfinite(draws)]
    if finite.size < 2 or not np.isfinite(estimate):
        return Interval(float(estimate), float("nan"), float("nan"), level)
    half = _student_quantile(float(n), level) * float(np.std(finite, ddof=1))
    return Interval(
        float(estimate),
        float(max(estimate - half, floor)),
        float(min(estimate + half, ceiling)),
        level,
    )


def ratio_interval(
    top: float, bottom: float, draws: np.ndarray, n: float, level: float = LEVEL
) -> tuple[float, float] | None:
    """Fieller's interval for the ratio top / bottom, from the bootstrap covariance of
    (top, bottom) in `draws` (B, 2) (rows with a NaN left out) and t_{n-1}: the ratios R with
    (top - R bottom)^2 <= t^2 var(top - R bottom). It is a bounded interval, which contains
    top / bottom, exactly when bottom's own interval (bottom +- t sd) excludes 0; None
    otherwise (then no finite bounds exist at this level) and when bottom <= 0."""
    finite = draws[np.all(np.isfinite(draws), axis=1)]
    if not (np.isfinite(top) and np.isfinite(bottom)) or bottom <= 0 or finite.shape[0] < 2:
        return None
    (v_top, cov), (_, v_bottom) = np.cov(finite, rowvar=False)
    t2 = _student_quantile(float(n), level) ** 2
    a = bottom**2 - t2 * v_bottom
    if a <= 0:
        return None
    b = top * bottom - t2 * cov
    c = top**2 - t2 * v_top
    root = np.sqrt(max(b * b - a * c, 0.0))
    ratio = top / bottom
    # The roots bracket the ratio exactly; rounding must not move a bound past it.
    return float(min((b - root) / a, ratio)), float(max((b + root) / a, ratio))


@lru_cache(maxsize=16)
def _normal_quantile(level: float) -> float:
    from scipy.special import ndtri  # as in _student_quantile

    return float(ndtri(1 - (1 - level) / 2))


def wilson_interval(successes: float, n: float, level: float = LEVEL) -> Interval:
    """The share successes / n with its Wilson score interval (NaN for n = 0)."""
    if not n > 0:
        return Interval(float("nan"), float("nan"), float("nan"), level)
    z = _normal_quantile(level)
    share = successes / n
    centre = (share + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(share * (1 - share) / n + z**2 / (4 * n**2))
    # At a share of 0 or 1 the bound is that share exactly (rounding could leave 1 - 1e-16).
    low = 0.0 if successes <= 0 else max(centre - half, 0.0)
    high = 1.0 if successes >= n else min(centre + half, 1.0)
    return Interval(float(share), float(low), float(high), level)


def weighted_mean(figures: np.ndarray, weights: np.ndarray, axis: int = 0) -> np.ndarray:
    """Mean of `figures` weighted by `weights` along `axis`, figures that are not finite left
    out (NaN where no weight remains)."""
    usable = np.isfinite(figures) & (weights > 0)
    total = np.sum(np.where(usable, weights, 0.0), axis=axis)
    summed = np.sum(np.where(usable, weights, 0.0) * np.where(usable, figures, 0.0), axis=axis)
    return np.divide(summed, total, out=np.full(np.shape(total), np.nan), where=total > 0)
