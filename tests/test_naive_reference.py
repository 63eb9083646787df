"""The fast path (build_graph -> tune -> fit) against the naive dense reference in tests/naive.py:
same features, same parameters, same probabilities for several (K, p, symmetric) settings."""

from __future__ import annotations

import naive
import numpy as np
import pytest
import scipy.sparse as sp
from helpers import clustered_embeddings, tune_on

from engine.graph.search import build_graph
from engine.input.settings.config import config_from_dict
from engine.model.standard_errors import sandwich_se

N = 150
N_CLASSES = 3

SETTINGS = [
    # top_k, power, symmetric, class_weight
    (5, 1.0, True, "balanced"),
    (3, 1.0, False, "balanced"),
    (8, 2.5, False, "balanced"),
    (20, 0.5, True, "balanced"),
    (12, 1.0, True, None),
    (None, 1.0, True, "balanced"),
    (None, 3.0, True, "balanced"),
]


@pytest.fixture(scope="module")
def data():
    """Noisy clusters: the scores follow the embeddings, but not so well that they separate
    (separable scores have no finite optimum, and then nothing could be compared)."""
    return clustered_embeddings(N, N_CLASSES, dim=16, noise=2.0, seed=1)


@pytest.fixture(scope="module")
def graph(data):
    return build_graph(data[0], 20, chunk=64)


@pytest.mark.parametrize("top_k, power, symmetric, class_weight", SETTINGS)
def test_fast_path_matches_naive_equations(data, graph, top_k, power, symmetric, class_weight):
    emb, scores = data
    config = config_from_dict(
        {
            "similarity_top_k": top_k,
            "similarity_power": power,
            "similarity_top_k_symmetric": symmetric,
            "class_weight": class_weight,
        }
    )
    result = tune_on(graph, scores, N_CLASSES, config)
    t, s = result.features
    fitted = result.fitted

    naive_t, naive_s = naive.features(
        naive.similarity_graph(emb, top_k, power, symmetric), scores, N_CLASSES
    )
    # float32 similarities in the fast path against float64 in the reference
    np.testing.assert_allclose(t, naive_t, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s, naive_s, rtol=1e-5, atol=1e-5)

    theta, naive_proba = naive.fit(naive_t, naive_s, scores, class_weight)
    assert fitted.converged and not fitted.at_bounds
    # The same optimum: the naive objective at the fast estimate is the naive minimum.
    weights = (
        naive.balanced_weights(scores, N_CLASSES) if class_weight == "balanced" else np.ones(N)
    )
    best, _ = naive.objective(theta, naive_t, naive_s, scores, weights)
    reached, _ = naive.objective(fitted.theta, naive_t, naive_s, scores, weights)
    assert reached - best < 1e-7
    # Parameters: the fast fit stops at L-BFGS-B's default gradient tolerance (1e-5), the
    # reference at 1e-10; what is left is statistically negligible (under 1% of an SE; the
    # dense graph has none, so there the independence sandwich gives the scale).
    se = fitted.se
    if top_k is None:
        se = sandwich_se(fitted.theta, t, s, scores, class_weight, sp.csr_matrix((N, N)))
    np.testing.assert_array_less(np.abs(fitted.theta - theta), 0.01 * se + 1e-4)
    assert fitted.beta[0] == fitted.gamma[0] == fitted.mu[0] == 0.0
    np.testing.assert_allclose(fitted.proba, naive_proba, atol=1e-3)
    # The predictions are the same wherever the reference is not (nearly) tied.
    ordered = np.sort(naive_proba, axis=1)
    clear = ordered[:, -1] - ordered[:, -2] > 1e-3
    np.testing.assert_array_equal(fitted.predicted[clear], naive_proba.argmax(axis=1)[clear])


def test_naive_features_by_loops_equal_matrix_products(data):
    """The reference checks itself once: its loops agree with W @ onehot and row sums."""
    emb, scores = data
    w = naive.similarity_graph(emb, 6, 2.0, True)
    t, s = naive.features(w, scores, N_CLASSES)
    onehot = np.eye(N_CLASSES)[scores]
    np.testing.assert_allclose(t, w @ onehot, rtol=1e-12)
    np.testing.assert_allclose(s, w.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(t.sum(axis=1), s, rtol=1e-12)
