"""engine.graph.search and engine.graph.tiles: the neighbour search over the upper triangle gives
exactly the lists of a brute-force oracle (the full matrix in integer arithmetic, each row sorted by
similarity, ties by lower index), computes only the tiles on and above the diagonal, and keeps
the tie order among duplicated answers."""

from __future__ import annotations

import numpy as np
import pytest

import engine.graph.similarity as similarity
from engine.graph import search
from engine.graph.search import build_graph
from engine.graph.tiles import decode, keys


def _oracle(vectors: np.ndarray, k: int):
    """The full matrix in integer arithmetic (independent of any float product): the vectors on
    the search's grid as int64 multiples of 1 / GRID, their exact dot products, then rounded
    once to float32; each row sorted by (-similarity, index)."""
    grid = np.rint(vectors.astype(np.float64) * similarity.GRID).astype(np.int64)
    full = ((grid @ grid.T) / similarity.GRID**2).astype(np.float32)
    np.fill_diagonal(full, -np.inf)
    columns = np.broadcast_to(np.arange(len(vectors)), full.shape)
    order = np.lexsort((columns, -full), axis=1)[:, :k]
    off_diagonal = full[~np.eye(len(vectors), dtype=bool)]
    return order, np.take_along_axis(full, order, axis=1), off_diagonal.min(), off_diagonal.max()


def _vectors(n: int, dim: int, seed: int, duplicated: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(5, dim))
    vectors = centres[rng.integers(0, 5, n)] + rng.normal(size=(n, dim))
    vectors[rng.random(n) < duplicated] = vectors[0]  # many copies of one answer: exact ties
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32)


@pytest.mark.parametrize(
    "n, k, chunk, duplicated",
    [
        (2, 1, 2048, 0.0),
        (60, 10, 2048, 0.0),  # one tile
        (300, 20, 64, 0.0),
        (1000, 50, 128, 0.0),
        (1030, 40, 256, 0.0),  # a last span narrower than K
        (700, 3, 11, 0.1),
        (2000, 20, 256, 0.3),
        (1500, 49, 500, 0.6),  # most answers the same: ties decided by index
    ],
)
@pytest.mark.parametrize("use_torch", [False, True])
def test_lists_equal_the_brute_force_oracle(monkeypatch, n, k, chunk, duplicated, use_torch):
    monkeypatch.setattr(similarity, "USE_TORCH", use_torch)
    vectors = _vectors(n, 16, seed=n + k, duplicated=duplicated)
    graph = build_graph(vectors, k, chunk)
    indices, values, low, high = _oracle(vectors, k)
    np.testing.assert_array_equal(graph.indices, indices)
    np.testing.assert_array_equal(graph.similarities, values)
    assert graph.low == low and graph.high == high


def test_only_tiles_on_and_above_the_diagonal_are_computed(monkeypatch):
    computed = []
    tile = similarity.Similarities.tile

    def counting(self, rows, cols):
        computed.append((rows.start, cols.start, rows.stop - rows.start, cols.stop - cols.start))
        return tile(self, rows, cols)

    monkeypatch.setattr(similarity.Similarities, "tile", counting)
    vectors = _vectors(1000, 16, seed=1)
    build_graph(vectors, 30, chunk=100)
    assert all(row <= col for row, col, _, _ in computed)
    assert len(computed) == 10 * 11 // 2
    entries = sum(a * b for _, _, a, b in computed)
    assert entries == (1000 * 1000 + 1000 * 100) // 2  # half the matrix, plus half the diagonal


def test_tiles_are_square_and_at_most_the_block_cap():
    assert search.tile_side(100_000, 2048) == 2048
    assert search.tile_side(100_000, 10**6) ** 2 <= similarity.MAX_BLOCK_ELEMENTS
    assert search.tile_side(50, 2048) == 50


def test_keys_sort_as_the_lists_and_decode_back():
    rng = np.random.default_rng(0)
    values = rng.normal(size=500).astype(np.float32)
    values[:50] = values[50:100]  # ties
    values[100] = 0.0
    values[101] = -0.0 + np.float32(-1e-38)  # a tiny negative
    neighbours = rng.permutation(500).astype(np.int32)
    order = np.argsort(keys(values, neighbours), kind="stable")
    np.testing.assert_array_equal(order, np.lexsort((neighbours, -values)))
    back_neighbours, back_values = decode(keys(values, neighbours))
    np.testing.assert_array_equal(back_neighbours, neighbours)
    np.testing.assert_array_equal(back_values, values)


def test_a_small_search_runs_on_one_blas_thread(monkeypatch):
    entered = []

    class Context:
        def __enter__(self):
            entered.append(True)

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(search, "one_blas_thread", Context)
    build_graph(_vectors(40, 16, seed=2), 10)
    assert entered == [True]
    entered.clear()
    monkeypatch.setattr(search, "SMALL_PRODUCT", 10.0)
    build_graph(_vectors(40, 16, seed=2), 10)
    assert entered == []
