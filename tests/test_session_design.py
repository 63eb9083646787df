"""The session model's pseudo-likelihood (engine/model/session/design.py): gradient and Hessian
against finite differences, for every kind of item effect, raters and lambda."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from session_sim import simulated_items

from engine.model.pseudo_likelihood import class_weights
from engine.model.session.design import ITEM_KINDS, design, layout_for, log_pl, log_proba
from engine.model.session.features import read_features
from engine.model.session.fit import _value, objective


@pytest.fixture(scope="module")
def small_session():
    items = simulated_items(items=3, answers=25, raters=3, double=0.4, top_k=5, sweeps=20, seed=1)
    return read_features(items, 5)


@pytest.mark.parametrize("kinds", [("agreement", "mu"), ITEM_KINDS])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_gradient_and_hessian_match_finite_differences(small_session, kinds, class_weight):
    layout = layout_for(small_session, item_kinds=kinds)
    assert layout.item_effects and layout.rater_effects and layout.own_reads
    d = design(small_session, layout)
    weights = class_weights(d.score, layout.n_classes, class_weight)
    rng = np.random.default_rng(0)
    w = 0.5 * rng.normal(size=layout.size)
    log_var = np.log(rng.uniform(0.2, 0.8, size=len(layout.components)))
    _, grad, hess, _ = objective(w, d, weights, log_var)
    step = 1e-6
    basis = np.eye(layout.size)
    numeric_grad = [
        (_value(w + step * e, d, weights, log_var) - _value(w - step * e, d, weights, log_var))
        / (2 * step)
        for e in basis
    ]
    # Central differences of an O(10-100) objective: error ~ step^2 f''' + eps f / step.
    np.testing.assert_allclose(grad, numeric_grad, atol=1e-6 * np.abs(grad).max())
    numeric_hess = np.array(
        [
            (
                objective(w + step * e, d, weights, log_var)[1]
                - objective(w - step * e, d, weights, log_var)[1]
            )
            / (2 * step)
            for e in basis
        ]
    )
    np.testing.assert_allclose(hess.dense(), numeric_hess, atol=1e-6 * np.abs(numeric_hess).max())


def test_probabilities_are_a_softmax_of_the_stated_predictor(small_session):
    """eta_rc = beta_c T_r(c) + gamma_c S_r + mu_c + a_g T_r(c) + nu_gc + rho_mc + lambda O_r(c)
    + delta U_r(c), written out by hand for one read."""
    f = small_session
    layout = layout_for(f)
    d = design(f, layout)
    rng = np.random.default_rng(1)
    w = rng.normal(size=layout.size)
    c, q, start = layout.c, layout.q, layout.n_item_params
    r = 7
    g, m = f.item[r], f.rater[r]
    beta, gamma, mu = np.split(w[start : start + 3 * c], 3)
    agreement, nu = w[g * q], w[g * q + 1 : g * q + 1 + c]
    rho = w[start + 3 * c + m * c : start + 3 * c + (m + 1) * c]
    own, same = w[start + layout.own_index], w[start + layout.same_index]
    t, s, o, u = f.t[r], f.s[r], f.own[r], f.same[r]
    eta = np.zeros(c + 1)
    eta[1:] = beta * t[1:] + gamma * s + mu + nu + rho
    eta += agreement * t + own * o + same * u
    expected = eta - np.log(np.exp(eta).sum())
    np.testing.assert_allclose(log_proba(w, d)[r], expected, atol=1e-12)
    value, _, p = log_pl(w, d, np.ones(d.score.size))
    assert value == pytest.approx(np.sum(np.log(p[np.arange(d.score.size), d.score])))


def test_parts_the_data_cannot_carry_are_left_out():
    """One item: no item effects; one rater: no rater effects; no answer read twice: no lambda;
    what is left is today's 3C parameters."""
    items = simulated_items(items=1, answers=30, raters=2, double=0.0, top_k=5, sweeps=10, seed=3)
    items[0] = dataclasses.replace(items[0], rater=np.zeros_like(items[0].rater))
    layout = layout_for(read_features(items, 5))
    assert layout.components == ()
    assert (layout.item_effects, layout.rater_effects, layout.own_reads) == (False, False, False)
    assert layout.size == 3 * layout.c
