"""The session model's read features (engine/model/session/features.py): neighbours counted once
with their reads averaged, the answer's own other reads, only kept reads, per-item scaling."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import noisy_clusters

from engine.graph.search import build_graph
from engine.model.session.features import SessionItem, read_features


def _item(answers=12, seed=0, double=(), scores=None, raters=None, top_k=4):
    vectors, first = noisy_clusters(answers, seed)
    answer = np.r_[np.arange(answers), np.asarray(double, int)]
    score = np.r_[first, np.zeros(len(double), int)] if scores is None else np.asarray(scores)
    rater = np.zeros(answer.size, int) if raters is None else np.asarray(raters)
    return SessionItem(answer, rater, score, 3, build_graph(vectors, top_k))


def test_one_read_per_answer_gives_the_papers_features_per_unit_of_mean_mass():
    item = _item()
    features = read_features([item], 4)
    t, s = item.graph.features(item.score, 3, 4)
    scale = s.mean()
    np.testing.assert_allclose(features.t, t / scale)
    np.testing.assert_allclose(features.s, s / scale - 1.0)
    np.testing.assert_allclose(features.scale, [scale])
    assert not features.own.any()


def test_a_neighbour_read_twice_counts_once_with_its_reads_averaged():
    base = _item()
    first = base.score.copy()
    # Answer 0 read a second time with another score: its neighbours see half of each.
    other = (first[0] + 1) % 3
    item = _item(double=[0], scores=np.r_[first, other])
    features = read_features([item], 4)
    weights = item.graph.weights(4, 1.0, True).toarray()
    shares = np.eye(3)[first]
    shares[0] = (np.eye(3)[first[0]] + np.eye(3)[other]) / 2
    t = weights @ shares
    scale = t.sum(axis=1).mean()
    np.testing.assert_allclose(features.t, (t / scale)[item.answer])
    # Both reads of answer 0 see the same neighbours, and each the other read as its own.
    np.testing.assert_allclose(features.t[0], features.t[-1])
    np.testing.assert_array_equal(features.own[0], np.eye(3)[other])
    np.testing.assert_array_equal(features.own[-1], np.eye(3)[first[0]])
    assert not features.own[1:-1].any()


def test_held_out_reads_enter_no_feature():
    item = _item(double=[2, 5])
    kept = np.ones(item.n_reads, bool)
    held = item.answer == 5
    kept[held] = False
    features = read_features([item], 4, kept=[kept])
    changed = item.score.copy()
    changed[held] = (changed[held] + 1) % 3
    other = SessionItem(item.answer, item.rater, changed, 3, item.graph)
    again = read_features([other], 4, kept=[kept])
    np.testing.assert_array_equal(features.t, again.t)
    np.testing.assert_array_equal(features.own, again.own)
    # The held-out answer's reads see none of their own reads.
    assert not features.own[held].any()


def test_items_are_numbered_one_after_another():
    items = [_item(seed=1), _item(answers=15, seed=2, double=[3])]
    features = read_features(items, 4)
    assert features.n_reads == 12 + 16
    np.testing.assert_array_equal(features.answers_of_item, [0, 12, 27])
    np.testing.assert_array_equal(features.answer[12:], items[1].answer + 12)
    assert features.neighbours.shape == (27, 27)
    assert features.neighbours[:12, 12:].nnz == 0


def test_items_of_different_scales_are_refused():
    item = _item()
    other = SessionItem(item.answer, item.rater, item.score, 4, item.graph)
    with pytest.raises(ValueError, match="one scale"):
        read_features([item, other], 4)


def test_the_audited_read_is_the_first_unless_stated():
    item = _item(double=[0, 3])
    np.testing.assert_array_equal(item.audited_reads(), np.arange(12))
    audited = np.ones(item.n_reads, bool)
    audited[[0, 3]] = False
    stated = SessionItem(item.answer, item.rater, item.score, 3, item.graph, audited=audited)
    chosen = stated.audited_reads()
    assert chosen[0] == 12 and chosen[3] == 13


def _same_features(a, b) -> None:
    for name in ("t", "s", "own", "same", "scale", "kept", "answer"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert (a.neighbours != b.neighbours).nnz == 0


@pytest.mark.parametrize("kept_graphs", [10**9, 0])
def test_graphs_kept_between_fits_give_the_same_features(monkeypatch, kept_graphs):
    """A fit and every cross-fitting fold ask for the same graphs: kept on the item (or, past
    the bound, built again), each fold's features are exactly those of a fresh item."""
    import engine.model.session.features as module

    monkeypatch.setattr(module, "GRAPHS_KEPT", kept_graphs)
    item = _item(answers=20, double=[2, 5, 7], top_k=6)
    folds = np.arange(item.n_answers) % 3
    for k in (3, 6, 3):
        for fold in range(3):
            kept = folds[item.answer] != fold
            fresh = SessionItem(item.answer, item.rater, item.score, 3, item.graph)
            _same_features(
                read_features([item], k, kept=[kept]), read_features([fresh], k, kept=[kept])
            )
    assert len(item._graphs) == (2 if kept_graphs else 0)
