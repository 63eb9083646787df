"""`NeighbourGraph`: the cosine-similarity graph, with the only O(N^2) step done once.

The top-Kmax neighbours of every response (indices and raw cosine similarities, sorted) are found
in one chunked pass of float32 matrix products, which also yields the global minimum and maximum
off-diagonal similarity for min-max normalisation. Every K <= Kmax and every power p is then a
cheap view of those lists; the graph for one (K, p) is a sparse matrix with N x K entries.
Without top-K (the dense graph), features are computed block by block, never holding N x N.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from engine.progress import Reporter

# Blocks hold chunk x N float32 similarities; this caps one block near 256 MB whatever chunk says.
MAX_BLOCK_ELEMENTS = 64 * 1024 * 1024


def effective_chunk(n: int, chunk: int) -> int:
    """Rows per block: the configured chunk, capped so a block stays under MAX_BLOCK_ELEMENTS."""
    return max(1, min(chunk, MAX_BLOCK_ELEMENTS // max(n, 1)))


def _blocks(n: int, chunk: int):
    step = effective_chunk(n, chunk)
    for start in range(0, n, step):
        yield start, min(n, start + step)


def _similarity_block(embeddings: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Cosine similarities of rows start:stop against all rows (embeddings are unit length)."""
    return embeddings[start:stop] @ embeddings.T


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
            values = (values - self.low) / span if span > 0 else np.ones_like(values)
            np.clip(values, 0.0, 1.0, out=values)
        elif power != 1.0:
            np.maximum(values, 0.0, out=values)
        if power != 1.0:
            np.power(values, power, out=values)
        return values

    def weights(self, top_k: int, power: float = 1.0, symmetric: bool = True) -> sp.csr_matrix:
        """The pruned graph s^top for K = top_k as a sparse (N, N) matrix.

        Row i holds the transformed similarities of i's K nearest neighbours; with `symmetric`
        the union of the directed neighbourhoods is kept, so W[i, j] = W[j, i].
        """
        if not 1 <= top_k <= self.k_max:
            raise ValueError(f"top_k={top_k} outside 1..{self.k_max}")
        n = self.n
        values = self.transform(self.similarities[:, :top_k], power).ravel()
        rows = np.repeat(np.arange(n, dtype=np.int32), top_k)
        cols = self.indices[:, :top_k].ravel()
        directed = sp.csr_matrix((values, (rows, cols)), shape=(n, n))
        if not symmetric:
            return directed
        # Both directions carry the same similarity, so the maximum is the union of the edges.
        return directed.maximum(directed.T).tocsr()

    def features(
        self,
        scores: np.ndarray,
        n_classes: int,
        top_k: int | None,
        power: float = 1.0,
        symmetric: bool = True,
        reporter: Reporter | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """T (N, C+1) with T[i, c] = sum_j s_ij 1{x_j = c}, and S (N,) with S_i = sum_j s_ij."""
        onehot = np.zeros((self.n, n_classes), dtype=np.float64)
        onehot[np.arange(self.n), scores] = 1.0
        if top_k is None:
            return self._dense_features(onehot, power, reporter)
        w = self.weights(top_k, power, symmetric)
        return np.asarray(w @ onehot), np.asarray(w.sum(axis=1)).ravel()

    def _dense_features(self, onehot, power, reporter, chunk: int = 1024):
        if self.embeddings is None:
            raise ValueError("the dense graph needs the embeddings")
        n = self.n
        t = np.empty_like(onehot)
        s = np.empty(n, dtype=np.float64)
        for start, stop in _blocks(n, chunk):
            block = self.transform(_similarity_block(self.embeddings, start, stop), power)
            block[np.arange(stop - start), np.arange(start, stop)] = 0.0
            t[start:stop] = block @ onehot
            s[start:stop] = block.sum(axis=1)
            if reporter is not None:
                reporter.check()
        return t, s

    def neighbour_weights(self, row: int, count: int, power: float = 1.0):
        """The `count` nearest neighbours of `row`: (indices, raw, transformed similarities)."""
        count = min(count, self.k_max)
        raw = self.similarities[row, :count]
        return self.indices[row, :count], raw, self.transform(raw, power)


def build_graph(
    embeddings: np.ndarray,
    k_max: int,
    chunk: int = 2048,
    normalize: bool = True,
    reporter: Reporter | None = None,
) -> NeighbourGraph:
    """Find every row's `k_max` nearest neighbours by cosine similarity, in one chunked pass.

    embeddings: (N, d), L2-normalised. Each block of rows is multiplied against all rows in
    float32; the diagonal is excluded; `argpartition` keeps the top k_max, which are then sorted.
    Memory: O(N x k_max) for the lists plus one block of chunk x N.
    """
    embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
    n = embeddings.shape[0]
    if n < 2:
        raise ValueError("a similarity graph needs at least two responses")
    k_max = int(min(k_max, n - 1))
    indices = np.empty((n, k_max), dtype=np.int32)
    similarities = np.empty((n, k_max), dtype=np.float32)
    low, high = np.inf, -np.inf
    for start, stop in _blocks(n, chunk):
        block = _similarity_block(embeddings, start, stop)
        local = np.arange(stop - start)
        block[local, local + start] = np.inf
        low = min(low, float(block.min()))
        block[local, local + start] = -np.inf
        high = max(high, float(block.max()))
        top = np.argpartition(block, n - k_max, axis=1)[:, n - k_max :]
        top_values = np.take_along_axis(block, top, axis=1)
        order = np.argsort(-top_values, axis=1, kind="stable")
        indices[start:stop] = np.take_along_axis(top, order, axis=1)
        similarities[start:stop] = np.take_along_axis(top_values, order, axis=1)
        if reporter is not None:
            reporter("neighbours", stop, n, f"{stop:,} of {n:,} rows")
    return NeighbourGraph(indices, similarities, low, high, normalize, embeddings)
