"""The agreement a rater-lead reports for a session with several reads per answer: per item and
over the session, for each pair of raters, exact and adjacent agreement, Cohen's kappa and QWK;
Krippendorff's alpha over all reads; each with a bootstrap interval that resamples answers.

Pair figures are computed on the answers both raters read, over the item's full scale 0..C as
engine.model.metrics computes them (QWK as scikit-learn's `cohen_kappa_score(labels=range(C+1),
weights="quadratic")`; adjacent: the codes at most one step apart). Adjacent agreement and QWK
need ordered codes and are left out for nominal labels. A pair with fewer than TOO_FEW shared
answers is marked too few; a figure under RSMTool's thresholds (THRESHOLDS) is marked below.

The session's figures ("all"): a pair's figure is the mean of its items' figures weighted by
the answers the pair shared in each item: the pair's items are not pooled into one confusion
table, since chance agreement over several items' mixed score distributions would credit raters
for telling the items apart (for exact and adjacent agreement the weighted mean is the pooled
share). Alpha is Krippendorff's alpha over every answer of the session as one set of units
(alpha.pooled_scale: codes pooled by their value in points, else by label), what the
`krippendorff` package gives for one matrix of every item's answers; its chance disagreement is
that of the session's pooled reads.

Intervals: `samples` bootstrap draws (seeded) resample each item's answers with replacement,
every read of a drawn answer kept; a session draw resamples every item and pools that draw's item
figures as above. Kappa, QWK and alpha: the estimate +- t_{n-1} x the draws' standard deviation
(resample.bootstrap_interval); exact and adjacent agreement: Wilson's score interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from engine.audit.intervals import Interval
from engine.audit.reads.alpha import (
    PooledScale,
    alpha_from_coincidences,
    alpha_levels,
    coincidence_rows,
    pairable,
    pool_coincidences,
    pooled_scale,
)
from engine.audit.reads.item_reads import ItemReads, read_pairs
from engine.audit.resample import (
    answer_weights,
    bootstrap_interval,
    weighted_mean,
    weighted_totals,
    wilson_interval,
)

FIGURES = ("exact", "adjacent", "kappa", "qwk")
NEEDS_ORDER = frozenset({"adjacent", "qwk"})
# RSMTool's thresholds for human-human agreement (Williamson, Xi & Breyer, 2012): a figure
# under its threshold is marked.
THRESHOLDS = {"exact": 0.50, "adjacent": 0.95, "qwk": 0.70}
TOO_FEW = 20
# Shares of shared answers: each shared answer is one independent trial under the resampling of
# answers the bootstrap assumes, so their interval is Wilson's score interval (the bootstrap
# collapses to a point when every shared answer agrees: its percentile interval covered a true
# 99.4% adjacent agreement 31% of the time at 67 shared answers).
SHARES = frozenset({"exact", "adjacent"})
ALL = "all"


def figure_names(ordered: bool) -> tuple[str, ...]:
    return FIGURES if ordered else tuple(f for f in FIGURES if f not in NEEDS_ORDER)


@dataclass(frozen=True)
class PairAgreement:
    """One pair of raters on one item (or `ALL`, the session): n shared answers and each figure
    with its interval."""

    item: str
    rater_a: int
    rater_b: int
    n: int
    figures: dict[str, Interval]

    @property
    def too_few(self) -> bool:
        return self.n < TOO_FEW

    @property
    def below(self) -> tuple[str, ...]:
        """The figures whose estimate is under RSMTool's threshold; none for a pair with too
        few shared answers to judge (one answer of two raters scored apart is not a QWK of 0)."""
        if self.too_few:
            return ()
        return tuple(
            name
            for name, limit in THRESHOLDS.items()
            if name in self.figures and self.figures[name].estimate < limit
        )


@dataclass(frozen=True)
class AlphaAgreement:
    """Krippendorff's alpha of one item (or `ALL`) at each level its scale allows. answers: those
    read at least twice; values: their reads (the pairable values)."""

    item: str
    answers: int
    values: int
    levels: dict[str, Interval]


@dataclass(frozen=True)
class Agreement:
    """Every item's pairs and alpha, then the session's (item `ALL`)."""

    pairs: tuple[PairAgreement, ...]
    alpha: tuple[AlphaAgreement, ...]


def _kappas(flat: np.ndarray, weights: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Weighted kappa (n,) of confusion matrices (n, K, K), as engine.model.metrics._kappa: 1 - sum
    w p_observed / sum w p_expected; with no expected disagreement (both raters gave one and
    the same code) 1 when there is no observed disagreement either, else 0."""
    rows, columns = flat.sum(axis=2), flat.sum(axis=1)
    observed = np.sum(flat * weights, axis=(1, 2)) / total
    expected = np.sum(rows[:, :, None] * columns[:, None, :] * weights, axis=(1, 2)) / total**2
    degenerate = np.where(observed == 0, 1.0, 0.0)
    safe = np.where(expected > 0, expected, 1.0)
    return np.where(expected > 0, 1.0 - observed / safe, degenerate)


