"""engine.graph.neighbour_graph: neighbour lists, normalisation constants, pruned weights and features, checked
against the dense reference in tests/naive.py and across chunk sizes."""

from __future__ import annotations

import naive
import numpy as np
import pytest
from helpers import clustered_embeddings

import engine.graph.similarity
from engine.graph.search import build_graph

N = 90
K_MAX = 12


@pytest.fixture(scope="module")
def data():
    emb, scores = clustered_embeddings(N, 3, dim=16, noise=2.0, seed=7)
    return emb, scores


@pytest.fixture(scope="module")
def graph(data):
    return build_graph(data[0], K_MAX, chunk=2048)


@pytest.mark.parametrize("chunk", [1, 3, 7])
def test_small_chunks_give_the_same_graph_as_one_block(data, graph, chunk):
    chunked = build_graph(data[0], K_MAX, chunk=chunk)
    np.testing.assert_array_equal(chunked.indices, graph.indices)
    np.testing.assert_allclose(chunked.similarities, graph.similarities, rtol=0, atol=1e-6)
    assert chunked.low == pytest.approx(graph.low, abs=1e-6)
    assert chunked.high == pytest.approx(graph.high, abs=1e-6)


def test_progress_reports_every_tile(data):
    events = []

    class Recorder:
        def __call__(self, stage, done, total, message="", payload=None):
            events.append((stage, done, total))

    # Tiles of 25: 4 spans of rows, 10 tiles on and above the diagonal.
    build_graph(data[0], K_MAX, chunk=25, reporter=Recorder())
    assert events == [("neighbours", d, 10) for d in range(1, 11)]


def test_neighbour_lists_are_the_k_largest_off_diagonal_entries(data, graph):
    sim = naive.cosine_matrix(data[0])
    expected = naive.top_k_sets(sim, K_MAX)
    for i in range(N):
        row = graph.indices[i]
        assert i not in row
        assert set(row.tolist()) == expected[i]
        # sorted, most similar first, and the stored values are the raw cosines
        assert np.all(np.diff(graph.similarities[i]) <= 0)
        np.testing.assert_allclose(graph.similarities[i], sim[i, row], atol=1e-6)


def test_low_and_high_are_the_off_diagonal_min_and_max(data, graph):
    low, high = naive.off_diagonal_range(naive.cosine_matrix(data[0]))
    assert graph.low == pytest.approx(low, abs=1e-6)
    assert graph.high == pytest.approx(high, abs=1e-6)
    assert high < 0.999  # the diagonal (1.0) was not taken as the maximum


@pytest.mark.parametrize(
    "top_k, power, symmetric", [(1, 1.0, True), (4, 2.0, True), (4, 2.0, False), (12, 0.5, True)]
)
def test_pruned_weights_match_the_paper_definition(data, graph, top_k, power, symmetric):
    w = graph.weights(top_k, power, symmetric).toarray()
    expected = naive.similarity_graph(data[0], top_k, power, symmetric)
    np.testing.assert_allclose(w, expected, atol=2e-6)
    assert np.all(np.diag(w) == 0)
    if symmetric:
        np.testing.assert_array_equal(w, w.T)
    else:
        assert np.all(np.count_nonzero(w, axis=1) <= top_k)


@pytest.mark.parametrize(
    "top_k, power, symmetric",
    [(3, 1.0, True), (3, 1.0, False), (10, 4.0, True), (None, 1.0, True), (None, 2.5, True)],
)
def test_features_equal_the_naive_features(data, graph, top_k, power, symmetric):
    emb, scores = data
    t, s = graph.features(scores, 3, top_k, power, symmetric)
    expected_t, expected_s = naive.features(
        naive.similarity_graph(emb, top_k, power, symmetric), scores, 3
    )
    assert t.shape == (N, 3) and s.shape == (N,)
    np.testing.assert_allclose(t, expected_t, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s, expected_s, rtol=1e-5, atol=1e-5)


def test_dense_features_in_small_blocks_equal_one_block(data, graph, monkeypatch):
    """Cap blocks at 7 rows (the cap is what bounds memory on large N) and compare.

    Similarities are float32 products, and BLAS may round a 7-row block differently from a
    whole one, so the two agree to float32 precision, not bit for bit."""
    emb, scores = data
    whole = graph.features(scores, 3, None, 2.0)
    monkeypatch.setattr(engine.graph.similarity, "MAX_BLOCK_ELEMENTS", 7 * N)
    assert engine.graph.similarity.effective_chunk(N, 1024) == 7
    blocked = graph.features(scores, 3, None, 2.0)
    np.testing.assert_allclose(blocked[0], whole[0], rtol=1e-6)
    np.testing.assert_allclose(blocked[1], whole[1], rtol=1e-6)


def test_features_without_normalisation_clip_negative_similarities(data):
    emb, scores = data
    raw = build_graph(emb, K_MAX, normalize=False)
    assert raw.low < 0  # the data has negative cosines, so the clipping matters
    for top_k in (5, None):
        t, s = raw.features(scores, 3, top_k, 2.0)
        expected = naive.features(
            naive.similarity_graph(emb, top_k, 2.0, True, normalize=False), scores, 3
        )
        np.testing.assert_allclose(t, expected[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(s, expected[1], rtol=1e-5, atol=1e-5)


def test_top_k_outside_the_lists_is_refused(graph):
    with pytest.raises(ValueError, match="top_k"):
        graph.weights(K_MAX + 1)
    with pytest.raises(ValueError, match="top_k"):
        graph.weights(0)
