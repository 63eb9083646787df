"""Turning a fitted model into an audit: severity ranking, flags and evidence neighbours."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

EVIDENCE_COUNT = 5


@dataclass(frozen=True)
class Neighbour:
    """One evidence neighbour: its position in the responses, and its edge weight."""

    index: int
    weight: float


def severity(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """How likely the human score needs a second look: 1 - p(human score), in [0, 1]."""
    return 1.0 - proba[np.arange(scores.shape[0]), scores]


def flags(predicted: np.ndarray, scores: np.ndarray) -> np.ndarray:
    return predicted != scores


def evidence_from_weights(
    weights: sp.csr_matrix, count: int = EVIDENCE_COUNT
) -> list[list[Neighbour]]:
    """For every row, the `count` neighbours with the largest weights in the graph that was fitted:
    the edges that make up T_i(c), so the responses that drove the prediction."""
    weights = weights.tocsr()
    out: list[list[Neighbour]] = []
    for i in range(weights.shape[0]):
        lo, hi = weights.indptr[i], weights.indptr[i + 1]
        cols, vals = weights.indices[lo:hi], weights.data[lo:hi]
        order = np.lexsort((cols, -vals))[:count]
        out.append([Neighbour(int(cols[j]), float(vals[j])) for j in order])
    return out


def evidence_from_lists(
    indices: np.ndarray, weights: np.ndarray, count: int = EVIDENCE_COUNT
) -> list[list[Neighbour]]:
    """Evidence for the dense graph: each row's nearest neighbours from the sorted lists."""
    count = min(count, indices.shape[1])
    return [
        [Neighbour(int(j), float(w)) for j, w in zip(indices[i, :count], weights[i, :count])]
        for i in range(indices.shape[0])
    ]
