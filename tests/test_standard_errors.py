"""Standard errors from the fitted graph (engine/model/standard_errors.py): intervals that cover the
true parameters of Gibbs samples, the estimated balanced weights counted, none on the dense graph."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import noisy_clusters, tune_on
from potts import TRUE_BETA, TRUE_GAMMA, TRUE_MU, features, gibbs_sample

from engine.graph.search import build_graph
from engine.input.settings.config import load_defaults
from engine.model.pseudo_likelihood import fit, pack, proba
from engine.model.standard_errors import (
    NEIGHBOUR_SANDWICH,
    NO_STANDARD_ERRORS,
    adjacency,
    sandwich_se,
)


# A small version of tests/benchmarks/bench_coverage.py (see its table in docs/explanation/method.md).
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


@pytest.mark.slow
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
    result = tune_on(graph, scores, 3, load_defaults().updated(similarity_top_k=None))
    assert result.fitted.se_method == NO_STANDARD_ERRORS
    assert np.all(np.isnan(result.fitted.se))
    assert any("No standard errors on the dense graph" in w for w in result.warnings)
    top_k = tune_on(graph, scores, 3, load_defaults().updated(similarity_top_k=[10]))
    assert top_k.fitted.se_method == NEIGHBOUR_SANDWICH
    assert np.all(np.isfinite(top_k.fitted.se))
