"""Rater x item bias cells (engine/audit/raters/bias.py): Obs - Exp by hand, t statistics of null
cells close to N(0, 1), a planted cell found, and cells with too few scores left out."""

from __future__ import annotations

import numpy as np
import pytest

from engine.audit.raters.bias import MIN_CELL_SCORES, bias_cells
from engine.audit.raters.effects import two_way
from engine.audit.raters.verdicts import is_bias_listed


def cells_of(value, expected, rater, item, names=("A", "B", "C")):
    raters, rater_of = np.unique(rater, return_inverse=True)
    _, item_of = np.unique(item, return_inverse=True)
    _, _, residual = two_way(value - expected, item_of, rater_of)
    return bias_cells(value, expected, residual, rater, item_of, list(names), is_bias_listed)


def null_session(rng, raters=6, items=3, n=900, planted=0.0):
    """Scores = expectation + noise, no rater x item interaction (but rater and item effects);
    `planted` points added to rater r0 on item 0."""
    rater = np.array([f"r{k}" for k in rng.integers(0, raters, n)])
    item = rng.integers(0, items, n)
    expected = rng.uniform(0.5, 2.5, n)
    lean = {f"r{k}": 0.1 * k for k in range(raters)}
    value = expected + 0.3 * item + np.array([lean[r] for r in rater]) + rng.normal(0, 0.7, n)
    value += planted * ((rater == "r0") & (item == 0))
    return value, expected, rater, item


def test_interaction_of_a_balanced_two_by_two_table_by_hand():
    """Rater x's item A scores are half a point above everything else: the two-way fit leaves
    +-0.125 in every cell (0.5 / 4), and a rater who scored one item has no cell."""
    d = np.repeat([0.5, 0.0, 0.0, 0.0], 12)
    rater = np.repeat(["x", "x", "y", "y"], 12)
    item = np.repeat([0, 1, 0, 1], 12)
    _, rater_of = np.unique(rater, return_inverse=True)
    _, _, e = two_way(d, item, rater_of)
    np.testing.assert_allclose(e, np.repeat([0.125, -0.125, -0.125, 0.125], 12), atol=1e-9)
    noise = np.tile([0.01, -0.01], 24)
    cells = bias_cells(d + 1, np.ones(48), e + noise, rater, item, ["A", "B"], is_bias_listed)
    by_cell = {(c.rater, c.item): c.bias for c in cells}
    assert by_cell == pytest.approx({("x", "A"): 0.125, ("x", "B"): -0.125, ("y", "A"): -0.125,
                                     ("y", "B"): 0.125})  # fmt: skip
    alone = bias_cells(d, np.zeros(48), e, np.repeat(["x", "x", "z", "z"], 12), np.zeros(48,
                       dtype=int), ["A"], is_bias_listed)  # fmt: skip
    assert alone == []


def test_observed_minus_expected_is_the_cell_mean_of_the_interaction_residual():
    rng = np.random.default_rng(0)
    value, expected, rater, item = null_session(rng)
    cells = cells_of(value, expected, rater, item)
    raters, rater_of = np.unique(rater, return_inverse=True)
    a, b, e = two_way(value - expected, item, rater_of)
    for cell in cells[:5]:
        mine = (rater == cell.rater) & (item == "ABC".index(cell.item))
        assert cell.n == mine.sum()
        assert cell.observed == pytest.approx(value[mine].mean())
        assert cell.bias == pytest.approx(e[mine].mean())
        assert cell.observed - cell.expected == pytest.approx(cell.bias)
        shrink = (1 - mine.sum() / (rater == cell.rater).sum()) * (
            1 - mine.sum() / (item == "ABC".index(cell.item)).sum()
        )
        assert cell.se == pytest.approx(e[mine].std(ddof=1) / np.sqrt(mine.sum() / shrink))


def test_null_cells_have_t_close_to_standard_normal():
    rng = np.random.default_rng(1)
    ts = [c.t for _ in range(60) for c in cells_of(*null_session(rng))]
    ts = np.array(ts)
    assert ts.size >= 1000
    assert abs(ts.mean()) < 0.1 and 0.9 < ts.std() < 1.1
    assert 0.03 < np.mean(np.abs(ts) > 1.96) < 0.075


def test_a_planted_cell_is_listed_first_and_cells_too_small_are_left_out():
    rng = np.random.default_rng(2)
    value, expected, rater, item = null_session(rng, planted=0.8)
    cells = cells_of(value, expected, rater, item)
    assert (cells[0].rater, cells[0].item) == ("r0", "A") and cells[0].listed
    assert cells[0].bias > 0.4
    few = (rater == "r1") & (item == 2)
    keep = ~few | (np.cumsum(few) <= MIN_CELL_SCORES - 1)
    cells = cells_of(value[keep], expected[keep], rater[keep], item[keep])
    assert ("r1", "C") not in {(c.rater, c.item) for c in cells}
