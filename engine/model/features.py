"""One item's PARM features on its neighbour graph, built in one place for every part of the fit:
T_i(c) = sum_j s_ij^(K,p) 1{x_j = c} and S_i = sum_c T_i(c) for any K and p (tuning), the same
from the training labels of a fold only (cross-fitting), and the pruned graph's weight matrix
(standard errors, evidence)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from engine.core.progress import Reporter
from engine.graph.neighbour_graph import NeighbourGraph


class ItemFeatures:
    """The features of one item's responses (scores coded 0..n_classes-1) on its graph; `symmetric`:
    two answers are neighbours when either lists the other. The weight matrix of the last
    (K, p) asked for is kept: the selected configuration's serves both its standard errors and
    its evidence."""

    def __init__(
        self, graph: NeighbourGraph, scores: np.ndarray, n_classes: int, symmetric: bool = True
    ) -> None:
        self.graph, self.scores, self.n_classes = graph, scores, n_classes
        self.symmetric = symmetric
        self._weights: tuple[tuple[int, float], sp.csr_matrix] | None = None

    def at(
        self, top_k: int | None, power: float, reporter: Reporter | None = None, block_progress=None
    ) -> tuple[np.ndarray, np.ndarray]:
        """T (N, C+1) and S (N,) from every response's score; top_k None: the dense graph
        (block_progress(rows_done, N) after each block of it)."""
        extra = {} if top_k is not None else {"block_progress": block_progress}
        return self.graph.features(
            self.scores, self.n_classes, top_k, power, self.symmetric, reporter, **extra
        )

    def weights(self, top_k: int | None, power: float) -> sp.csr_matrix | None:
        """The pruned graph for K = top_k as a sparse (N, N) weight matrix (None: the dense
        graph, which has none)."""
        if top_k is None:
            return None
        key = (top_k, float(power))
        if self._weights is None or self._weights[0] != key:
            self._weights = (key, self.graph.weights(top_k, power, self.symmetric))
        return self._weights[1]

    def masked(
        self, train: np.ndarray, top_k: int | None, power: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """T and S from the training responses' labels only: held-out rows' one-hot rows are
        zero, so T_i(c) sums over training neighbours and S_i = sum_c T_i(c) over the same."""
        if top_k is not None:
            # The edges' bincount of `at` with held-out neighbours weighing 0: no weight matrix
            # per K (tuning's features with every response in training, bit for bit).
            known = np.zeros(self.scores.shape[0], dtype=bool)
            known[train] = True
            return self.graph.features(
                self.scores, self.n_classes, top_k, power, self.symmetric, known=known
            )
        onehot = np.zeros((self.scores.shape[0], self.n_classes))
        onehot[train, self.scores[train]] = 1.0
        # The dense path computes T block by block; its S includes held-out rows: recompute.
        t, _ = self.graph.dense_features(onehot, power, None)
        return t, t.sum(axis=1)
