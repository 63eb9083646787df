"""PRMSE: how well a system score predicts the true score that the human reads measure with
error (RSMTool's true-score evaluation, Loukina et al. 2020), where some answers are read twice.

Over the answers with at least one read, with n_u reads of mean h_u (in points), N answers,
M = sum_u n_u reads and h the mean of all reads:

    V_e   = sum_{n_u > 1} (n_u - 1) s_u^2 / sum_{n_u > 1} (n_u - 1)     (s_u^2: the variance,
            ddof 1, of answer u's reads: the variance of human errors)
    V_T   = (sum_u n_u (h_u - h)^2 - (N - 1) V_e) / (M - sum_u n_u^2 / M)  (true-score variance)
    MSE_T = (sum_u n_u (h_u - y_u)^2 - N V_e) / M                           (y_u: system score)
    PRMSE = 1 - max(MSE_T, 0) / V_T

as rsmtool.utils.prmse computes them, except that an MSE_T below 0 counts as 0 (it is an
unbiased estimate of a mean square, below 0 only by sampling error or when the system was
fitted to these reads), so PRMSE <= 1. Below 0 it is a figure too: the system predicts the
true score worse than the item's mean score would.

The figure is *not estimable*, with its reason, when V_T cannot be told from 0: fewer than
MIN_READ_TWICE answers read twice, V_T <= 0, or V_T's interval (V_T +- t x its bootstrap SD)
reaching 0; or when MSE_T's interval lies below 0 (the scores follow the reads' own errors, so
were fitted to them). Otherwise its interval is Fieller's for the ratio MSE_T / V_T (`ratio_interval`),
which is bounded and contains the estimate exactly when V_T's interval excludes 0; this is
why the rule is that one. Nominal labels have no points, so no PRMSE; a system fitted to the
reads (in-sample scores) gives none either (its errors are not independent of the reads').

The session's PRMSE pools the items' MSE_T and V_T, each weighted by the item's answers N_j:
1 - max(sum_j N_j MSE_T,j, 0) / sum_j N_j V_T,j over the items with ordered scores, a system
and an answer read twice (the share of the items' true-score variance the system predicts;
each item's V_T is an unbiased estimate, so items too small for their own PRMSE still count),
under the same rule and interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.audit.intervals import Interval
from engine.audit.reads.item_reads import ItemReads
from engine.audit.resample import answer_weights, bootstrap_interval, ratio_interval

# Answers read twice below which V_T (so PRMSE) is not estimated. With two reads per answer
# and normal errors, V_T's coefficient of variation is sqrt((2 (1 + l/2)^2 + l^2 / 2) / n),
# l = V_e / V_T; its 95% interval excludes 0 (CV < 1 / 1.96) from n = 8 when raters never err,
# 12 at a single read's reliability V_T / (V_T + V_e) of .7 and 20 at .5. 20 is also the
# shared answers below which a rater pair's figures are too few to judge (agreement.TOO_FEW).
MIN_READ_TWICE = 20

NOMINAL = "nominal labels have no points"
NO_SYSTEM = "no cross-fitted scores: in-sample scores were fitted to these reads"
FOLLOWS_READS = "scores closer to the reads than their raters' error allows: fitted to them"


def too_few(multiple: int) -> str:
    return f"{multiple} answers read twice, {MIN_READ_TWICE} needed"


@dataclass(frozen=True)
class TrueScoreFit:
    """PRMSE with its interval, None where not estimable (`reason` says why; "" otherwise); the
    error and true-score variances and MSE_T behind it (NaN where there are none); answers:
    those with at least one read; multiple: those with two or more."""

    prmse: Interval | None
    reason: str
    mse_true: float
    true_variance: float
    error_variance: float
    answers: int
    multiple: int


def not_estimable(reason: str, answers: int = 0, multiple: int = 0) -> TrueScoreFit:
    nan = float("nan")
    return TrueScoreFit(None, reason, nan, nan, nan, answers, multiple)


@dataclass(frozen=True)
class _Sums:
    """An item's point figures (mse, true, error) and their bootstrap draws (B, 2) of (mse,
    true); answers with reads and those read twice."""

    point: tuple[float, float, float]
    draws: np.ndarray
    answers: int
    multiple: int


def _three(values: np.ndarray) -> tuple[float, float, float]:
    """A `_Sums.point` from an array of its three figures."""
    first, second, third = (float(x) for x in values)
    return first, second, third


def _answer_sums(reads: ItemReads) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n_u, h_u, (n_u - 1) s_u^2) per answer."""
    points = reads.points[reads.score]
    n = np.bincount(reads.answer, minlength=reads.n_answers).astype(np.float64)
    total = np.bincount(reads.answer, weights=points, minlength=reads.n_answers)
    mean = np.divide(total, n, out=np.zeros_like(total), where=n > 0)
    squares = np.bincount(
        reads.answer, weights=(points - mean[reads.answer]) ** 2, minlength=reads.n_answers
    )
    return n, mean, squares


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """top / bottom, NaN where bottom is 0 (a draw without an answer read twice)."""
    return np.divide(top, bottom, out=np.full(np.shape(top), np.nan), where=bottom != 0)


def _figures(weights: np.ndarray, n, mean, squares, system) -> np.ndarray:
    """(b, 3): MSE_T, V_T and V_e (module docstring) for answer weights (b, N)."""
    multiple = np.where(n > 1, weights, 0.0)
    error = _ratio(np.sum(multiple * squares, axis=1), np.sum(multiple * (n - 1), axis=1))
    answers = np.sum(weights, axis=1)
    reads = np.sum(weights * n, axis=1)
    grand = np.sum(weights * n * mean, axis=1) / reads
    spread = np.sum(weights * n * (mean - grand[:, None]) ** 2, axis=1)
    true = _ratio(spread - (answers - 1) * error, reads - np.sum(weights * n**2, axis=1) / reads)
    mse = (np.sum(weights * n * (mean - system) ** 2, axis=1) - answers * error) / reads
    return np.stack([mse, true, error], axis=1)


