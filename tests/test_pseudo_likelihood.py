"""The PARM pseudo-likelihood (engine/model/pseudo_likelihood.py): derivatives, weights, parameter
recovery, and the fast objective on a real graph against the reference equations."""

from __future__ import annotations

import naive
import numpy as np
import pytest
import scipy.sparse as sp
from helpers import clustered_embeddings
from potts import features, gibbs_sample

from engine.graph.search import build_graph
from engine.model.pseudo_likelihood import (
    _Objective,
    class_weights,
    fit,
    hessian,
    log_proba,
    neg_log_pl,
    pack,
    proba,
    score_contributions,
    unpack,
)
from engine.model.standard_errors import adjacency, sandwich_se


def random_problem(n=80, n_classes=4, seed=0):
    """Features shaped like real ones (T >= 0, S = sum of T), scores, weights and a theta."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 3, size=(n, n_classes))
    s = t.sum(axis=1) + rng.uniform(0, 1, size=n)
    scores = rng.integers(0, n_classes, size=n)
    weights = class_weights(scores, n_classes, "balanced")
    theta = rng.normal(scale=0.5, size=3 * (n_classes - 1))
    return t, s, scores, weights, theta


def central_difference(func, theta, step=1e-6):
    """d func / d theta by central differences; func returns a scalar or an array."""
    columns = []
    for k in range(theta.size):
        e = np.zeros_like(theta)
        e[k] = step
        columns.append((np.asarray(func(theta + e)) - np.asarray(func(theta - e))) / (2 * step))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_gradient_matches_finite_differences(n_classes):
    t, s, scores, weights, theta = random_problem(n_classes=n_classes, seed=n_classes)
    _, grad = neg_log_pl(theta, t, s, scores, weights)
    numeric = central_difference(lambda th: neg_log_pl(th, t, s, scores, weights)[0], theta)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_hessian_is_second_derivative_of_weighted_log_pl(n_classes):
    """hessian() is d2L for L = sum w_i log p_{i,x_i}, i.e. -sum(w) times d(grad of -L/sum w)."""
    t, s, scores, weights, theta = random_problem(n_classes=n_classes, seed=10 + n_classes)
    h = hessian(theta, t, s, weights)
    numeric = -weights.sum() * central_difference(
        lambda th: neg_log_pl(th, t, s, scores, weights)[1], theta
    )
    assert h.shape == (theta.size, theta.size)
    np.testing.assert_allclose(h, h.T, atol=1e-10)
    np.testing.assert_allclose(h, numeric, rtol=1e-5, atol=1e-6)


def test_hessian_matches_the_paper_formula_for_beta_c_and_mu_d():
    """Spot-check two entries against the paper: d2L/dbeta_c^2 and d2L/dbeta_c dmu_d (c != d)."""
    t, s, scores, weights, theta = random_problem(n_classes=3, seed=3)
    p = proba(theta, t, s)
    h = hessian(theta, t, s, weights)
    # theta order: beta_1, beta_2, gamma_1, gamma_2, mu_1, mu_2
    expected_b1b1 = -np.sum(weights * p[:, 1] * (1 - p[:, 1]) * t[:, 1] ** 2)
    expected_b1m2 = np.sum(weights * p[:, 1] * p[:, 2] * t[:, 1])
    assert h[0, 0] == pytest.approx(expected_b1b1, rel=1e-10)
    assert h[0, 5] == pytest.approx(expected_b1m2, rel=1e-10)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_the_optimisers_objective_equals_neg_log_pl(n_classes):
    """fit() minimises a re-laid-out copy of the objective for speed; it must be the same
    function, far from the optimum too."""
    from engine.model.pseudo_likelihood import _Objective

    t, s, scores, weights, theta = random_problem(n_classes=n_classes, seed=20 + n_classes)
    objective = _Objective(t, s, scores, weights)
    for point in (theta, 40 * theta, np.zeros_like(theta)):
        value, grad = objective(point)
        expected_value, expected_grad = neg_log_pl(point, t, s, scores, weights)
        assert value == pytest.approx(expected_value, rel=1e-12)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-9, atol=1e-12)


def test_score_contributions_sum_to_the_gradient_of_l():
    t, s, scores, weights, theta = random_problem(seed=4)
    g = score_contributions(theta, t, s, scores, weights)
    _, grad = neg_log_pl(theta, t, s, scores, weights)
    assert g.shape == (t.shape[0], theta.size)
    np.testing.assert_allclose(g.sum(axis=0), -grad * weights.sum(), rtol=1e-10, atol=1e-12)


def test_probabilities_are_the_multinomial_logit_with_baseline_zero():
    t, s, _, _, theta = random_problem(n_classes=3, seed=5)
    beta, gamma, mu = unpack(theta, 3)
    assert beta[0] == gamma[0] == mu[0] == 0.0
    np.testing.assert_array_equal(pack(beta, gamma, mu), theta)
    eta = beta * t + np.outer(s, gamma) + mu
    expected = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(proba(theta, t, s), expected, rtol=1e-12)
    np.testing.assert_allclose(np.exp(log_proba(theta, t, s)).sum(axis=1), 1.0)


def test_probabilities_stay_finite_for_huge_linear_predictors():
    t = np.array([[0.0, 50.0, 0.0], [0.0, 0.0, 50.0]])
    s = np.array([50.0, 50.0])
    theta = np.array([900.0, -900.0, 0.0, 0.0, 0.0, 0.0])
    p = proba(theta, t, s)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    value, grad = neg_log_pl(theta, t, s, np.array([2, 1]), np.ones(2))
    assert np.isfinite(value) and np.all(np.isfinite(grad))
    # row 0: eta = (0, 45000, 0) and the observed score 2 has log p = -45000 exactly (no floor);
    # row 1: categories 0 and 1 tie at eta = 0 and category 2 vanishes, so p = 1/2
    assert value == pytest.approx((45000.0 + np.log(2)) / 2, rel=1e-12)


def near_separable_problem(seed=0):
    """Scores almost perfectly predicted by T, and a theta far out along the separating direction:
    most chosen probabilities are about 1, a few misfits have p_{i,x_i} far below 1e-15."""
    rng = np.random.default_rng(seed)
    n, k = 120, 3
    scores = rng.integers(0, k, size=n)
    t = np.eye(k)[scores] * rng.uniform(4, 6, size=(n, 1)) + rng.uniform(0, 0.3, size=(n, k))
    misfits = np.flatnonzero(scores > 0)[:3]
    scores[misfits] = 0  # their T points to category 1 or 2, whose beta is large
    s = t.sum(axis=1)
    theta = np.array([9.0, 10.0, 0.2, -0.1, -0.5, 0.4])
    return t, s, scores, theta, misfits


@pytest.mark.parametrize("class_weight", ["balanced", None])
def test_gradient_matches_finite_differences_near_separation(class_weight):
    """The objective is log-softmax with no probability floor, so the gradient the optimiser
    receives is the derivative of the value it receives, even where p_{i,x_i} underflows."""
    from engine.model.pseudo_likelihood import _Objective

    t, s, scores, theta, misfits = near_separable_problem()
    weights = class_weights(scores, 3, class_weight)
    chosen = log_proba(theta, t, s)[misfits, scores[misfits]]
    assert np.all(chosen < np.log(1e-15)), "the misfits must be beyond the old 1e-15 floor"
    objective = _Objective(t, s, scores, weights)
    for function in (lambda th: neg_log_pl(th, t, s, scores, weights), objective):
        _, grad = function(theta)
        numeric = central_difference(lambda th, f=function: f(th)[0], theta, step=1e-5)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6)


def test_balanced_weights_are_inverse_frequency_over_present_categories():
    scores = np.array([0, 0, 0, 1, 3, 3])  # category 2 absent
    w = class_weights(scores, 4, "balanced")
    # N / (present * n_c) = 6 / (3 * n_c)
    np.testing.assert_allclose(w, [2 / 3, 2 / 3, 2 / 3, 2.0, 1.0, 1.0])
    # every present category then carries the same total weight
    totals = np.bincount(scores, weights=w, minlength=4)
    np.testing.assert_allclose(totals[[0, 1, 3]], 2.0)
    np.testing.assert_array_equal(class_weights(scores, 4, None), np.ones(6))


def test_fit_reaches_a_stationary_point_of_the_objective():
    t, s, scores, weights, _ = random_problem(n=300, n_classes=3, seed=6)
    fitted = fit(t, s, scores)
    assert fitted.converged and not fitted.at_bounds
    _, grad = neg_log_pl(fitted.theta, t, s, scores, weights)
    assert np.max(np.abs(grad)) < 1e-4
    assert fitted.proba.shape == (300, 3)
    np.testing.assert_allclose(fitted.proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(fitted.predicted, np.argmax(fitted.proba, axis=1))
    # Standard errors need the graph, which fit() does not see (engine.model.standard_errors).
    assert fitted.se_method == "none" and np.all(np.isnan(fitted.se))


@pytest.mark.parametrize("magnitude", [1.0, 300.0])
def test_fit_converges_to_the_same_optimum_when_features_are_large(magnitude):
    """Dense graphs give T and S in the hundreds; the fit must still reach the optimum, so that
    scaling the features by a only scales beta and gamma by 1/a and leaves predictions alone."""
    t, s, scores, weights, _ = random_problem(n=400, n_classes=4, seed=11)
    s = s + 5.0 * t.sum(axis=1)  # S much larger than T, as on a dense graph
    small = fit(t, s, scores)
    large = fit(t * magnitude, s * magnitude, scores)
    c = 3
    np.testing.assert_allclose(
        large.theta[: 2 * c] * magnitude, small.theta[: 2 * c], rtol=1e-4, atol=1e-6
    )
    np.testing.assert_allclose(large.theta[2 * c :], small.theta[2 * c :], rtol=1e-4, atol=1e-6)
    assert abs(large.objective - small.objective) < 1e-10
    _, grad = neg_log_pl(large.theta, t * magnitude, s * magnitude, scores, weights)
    # d/d beta of the large problem is magnitude x d/d beta of the small one.
    assert np.max(np.abs(grad[: 2 * c])) / magnitude < 1e-5
    assert np.max(np.abs(grad[2 * c :])) < 1e-5


def test_separable_scores_give_a_finite_fit_inside_the_bounds():
    """Scores perfectly predicted by T have no finite optimum; the fit still returns finite
    parameters within +/-1000 that reproduce the scores, and flags a parameter at a bound."""
    scores = np.array([0, 1] * 20)
    t = np.zeros((40, 2))
    t[scores == 1, 1] = 1.0
    s = np.ones(40)
    fitted = fit(t, s, scores, class_weight=None)
    assert np.all(np.isfinite(fitted.theta)) and np.all(np.abs(fitted.theta) <= 1000.0)
    np.testing.assert_array_equal(fitted.predicted, scores)
    assert not fitted.at_bounds
    pinned = fit(t, s, scores, class_weight=None, start=np.array([1000.0, 0.0, -500.0]))
    assert pinned.at_bounds and pinned.beta[1] == 1000.0


# -- parameter recovery from the PARM joint distribution ---------------------------------------

TRUE_BETA = np.array([0.0, 2.5, 3.5])
TRUE_GAMMA = np.array([0.0, -1.0, -1.5])
TRUE_MU = np.array([0.0, 0.3, 0.3])


def sparse_similarity_graph(n: int, degree: int, scale: float, seed: int) -> sp.csr_matrix:
    """A fixed random symmetric graph, about `degree` neighbours each, weights in [0, scale]."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), degree // 2)
    cols = rng.integers(0, n, size=rows.size)
    keep = rows != cols
    w = rng.uniform(0, scale, size=int(keep.sum()))
    a = sp.coo_matrix((w, (rows[keep], cols[keep])), shape=(n, n)).tocsr()
    return a.maximum(a.T).tocsr()


