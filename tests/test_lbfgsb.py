"""engine.model.lbfgsb: the L-BFGS-B loop without minimize's wrappers gives minimize's result,
bit for bit, on the fits parm makes (and the whole audit of a session does not change)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from engine.model import lbfgsb
from engine.model.pseudo_likelihood import BOUND, _Objective, class_weights


def _problem(seed: int, n: int, classes: int, separable: bool = False):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, classes, n)
    t = rng.random((n, classes)) * 3
    if separable:  # each response's own score dominates its neighbours: the fit runs to bounds
        t[np.arange(n), scores] += 20.0
    s = t.sum(axis=1) + rng.random(n)
    weights = class_weights(scores, classes, "balanced" if seed % 2 else None)
    return _Objective(t / s.mean(), s / s.mean(), scores, weights), 3 * (classes - 1)


CASES = [
    (0, 36, 4, False, 5000),
    (1, 31, 11, False, 5000),
    (2, 400, 3, False, 5000),
    (3, 40, 5, True, 5000),
    (4, 200, 2, True, 5000),
    (5, 50, 4, False, 3),  # stops at maxiter
]


@pytest.mark.parametrize("seed, n, classes, separable, maxiter", CASES)
def test_same_result_as_scipy_minimize(seed, n, classes, separable, maxiter):
    objective, size = _problem(seed, n, classes, separable)
    start = np.random.default_rng(seed).normal(size=size) * (seed % 3)
    box = np.full(size, BOUND)
    reference = minimize(
        objective,
        start,
        jac=True,
        method="L-BFGS-B",
        bounds=list(zip(-box, box)),
        options={"maxiter": maxiter, "ftol": 1e-12, "gtol": 1e-8},
    )
    ours = lbfgsb.minimize_bounded(objective, start, -box, box, maxiter, 1e-12, 1e-8)
    assert lbfgsb._DRIVER is not None  # the installed scipy is one this module drives
    assert ours.x.tobytes() == reference.x.tobytes()
    assert ours.fun == reference.fun
    assert ours.nit == reference.nit
    assert ours.success == reference.success
    assert ours.message == reference.message


def test_a_start_outside_the_box_is_clipped_as_scipy_does():
    objective, size = _problem(7, 60, 3)
    start = np.full(size, 5.0)
    box = np.full(size, 2.0)
    reference = minimize(
        objective, start, jac=True, method="L-BFGS-B", bounds=list(zip(-box, box)),
        options={"maxiter": 5000, "ftol": 1e-12, "gtol": 1e-8},
    )  # fmt: skip
    ours = lbfgsb.minimize_bounded(objective, start, -box, box, 5000, 1e-12, 1e-8)
    assert ours.x.tobytes() == reference.x.tobytes()
    assert np.all(np.abs(ours.x) <= 2.0)


def test_another_scipy_version_runs_minimize(monkeypatch):
    objective, size = _problem(8, 80, 4)
    box = np.full(size, BOUND)
    driven = lbfgsb.minimize_bounded(objective, np.zeros(size), -box, box, 5000, 1e-12, 1e-8)
    monkeypatch.setattr(lbfgsb, "_DRIVER", None)
    fallback = lbfgsb.minimize_bounded(objective, np.zeros(size), -box, box, 5000, 1e-12, 1e-8)
    assert fallback.x.tobytes() == driven.x.tobytes()
    assert (fallback.nit, fallback.message) == (driven.nit, driven.message)


def test_a_session_of_small_items_has_the_same_results_either_way(monkeypatch, tmp_path):
    """Predictions, metrics, intervals, cross-fitting and severity of a session of small items
    are identical with the driven loop and with scipy's minimize."""
    import pandas as pd

    from engine.input.items import split_items
    from engine.input.settings.config import load_defaults
    from engine.session import run_session

    rng = np.random.default_rng(3)
    rows = []
    for item in range(4):
        for i in range(36):
            rows.append(
                {"item": f"q{item}", "answer": f"a{item}-{i}", "score": int(rng.integers(0, 3))}
            )
    frame = pd.DataFrame(rows).astype(str)
    config = load_defaults().updated(item_column="item", bootstrap_samples=50)
    items = split_items(frame, config)
    vectors = [
        (lambda v: (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32))(
            rng.normal(size=(len(r), 8)) + r.scores[:, None]
        )
        for r in items.audited
    ]
    driven = run_session(items, config, embeddings=vectors)
    monkeypatch.setattr(lbfgsb, "_DRIVER", None)
    plain = run_session(items, config, embeddings=vectors)
    for a, b in zip(driven.results, plain.results):
        assert np.array_equal(a.predicted, b.predicted)
        assert np.array_equal(a.fitted.proba, b.fitted.proba)
        assert np.array_equal(a.severity, b.severity)
        assert [r.as_dict() for r in a.tuning.rows] == [r.as_dict() for r in b.tuning.rows]
        assert {m: i.as_dict() for m, i in a.intervals.items()} == {
            m: i.as_dict() for m, i in b.intervals.items()
        }
        assert np.array_equal(a.cross_fit.proba, b.cross_fit.proba)


