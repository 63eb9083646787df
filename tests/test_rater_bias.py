"""Rater x item bias cells (engine/audit/raters/bias.py): Obs - Exp by hand, t statistics of null
cells close to N(0, 1) (scores around an expectation, and scores of a partial-credit model whose
raters are lenient or harsh in logits on items at the scale's top), expectations on the scale, a
planted cell found, and cells with too few scores left out."""

from __future__ import annotations

import numpy as np
import pytest

from engine.audit.raters.additive import two_way
from engine.audit.raters.bias import MIN_CELL_SCORES, Reads, bias_cells, main_effects
from engine.audit.raters.verdicts import is_bias_listed


def reads_of(value, expected, rater, item, variance=0.49, bounds=(-100.0, 100.0)):
    _, item_of = np.unique(item, return_inverse=True)
    names = ["ABCDEFGHIJKLMNOP"[k] for k in range(item_of.max() + 1)]
    low, high = (np.full(value.size, b, dtype=float) for b in bounds)
    return Reads(value, expected, np.broadcast_to(variance, value.shape).astype(float), low, high,
                 rater, item_of, names)  # fmt: skip


def cells_of(*args, **kwargs):
    return bias_cells(reads_of(*args, **kwargs), is_bias_listed)


def null_session(rng, raters=6, items=3, n=900, planted=0.0):
    """Scores = expectation + noise (sd 0.7), no rater x item interaction (but rater and item
    effects); `planted` points added to rater r0 on item 0."""
    rater = np.array([f"r{k}" for k in rng.integers(0, raters, n)])
    item = rng.integers(0, items, n)
    expected = rng.uniform(0.5, 2.5, n)
    lean = {f"r{k}": 0.1 * k for k in range(raters)}
    value = expected + 0.3 * item + np.array([lean[r] for r in rater]) + rng.normal(0, 0.7, n)
    value += planted * ((rater == "r0") & (item == 0))
    return value, expected, rater, item


