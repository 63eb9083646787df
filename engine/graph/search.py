"""The neighbour search: every response's Kmax most similar responses, found in one chunked pass
of float32 matrix products that also yields the global minimum and maximum similarity."""

from __future__ import annotations

import numpy as np

from engine.core.progress import NEIGHBOURS, Reporter
from engine.graph.neighbour_graph import NeighbourGraph
from engine.graph.similarity import Similarities, blocks


def _top_k_rows(block: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k largest entries of every row of `block` (b, N): (indices, values), both (b, k),
    largest first, ties by lower column.

    A full argpartition of every row is the slow part of the search, so rows are screened
    first: the columns are split into g slices of `width`, and tau, the k-th largest of the
    `width` slice-wise maxima, is a lower bound for the row's k-th largest entry (those maxima
    are k distinct entries >= tau). Only the slice positions whose maximum reaches tau (about k
    per row) are then looked at, and their entries >= tau sorted.
    """
    b, n = block.shape
    groups = max(1, min(16, n // (2 * k)))
    width = -(-n // groups)
    maxima = _slice_maxima(block, groups, width)
    tau = np.partition(maxima, width - k, axis=1)[:, width - k]
    rows, position = np.nonzero(maxima >= tau[:, None])
    if rows.size > 4 * b * k + 1024:  # heavy ties (e.g. duplicated answers): sort rows fully
        return _top_k_rows_by_partition(block, k)
    # Flat positions in the block (int32: a block holds at most MAX_BLOCK_ELEMENTS entries).
    base = (rows * n + position).astype(np.int32)
    flat = (base[:, None] + (width * np.arange(groups, dtype=np.int32))).ravel()
    rows = np.repeat(rows.astype(np.int32), groups)
    cols = flat - rows * n
    inside = cols < n
    values = block.ravel()[np.where(inside, flat, 0)]
    keep = inside & (values >= tau[rows])
    rows, cols, values = rows[keep], cols[keep], values[keep]
    # Pad each row's candidates to a (b, most) table and sort rows by (-value, column).
    counts = np.bincount(rows, minlength=b)
    slot = np.arange(rows.size) - np.repeat(np.cumsum(counts) - counts, counts)
    padded = np.full((b, counts.max()), -np.inf, dtype=block.dtype)
    padded_cols = np.full((b, counts.max()), n, dtype=np.int32)
    padded[rows, slot], padded_cols[rows, slot] = values, cols
    top = np.lexsort((padded_cols, -padded), axis=1)[:, :k]
    return np.take_along_axis(padded_cols, top, axis=1), np.take_along_axis(padded, top, axis=1)


def _slice_maxima(block: np.ndarray, groups: int, width: int, tile: int = 64) -> np.ndarray:
    """(b, width) elementwise maxima of the column slices [g*width, (g+1)*width), in row tiles
    that stay in cache."""
    maxima = np.empty((block.shape[0], width), dtype=block.dtype)
    for r in range(0, block.shape[0], tile):
        rows, out = block[r : r + tile], maxima[r : r + tile]
        out[:] = rows[:, :width]
        for g in range(1, groups):
            part = rows[:, g * width : (g + 1) * width]
            np.maximum(out[:, : part.shape[1]], part, out=out[:, : part.shape[1]])
    return maxima


def _top_k_rows_by_partition(block: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = block.shape[1]
    top = np.argpartition(block, n - k, axis=1)[:, n - k :]
    values = np.take_along_axis(block, top, axis=1)
    order = np.lexsort((top, -values), axis=1)
    return np.take_along_axis(top, order, axis=1).astype(np.int32), np.take_along_axis(
        values, order, axis=1
    )


def build_graph(
    embeddings: np.ndarray,
    k_max: int,
    chunk: int = 2048,
    normalize: bool = True,
    reporter: Reporter | None = None,
) -> NeighbourGraph:
    """Find every row's `k_max` nearest neighbours by cosine similarity, in one chunked pass.

    embeddings: (N, d), L2-normalised. Each block of rows is multiplied against all rows in
    float32; the diagonal is excluded; a screened partial sort keeps the top k_max, largest
    first. The global max off-diagonal similarity is the largest top-1 similarity, so only the
    minimum needs a pass over each block.
    Memory: O(N x k_max) for the lists plus one block of at most MAX_BLOCK_ELEMENTS.
    """
    embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
    n = embeddings.shape[0]
    if n < 2:
        raise ValueError("a similarity graph needs at least two responses")
    k_max = int(min(k_max, n - 1))
    indices = np.empty((n, k_max), dtype=np.int32)
    similarities = np.empty((n, k_max), dtype=np.float32)
    low = np.inf
    similarity = Similarities(embeddings, chunk)
    for start, stop in blocks(n, chunk):
        block = similarity(start, stop)
        local = np.arange(stop - start)
        block[local, local + start] = np.inf
        low = min(low, float(block.min()))
        block[local, local + start] = -np.inf
        indices[start:stop], similarities[start:stop] = _top_k_rows(block, k_max)
        if reporter is not None:
            reporter(NEIGHBOURS, stop, n, f"{stop:,} of {n:,} rows")
    high = float(similarities[:, 0].max())
    return NeighbourGraph(indices, similarities, low, high, normalize, embeddings)
