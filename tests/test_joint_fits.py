"""engine.model.joint_fits: cross-fitting's folds fitted side by side give, fit by fit, bit for
bit what `fit` gives alone (parameters, objective, iterations, message, probabilities)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.joint_fits import fit_many
from engine.model.pseudo_likelihood import IN_PLACE_FROM, _Objective, class_weights, fit


def _problems(seed: int, sizes: list[int], classes: int, separable: bool, warm: bool):
    rng = np.random.default_rng(seed)
    problems = []
    for n in sizes:
        scores = rng.integers(0, classes, n)
        t = rng.random((n, classes)) * rng.choice([1.0, 5.0])
        if separable:
            t[np.arange(n), scores] += 10.0
        s = t.sum(axis=1) + rng.random(n)
        start = rng.normal(size=3 * (classes - 1)) if warm else None
        problems.append((t, s, scores, "balanced" if seed % 2 else None, start))
    return problems


@pytest.mark.parametrize(
    "seed, sizes, classes, separable, warm",
    [
        (0, [36, 37, 36, 36, 35], 4, False, False),
        (1, [29, 30, 30, 29, 29], 11, False, True),
        (2, [120, 121, 120], 2, True, False),
        (3, [12, 200, 45, 90, 31], 5, True, True),
        (4, [36], 3, False, False),
        (5, [IN_PLACE_FROM, 50], 3, False, False),  # a large fit: fitted one by one
    ],
)
def test_fits_side_by_side_equal_fits_alone(seed, sizes, classes, separable, warm):
    problems = _problems(seed, sizes, classes, separable, warm)
    for alone, together in zip([fit(*p) for p in problems], fit_many(problems)):
        assert together.theta.tobytes() == alone.theta.tobytes()
        assert together.objective == alone.objective
        assert together.iterations == alone.iterations
        assert together.message == alone.message
        assert np.array_equal(together.proba, alone.proba)


def test_the_objective_computes_what_its_former_formulation_did():
    """The objective reduces with np.add.reduce (ndarray.sum without its wrapper): the same
    numbers as the formulation written with .sum() and .max()."""
    rng = np.random.default_rng(9)
    n, classes = 40, 5
    scores = rng.integers(0, classes, n)
    t = rng.random((n, classes)) * 3
    s = t.sum(axis=1)
    weights = class_weights(scores, classes, "balanced")
    objective = _Objective(t, s, scores, weights)
    c = classes - 1
    for _ in range(30):
        theta = rng.normal(size=3 * c) * 5
        eta = np.zeros((classes, n))
        np.multiply(objective.t, theta[:c, None], out=eta[1:])
        eta[1:] += objective.s * theta[c : 2 * c, None]
        eta[1:] += theta[2 * c :, None]
        top = eta.max(axis=0)
        e = np.exp(eta - top)
        z = e.sum(axis=0)
        chosen = eta.ravel()[objective.chosen] - np.log(z) - top
        value = -(objective.weights * chosen).sum() / objective.total
        resid = objective.weighted_target - e[1:] * (objective.weights / z)
        grad = np.concatenate(
            [(resid * objective.t).sum(axis=1), resid @ objective.s, resid.sum(axis=1)]
        )
        got_value, got_grad = objective(theta)
        assert got_value == float(value)
        assert got_grad.tobytes() == (-grad / objective.total).tobytes()
