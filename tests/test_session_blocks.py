"""The block-arrow algebra of the session model (engine/model/session/blocks.py) against dense
linear algebra: solve, log det, and the random effects' posterior moments."""

from __future__ import annotations

import numpy as np
import pytest
from session_sim import simulated_items

from engine.model.pseudo_likelihood import class_weights
from engine.model.session.blocks import BlockFactor, moments, split
from engine.model.session.design import ITEM_KINDS, design, layout_for
from engine.model.session.features import read_features
from engine.model.session.fit import objective


@pytest.fixture(scope="module", params=[("agreement", "mu"), ITEM_KINDS])
def system(request):
    items = simulated_items(items=4, answers=20, raters=3, double=0.4, top_k=5, sweeps=20, seed=5)
    features = read_features(items, 5)
    layout = layout_for(features, item_kinds=request.param)
    d = design(features, layout)
    rng = np.random.default_rng(2)
    w = 0.5 * rng.normal(size=layout.size)
    log_var = np.log(rng.uniform(0.2, 0.8, size=len(layout.components)))
    weights = class_weights(d.score, layout.n_classes, None)
    _, _, hess, _ = objective(w, d, weights, log_var)
    return layout, w, hess


def _effects(layout):
    """Global positions of every random effect and its component."""
    index, component = [], []
    for g in range(layout.item_blocks):
        for k, part in enumerate(layout.kind_slices().values()):
            index += list(g * layout.q + np.arange(part.start, part.stop))
            component += [k] * (part.stop - part.start)
    start = layout.n_item_params + layout.rater_start
    index += list(start + np.arange(layout.n_rater_params))
    component += [len(layout.components) - 1] * layout.n_rater_params
    return np.array(index), np.array(component)


def test_solve_and_log_det_match_dense_algebra(system):
    layout, _, hess = system
    dense = hess.dense()
    factor = BlockFactor(hess)
    b = np.random.default_rng(3).normal(size=layout.size)
    items, core = factor.solve(*split(b, layout))
    np.testing.assert_allclose(np.r_[items.ravel(), core], np.linalg.solve(dense, b), atol=1e-10)
    assert factor.logdet == pytest.approx(np.linalg.slogdet(dense)[1], abs=1e-9)
    inverse = np.linalg.inv(dense)
    items_diag = factor.item_covariance_diagonal().ravel()
    np.testing.assert_allclose(items_diag, np.diag(inverse)[: layout.n_item_params], atol=1e-12)
    np.testing.assert_allclose(
        factor.schur_inv, inverse[layout.n_item_params :, layout.n_item_params :], atol=1e-12
    )


def test_moments_match_the_dense_posterior_covariance(system):
    layout, w, hess = system
    m = moments(BlockFactor(hess), layout, w)
    index, component = _effects(layout)
    cov = np.linalg.inv(hess.dense())[np.ix_(index, index)]
    u = w[index]
    kinds = range(len(layout.components))
    np.testing.assert_allclose(m.n, [np.sum(component == k) for k in kinds])
    np.testing.assert_allclose(m.sum_sq, [np.sum(u[component == k] ** 2) for k in kinds])
    np.testing.assert_allclose(
        m.trace, [np.trace(cov[np.ix_(component == k, component == k)]) for k in kinds]
    )
    squares = [
        [np.sum(cov[np.ix_(component == a, component == b)] ** 2) for b in kinds] for a in kinds
    ]
    np.testing.assert_allclose(m.squares, squares, atol=1e-12)
