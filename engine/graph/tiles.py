"""Top-K neighbours from tiles of the similarity matrix, each tile read for its rows and down its
columns, so that only the upper triangle is ever computed (engine.graph.search).

A neighbour is an int64 key that sorts as the neighbour lists do, largest similarity first and,
among equal similarities, the lower index first: the similarity's float32 bits mapped to an
order-reversed int32 in the high half, the neighbour's index in the low half. Each row keeps its
K best keys so far (`NeighbourPools`), whose K-th similarity is a lower bound of the row's final
K-th largest: a new tile offers a row only its entries at or above that bound (and above the
K-th largest of the tile's slice maxima, the screening engine.graph.search has always used), so
a row sorts a few candidates per tile instead of K. One pass over a tile, in row chunks that
stay in cache, gives its minimum and the slice maxima for both directions.
"""

from __future__ import annotations

import numpy as np

SENTINEL = np.iinfo(np.int64).max  # an empty slot: sorts after every real key
# Rows per chunk of the one pass over a tile (a chunk of a 4096-wide tile is 1 MB).
ROW_CHUNK = 64
# At most this many slices per direction: about 2K slice maxima per row or column are enough.
MAX_SLICES = 16


def keys(values: np.ndarray, neighbours: np.ndarray) -> np.ndarray:
    """int64 keys, ascending = similarity descending, then neighbour index ascending."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.int32)
    ascending = bits ^ ((bits >> 31) & 0x7FFFFFFF)  # float order as signed int order
    return ((~ascending).astype(np.int64) << 32) | neighbours.astype(np.int64)


def decode(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(neighbour indices int32, similarities float32) of keys."""
    ascending = ~(key >> 32).astype(np.int32)
    bits = ascending ^ ((ascending >> 31) & 0x7FFFFFFF)
    return (key & 0xFFFFFFFF).astype(np.int32), bits.view(np.float32)


class NeighbourPools:
    """The K best neighbour keys found so far for every row (N, K); `limit`, the K-th of them
    (SENTINEL until K are known), which a key must beat to enter; and `bound`, the same as a
    similarity: a lower bound of the row's final K-th largest similarity (-inf until K)."""

    def __init__(self, n: int, k: int):
        self.k = k
        self.keys = np.full((n, k), SENTINEL, dtype=np.int64)
        self.limit = np.full(n, SENTINEL, dtype=np.int64)
        self.bound = np.full(n, -np.inf, dtype=np.float32)

    def offer(self, start: int, rows: np.ndarray, offered: np.ndarray) -> None:
        """Merge candidate keys into the pools of rows start + rows (rows ascending). Keys that
        do not beat a row's K-th best are dropped first: among many equal similarities
        (duplicated answers) only those with a lower index than the K-th can still enter."""
        beats = offered < self.limit[start + rows]
        rows, offered = rows[beats], offered[beats]
        if rows.size == 0:
            return
        counts = np.bincount(rows)
        touched = np.flatnonzero(counts)
        slot = np.arange(rows.size) - np.repeat(np.cumsum(counts) - counts, counts)[: rows.size]
        table = np.full((touched.size, self.k + int(counts.max())), SENTINEL, dtype=np.int64)
        table[:, : self.k] = self.keys[start + touched]
        table[np.searchsorted(touched, rows), self.k + slot] = offered
        best = np.partition(table, self.k - 1, axis=1)[:, : self.k]
        self.keys[start + touched] = best
        kth = best.max(axis=1)
        known = kth != SENTINEL
        self.limit[start + touched] = kth
        self.bound[start + touched[known]] = decode(kth[known])[1]

    def finish(self, start: int, stop: int) -> np.ndarray:
        """The sorted K best keys of rows start:stop, (rows, K)."""
        return np.sort(self.keys[start:stop], axis=1)


def _slicing(length: int, k: int) -> tuple[int, int]:
    groups = max(1, min(MAX_SLICES, length // (2 * k)))
    return groups, -(-length // groups)


def diagonal_candidates(block: np.ndarray, k: int):
    """A tile on the diagonal (its diagonal already -inf): each row's entries that reach the
    K-th largest of its slice maxima, a bound from the tile alone (k distinct entries reach
    it). Returns (row, column, value) flat, rows ascending."""
    b, c = block.shape
    groups, width = _slicing(c, k)
    maxima = np.empty((b, width), dtype=block.dtype)
    for start in range(0, b, ROW_CHUNK):
        chunk, out = block[start : start + ROW_CHUNK], maxima[start : start + ROW_CHUNK]
        out[:] = chunk[:, :width]
        for g in range(1, groups):
            part = chunk[:, g * width : (g + 1) * width]
            np.maximum(out[:, : part.shape[1]], part, out=out[:, : part.shape[1]])
    tau = np.full(b, -np.inf, dtype=np.float32)
    if width >= k:
        tau = np.partition(maxima, width - k, axis=1)[:, width - k]
    rows, position = np.nonzero(maxima >= tau[:, None])
    cols = (position[:, None] + width * np.arange(groups)).ravel()
    rows = np.repeat(rows, groups)
    inside = cols < c
    values = block[rows, np.where(inside, cols, 0)]
    keep = inside & (values >= tau[rows])
    return rows[keep], cols[keep], values[keep]


def tile_candidates(block: np.ndarray, row_bound: np.ndarray, column_bound: np.ndarray, k: int):
    """A tile above the diagonal: its minimum, the entries of each row that reach
    row_bound[row] (row, column, value; rows ascending) and the entries of each column that
    reach column_bound[column] (column, row, value; columns ascending).

    The tile is read once, in row chunks that stay in cache; in each chunk, slice maxima find
    the row entries to look at, and the column maxima the columns to look at."""
    b, c = block.shape
    groups, width = _slicing(c, k)
    offsets = width * np.arange(groups)
    low = np.inf
    across, down = [], []
    for start in range(0, b, ROW_CHUNK):
        chunk = block[start : start + ROW_CHUNK]
        low = min(low, float(chunk.min()))
        maxima = chunk[:, :width].copy()
        for g in range(1, groups):
            part = chunk[:, g * width : (g + 1) * width]
            np.maximum(maxima[:, : part.shape[1]], part, out=maxima[:, : part.shape[1]])
        bound = row_bound[start : start + ROW_CHUNK]
        rows, position = np.nonzero(maxima >= bound[:, None])
        cols = (position[:, None] + offsets).ravel()
        rows = np.repeat(rows, groups)
        inside = cols < c
        values = chunk[rows, np.where(inside, cols, 0)]
        keep = inside & (values >= bound[rows])
        across.append((rows[keep] + start, cols[keep], values[keep]))
        wanted = np.flatnonzero(chunk.max(axis=0) >= column_bound)
        part = chunk[:, wanted]
        rows, at = np.nonzero(part >= column_bound[wanted])
        down.append((wanted[at], rows + start, part[rows, at]))
    found = [np.concatenate(parts) for parts in zip(*across)]
    cols, rows, values = (np.concatenate(parts) for parts in zip(*down))
    order = np.argsort(cols, kind="stable")
    return low, tuple(found), (cols[order], rows[order], values[order])