def test_pseudo_likelihood_recovers_parameters_of_gibbs_samples():
    """Ten independent chains on one fixed 600-node graph (weights in [0, 0.1], ~20 neighbours,
    so S_i is about 1 and the chain stays in the disordered phase with all categories common).

    Tolerance: 3 standard errors per parameter (the neighbour sandwich over the pooled graph). Justification, measured on ten
    replications with other seeds: the largest |estimate - true| / SE was 1.97, the mean bias
    under 0.1, and the empirical spread of the estimates matched the reported SE within ~15%.
    """
    a = sparse_similarity_graph(600, 20, scale=0.1, seed=100)
    x = gibbs_sample(a, TRUE_BETA, TRUE_GAMMA, TRUE_MU, chains=10, sweeps=100, seed=1)
    # The ten chains side by side are one graph of ten unconnected copies.
    pooled = sp.block_diag([a] * x.shape[0], format="csr")
    scores = x.ravel()
    t, s = features(pooled, scores, 3)
    shares = np.bincount(scores, minlength=3) / scores.size
    assert shares.min() > 0.1, f"a category is rare ({shares}); the check would be weak"

    fitted = fit(t, s, scores, class_weight=None)
    se = sandwich_se(fitted.theta, t, s, scores, None, adjacency(pooled))

    assert fitted.converged
    true = pack(TRUE_BETA, TRUE_GAMMA, TRUE_MU)
    assert np.all(np.isfinite(se)) and np.all(se < 0.6)
    z = (fitted.theta - true) / se
    assert np.all(np.abs(z) < 3), f"estimates {fitted.theta}, SE {se}, z {z}"