def _item_sums(reads: ItemReads, system: np.ndarray, samples: int, seed) -> _Sums | None:
    """The item's figures and draws; None when no answer is read twice."""
    n, mean, squares = _answer_sums(reads)
    read = n > 0
    if not np.any(n > 1):
        return None
    n, mean, squares = n[read], mean[read], squares[read]
    system = np.asarray(system, dtype=np.float64)[read]
    point = _figures(np.ones((1, n.size)), n, mean, squares, system)[0]
    blocks = [_figures(w, n, mean, squares, system)[:, :2]
              for w in answer_weights(n.size, samples, seed)]  # fmt: skip
    draws = np.concatenate(blocks) if blocks else np.zeros((0, 2))
    return _Sums(_three(point), draws, int(n.size), int(np.sum(n > 1)))


def _fit(sums: _Sums, n: float, level: float) -> TrueScoreFit:
    """PRMSE from MSE_T and V_T with their draws over n answers, or why it is not estimable."""
    mse, true, error = sums.point
    counts = (sums.answers, sums.multiple)
    if sums.multiple < MIN_READ_TWICE:
        return not_estimable(too_few(sums.multiple), *counts)
    if not (np.isfinite(true) and true > 0):
        return TrueScoreFit(None, f"true-score variance {true:.3g}, not above 0", mse, true,
                            error, *counts)  # fmt: skip
    prmse = 1.0 - max(mse, 0.0) / true
    if sums.draws.shape[0] < 2:  # no bootstrap asked for: the estimate alone
        return TrueScoreFit(Interval(prmse, np.nan, np.nan, level), "", mse, true, error, *counts)
    bounds = ratio_interval(mse, true, sums.draws, n, level)
    if bounds is None:
        band = bootstrap_interval(true, sums.draws[:, 1], n, level, np.inf, -np.inf)
        reason = f"true-score variance unsure, {band.low:.3g} to {band.high:.3g}"
        return TrueScoreFit(None, reason, mse, true, error, *counts)
    if bounds[1] < 0:
        return TrueScoreFit(None, FOLLOWS_READS, mse, true, error, *counts)
    # PRMSE = 1 - max(R, 0) falls as the ratio R = MSE_T / V_T rises.
    low, high = 1.0 - max(bounds[1], 0.0), 1.0 - max(bounds[0], 0.0)
    interval = Interval(prmse, min(low, prmse), max(high, prmse), level)
    return TrueScoreFit(interval, "", mse, true, error, *counts)


def _item_fit(reads: ItemReads, system, samples: int, seed, level: float):
    """(fit, sums or None: the figures the session pools)."""
    answers = int(np.sum(reads.reads_per_answer() > 0))
    multiple = int(np.sum(reads.reads_per_answer() > 1))
    if not reads.ordered:
        return not_estimable(NOMINAL, answers, multiple), None
    if system is None:
        return not_estimable(NO_SYSTEM, answers, multiple), None
    sums = _item_sums(reads, system, samples, seed)
    if sums is None:
        return not_estimable(too_few(0), answers, 0), None
    return _fit(sums, sums.answers, level), sums


def true_score_fit(
    reads: ItemReads, system: np.ndarray | None, samples: int = 200, seed=0, level: float = 0.95
) -> TrueScoreFit:
    """PRMSE of `system` (N,) scores in points (None: no scores independent of the reads)
    against the item's reads, with Fieller's interval from `samples` bootstrap draws over
    answers, or the reason it is not estimable (module docstring)."""
    return _item_fit(reads, system, samples, seed, level)[0]


def _pooled(found: list[_Sums]) -> _Sums:
    """The items' MSE_T and V_T (point and draws) weighted by their answers."""
    weights = np.array([s.answers for s in found], dtype=np.float64)
    share = weights / weights.sum()
    point = np.array([s.point for s in found])
    draws = np.stack([s.draws for s in found])  # (items, B, 2)
    return _Sums(
        _three(share @ point),
        np.einsum("j,jbk->bk", share, draws),
        int(weights.sum()),
        sum(s.multiple for s in found),
    )


def session_true_score(
    items: list[ItemReads], systems: list[np.ndarray | None], samples: int = 200,
    seed: int = 0, level: float = 0.95,
) -> tuple[list[TrueScoreFit], TrueScoreFit]:  # fmt: skip
    """Each item's fit (item j's draws from the seed sequence [seed, j]) and the session's:
    PRMSE = 1 - max(MSE_T, 0) / V_T with MSE_T and V_T the means of the items' (those with
    ordered scores, a system and an answer read twice) weighted by their answers, in the data
    and in each draw; estimable under the items' rule with the session's answers read twice."""
    found = [
        _item_fit(r, y, samples, [seed, j], level) for j, (r, y) in enumerate(zip(items, systems))
    ]
    fits = [f for f, _ in found]
    usable = [s for _, s in found if s is not None]
    if usable:
        pooled = _pooled(usable)
        return fits, _fit(pooled, pooled.answers, level)
    reasons = {f.reason for f in fits}
    reason = (reasons.pop() if len(reasons) == 1
              else "no item has ordered scores, cross-fitted scores and an answer read twice")  # fmt: skip
    return fits, not_estimable(reason)