def partial_credit_session(rng, raters=4, items=12, answers=40, top=5):
    """Scores 0..top from a partial-credit model: answer ability + item easiness (some items at
    the top of the scale) + the rater's leniency (-1 to +1 logit), no interaction. E and W: the
    model's expectation and variance without the rater (a typical rater's)."""
    categories = np.arange(top + 1)
    steps = np.r_[0.0, np.cumsum(np.linspace(-2.5, 2.5, top))]
    leniency = np.linspace(-1, 1, raters)

    def probabilities(location):
        z = categories[None, :] * location[:, None] - steps[None, :]
        p = np.exp(z - z.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    parts = []
    for k in range(items):
        location = rng.normal(0, 1.5, answers) + rng.uniform(-2, 5)
        p = probabilities(location)
        expected = p @ categories
        variance = p @ categories**2 - expected**2
        for r in range(raters):
            cumulative = probabilities(location + leniency[r]).cumsum(axis=1)
            value = (cumulative > rng.uniform(size=(answers, 1))).argmax(axis=1)
            parts.append(
                (value, expected, variance, np.full(answers, f"r{r}"), np.full(answers, k))
            )
    value, expected, variance, rater, item = (np.concatenate(a) for a in zip(*parts))
    return value.astype(float), expected, variance, rater, item


def test_interaction_of_a_balanced_two_by_two_table_by_hand():
    """Rater x's item A scores are half a point above everything else: with the model's variance
    the same everywhere the fit is the plain two-way one, which leaves +-0.125 in every cell
    (0.5 / 4); a rater who scored one item has no cell."""
    d = np.repeat([0.5, 0.0, 0.0, 0.0], 12) + np.tile([0.01, -0.01], 24)
    rater = np.repeat(["x", "x", "y", "y"], 12)
    item = np.repeat([0, 1, 0, 1], 12)
    cells = cells_of(d + 1, np.ones(48), rater, item, variance=1.0)
    by_cell = {(c.rater, c.item): c.bias for c in cells}
    assert by_cell == pytest.approx({("x", "A"): 0.125, ("x", "B"): -0.125, ("y", "A"): -0.125,
                                     ("y", "B"): 0.125})  # fmt: skip
    alone = cells_of(d, np.zeros(48), np.repeat(["x", "x", "z", "z"], 12), np.zeros(48, dtype=int))
    assert alone == []


def test_observed_minus_expected_is_the_cell_mean_of_the_interaction_residual():
    """With one variance everywhere the linearised fit is the two-way least squares; the se is
    the residuals' sd (or the model's, when larger) over sqrt(n / the shrink factor)."""
    rng = np.random.default_rng(0)
    value, expected, rater, item = null_session(rng)
    cells = cells_of(value, expected, rater, item)
    _, rater_of = np.unique(rater, return_inverse=True)
    _, _, e = two_way(value - expected, item, rater_of)
    for cell in cells[:5]:
        mine = (rater == cell.rater) & (item == "ABC".index(cell.item))
        assert cell.n == mine.sum()
        assert cell.observed == pytest.approx(value[mine].mean())
        assert cell.bias == pytest.approx(e[mine].mean())
        assert cell.observed - cell.expected == pytest.approx(cell.bias)
        shrink = (1 - mine.sum() / (rater == cell.rater).sum()) * (
            1 - mine.sum() / (item == "ABC".index(cell.item)).sum()
        )
        spread = max(e[mine].std(ddof=1), 0.7)
        assert cell.se == pytest.approx(spread / np.sqrt(mine.sum() / shrink))


def test_null_cells_have_t_close_to_standard_normal():
    rng = np.random.default_rng(1)
    ts = np.array([c.t for _ in range(60) for c in cells_of(*null_session(rng))])
    assert ts.size >= 1000
    assert abs(ts.mean()) < 0.1 and 0.85 < ts.std() < 1.1
    assert 0.03 < np.mean(np.abs(ts) > 1.96) < 0.075


def test_lenient_and_harsh_raters_on_items_at_the_top_leave_no_bias():
    """Raters lenient or harsh in logits, no interaction, a third of the items at the top of the
    scale. An expectation additive in points (E + a_item + b_rater) makes every lenient rater
    seem harsh on the easy items and every harsh one lenient there (t sd 2.5, 11% of the cells
    listed in this simulation); the linearised one keeps t near N(0, 1), lists next to nothing
    and every expectation on the scale."""
    rng = np.random.default_rng(3)
    ts, listed, expected = [], [], []
    for _ in range(30):
        value, e, w, rater, item = partial_credit_session(rng)
        cells = bias_cells(reads_of(value, e, rater, item, w, (0.0, 5.0)), is_bias_listed)
        ts += [c.t for c in cells]
        listed += [c.listed for c in cells]
        expected += [c.expected for c in cells]
    ts = np.array(ts)
    assert ts.size == 30 * 4 * 12
    assert abs(ts.mean()) < 0.15 and 0.85 < ts.std() < 1.15
    assert np.mean(listed) < 0.01
    assert 0 <= min(expected) and max(expected) <= 5


def test_a_rater_at_the_top_of_an_easy_item_is_not_biased_there():
    """Mohler's item 9.2: both graders give every answer but one the top score, one of them half
    a point lenient on the other items. Neither cell is listed and neither expectation is above
    the top (it read 5.38, t -101.6, before)."""
    rng = np.random.default_rng(4)
    items, answers = 8, 27
    item = np.repeat(np.arange(items), 2 * answers)
    rater = np.tile(np.repeat(["g1", "g2"], answers), items)
    expected = np.where(item[:, None] == 0, 4.97, rng.uniform(2.0, 4.0, (item.size, 1)))[:, 0]
    variance = np.where(item == 0, 0.05, 0.8)
    value = np.clip(np.round(expected + 0.5 * (rater == "g2") + rng.normal(0, 0.6, item.size)), 0,
                    5)  # fmt: skip
    value[item == 0] = 5.0
    value[(item == 0) & (rater == "g2")] = np.r_[np.full(answers - 1, 5.0), 3.0]
    cells = {(c.rater, c.item): c for c in cells_of(value, expected, rater, item, variance,
                                                    (0.0, 5.0))}  # fmt: skip
    for name in ("g1", "g2"):
        cell = cells[(name, "A")]
        assert not cell.listed and cell.expected <= 5.0, cell
    assert abs(cells[("g2", "A")].t) < 3


def test_main_effects_stay_on_the_scale_and_follow_a_rater_where_the_scale_has_room():
    """A lenient rater's expectation is above the typical one by about W x their leniency: most
    in the middle of the scale, nothing at its ends."""
    rng = np.random.default_rng(5)
    value, e, w, rater, item = partial_credit_session(rng)
    reads = reads_of(value, e, rater, item, w, (0.0, 5.0))
    m = main_effects(reads)
    assert np.all((m >= 0) & (m <= 5))
    lenient = rater == "r3"
    lift = (m - e)[lenient]
    middle = w[lenient] > np.quantile(w, 0.75)
    ends = w[lenient] < np.quantile(w, 0.1)
    assert lift[middle].mean() > 0.5 and abs(lift[ends]).mean() < 0.15


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