def confusion_figures(confusion: np.ndarray, ordered: bool) -> np.ndarray:
    """(..., 4) the FIGURES of confusion matrices (..., K, K) over the codes 0..K-1: NaN where a
    matrix is empty, and for adjacent agreement and QWK when the codes have no order."""
    size = confusion.shape[-1]
    flat = confusion.reshape(-1, size, size).astype(np.float64)
    total = flat.sum(axis=(1, 2))
    grid = np.arange(size)
    gap = np.abs(grid[:, None] - grid[None, :]).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        columns = {
            "exact": np.trace(flat, axis1=1, axis2=2) / total,
            "adjacent": np.sum(flat * (gap <= 1), axis=(1, 2)) / total,
            "kappa": _kappas(flat, (gap > 0).astype(np.float64), total),
            "qwk": _kappas(flat, gap**2 / max((size - 1) ** 2, 1), total),
        }
    unordered = np.full(total.shape, np.nan)
    figures = np.stack(
        [columns[f] if (ordered or f not in NEEDS_ORDER) else unordered for f in FIGURES], axis=1
    )
    figures[total == 0] = np.nan
    return figures.reshape(*confusion.shape[:-2], len(FIGURES))


@dataclass(frozen=True)
class _ItemDraws:
    """One item's point figures and bootstrap draws, before they become intervals."""

    pairs: list[tuple[int, int]]
    n: np.ndarray  # (P,) shared answers
    n_draws: np.ndarray  # (B, P)
    figures: np.ndarray  # (P, F)
    figure_draws: np.ndarray  # (B, P, F)
    answers: int
    values: float
    alpha: np.ndarray  # (L,)
    alpha_draws: np.ndarray  # (B, L)
    coincidences: np.ndarray  # (B + 1, K, K): the data's, then each draw's


def _pair_rows(reads: ItemReads) -> tuple[list[tuple[int, int]], sparse.csr_matrix, np.ndarray]:
    """The rater pairs, the (N, P * K^2) matrix of each answer's confusion cell per pair, and
    the (N, K^2) coincidence rows."""
    found = read_pairs(reads)
    k = reads.n_classes
    groups = found.groups()
    column = np.zeros(found.unit.size, dtype=np.int64)
    for number, (_, _, span) in enumerate(groups):
        column[span] = number * k * k + found.code_a[span] * k + found.code_b[span]
    shape = (reads.n_answers, max(len(groups), 1) * k * k)
    cells = sparse.csr_matrix((np.ones(found.unit.size), (found.unit, column)), shape=shape)
    return [(a, b) for a, b, _ in groups], cells, coincidence_rows(reads, found)


def _item_draws(reads: ItemReads, samples: int, seed) -> _ItemDraws:
    pairs, cells, coincidence = _pair_rows(reads)
    k, levels = reads.n_classes, alpha_levels(reads.ordered)
    # Draw 0 is the data themselves (every answer once); draws 1.. are the bootstrap's.
    blocks = [np.ones((1, reads.n_answers))]
    totals, coincidences = [], []
    for weights in (*blocks, *answer_weights(reads.n_answers, samples, seed)):
        totals.append(weighted_totals(cells, weights))
        coincidences.append(weighted_totals(coincidence, weights))
    confusion = np.concatenate(totals).reshape(-1, max(len(pairs), 1), k, k)[:, : len(pairs)]
    o = np.concatenate(coincidences).reshape(-1, k, k)
    figures = confusion_figures(confusion, reads.ordered)
    alpha = np.stack([alpha_from_coincidences(o, lv, reads.points) for lv in levels], axis=1)
    n = confusion.sum(axis=(2, 3))
    values = pairable(o)
    return _ItemDraws(
        pairs, n[0].astype(int), n[1:], figures[0], figures[1:],
        int(np.sum(reads.reads_per_answer() >= 2)), float(values[0]), alpha[0], alpha[1:], o,
    )  # fmt: skip


