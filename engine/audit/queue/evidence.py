"""The evidence behind a prediction: for every response, the neighbours with the largest weights
in the fitted graph (the edges that make up T_i(c)), with their raw similarities."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

EVIDENCE_COUNT = 5


@dataclass(frozen=True)
class Neighbour:
    """One evidence neighbour: its position in the responses, its edge weight in the fitted graph
    (normalised similarity to the power p) and its raw cosine similarity (NaN when unknown)."""

    index: int
    weight: float
    similarity: float = float("nan")


def evidence_from_weights(
    weights: sp.csr_matrix, count: int = EVIDENCE_COUNT
) -> list[list[Neighbour]]:
    """For every row, the `count` neighbours with the largest weights in the graph that was fitted:
    the edges that make up T_i(c), so the responses that drove the prediction."""
    weights = weights.tocsr()
    n = weights.shape[0]
    rows = np.repeat(np.arange(n), np.diff(weights.indptr))
    # Sort every row's edges by weight (descending, ties by column) in one pass, keep the first.
    order = np.lexsort((weights.indices, -weights.data, rows))
    rank = np.arange(order.size) - weights.indptr[rows[order]]
    keep = order[rank < count]
    cols, vals, owner = weights.indices[keep].tolist(), weights.data[keep].tolist(), rows[keep]
    bounds = np.searchsorted(owner, np.arange(n + 1)).tolist()
    return [
        [Neighbour(cols[j], vals[j]) for j in range(bounds[i], bounds[i + 1])] for i in range(n)
    ]


def evidence_from_lists(
    indices: np.ndarray, weights: np.ndarray, count: int = EVIDENCE_COUNT
) -> list[list[Neighbour]]:
    """Evidence for the dense graph: each row's nearest neighbours from the sorted lists."""
    count = min(count, indices.shape[1])
    return [
        [Neighbour(int(j), float(w)) for j, w in zip(indices[i, :count], weights[i, :count])]
        for i in range(indices.shape[0])
    ]


def with_similarities(
    evidence: list[list[Neighbour]], indices: np.ndarray, similarities: np.ndarray
) -> list[list[Neighbour]]:
    """Attach raw similarities from the neighbour lists (N, Kmax) to every evidence neighbour.

    An edge i-j of the symmetrised graph is in i's list or in j's, so both are looked up.
    """
    pairs = np.array(
        [(i, nb.index) for i, row in enumerate(evidence) for nb in row], dtype=np.int64
    )
    if pairs.size == 0:
        return evidence
    found = np.full(len(pairs), np.nan)
    for a, b in ((0, 1), (1, 0)):
        hit = indices[pairs[:, a]] == pairs[:, b, None]
        where = hit.any(axis=1) & np.isnan(found)
        cols = hit.argmax(axis=1)
        found[where] = similarities[pairs[where, a], cols[where]]
    values = iter(found.tolist())
    return [[Neighbour(nb.index, nb.weight, next(values)) for nb in row] for row in evidence]
