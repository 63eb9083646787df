"""Cross-fitting the session model (engine/model/session/cross_fit.py): no read predicted by a
model that saw any read of its answer, folds from the seed alone, the K grid and the decision
rule."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from session_sim import simulated_items

from engine.model.session.cross_fit import (
    SessionOptions,
    answer_folds,
    decide,
    distinct_top_k,
    session_cross_fit,
)
from engine.model.session.fit import answer_marginals

OPTIONS = SessionOptions(top_k_values=(4, 8), folds=3)


@pytest.fixture(scope="module")
def items():
    return simulated_items(items=3, answers=30, raters=3, double=0.4, top_k=8, sweeps=30, seed=41)


def test_held_out_scores_never_reach_their_own_prediction(items):
    """Changing every read of the answers of one fold leaves their held-out probabilities as
    they were: those come from models fitted on the other folds' reads only."""
    first = session_cross_fit(items, OPTIONS)
    folds = answer_folds(items, OPTIONS.folds, OPTIONS.seed)
    changed = []
    for item, fold in zip(items, folds):
        held = fold[item.answer] == 0
        score = item.score.copy()
        score[held] = (score[held] + 1) % item.n_classes
        changed.append(dataclasses.replace(item, score=score))
    second = session_cross_fit(changed, OPTIONS)
    in_fold = np.concatenate([fold[item.answer] == 0 for item, fold in zip(items, folds)])
    np.testing.assert_allclose(first.proba[in_fold], second.proba[in_fold], atol=1e-8)
    assert not np.allclose(first.proba[~in_fold], second.proba[~in_fold])
    assert np.all(np.isfinite(first.proba)) and np.allclose(first.proba.sum(axis=1), 1.0)


def test_folds_depend_on_the_seed_and_sizes_only(items):
    folds = answer_folds(items, 5, seed=3)
    again = answer_folds([dataclasses.replace(i, score=i.score[::-1]) for i in items], 5, 3)
    for a, b in zip(folds, again):
        np.testing.assert_array_equal(a, b)
        assert np.bincount(a).max() - np.bincount(a).min() <= 1


def test_k_values_an_item_cannot_tell_apart_are_fitted_once(items):
    """The items' graphs hold 8 neighbours each: every K from 8 on is the same graph."""
    assert {item.graph.k_max for item in items} == {8}
    assert distinct_top_k(items, (5, 10, 29, 40, 50)) == [5, 10]


def test_balance_moves_decisions_towards_rare_scores():
    proba = np.array([[0.6, 0.4, 0.0], [0.7, 0.3, 0.0]])
    shares = np.array([0.8, 0.2, 0.0])
    np.testing.assert_array_equal(decide(proba, shares, 0.0), [0, 0])
    # log .4 - log .2 > log .6 - log .8: the rare score wins with balance 1 ...
    np.testing.assert_array_equal(decide(proba, shares, 1.0), [1, 1])
    # ... and a score no training read has is never predicted.
    assert 2 not in decide(np.array([[0.1, 0.1, 0.8]]), shares, 1.0)


def test_an_answers_unknown_reads_are_predicted_jointly():
    """Two unknown reads of one answer that tend to agree (lambda > 0): the undecided one is
    pulled towards its partner's likely score (a 50/50 partner pulls neither way); with
    lambda = 0 each keeps its own conditional."""
    log_p = np.log(np.array([[0.5, 0.5], [0.9, 0.1], [0.5, 0.5]]))
    answer = np.array([0, 0, 1])
    alone = answer_marginals(log_p, answer, 0.0)
    np.testing.assert_allclose(alone, np.exp(log_p))
    joint = answer_marginals(log_p, answer, 2.0)
    assert joint[0, 0] > 0.5 and joint[1, 0] == pytest.approx(0.9)
    np.testing.assert_allclose(joint[2], [0.5, 0.5])
    # Exact: P(x_1 = 0) = sum_b .5 p_2(b) e^{2 [b = 0]} / Z.
    weights = np.array([[0.5 * 0.9 * np.e**2, 0.5 * 0.1], [0.5 * 0.9, 0.5 * 0.1 * np.e**2]])
    assert joint[0, 0] == pytest.approx(weights[0].sum() / weights.sum())
