"""Rater x item bias (FACETS' bias/interaction table): does a rater score one item differently
from how they score the others?

With d_i = X_i - E_i (score minus the model's expected score, in points) split by least squares
into d_i = a_item + b_rater + e_i (engine.audit.raters.table.two_way), the main-effects expectation of
a score is E_i + a_item + b_rater, and for each rater x item cell with at least MIN_CELL_SCORES
scores:

    observed = mean X,  expected = mean (E + a_item + b_rater),
    bias = observed - expected = mean e  (Obs - Exp average, in score points),
    se = sd(e) / sqrt(n) x sqrt((1 - n / n_rater)(1 - n / n_item)),
    t = bias / se  (Student's t, n - 1 degrees of freedom),

n_rater and n_item the rater's and the item's scores: the residuals e are what is left after
fitting a_item and b_rater, which take up part of every cell's own deviation (in a balanced
table of R raters and I items a cell mean of e varies (1 - 1/I)(1 - 1/R) times as much as a
plain mean: the factor above; without it null t's have a standard deviation of about 0.8). A
rater who scored a single item has no bias to show there (it is their leniency).

A cell is listed when |t| >= BIAS_T and |bias| >= BIAS_POINTS (engine.audit.raters.verdicts
holds the thresholds and tests/benchmarks/bench_raters.py shows how they were set). Under no
interaction t is close to N(0, 1) (tests/test_rater_bias.py simulates it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import stdtr

MIN_CELL_SCORES = 10


@dataclass(frozen=True)
class BiasCell:
    """One rater x item cell: scores, observed and expected averages, bias (points), se, t, p,
    and whether it is beyond the rule (`listed`)."""

    rater: str
    item: str
    n: int
    observed: float
    expected: float
    bias: float
    se: float
    t: float
    p: float
    listed: bool


def bias_cells(
    value: np.ndarray,
    expected: np.ndarray,
    residual: np.ndarray,
    rater: np.ndarray,
    item: np.ndarray,
    item_names: list[str],
    is_listed,
) -> list[BiasCell]:
    """Every cell with enough scores. value, expected, residual (e of the two-way fit): (N,);
    rater: (N,) names; item: (N,) item indices into item_names; is_listed(bias, t) -> bool.
    Sorted by |t|, largest first."""
    cells = []
    per_item = np.bincount(item)
    for name in np.unique(rater):
        mine = rater == name
        for k in np.unique(item[mine]):
            cell = mine & (item == k)
            n = int(cell.sum())
            share = (1 - n / mine.sum()) * (1 - n / per_item[k])
            if n < MIN_CELL_SCORES or share <= 0:
                continue
            e = residual[cell]
            bias = float(e.mean())
            se = float(e.std(ddof=1) / np.sqrt(n) * np.sqrt(share))
            t = bias / se if se > 0 else 0.0
            p = float(2 * stdtr(n - 1, -abs(t)))  # two-sided Student t
            observed = float(value[cell].mean())
            cells.append(
                BiasCell(str(name), str(item_names[k]), n, observed, observed - bias, bias, se,
                         float(t), p, bool(is_listed(bias, t)))
            )  # fmt: skip
    cells.sort(key=lambda c: (-abs(c.t), c.rater, c.item))
    return cells
