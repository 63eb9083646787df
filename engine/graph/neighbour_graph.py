"""`NeighbourGraph`: the cosine-similarity graph, with the only O(N^2) step done once.

The top-Kmax neighbours of every response (indices and raw cosine similarities, sorted) are found
in one chunked pass of float32 matrix products, which also yields the global minimum and maximum
off-diagonal similarity for min-max normalisation. Every K <= Kmax and every power p is then a
cheap view of those lists: features for one (K, p) are two `bincount`s over at most N x K edges.
Without top-K (the dense graph), features are computed block by block, never holding N x N.
Memory is O(N x Kmax) plus one block of at most MAX_BLOCK_ELEMENTS similarities.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from engine.core.progress import Reporter

# Blocks hold chunk x N float32 similarities; this caps one block at 64 MB whatever chunk says.
# It also bounds the time between progress events: a block is at most 1.3e10 flops at d = 384,
# about 0.2 s on two idle cores (under 1 s with the cores shared by other work).
MAX_BLOCK_ELEMENTS = 16 * 1024 * 1024
# Above this many multiply-adds (N^2 d) the ~2 s it takes to import torch is won back by its
# faster float32 matrix product (~115 against ~75 GFLOP/s on two cores; FACTS.md).
TORCH_WORTH_IMPORTING = 2.0e11
# None: torch when already imported or worth importing (above); True/False force it (tests).
USE_TORCH: bool | None = None
# Rough throughput of the dense path on two cores, for its cost estimate: float32 products,
# and the float64 transform (normalise, clip, power) plus feature sums per similarity.
MATMUL_FLOPS_PER_SECOND = 75e9
DENSE_SECONDS_PER_PAIR = 8e-9
DENSE_WARN_SECONDS = 60.0


def effective_chunk(n: int, chunk: int) -> int:
    """Rows per block: the configured chunk, capped so a block stays under MAX_BLOCK_ELEMENTS."""
    return max(1, min(chunk, MAX_BLOCK_ELEMENTS // max(n, 1)))


def _blocks(n: int, chunk: int):
    step = effective_chunk(n, chunk)
    for start in range(0, n, step):
        yield start, min(n, start + step)


class _Similarities:
    """Blocks of cosine similarities (rows start:stop against all rows) written into one reused
    buffer, by torch when it is already loaded or worth loading, else by numpy."""

    def __init__(self, embeddings: np.ndarray, chunk: int):
        n, d = embeddings.shape
        self.embeddings = embeddings
        rows = effective_chunk(n, chunk)
        self.torch = None
        wanted = USE_TORCH
        if wanted is None:
            wanted = "torch" in sys.modules or float(n) * n * d > TORCH_WORTH_IMPORTING
        if wanted:
            try:
                import torch

                self.torch = torch
                self.tensor = torch.from_numpy(embeddings)
                self.buffer_t = torch.empty((rows, n), dtype=torch.float32)
                self.buffer = self.buffer_t.numpy()
            except ImportError:  # pragma: no cover - torch is a dependency
                self.torch = None
        if self.torch is None:
            self.buffer = np.empty((rows, n), dtype=np.float32)

    def __call__(self, start: int, stop: int) -> np.ndarray:
        """(stop - start, N) float32 view of the reused buffer."""
        rows = stop - start
        if self.torch is not None:
            out = self.buffer_t[:rows]
            self.torch.matmul(self.tensor[start:stop], self.tensor.T, out=out)
            return self.buffer[:rows]
        out = self.buffer[:rows]
        np.matmul(self.embeddings[start:stop], self.embeddings.T, out=out)
        return out


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


@dataclass
class _Edges:
    """The symmetrised graph for every K at once: each unordered pair {a, b} that is in either
    neighbour list once, with rank = min(rank of b in a's list, rank of a in b's list) and the
    larger of the two stored similarities. Sorted by rank, so the graph for K is the first
    `count[K]` pairs (an edge is in the union of the directed top-K iff its rank < K)."""

    a: np.ndarray
    b: np.ndarray
    similarity: np.ndarray
    count: np.ndarray  # (Kmax + 1,)


def _edges(indices: np.ndarray, similarities: np.ndarray) -> _Edges:
    n, k_max = indices.shape
    rows = np.repeat(np.arange(n, dtype=np.int64), k_max)
    cols = indices.ravel().astype(np.int64)
    rank = np.tile(np.arange(k_max, dtype=np.int32), n)
    key = np.minimum(rows, cols) * n + np.maximum(rows, cols)
    order = np.lexsort((rank, key))
    key, rank, sim = key[order], rank[order], similarities.ravel()[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    key, rank, sim = key[first], rank[first], np.maximum.reduceat(sim, first)
    by_rank = np.argsort(rank, kind="stable")
    key, rank, sim = key[by_rank], rank[by_rank], sim[by_rank]
    count = np.searchsorted(rank, np.arange(k_max + 1), side="left")
    return _Edges(
        (key // n).astype(np.int32), (key % n).astype(np.int32), sim, count.astype(np.int64)
    )


@dataclass
class NeighbourGraph:
    """Sorted neighbour lists and the normalisation constants of one similarity graph.

    indices: (N, Kmax) int32, neighbours of each row, most similar first, self excluded;
    similarities: (N, Kmax) float32 raw similarities in the same order;
    low, high: the global min and max off-diagonal similarity (m and M in the paper);
    embeddings: (N, d) float32 unit vectors, kept for the dense path (None in ColBERT mode).
    """

    indices: np.ndarray
    similarities: np.ndarray
    low: float
    high: float
    normalize: bool = True
    embeddings: np.ndarray | None = None
    mode: str = "single-vector"
    _pairs: _Edges | None = field(default=None, init=False, repr=False, compare=False)
    _labels: tuple | None = field(default=None, init=False, repr=False, compare=False)
    _rows: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def n(self) -> int:
        return self.indices.shape[0]

    @property
    def k_max(self) -> int:
        return self.indices.shape[1]

    # -- transformations -------------------------------------------------------------------------
    def transform(self, values: np.ndarray, power: float) -> np.ndarray:
        """Min-max normalise (when enabled) and raise to the power p; float64 out.

        Without normalisation, negative similarities are set to 0 before a power other than 1.
        """
        values = values.astype(np.float64, copy=True)
        if self.normalize:
            span = self.high - self.low
            if span > 0:
                values -= self.low
                values /= span
            else:
                values[...] = 1.0
            np.clip(values, 0.0, 1.0, out=values)
        elif power != 1.0:
            np.maximum(values, 0.0, out=values)
        if power != 1.0:
            np.power(values, power, out=values)
        return values

    def edges(self) -> _Edges:
        """The rank-sorted symmetric pair table (built on first use, O(N x Kmax))."""
        if self._pairs is None:
            self._pairs = _edges(self.indices, self.similarities)
        return self._pairs

    def _check_k(self, top_k: int) -> None:
        if not 1 <= top_k <= self.k_max:
            raise ValueError(f"top_k={top_k} outside 1..{self.k_max}")

    def weights(self, top_k: int, power: float = 1.0, symmetric: bool = True) -> sp.csr_matrix:
        """The pruned graph s^top for K = top_k as a sparse (N, N) matrix.

        Row i holds the transformed similarities of i's K nearest neighbours; with `symmetric`
        the union of the directed neighbourhoods is kept, so W[i, j] = W[j, i].
        """
        self._check_k(top_k)
        n = self.n
        if not symmetric:
            values = self.transform(self.similarities[:, :top_k], power).ravel()
            rows = np.repeat(np.arange(n, dtype=np.int32), top_k)
            return sp.csr_matrix((values, (rows, self.indices[:, :top_k].ravel())), shape=(n, n))
        edges = self.edges()
        rows, cols, pair = self._row_order()
        # Both directions of every edge, already in CSR order: keep those of the first pairs.
        m = edges.count[top_k]
        keep = pair < m
        values = self.transform(edges.similarity[:m], power)[pair[keep]]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows[keep], minlength=n), out=indptr[1:])
        return sp.csr_matrix((values, cols[keep], indptr), shape=(n, n))

    def _row_order(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Both directions of every edge sorted by (row, column): rows, columns, pair index.
        Built once, so `weights` for any K is a filter instead of a sparse sort."""
        if self._rows is None:
            edges = self.edges()
            pair = np.arange(edges.a.size, dtype=np.int32)
            rows = np.concatenate([edges.a, edges.b])
            cols = np.concatenate([edges.b, edges.a])
            order = np.argsort(rows.astype(np.int64) * self.n + cols)  # unique keys
            self._rows = (rows[order], cols[order], np.concatenate([pair, pair])[order])
        return self._rows

    def features(
        self,
        scores: np.ndarray,
        n_classes: int,
        top_k: int | None,
        power: float = 1.0,
        symmetric: bool = True,
        reporter: Reporter | None = None,
        block_progress=None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """T (N, C+1) with T[i, c] = sum_j s_ij 1{x_j = c}, and S (N,) with S_i = sum_j s_ij.

        block_progress: optional callable(rows_done, N), called after each block of the dense
        path (top_k None), which takes seconds on large N.
        """
        if top_k is None:
            onehot = np.zeros((self.n, n_classes), dtype=np.float64)
            onehot[np.arange(self.n), scores] = 1.0
            return self._dense_features(onehot, power, reporter, block_progress=block_progress)
        self._check_k(top_k)
        size = self.n * n_classes
        if symmetric:
            edges = self.edges()
            m = edges.count[top_k]
            to_a, to_b = self._edge_labels(scores, n_classes)
            values = self.transform(edges.similarity[:m], power)
            counts = np.bincount(to_a[:m], values, size) + np.bincount(to_b[:m], values, size)
        else:
            codes = np.arange(self.n)[:, None] * n_classes + scores[self.indices[:, :top_k]]
            values = self.transform(self.similarities[:, :top_k], power)
            counts = np.bincount(codes.ravel(), values.ravel(), size)
        t = counts.reshape(self.n, n_classes)
        return t, t.sum(axis=1)

    def _edge_labels(self, scores: np.ndarray, n_classes: int):
        """Bincount codes a * (C+1) + x_b and b * (C+1) + x_a of every edge, cached per scores."""
        cached = self._labels
        if cached is not None and cached[0] == n_classes and np.array_equal(cached[1], scores):
            return cached[2], cached[3]
        edges = self.edges()
        a, b = edges.a.astype(np.int64), edges.b.astype(np.int64)
        to_a, to_b = a * n_classes + scores[b], b * n_classes + scores[a]
        self._labels = (n_classes, np.array(scores, copy=True), to_a, to_b)
        return to_a, to_b

    def _dense_features(self, onehot, power, reporter, chunk: int = 1024, block_progress=None):
        if self.embeddings is None:
            raise ValueError("the dense graph needs the embeddings")
        n = self.n
        # One product gives both T (onehot columns) and S (the ones column).
        targets = np.hstack([onehot, np.ones((n, 1))])
        out = np.empty((n, targets.shape[1]), dtype=np.float64)
        similarity = _Similarities(self.embeddings, chunk)
        for start, stop in _blocks(n, chunk):
            block = self.transform(similarity(start, stop), power)
            block[np.arange(stop - start), np.arange(start, stop)] = 0.0
            out[start:stop] = block @ targets
            if reporter is not None:
                reporter.check()
            if block_progress is not None:
                block_progress(stop, n)
        return out[:, :-1].copy(), out[:, -1].copy()


def dense_seconds(n: int, dim: int, evaluations: int = 1) -> float:
    """Estimated seconds for `evaluations` dense-graph feature computations on two cores."""
    per_evaluation = 2.0 * n * n * dim / MATMUL_FLOPS_PER_SECOND + n * n * DENSE_SECONDS_PER_PAIR
    return evaluations * per_evaluation


def dense_warning(n: int, dim: int, evaluations: int) -> str | None:
    """A warning when the dense graph (similarity_top_k null) will be slow, else None.

    The dense path recomputes all N^2 similarities for every configuration (it never holds the
    N x N matrix, so memory is not the problem; time is).
    """
    seconds = dense_seconds(n, dim, evaluations)
    if seconds < DENSE_WARN_SECONDS:
        return None
    return (
        f"The dense graph (similarity_top_k null) recomputes all {n:,} x {n:,} similarities for "
        f"each of about {evaluations} configuration(s): roughly {seconds / 60:.0f} minute(s) "
        "on two cores. A top-K grid (e.g. similarity_top_k [10, 20, 30, 40, 50]) finds the "
        "neighbours once and takes seconds."
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
    similarity = _Similarities(embeddings, chunk)
    for start, stop in _blocks(n, chunk):
        block = similarity(start, stop)
        local = np.arange(stop - start)
        block[local, local + start] = np.inf
        low = min(low, float(block.min()))
        block[local, local + start] = -np.inf
        indices[start:stop], similarities[start:stop] = _top_k_rows(block, k_max)
        if reporter is not None:
            reporter("neighbours", stop, n, f"{stop:,} of {n:,} rows")
    high = float(similarities[:, 0].max())
    return NeighbourGraph(indices, similarities, low, high, normalize, embeddings)
