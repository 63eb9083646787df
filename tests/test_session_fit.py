"""The session model's fit (engine/model/session/fit.py): today's model when the session is one
item read once, a convergent Newton mode, variances estimated, and (slow) parameters and
variances recovered from simulations with known truth."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import noisy_clusters
from session_sim import TRUTH, session_design, simulate, simulated_items

from engine.graph.search import build_graph
from engine.model.pseudo_likelihood import fit, proba
from engine.model.session.features import SessionItem, read_features
from engine.model.session.fit import VARIANCE_FLOOR, fit_session
from engine.model.session.inference import variance_intervals


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_one_item_read_once_without_raters_is_todays_model(class_weight):
    vectors, scores = noisy_clusters(300, seed=7, noise=1.2, flip=0.3)
    graph = build_graph(vectors, 10)
    item = SessionItem(np.arange(300), np.zeros(300, int), scores, 3, graph)
    session = fit_session(read_features([item], 10), class_weight)
    assert session.layout.size == 6 and session.converged
    t, s = graph.features(scores, 3, 10)
    today = fit(t, s, scores, class_weight)
    assert today.converged and not today.at_bounds
    # The same model in another parameterisation (T and S per unit of mean mass, S centred);
    # the weak ridge (1e-4 against an information of order N) moves the mode by ~1e-6.
    np.testing.assert_allclose(session.proba(np.arange(300)), today.proba, atol=1e-4)
    scale = s.mean()
    beta, gamma, mu = np.split(session.theta0, 3)
    np.testing.assert_allclose(beta / scale, today.beta[1:], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(gamma / scale, today.gamma[1:], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(mu - gamma, today.mu[1:], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(proba(today.theta, t, s), today.proba)


@pytest.fixture(scope="module")
def simulated():
    return simulated_items(items=6, answers=60, raters=4, double=0.3, top_k=8, sweeps=40, seed=11)


def test_the_mode_is_a_stationary_point_of_the_penalised_objective(simulated):
    from engine.model.session.fit import objective

    fitted = fit_session(read_features(simulated, 8), class_weight=None)
    assert fitted.converged and fitted.mode.converged
    _, grad, _, _ = objective(fitted.w, fitted.design, fitted.weights, fitted.log_var)
    assert np.max(np.abs(grad)) < 1e-4
    assert set(fitted.variances) == {"agreement", "mu", "rater"}
    assert all(v >= VARIANCE_FLOOR for v in fitted.variances.values())


def test_the_laplace_marginal_is_highest_at_the_estimated_variances(simulated):
    features = read_features(simulated, 8)
    fitted = fit_session(features, class_weight=None)
    for k in range(len(fitted.log_var)):
        for shift in (-0.5, 0.5):
            moved = fitted.log_var.copy()
            moved[k] = max(moved[k] + shift, np.log(VARIANCE_FLOOR))
            if np.allclose(moved, fitted.log_var):
                continue
            other = fit_session(features, None, log_var=moved, estimate_variances=False)
            assert other.laplace <= fitted.laplace + 1e-6


def test_without_item_or_rater_variation_every_variance_interval_reaches_zero():
    """Items with no random variation and raters without effects: each variance is small or
    its interval comes down to (nearly) 0, rather than noise fitted as variation."""
    truth = dataclasses.replace(TRUTH, agreement_sd=0.0, mu_sd=0.0, rater_sd=0.0)
    plan = session_design(items=6, answers=80, raters=3, double=0.3, top_k=8, seed=13)
    items, _, _ = simulate(plan, truth, sweeps=40, seed=14)
    fitted = fit_session(read_features(items, 8), class_weight=None)
    intervals = variance_intervals(fitted)
    for name, value in fitted.variances.items():
        assert value < 0.05 or intervals[name][0] < 0.05, name


@pytest.mark.slow
def test_parameters_and_variances_are_recovered_from_larger_items():
    """20 items x 200 answers, 6 raters, 30% read twice: the estimates' average over 8
    replications is within 3 of its standard errors of the truth (a loose check; the coverage
    of the intervals is bench_session_coverage.py's)."""
    plan = session_design(items=20, answers=200, raters=6, double=0.3, top_k=10, seed=21)
    found = []
    for replication in range(8):
        items, _, _ = simulate(plan, TRUTH, sweeps=60, seed=100 + replication)
        fitted = fit_session(read_features(items, 10), class_weight=None)
        found.append(
            np.r_[
                fitted.theta0, fitted.own_weight, fitted.same_rater_weight, np.exp(fitted.log_var)
            ]
        )
    found = np.array(found)
    truth = np.r_[TRUTH.theta0, TRUTH.own, TRUTH.same, list(TRUTH.variances.values())]
    mean, error = found.mean(axis=0), found.std(axis=0, ddof=1) / np.sqrt(len(found))
    assert np.all(np.abs(mean - truth) <= 3 * error + 0.05)