def _intervals(names, point, draws, level, n, every=FIGURES) -> dict[str, Interval]:
    """{name: interval} for the `names` among the columns `every` of point (F,) and draws (B, F)
    over n answers: Wilson's for the shares, the bootstrap's (t x its SE) for the rest."""
    found = {}
    for name in names:
        j = every.index(name)
        found[name] = (
            wilson_interval(point[j] * n, n, level)
            if name in SHARES
            else bootstrap_interval(point[j], draws[:, j], n, level)
        )
    return found


def _item_rows(reads: ItemReads, draws: _ItemDraws, level: float):
    names = figure_names(reads.ordered)
    pairs = tuple(
        PairAgreement(reads.name, a, b, int(draws.n[p]),
                      _intervals(names, draws.figures[p], draws.figure_draws[:, p], level,
                                 int(draws.n[p])))
        for p, (a, b) in enumerate(draws.pairs)
    )  # fmt: skip
    levels = alpha_levels(reads.ordered)
    alpha = AlphaAgreement(
        reads.name, draws.answers, int(round(draws.values)),
        _intervals(levels, draws.alpha, draws.alpha_draws, level, draws.answers, levels),
    )  # fmt: skip
    return pairs, alpha


def _session_pairs(items, draws, level) -> tuple[PairAgreement, ...]:
    """Each rater pair over the session: its item figures weighted by shared answers."""
    ordered = all(reads.ordered for reads in items)
    names = figure_names(ordered)
    rows = []
    for pair in sorted({pair for d in draws for pair in d.pairs}):
        parts = [(d, d.pairs.index(pair)) for d in draws if pair in d.pairs]
        n = np.array([d.n[p] for d, p in parts], dtype=float)
        point = np.stack([d.figures[p] for d, p in parts])
        n_draws = np.stack([d.n_draws[:, p] for d, p in parts], axis=1)
        figure_draws = np.stack([d.figure_draws[:, p] for d, p in parts], axis=1)
        pooled = weighted_mean(point, n[:, None])
        pooled_draws = weighted_mean(figure_draws, n_draws[:, :, None], axis=1)
        rater_a, rater_b = pair
        rows.append(PairAgreement(ALL, rater_a, rater_b, int(n.sum()),
                                  _intervals(names, pooled, pooled_draws, level, n.sum())))  # fmt: skip
    return tuple(rows)


def _session_alpha(items, draws, level, scale: PooledScale) -> AlphaAgreement:
    """Alpha over every unit of the session (module docstring), at the levels every item
    allows, its draws from the items' draws summed."""
    levels = alpha_levels(all(reads.ordered for reads in items))
    o = pool_coincidences([d.coincidences for d in draws], scale)
    alpha = np.stack([alpha_from_coincidences(o, lv, scale.points) for lv in levels], axis=1)
    answers = sum(d.answers for d in draws)
    return AlphaAgreement(
        ALL, answers, int(round(pairable(o[:1])[0])),
        _intervals(levels, alpha[0], alpha[1:], level, answers, levels),
    )  # fmt: skip


def agreement(
    items: list[ItemReads], samples: int = 200, seed: int = 0, level: float = 0.95,
    labels: list[tuple[str, ...]] | None = None,
) -> Agreement:  # fmt: skip
    """Every item's pair figures and alpha, then the session's (item `ALL`; see the module
    docstring), each figure with its interval at `level` (module docstring) from `samples`
    draws. Item j's draws use the seed sequence [seed, j], so they do not depend on the other
    items. labels: each item's score labels, which pool the session's alpha where the codes
    have no values in points (alpha.pooled_scale)."""
    draws = [_item_draws(reads, samples, [seed, j]) for j, reads in enumerate(items)]
    pairs, alphas = [], []
    for reads, item_draws in zip(items, draws):
        item_pairs, item_alpha = _item_rows(reads, item_draws, level)
        pairs += item_pairs
        alphas.append(item_alpha)
    pairs += _session_pairs(items, draws, level)
    alphas.append(_session_alpha(items, draws, level, pooled_scale(items, labels)))
    return Agreement(tuple(pairs), tuple(alphas))
