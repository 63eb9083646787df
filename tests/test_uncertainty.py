"""Bootstrap intervals, standard errors that cover, and cross-fitting (engine/audit/intervals.py, engine/model/)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import clustered_embeddings
from potts import features, gibbs_sample

from engine.audit.intervals import bootstrap_agreement
from engine.core.errors import Cancelled
from engine.core.progress import CancelToken, Reporter
from engine.graph.search import build_graph
from engine.input.config import load_defaults
from engine.model.cross_fit import cross_fit, fold_assignment
from engine.model.pseudo_likelihood import fit, pack, proba
from engine.model.standard_errors import (
    NEIGHBOUR_SANDWICH,
    NO_STANDARD_ERRORS,
    adjacency,
    sandwich_se,
)
from engine.model.tuning import tune


def noisy_codes(n: int, agree: float, seed: int, classes: int = 3):
    rng = np.random.default_rng(seed)
    human = rng.integers(0, classes, size=n)
    predicted = np.where(rng.random(n) < agree, human, rng.integers(0, classes, size=n))
    return human, predicted


def noisy_clusters(n: int, seed: int, classes: int = 3, noise: float = 0.9, flip: float = 0.15):
    vectors, scores = clustered_embeddings(n, classes, noise=noise, seed=seed)
    rng = np.random.default_rng(seed + 1)
    scores = np.where(rng.random(n) < flip, rng.integers(0, classes, size=n), scores)
    return vectors, scores


def test_bootstrap_intervals_contain_the_point_estimate():
    human, predicted = noisy_codes(300, 0.7, seed=1)
    intervals = bootstrap_agreement(human, predicted, 3, samples=200, seed=0)
    assert set(intervals) == {"accuracy", "kappa", "qwk"}
    for interval in intervals.values():
        assert interval.low < interval.estimate < interval.high
    assert intervals["accuracy"].estimate == pytest.approx(np.mean(human == predicted))


def test_bootstrap_intervals_shrink_with_more_responses():
    widths = []
    for n in (150, 2400):
        human, predicted = noisy_codes(n, 0.7, seed=2)
        intervals = bootstrap_agreement(human, predicted, 3, samples=200, seed=0)
        widths.append({m: iv.high - iv.low for m, iv in intervals.items()})
    for metric in widths[0]:
        # Width goes as 1/sqrt(N): 16 times the responses, about a quarter of the width.
        assert widths[1][metric] < 0.5 * widths[0][metric]


def test_bootstrap_is_reproducible_with_the_seed():
    human, predicted = noisy_codes(200, 0.6, seed=3)
    first = bootstrap_agreement(human, predicted, 3, samples=50, seed=4)
    again = bootstrap_agreement(human, predicted, 3, samples=50, seed=4)
    other = bootstrap_agreement(human, predicted, 3, samples=50, seed=5)
    assert first == again
    assert first != other


def test_bootstrap_reports_progress_and_stops_when_cancelled():
    human, predicted = noisy_codes(100, 0.6, seed=3)
    events = []
    bootstrap_agreement(human, predicted, 3, 30, reporter=Reporter(events.append))
    assert events[-1].stage == "audit" and events[-1].done == events[-1].total == 30
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        bootstrap_agreement(human, predicted, 3, 30, reporter=Reporter(None, token))


# -- standard errors: coverage on simulated Potts scores ------------------------------------------

# A small version of tests/benchmarks/bench_coverage.py (see its table in the README).
TRUE_BETA = np.array([0.0, 0.25, 0.30, 0.35])
TRUE_GAMMA = np.array([0.0, -0.10, -0.10, -0.10])
TRUE_MU = np.array([0.0, 0.6, 0.5, 0.0])


@pytest.fixture(scope="module")
def potts_replications():
    """80 independent Gibbs chains (100 sweeps) on parm's own top-K graph (K = 10, p = 1) over
    500 random unit vectors in 8 dimensions: the same graph, 80 samples of its scores."""
    rng = np.random.default_rng(4)
    vectors = rng.normal(size=(500, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    graph = build_graph(vectors.astype(np.float32), 10).weights(10, 1.0, True)
    chains = gibbs_sample(graph, TRUE_BETA, TRUE_GAMMA, TRUE_MU, chains=80, sweeps=100, seed=5)
    return graph, chains


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_beta_intervals_cover_the_true_beta(potts_replications, class_weight):
    """Balanced weights tilt only the intercepts, so both fits estimate the true beta.

    Band: pooled coverage of the 3 x 80 intervals in [0.88, 0.99] and mean SE / spread of the
    estimates in [0.85, 1.2]. Measured on six graph seeds: neighbour sandwich 0.91-0.94 and
    0.88-0.96; the independence sandwich (B = sum g_i g_i^T) 0.85-0.90 and 0.72-0.81, so the
    setup is dependent enough to fail it (checked below).
    """
    graph, chains = potts_replications
    neighbours, independent = adjacency(graph), sp.csr_matrix(graph.shape)
    estimates, se, se_independent = [], [], []
    for scores in chains:
        t, s = features(graph, scores, 4)
        theta = fit(t, s, scores, class_weight).theta
        estimates.append(theta[:3])
        se.append(sandwich_se(theta, t, s, scores, class_weight, neighbours)[:3])
        se_independent.append(sandwich_se(theta, t, s, scores, class_weight, independent)[:3])
    estimates, se, se_independent = map(np.array, (estimates, se, se_independent))
    spread = estimates.std(axis=0, ddof=1)
    coverage = np.mean(np.abs(estimates - TRUE_BETA[1:]) <= 1.96 * se)
    assert 0.88 <= coverage <= 0.99, f"coverage {coverage:.3f}"
    assert 0.85 <= np.mean(se.mean(axis=0) / spread) <= 1.2, f"SE {se.mean(0)}, sd {spread}"
    assert np.mean(se_independent.mean(axis=0) / spread) < 0.85, "the check would be weak"


def test_standard_errors_count_the_estimated_balanced_weights():
    """Balanced weights come from the category counts. With uninformative-ish features the
    intercepts then follow the counts almost exactly, and their spread across samples is small;
    the sandwich must see that (each score centred on its category's mean), not treat the
    weights as fixed, which overstates the mu SEs about fourfold here."""
    rng = np.random.default_rng(0)
    n = 400
    t, s = rng.normal(size=(n, 3)), rng.normal(size=n)
    theta = pack(np.array([0, 0.3, 0.2]), np.array([0, 0.1, -0.1]), np.array([0, -1.0, -2.0]))
    cumulative = np.cumsum(proba(theta, t, s), axis=1)
    independent = sp.csr_matrix((n, n))
    estimates, se = [], []
    for _ in range(200):
        scores = (rng.random((n, 1)) > cumulative).sum(axis=1)
        fitted = fit(t, s, scores, "balanced")
        estimates.append(fitted.theta)
        se.append(sandwich_se(fitted.theta, t, s, scores, "balanced", independent))
    ratio = np.mean(se, axis=0) / np.std(estimates, axis=0, ddof=1)
    np.testing.assert_allclose(ratio, 1.0, atol=0.25)


def test_the_dense_graph_has_no_standard_errors_and_says_why():
    vectors, scores = noisy_clusters(200, seed=2)
    graph = build_graph(vectors, 10)
    result = tune(graph, scores, 3, load_defaults().updated(similarity_top_k=None))
    assert result.fitted.se_method == NO_STANDARD_ERRORS
    assert np.all(np.isnan(result.fitted.se))
    assert any("No standard errors on the dense graph" in w for w in result.warnings)
    top_k = tune(graph, scores, 3, load_defaults().updated(similarity_top_k=[10]))
    assert top_k.fitted.se_method == NEIGHBOUR_SANDWICH
    assert np.all(np.isfinite(top_k.fitted.se))


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
    base = cross_fit(graph, scores, 3, config)
    held_out = fold_assignment(scores.size, 4, config.seed)[0]
    np.testing.assert_array_equal(base.folds[0].held_out, held_out)
    changed = cross_fit(graph, corrupt(scores, held_out, seed=0), 3, config)
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
    base = cross_fit(graph, scores, 3, config)
    held_out = fold_assignment(scores.size, 4, config.seed)[2]
    changed = cross_fit(graph, corrupt(scores, held_out, seed=3), 3, config)
    np.testing.assert_array_equal(changed.proba[held_out], base.proba[held_out])
    np.testing.assert_allclose(base.proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(base.predicted, np.argmax(base.proba, axis=1))
    others = np.setdiff1d(np.arange(scores.size), held_out)
    assert not np.array_equal(changed.proba[others], base.proba[others])


def test_cross_fit_fingerprint_changes_when_a_training_label_changes(crossfit_graph):
    graph, scores = crossfit_graph
    config = crossfit_config()
    base = cross_fit(graph, scores, 3, config)
    training_row = fold_assignment(scores.size, 4, config.seed)[1][:1]
    changed = cross_fit(graph, corrupt(scores, training_row, seed=1), 3, config)
    assert changed.folds[0].training_digest != base.folds[0].training_digest


def test_cross_fit_predicts_every_response_once_and_finds_nothing_in_shuffled_scores(
    crossfit_graph,
):
    graph, scores = crossfit_graph
    result = cross_fit(graph, scores, 3, crossfit_config())
    held = np.concatenate([f.held_out for f in result.folds])
    np.testing.assert_array_equal(np.sort(held), np.arange(scores.size))
    assert 0.3 < result.metrics["kappa"] < 1.0
    shuffled = np.random.default_rng(0).permutation(scores)
    chance = cross_fit(graph, shuffled, 3, crossfit_config())
    assert abs(chance.metrics["kappa"]) < 0.15


def test_cross_fit_works_with_a_power_interval_and_reports_progress(crossfit_graph):
    graph, scores = crossfit_graph
    config = crossfit_config(
        similarity_top_k=[10], similarity_power={"min": 0.5, "max": 3, "tol": 0.2}
    )
    events = []
    result = cross_fit(graph, scores, 3, config, Reporter(events.append))
    assert all(0.5 <= f.power <= 3 for f in result.folds)
    assert {e.stage for e in events} == {"audit"}


def test_cross_fit_works_on_the_dense_graph(crossfit_graph):
    graph, scores = crossfit_graph
    held_out = fold_assignment(scores.size, 3, 0)[0]
    config = crossfit_config(similarity_top_k=None, cross_fit_folds=3, seed=0)
    base = cross_fit(graph, scores, 3, config)
    changed = cross_fit(graph, corrupt(scores, held_out, seed=2), 3, config)
    assert base.folds[0].top_k is None
    assert changed.folds[0].training_digest == base.folds[0].training_digest
    assert base.metrics["kappa"] > 0.3


def test_cross_fit_is_skipped_with_zero_folds(crossfit_graph):
    graph, scores = crossfit_graph
    assert cross_fit(graph, scores, 3, crossfit_config(cross_fit_folds=0)) is None


def test_cross_fit_stops_when_cancelled(crossfit_graph):
    graph, scores = crossfit_graph
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        cross_fit(graph, scores, 3, crossfit_config(), Reporter(None, token))
