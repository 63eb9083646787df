"""PRMSE: how well a system score predicts the true score that the human reads measure with
error (RSMTool's true-score evaluation, Loukina et al. 2020), where some answers are read twice.

Over the answers with at least one read, with n_u reads of mean h_u (in points), N answers,
M = sum_u n_u reads and h the mean of all reads:

    V_e   = sum_{n_u > 1} (n_u - 1) s_u^2 / sum_{n_u > 1} (n_u - 1)     (s_u^2: the variance,
            ddof 1, of answer u's reads: the variance of human errors)
    V_T   = (sum_u n_u (h_u - h)^2 - (N - 1) V_e) / (M - sum_u n_u^2 / M)  (true-score variance)
    MSE_T = (sum_u n_u (h_u - y_u)^2 - N V_e) / M                           (y_u: system score)
    PRMSE = 1 - MSE_T / V_T

as rsmtool.utils.prmse computes them. Nominal labels have no points, so no PRMSE.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.audit.intervals import Interval
from engine.audit.reads import ItemReads
from engine.audit.resample import answer_weights, bootstrap_interval, weighted_mean


@dataclass(frozen=True)
class TrueScoreFit:
    """PRMSE with its interval; the error and true-score variances and MSE_T behind it; answers:
    those with at least one read; multiple: those with two or more."""

    prmse: Interval
    mse_true: float
    true_variance: float
    error_variance: float
    answers: int
    multiple: int


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


def _figures(weights: np.ndarray, n, mean, squares, system) -> dict[str, np.ndarray]:
    """The module docstring's figures (b,) for answer weights (b, N) (1 everywhere: the data)."""
    multiple = np.where(n > 1, weights, 0.0)
    error = np.sum(multiple * squares, axis=1) / np.sum(multiple * (n - 1), axis=1)
    answers = np.sum(weights, axis=1)
    reads = np.sum(weights * n, axis=1)
    grand = np.sum(weights * n * mean, axis=1) / reads
    spread = np.sum(weights * n * (mean - grand[:, None]) ** 2, axis=1)
    true = (spread - (answers - 1) * error) / (reads - np.sum(weights * n**2, axis=1) / reads)
    mse = (np.sum(weights * n * (mean - system) ** 2, axis=1) - answers * error) / reads
    return {"prmse": 1.0 - mse / true, "mse": mse, "true": true, "error": error}


def _item_fit(reads: ItemReads, system, samples: int, seed, level: float):
    """(fit or None, the fit's PRMSE draws (B,), the draws' answer counts (B,))."""
    n, mean, squares = _answer_sums(reads)
    read = n > 0
    if not reads.ordered or not np.any(n > 1):
        return None, np.full(samples, np.nan), np.zeros(samples)
    n, mean, squares = n[read], mean[read], squares[read]
    system = np.asarray(system, dtype=np.float64)[read]
    with np.errstate(invalid="ignore", divide="ignore"):
        point = _figures(np.ones((1, n.size)), n, mean, squares, system)
        blocks = [(_figures(w, n, mean, squares, system)["prmse"], w.sum(axis=1))
                  for w in answer_weights(n.size, samples, seed)]  # fmt: skip
    draws = np.concatenate([b[0] for b in blocks]) if blocks else np.zeros(0)
    answers = np.concatenate([b[1] for b in blocks]) if blocks else np.zeros(0)
    fit = TrueScoreFit(
        bootstrap_interval(point["prmse"][0], draws, n.size, level),
        float(point["mse"][0]),
        float(point["true"][0]),
        float(point["error"][0]),
        int(n.size),
        int(np.sum(n > 1)),
    )
    return fit, draws, answers


def true_score_fit(
    reads: ItemReads, system: np.ndarray, samples: int = 200, seed=0, level: float = 0.95
) -> TrueScoreFit | None:
    """PRMSE of `system` (N,) scores in points against the item's reads, with a bootstrap
    interval over answers (t x the draws' SD) (`samples` draws). None for nominal labels or when no
    answer has two reads."""
    return _item_fit(reads, system, samples, seed, level)[0]


def session_true_score(
    items: list[ItemReads], systems: list[np.ndarray], samples: int = 200, seed: int = 0,
    level: float = 0.95,
) -> tuple[list[TrueScoreFit | None], Interval | None]:  # fmt: skip
    """Each item's fit (item j's draws from the seed sequence [seed, j]) and the session's
    PRMSE: the items' weighted by their answers with reads, in the data and in each draw.
    None for the session when no item has a PRMSE."""
    found = [
        _item_fit(r, y, samples, [seed, j], level) for j, (r, y) in enumerate(zip(items, systems))
    ]
    fits = [f for f, _, _ in found]
    usable = [(f, d, a) for f, d, a in found if f is not None]
    if not usable:
        return fits, None
    point = np.array([f.prmse.estimate for f, _, _ in usable])
    weights = np.array([f.answers for f, _, _ in usable], dtype=np.float64)
    draws = np.stack([d for _, d, _ in usable], axis=1)
    answers = np.stack([a for _, _, a in usable], axis=1)
    pooled = float(weighted_mean(point, weights))
    return fits, bootstrap_interval(
        pooled, weighted_mean(draws, answers, axis=1), weights.sum(), level
    )
