"""`NeighbourGraph`: the cosine-similarity graph, with the only O(N^2) step done once.

The top-Kmax neighbours of every response (indices and raw cosine similarities, sorted) are found
by engine.graph.search in one chunked pass of float32 matrix products, which also yields the
global minimum and maximum off-diagonal similarity for min-max normalisation. Every K <= Kmax and every power p is then a
cheap view of those lists: features for one (K, p) are two `bincount`s over at most N x K edges.
Without top-K (the dense graph), features are computed block by block, never holding N x N.
Memory is O(N x Kmax) plus one block of at most MAX_BLOCK_ELEMENTS similarities.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from engine.core.progress import Reporter
from engine.graph.similarity import Similarities, blocks
from engine.input.settings.config import SINGLE_VECTOR

# Rough throughput of the dense path on two cores, for its cost estimate: float32 products,
# and the float64 transform (normalise, clip, power) plus feature sums per similarity.
MATMUL_FLOPS_PER_SECOND = 75e9
DENSE_SECONDS_PER_PAIR = 8e-9
DENSE_WARN_SECONDS = 60.0


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
    mode: str = SINGLE_VECTOR
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
        known: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """T (N, C+1) with T[i, c] = sum_j s_ij 1{x_j = c}, and S (N,) with S_i = sum_j s_ij.

        block_progress: optional callable(rows_done, N), called after each block of the dense
        path (top_k None), which takes seconds on large N. known: (N,) bool, the responses whose
        labels count (the sparse graph only): the others' edges weigh 0, so S sums over known
        neighbours only, and with every response known the numbers are bit for bit the same.
        """
        if top_k is None:
            onehot = np.zeros((self.n, n_classes), dtype=np.float64)
            onehot[np.arange(self.n), scores] = 1.0
            return self.dense_features(onehot, power, reporter, block_progress=block_progress)
        self._check_k(top_k)
        size = self.n * n_classes
        if symmetric:
            edges = self.edges()
            m = edges.count[top_k]
            to_a, to_b = self._edge_labels(scores, n_classes)
            values = self.transform(edges.similarity[:m], power)
            from_b = values if known is None else values * known[edges.b[:m]]
            from_a = values if known is None else values * known[edges.a[:m]]
            counts = np.bincount(to_a[:m], from_b, size) + np.bincount(to_b[:m], from_a, size)
        else:
            codes = np.arange(self.n)[:, None] * n_classes + scores[self.indices[:, :top_k]]
            values = self.transform(self.similarities[:, :top_k], power)
            if known is not None:
                values = values * known[self.indices[:, :top_k]]
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

    def dense_features(self, onehot, power, reporter, chunk: int = 1024, block_progress=None):
        if self.embeddings is None:
            raise ValueError("the dense graph needs the embeddings")
        n = self.n
        # One product gives both T (onehot columns) and S (the ones column).
        targets = np.hstack([onehot, np.ones((n, 1))])
        out = np.empty((n, targets.shape[1]), dtype=np.float64)
        similarity = Similarities(self.embeddings, chunk)
        for start, stop in blocks(n, chunk):
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
