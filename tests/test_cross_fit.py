"""Cross-fitting (engine/model/cross_fit.py): held-out labels are never used, every response is
predicted once, and it works with a power interval, on the dense graph, and stops when cancelled."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import cross_fit_on, noisy_clusters

from engine.core.errors import Cancelled
from engine.core.progress import CancelToken, Reporter
from engine.graph.search import build_graph
from engine.input.settings.config import load_defaults
from engine.model.cross_fit import fold_assignment

# -- standard errors: coverage on simulated Potts scores ------------------------------------------


def crossfit_config(**changes):
    settings = {"similarity_top_k": [5, 10, 20], "cross_fit_folds": 4, "seed": 3}
    return load_defaults().updated(**{**settings, **changes})


@pytest.fixture(scope="module")
def crossfit_graph():
    vectors, scores = noisy_clusters(320, seed=4, noise=0.7)
    return build_graph(vectors, 20), scores


def corrupt(scores: np.ndarray, rows: np.ndarray, seed: int) -> np.ndarray:
    changed = scores.copy()
    rng = np.random.default_rng(seed)
    changed[rows] = (scores[rows] + rng.integers(1, 3, size=rows.size)) % 3
    return changed


def test_cross_fit_never_uses_the_held_out_labels(crossfit_graph):
    graph, scores = crossfit_graph
    config = crossfit_config()
    base = cross_fit_on(graph, scores, 3, config)
    held_out = fold_assignment(scores.size, 4, config.seed)[0]
    np.testing.assert_array_equal(base.folds[0].held_out, held_out)
    changed = cross_fit_on(graph, corrupt(scores, held_out, seed=0), 3, config)
    before, after = base.folds[0], changed.folds[0]
    # Everything fold 0 fitted, its selection and its predictions are unchanged ...
    assert after.training_digest == before.training_digest
    assert (after.top_k, after.power) == (before.top_k, before.power)
    np.testing.assert_array_equal(after.theta, before.theta)
    np.testing.assert_array_equal(changed.predicted[held_out], base.predicted[held_out])
    # ... while the other folds, which train on those rows, did see the change.
    assert changed.folds[1].training_digest != base.folds[1].training_digest


def test_cross_fitted_probabilities_do_not_change_when_only_held_out_scores_change(
    crossfit_graph,
):
    graph, scores = crossfit_graph
    config = crossfit_config()
    base = cross_fit_on(graph, scores, 3, config)
    held_out = fold_assignment(scores.size, 4, config.seed)[2]
    changed = cross_fit_on(graph, corrupt(scores, held_out, seed=3), 3, config)
    np.testing.assert_array_equal(changed.proba[held_out], base.proba[held_out])
    np.testing.assert_allclose(base.proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(base.predicted, np.argmax(base.proba, axis=1))
    others = np.setdiff1d(np.arange(scores.size), held_out)
    assert not np.array_equal(changed.proba[others], base.proba[others])


def test_cross_fit_fingerprint_changes_when_a_training_label_changes(crossfit_graph):
    graph, scores = crossfit_graph
    config = crossfit_config()
    base = cross_fit_on(graph, scores, 3, config)
    training_row = fold_assignment(scores.size, 4, config.seed)[1][:1]
    changed = cross_fit_on(graph, corrupt(scores, training_row, seed=1), 3, config)
    assert changed.folds[0].training_digest != base.folds[0].training_digest


def test_cross_fit_predicts_every_response_once_and_finds_nothing_in_shuffled_scores(
    crossfit_graph,
):
    graph, scores = crossfit_graph
    result = cross_fit_on(graph, scores, 3, crossfit_config())
    held = np.concatenate([f.held_out for f in result.folds])
    np.testing.assert_array_equal(np.sort(held), np.arange(scores.size))
    assert 0.3 < result.metrics["kappa"] < 1.0
    shuffled = np.random.default_rng(0).permutation(scores)
    chance = cross_fit_on(graph, shuffled, 3, crossfit_config())
    assert abs(chance.metrics["kappa"]) < 0.15


def test_cross_fit_works_with_a_power_interval_and_reports_progress(crossfit_graph):
    graph, scores = crossfit_graph
    config = crossfit_config(
        similarity_top_k=[10], similarity_power={"min": 0.5, "max": 3, "tol": 0.2}
    )
    events = []
    result = cross_fit_on(graph, scores, 3, config, Reporter(events.append))
    assert all(0.5 <= f.power <= 3 for f in result.folds)
    assert {e.stage for e in events} == {"audit"}


def test_cross_fit_works_on_the_dense_graph(crossfit_graph):
    graph, scores = crossfit_graph
    held_out = fold_assignment(scores.size, 3, 0)[0]
    config = crossfit_config(similarity_top_k=None, cross_fit_folds=3, seed=0)
    base = cross_fit_on(graph, scores, 3, config)
    changed = cross_fit_on(graph, corrupt(scores, held_out, seed=2), 3, config)
    assert base.folds[0].top_k is None
    assert changed.folds[0].training_digest == base.folds[0].training_digest
    assert base.metrics["kappa"] > 0.3


def test_cross_fit_is_skipped_with_zero_folds(crossfit_graph):
    graph, scores = crossfit_graph
    assert cross_fit_on(graph, scores, 3, crossfit_config(cross_fit_folds=0)) is None


def test_cross_fit_stops_when_cancelled(crossfit_graph):
    graph, scores = crossfit_graph
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        cross_fit_on(graph, scores, 3, crossfit_config(), Reporter(None, token))


@pytest.mark.parametrize("symmetric", [True, False])
def test_masked_features_count_training_neighbours_only_and_are_tunings_with_all(
    crossfit_graph, symmetric
):
    # Against the pruned graph's weight matrix times the training rows' one-hot labels (the
    # way the masked features were computed before issue 49), and bit for bit tuning's
    # features when every response is a training one.
    from engine.model.features import ItemFeatures

    graph, scores = crossfit_graph
    features = ItemFeatures(graph, scores, 3, symmetric)
    train = fold_assignment(scores.size, 4, 0)[1]  # one fold's positions: here, the training
    onehot = np.zeros((scores.size, 3))
    onehot[train, scores[train]] = 1.0
    for top_k, power in [(5, 1.0), (20, 2.5)]:
        t, s = features.masked(train, top_k, power)
        expected = np.asarray(graph.weights(top_k, power, symmetric) @ onehot)
        np.testing.assert_allclose(t, expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(s, t.sum(axis=1))
        every = features.masked(np.arange(scores.size), top_k, power)
        tuned = features.at(top_k, power)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(every, tuned))
