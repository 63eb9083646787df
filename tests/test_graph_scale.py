"""The graph package at scale (engine/graph/): the fast paths that make large N possible give the
paper's numbers, and stay within memory.

The neighbour search, the symmetric edge table and the per-K features are compared with the
dense reference in tests/naive.py for every K and several powers, with blocks small enough that
block boundaries fall inside the data, on both matrix-product back ends (numpy and torch) and on
the full-sort fallback for heavy ties. Memory of the search is measured with tracemalloc.
"""

from __future__ import annotations

import tracemalloc

import naive
import numpy as np
import pytest
from helpers import clustered_embeddings

import engine.graph.search
import engine.graph.similarity
from engine.graph import tiles
from engine.graph.neighbour_graph import dense_seconds, dense_warning
from engine.graph.search import build_graph

N = 150
K_MAX = 12
N_CLASSES = 4
POWERS = (0.5, 1.0, 2.5)


@pytest.fixture(scope="module")
def data():
    return clustered_embeddings(N, N_CLASSES, dim=16, noise=2.0, seed=11)


@pytest.fixture(params=["numpy", "torch"])
def backend(request, monkeypatch):
    monkeypatch.setattr(engine.graph.similarity, "USE_TORCH", request.param == "torch")
    return request.param


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 7 rows: the cap that bounds memory on large N, exercised on small N."""
    monkeypatch.setattr(engine.graph.similarity, "MAX_BLOCK_ELEMENTS", 7 * N)
    return 7


def reference_features(emb, scores, top_k, power, symmetric, normalize=True):
    graph = naive.similarity_graph(emb, top_k, power, symmetric, normalize=normalize)
    onehot = np.eye(N_CLASSES)[scores]
    return graph @ onehot, graph.sum(axis=1)


def test_blocked_search_finds_the_reference_neighbours(data, backend, small_blocks):
    emb, _ = data
    graph = build_graph(emb, K_MAX, chunk=2048)
    sim = naive.cosine_matrix(emb)
    np.fill_diagonal(sim, -np.inf)
    expected = np.argsort(-sim, axis=1, kind="stable")[:, :K_MAX]
    np.testing.assert_array_equal(graph.indices, expected)
    np.testing.assert_allclose(
        graph.similarities, np.take_along_axis(sim, expected, axis=1), atol=1e-6
    )
    low, high = naive.off_diagonal_range(naive.cosine_matrix(emb))
    assert graph.low == pytest.approx(low, abs=1e-6)
    assert graph.high == pytest.approx(high, abs=1e-6)


@pytest.mark.parametrize("symmetric", [True, False])
def test_features_equal_the_reference_for_every_k_and_power(data, small_blocks, symmetric):
    emb, scores = data
    graph = build_graph(emb, K_MAX)
    for top_k in range(1, K_MAX + 1):
        for power in POWERS:
            t, s = graph.features(scores, N_CLASSES, top_k, power, symmetric)
            expected_t, expected_s = reference_features(emb, scores, top_k, power, symmetric)
            np.testing.assert_allclose(t, expected_t, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(s, expected_s, rtol=1e-5, atol=1e-5)


def test_weights_equal_the_reference_graph(data):
    emb, _ = data
    graph = build_graph(emb, K_MAX)
    for top_k in (1, 5, K_MAX):
        for symmetric in (True, False):
            w = graph.weights(top_k, 2.0, symmetric).toarray()
            expected = naive.similarity_graph(emb, top_k, 2.0, symmetric)
            np.testing.assert_allclose(w, expected, rtol=1e-5, atol=1e-6)


def test_features_without_normalisation_equal_the_reference(data):
    emb, scores = data
    graph = build_graph(emb, K_MAX, normalize=False)
    for top_k in (1, 6, K_MAX):
        t, s = graph.features(scores, N_CLASSES, top_k, 2.5, True)
        expected_t, expected_s = reference_features(emb, scores, top_k, 2.5, True, False)
        np.testing.assert_allclose(t, expected_t, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(s, expected_s, rtol=1e-5, atol=1e-5)


def test_dense_features_in_blocks_equal_the_reference(data, backend, small_blocks):
    emb, scores = data
    graph = build_graph(emb, 5)
    seen = []
    t, s = graph.features(scores, N_CLASSES, None, 2.5, block_progress=lambda d, n: seen.append(d))
    expected_t, expected_s = reference_features(emb, scores, None, 2.5, True)
    np.testing.assert_allclose(t, expected_t, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s, expected_s, rtol=1e-5, atol=1e-5)
    assert seen == list(range(7, N, 7)) + [N]


def test_features_follow_new_scores_on_the_same_graph(data):
    """The per-edge label codes are cached; a different score vector must not reuse them."""
    emb, scores = data
    graph = build_graph(emb, K_MAX)
    graph.features(scores, N_CLASSES, 4)
    shuffled = np.roll(scores, 1)
    t, _ = graph.features(shuffled, N_CLASSES, 4)
    expected_t, _ = reference_features(emb, shuffled, 4, 1.0, True)
    np.testing.assert_allclose(t, expected_t, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("per_answer", [60, 600])
def test_duplicated_answers_list_copies_as_neighbours(per_answer):
    """Duplicated answers give runs of equal similarities (60 or 600 copies of each of three
    answers, tiles of 16). Every listed neighbour is a copy (float32 products of equal rows may
    differ in the last bit, so which copies is not specified); the pools drop the ties that
    cannot beat a row's K-th key, so many copies need no fallback."""
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(3, 8))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    n = 3 * per_answer
    emb = centres[np.repeat(np.arange(3), per_answer)].astype(np.float32)
    graph = build_graph(emb, 10, chunk=16)
    for i in (0, per_answer - 1, per_answer, n - 1):
        same = {j for j in range(n) if j // per_answer == i // per_answer and j != i}
        assert set(graph.indices[i].tolist()) <= same
        np.testing.assert_allclose(graph.similarities[i], 1.0, atol=1e-6)


def test_tile_candidates_are_every_entry_that_reaches_its_bound():
    """The screened pass over a tile returns exactly the entries at or above each row's bound
    and, down the columns, at or above each column's bound; a diagonal tile's candidates hold
    every row's 25 largest entries."""
    rng = np.random.default_rng(5)
    block = rng.normal(size=(130, 1000)).astype(np.float32)
    row_bound = np.quantile(block, 0.98, axis=1).astype(np.float32)
    column_bound = np.quantile(block, 0.9, axis=0).astype(np.float32)
    row_bound[:3] = -np.inf  # rows with no bound yet: every entry
    low, across, down = tiles.tile_candidates(block, row_bound, column_bound, 25)
    assert low == block.min()
    rows, cols = np.nonzero(block >= row_bound[:, None])
    assert set(zip(across[0].tolist(), across[1].tolist())) == set(
        zip(rows.tolist(), cols.tolist())
    )
    np.testing.assert_array_equal(across[2], block[across[0], across[1]])
    rows, cols = np.nonzero(block >= column_bound[None, :])
    assert set(zip(down[0].tolist(), down[1].tolist())) == set(zip(cols.tolist(), rows.tolist()))
    assert np.all(np.diff(down[0]) >= 0)  # columns ascending, as the pools expect
    square = block[:, :130].copy()
    square[np.arange(130), np.arange(130)] = -np.inf
    at, col, _ = tiles.diagonal_candidates(square, 25)
    found = set(zip(at.tolist(), col.tolist()))
    top = np.argsort(-square, axis=1)[:, :25]
    assert all((i, int(j)) in found for i in range(130) for j in top[i])


def test_neighbour_search_memory_is_bounded_by_the_lists_plus_one_block(monkeypatch):
    """N = 6,000 (d = 64, Kmax = 20, chunk = 500): the N x N matrix would be 144 MB in float32;
    the lists are 1 MB and one block 12 MB. tracemalloc sees numpy's allocations (not torch's),
    so the numpy back end is measured."""
    monkeypatch.setattr(engine.graph.similarity, "USE_TORCH", False)
    n, k_max, chunk = 6000, 20, 500
    emb, _ = clustered_embeddings(n, 3, dim=64, noise=1.0, seed=2)
    lists = n * k_max * (4 + 4)
    block = chunk * n * 4
    bound = 4 * lists + 3 * block  # lists with sort temporaries, block + screening temporaries
    tracemalloc.start()
    try:
        graph = build_graph(emb, k_max, chunk=chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert graph.indices.shape == (n, k_max)
    assert peak < bound, f"peak {peak / 1e6:.1f} MB over bound {bound / 1e6:.1f} MB"


def test_dense_graph_warns_when_n_makes_it_slow():
    assert dense_warning(2_000, 384, 12) is None
    note = dense_warning(20_000, 384, 12)
    assert note is not None and "similarity_top_k" in note and "20,000" in note
    assert dense_seconds(40_000, 384) == pytest.approx(4 * dense_seconds(20_000, 384))