@pytest.mark.parametrize("n, classes", [(999, 4), (1000, 4), (1500, 2), (3000, 11)])
def test_the_objective_in_buffers_gives_the_same_numbers(n, classes):
    """Above IN_PLACE_FROM the objective writes into buffers: the same value and gradient,
    bit for bit, as the allocating path."""
    from engine.model import pseudo_likelihood

    objective, size = _problem(n, n, classes)
    allocating, _ = _problem(n, n, classes)
    allocating.in_place = False
    assert objective.in_place == (n >= pseudo_likelihood.IN_PLACE_FROM)
    rng = np.random.default_rng(n)
    for _ in range(50):
        theta = rng.normal(size=size) * rng.choice([0.1, 1.0, 30.0])
        value, gradient = objective(theta)
        expected_value, expected_gradient = allocating(theta)
        assert value == expected_value
        assert gradient.tobytes() == expected_gradient.tobytes()


@pytest.mark.parametrize(
    ("seed", "classes", "maxiter", "maxls"), [(0, 2, 100, 50), (1, 4, 100, 50), (2, 3, 7, 20)]
)
def test_unbounded_runs_match_scipy_minimize_with_its_callback(seed, classes, maxiter, maxls):
    from engine.model.classifier import FTOL, TOLERANCE, _objective

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(40, 6)).astype(np.float32)
    codes = rng.integers(0, classes, size=40)
    target = np.eye(classes)[codes]
    free = classes if classes > 2 else 1
    fun = _objective(x, target, free, 1.0 / (10.0 * 40))
    start = np.zeros(free * 7)
    theirs_steps, ours_steps = [], []
    theirs = minimize(fun, start, jac=True, method="L-BFGS-B",
                      callback=lambda r: theirs_steps.append(1),
                      options={"maxiter": maxiter, "maxls": maxls, "ftol": FTOL, "gtol": TOLERANCE})  # fmt: skip
    ours = lbfgsb.minimize_free(fun, start, maxiter, FTOL, TOLERANCE, maxls,
                                each_iteration=lambda: ours_steps.append(1))  # fmt: skip
    np.testing.assert_array_equal(ours.x, theirs.x)
    assert (ours.fun, ours.nit, ours.success) == (theirs.fun, theirs.nit, theirs.success)
    assert ours.message == theirs.message and len(ours_steps) == len(theirs_steps) == theirs.nit


def test_an_unbounded_run_stops_when_its_callback_raises():
    calls = []

    def stop():
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        lbfgsb.minimize_free(lambda w: (float(w @ w), 2 * w + 1), np.ones(4), 100, 1e-12, 1e-12, 20, stop)  # fmt: skip
    assert len(calls) == 3


def test_an_unbounded_run_on_another_scipy_version_runs_minimize(monkeypatch):
    fun = lambda w: (float(((w - 1.5) ** 4).sum()), 4 * (w - 1.5) ** 3)  # noqa: E731
    driven = lbfgsb.minimize_free(fun, np.zeros(5), 100, 1e-12, 1e-8, 50)
    monkeypatch.setattr(lbfgsb, "_DRIVER", None)
    fallback = lbfgsb.minimize_free(fun, np.zeros(5), 100, 1e-12, 1e-8, 50)
    assert fallback.x.tobytes() == driven.x.tobytes() and fallback.nit == driven.nit