# The fast objective on a real graph (150 clustered answers, 4 scores, 12 neighbours) against
# the reference equations.
GRAPH_N, GRAPH_CLASSES, GRAPH_K_MAX = 150, 4, 12


@pytest.fixture(scope="module")
def graph_data():
    return clustered_embeddings(GRAPH_N, GRAPH_CLASSES, dim=16, noise=2.0, seed=11)


def test_fast_objective_matches_the_reference_objective(graph_data):
    emb, scores = graph_data
    t, s = build_graph(emb, GRAPH_K_MAX).features(scores, GRAPH_CLASSES, 6, 1.5)
    weights = class_weights(scores, GRAPH_CLASSES, "balanced")
    objective = _Objective(t, s, scores, weights)
    rng = np.random.default_rng(0)
    for theta in rng.normal(scale=2.0, size=(5, 3 * (GRAPH_CLASSES - 1))):
        value, grad = objective(theta)
        expected_value, expected_grad = neg_log_pl(theta, t, s, scores, weights)
        assert value == pytest.approx(expected_value, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-12)


def test_fit_reaches_the_reference_optimum(graph_data):
    emb, scores = graph_data
    t, s = build_graph(emb, GRAPH_K_MAX).features(scores, GRAPH_CLASSES, 6, 1.5)
    ours = fit(t, s, scores, "balanced")
    theirs = naive.fit(t, s, scores, "balanced")
    theirs_theta = theirs[0] if isinstance(theirs, tuple) else theirs
    weights = class_weights(scores, GRAPH_CLASSES, "balanced")
    ours_value = neg_log_pl(ours.theta, t, s, scores, weights)[0]
    theirs_value = neg_log_pl(np.asarray(theirs_theta, float), t, s, scores, weights)[0]
    assert ours_value <= theirs_value + 1e-7
