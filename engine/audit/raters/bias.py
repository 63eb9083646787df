"""Rater x item bias (FACETS' bias/interaction table): does a rater score one item differently
from how they score the others?

FACETS measures a rater's severity and an item's difficulty in logits, where a shift moves a
score a lot in the middle of its scale and hardly at all near its ends. Points cannot do that: a
rater half a point lenient overall who, like everyone, gives the top score on an easy item would
seem half a point harsh there (an expected 5.4 on a 0-5 scale). So the effects are fitted on the
model's own scale, linearised: a shift delta of a score's location moves its expected score by
about W_i delta (W_i the model's variance of the score: dE/d delta = Var X for categories whose
probabilities go as exp(x delta)). With d_i = X_i - E_i (score minus the model's expected
score, in points), least squares

    d_i = W_i (alpha_item + beta_rater) + e_i

(engine.audit.raters.additive.two_way on d_i / W_i weighted by W_i^2; W floored at 1/100 of
its median, additive.floored) gives the main-effects expectation of a score,
M_i = E_i + W_i (alpha_item + beta_rater), kept on the item's scale. Real raters differ so:
on Mohler, grader2 minus grader1 averages 0.12 points on the fifth of the answers with the
lowest W and 1.39 on the fifth with the highest (a constant shift fits the differences worse:
sums of squares 3,367 against 2,868). Tried and left: the points expectation clipped to the
scale (bench_raters.py's planted cells, shifted in points, listed 0.78 against 0.75; in the
partial-credit simulation below, without the floor on the spread, t's sd 1.68 and 6% of the
cells listed) and a line in W for each rater and item (0.59 of the planted cells listed: a
rater's line absorbs them). For each rater x item cell with at least MIN_CELL_SCORES scores and
r_i = X_i - M_i:

    observed = mean X,  expected = mean M,
    bias = observed - expected = mean r  (Obs - Exp average, in score points),
    se = max(sd(r), sqrt(mean W)) / sqrt(n) x sqrt((1 - n / n_rater)(1 - n / n_item)),
    t = bias / se  (Student's t, n - 1 degrees of freedom),

n_rater and n_item the rater's and the item's scores: the main effects take up part of every
cell's own deviation (in a balanced table of R raters and I items a cell mean of residuals varies
(1 - 1/I)(1 - 1/R) times as much as a plain mean: the factor above; without it null t's have a
standard deviation of about 0.8). The spread is at least the model's (FACETS' model standard
error): on an item whose scores all sit at the top, the expectation follows them so closely that
the residuals barely vary (Mohler: se 0.004 points, t -101.6). A rater who scored a single item
has no bias to show there (it is their leniency).

A cell is listed when |t| >= BIAS_T and |bias| >= BIAS_POINTS (engine.audit.raters.verdicts
holds the thresholds and tests/benchmarks/bench_raters.py shows how they were set). Under no
interaction t is close to N(0, 1) (tests/test_rater_bias.py simulates it, with scores from a
partial-credit model whose raters are lenient or harsh in logits and items at the scale's top).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import stdtr

from engine.audit.raters.additive import floored, two_way

MIN_CELL_SCORES = 10
# Said where a session has no cell to judge (one item, or every rater on a single item).
NO_CELL = (
    f"no cell to judge (a cell is a rater's {MIN_CELL_SCORES} or more scores of one item, where "
    "the rater scored other items too and other raters scored that item)"
)


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


@dataclass(frozen=True)
class Reads:
    """Every read with a rater (N,): its score and the model's expected score (points), the
    model's variance of it (points^2), its item's lowest and highest score, its rater's name and
    its item's index into `item_names`."""

    value: np.ndarray
    expected: np.ndarray
    variance: np.ndarray
    lowest: np.ndarray
    highest: np.ndarray
    rater: np.ndarray
    item: np.ndarray
    item_names: list[str]


def main_effects(reads: Reads) -> np.ndarray:
    """(N,) each score's main-effects expectation M_i (the module docstring), on its scale."""
    _, rater_of = np.unique(reads.rater, return_inverse=True)
    w = floored(reads.variance)
    alpha, beta, _ = two_way((reads.value - reads.expected) / w, reads.item, rater_of, w**2)
    shifted = reads.expected + w * (alpha[reads.item] + beta[rater_of])
    return np.clip(shifted, reads.lowest, reads.highest)


def bias_cells(reads: Reads, is_listed) -> list[BiasCell]:
    """Every cell with enough scores; is_listed(bias, t) -> bool. Sorted by |t|, largest
    first."""
    residual = reads.value - main_effects(reads)
    cells = []
    per_item = np.bincount(reads.item)
    for name in np.unique(reads.rater):
        mine = reads.rater == name
        for k in np.unique(reads.item[mine]):
            cell = mine & (reads.item == k)
            n = int(cell.sum())
            share = (1 - n / mine.sum()) * (1 - n / per_item[k])
            if n < MIN_CELL_SCORES or share <= 0:
                continue
            r = residual[cell]
            bias = float(r.mean())
            spread = max(float(r.std(ddof=1)), float(np.sqrt(reads.variance[cell].mean())))
            se = spread / np.sqrt(n) * np.sqrt(share)
            t = bias / se if se > 0 else 0.0
            p = float(2 * stdtr(n - 1, -abs(t)))  # two-sided Student t
            observed = float(reads.value[cell].mean())
            cells.append(
                BiasCell(str(name), str(reads.item_names[k]), n, observed, observed - bias, bias,
                         se, float(t), p, bool(is_listed(bias, t)))
            )  # fmt: skip
    cells.sort(key=lambda c: (-abs(c.t), c.rater, c.item))
    return cells
