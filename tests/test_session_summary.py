"""What parm reads from a session model (engine/model/session/summary.py): per item, per answer
and per rater, the contract of `summarise_session`."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import noisy_clusters
from session_sim import simulated_items

from engine.graph.search import build_graph
from engine.model.session.cross_fit import SessionOptions
from engine.model.session.features import SessionItem
from engine.model.session.summary import scale_groups, summarise_session

OPTIONS = SessionOptions(top_k_values=(4, 8), folds=3)


@pytest.fixture(scope="module")
def session():
    """Three simulated items on a 4-point scale (raters 0-2) and one 3-point item read once
    by rater 1 (its own scale group)."""
    items = simulated_items(items=3, answers=30, raters=3, double=0.4, top_k=8, sweeps=30, seed=51)
    vectors, scores = noisy_clusters(25, seed=53)
    other = SessionItem(
        np.arange(25), np.ones(25, int), scores, 3, build_graph(vectors, 8), name="other"
    )
    items = items[:2] + [other] + items[2:]
    return items, summarise_session(items, OPTIONS)


def test_items_come_back_in_order_with_one_row_per_answer(session):
    items, summary = session
    assert [s.name for s in summary.items] == [i.name for i in items]
    for item, found in zip(items, summary.items):
        n, k = item.n_answers, item.n_classes
        assert found.proba.shape == (n, k) and found.cross_proba.shape == (n, k)
        np.testing.assert_allclose(found.proba.sum(axis=1), 1.0)
        np.testing.assert_allclose(found.cross_proba.sum(axis=1), 1.0)
        assert found.predicted.shape == (n,) and found.predicted.max() < k
        assert set(found.in_sample) == {"accuracy", "kappa", "qwk"}
        assert set(found.cross_fitted) == {"accuracy", "kappa", "qwk"}


def test_each_scale_is_its_own_group_and_a_lone_item_is_todays_model(session):
    items, summary = session
    assert scale_groups(items) == [[0, 1, 3], [2]]
    assert [g.items for g in summary.groups] == [[0, 1, 3], [2]]
    lone = summary.groups[1].fit.layout
    assert lone.components == () and lone.size == 3 * lone.c
    assert np.all(np.isnan(summary.groups[1].raters.se))


def test_rater_intercepts_come_with_intervals_around_them(session):
    _, summary = session
    raters = summary.groups[0].raters
    assert raters.estimate.shape == (3, 3) and raters.reads.tolist() == list(raters.reads)
    assert np.all(raters.reads > 0)
    assert np.all(raters.low < raters.estimate) and np.all(raters.estimate < raters.high)
    np.testing.assert_allclose(raters.high - raters.estimate, raters.estimate - raters.low)
    assert "sandwich" in raters.method
    for name, (value, low, high) in summary.groups[0].variances.items():
        assert low <= value <= high, name


def test_the_audited_read_is_the_one_summarised(session):
    """Marking a second read as audited changes that answer's row, and only that row."""
    items, _ = session
    item = items[0]
    twice = np.flatnonzero(np.bincount(item.answer) > 1)[0]
    audited = np.zeros(item.n_reads, bool)
    audited[item.audited_reads()] = True
    first, second = np.flatnonzero(item.answer == twice)[:2]
    audited[first], audited[second] = False, True
    moved = dataclasses.replace(item, audited=audited)
    options = dataclasses.replace(OPTIONS, top_k_values=(8,))
    before = summarise_session([item] + items[1:2], options, cross_fit=False).items[0]
    after = summarise_session([moved] + items[1:2], options, cross_fit=False).items[0]
    others = np.arange(item.n_answers) != twice
    np.testing.assert_allclose(before.proba[others], after.proba[others])
    # Another rater read it (another rho): the row is that read's, not the first's.
    assert not np.allclose(before.proba[twice], after.proba[twice])
    assert before.cross_proba is None and before.cross_fitted is None
