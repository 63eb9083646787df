"""The neighbour search: every response's Kmax most similar responses, found in one chunked pass
of float32 matrix products that also yields the global minimum and maximum similarity."""

from __future__ import annotations

import contextlib

import numpy as np

from engine.core.machine.threads import one_blas_thread
from engine.core.progress import NEIGHBOURS, Reporter
from engine.graph.neighbour_graph import NeighbourGraph
from engine.graph.similarity import MAX_BLOCK_ELEMENTS, Similarities
from engine.graph.tiles import (
    NeighbourPools,
    decode,
    diagonal_candidates,
    keys,
    tile_candidates,
)

# Tiles are square: at most MAX_BLOCK_ELEMENTS similarities (4096 x 4096, 64 MB).
MAX_TILE_SIDE = int(MAX_BLOCK_ELEMENTS**0.5)
# Below this many multiply-adds (N^2 d) the product runs on one BLAS thread (engine.core.machine.threads).
SMALL_PRODUCT = 2e8


def tile_side(n: int, chunk: int) -> int:
    """Rows (and columns) of one tile: `chunk`, at most MAX_TILE_SIDE (a tile then holds
    MAX_BLOCK_ELEMENTS similarities), at most N."""
    return max(1, min(n, chunk, MAX_TILE_SIDE))


def build_graph(
    embeddings: np.ndarray,
    k_max: int,
    chunk: int = 2048,
    normalize: bool = True,
    reporter: Reporter | None = None,
) -> NeighbourGraph:
    """Find every row's `k_max` nearest neighbours by cosine similarity, in one pass over the
    upper triangle of the similarity matrix.

    embeddings: (N, d), L2-normalised. The matrix is cut into square tiles of `tile_side`; only
    the tiles on and above the diagonal are computed (float32), and each is read along its rows
    and down its columns (the matrix is symmetric), so the products cost half of the full
    matrix's. The diagonal tiles come first, so every row starts with a bound on its K-th
    similarity; each row's neighbours are then kept in a pool (engine.graph.tiles) and sorted,
    largest first, ties by lower index, once its last tile is done. The minimum off-diagonal
    similarity is the minimum over the tiles, the maximum the largest top-1 similarity.
    Memory: O(N x k_max) for the lists and pools plus one tile of at most MAX_BLOCK_ELEMENTS.
    """
    embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
    n, d = embeddings.shape
    if n < 2:
        raise ValueError("a similarity graph needs at least two responses")
    k_max = int(min(k_max, n - 1))
    side = tile_side(n, chunk)
    spans = [slice(start, min(n, start + side)) for start in range(0, n, side)]
    pools = NeighbourPools(n, k_max)
    indices = np.empty((n, k_max), dtype=np.int32)
    similarities = np.empty((n, k_max), dtype=np.float32)
    similarity = Similarities(embeddings, chunk, entries=side * side)
    order = [(i, i) for i in range(len(spans))]
    order += [(i, j) for i in range(len(spans)) for j in range(i + 1, len(spans))]
    remaining = [len(spans)] * len(spans)  # every span is in one tile with each span
    low = np.inf
    # A small product is done faster by one BLAS thread than by waking the others.
    threads = one_blas_thread() if n * n * d <= SMALL_PRODUCT else contextlib.nullcontext()
    with threads:
        for done, (i, j) in enumerate(order, start=1):
            block = similarity.tile(spans[i], spans[j])
            low = min(low, _offer_tile(block, spans[i], spans[j], pools, k_max))
            if reporter is not None:
                reporter(NEIGHBOURS, done, len(order), f"{done:,} of {len(order):,} tiles")
            for span in {i, j}:
                remaining[span] -= 1
                if remaining[span] == 0:  # its last tile: these rows' lists are complete
                    best = pools.finish(spans[span].start, spans[span].stop)
                    indices[spans[span]], similarities[spans[span]] = decode(best)
    high = float(similarities[:, 0].max())
    return NeighbourGraph(indices, similarities, float(low), high, normalize, embeddings)


def _offer_tile(block: np.ndarray, rows: slice, cols: slice, pools, k: int) -> float:
    """Offer one tile's entries to its rows and (above the diagonal) to its columns' rows;
    returns the tile's smallest off-diagonal similarity."""
    if rows.start == cols.start:  # a response is not its own neighbour, nor the minimum
        local = np.arange(block.shape[0])
        block[local, local] = np.inf
        low = float(block.min())
        block[local, local] = -np.inf
        at, neighbour, value = diagonal_candidates(block, k)
        pools.offer(rows.start, at, keys(value, neighbour + cols.start))
        return low
    low, across, down = tile_candidates(block, pools.bound[rows], pools.bound[cols], k)
    at, neighbour, value = across
    pools.offer(rows.start, at, keys(value, neighbour + cols.start))
    at, neighbour, value = down
    pools.offer(cols.start, at, keys(value, neighbour + rows.start))
    return low
