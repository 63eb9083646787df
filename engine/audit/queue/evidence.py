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
    weights: sp.csr_matrix, indices: np.ndarray, similarities: np.ndarray,
    count: int = EVIDENCE_COUNT,
) -> list[list[Neighbour]]:  # fmt: skip
    """For every row, the `count` neighbours with the largest weights in the graph that was fitted:
    the edges that make up T_i(c), so the responses that drove the prediction; with their raw
    similarities from the neighbour lists (`with_similarities`)."""
    weights = weights.tocsr()
    n = weights.shape[0]
    rows = np.repeat(np.arange(n), np.diff(weights.indptr))
    # Sort every row's edges by weight (descending, ties by column) in one pass, keep the first.
    order = np.lexsort((weights.indices, -weights.data, rows))
    rank = np.arange(order.size) - weights.indptr[rows[order]]
    keep = order[rank < count]
    owner = rows[keep]
    return with_similarities(
        n, owner, weights.indices[keep], weights.data[keep], indices, similarities
    )


def evidence_from_lists(
    indices: np.ndarray, weights: np.ndarray, similarities: np.ndarray,
    count: int = EVIDENCE_COUNT,
) -> list[list[Neighbour]]:  # fmt: skip
    """Evidence for the dense graph: each row's nearest neighbours from the sorted lists."""
    n, count = indices.shape[0], min(count, indices.shape[1])
    owner = np.repeat(np.arange(n), count)
    cols, vals = indices[:, :count].ravel(), weights[:, :count].ravel()
    return with_similarities(n, owner, cols, vals, indices, similarities)


def with_similarities(
    n: int, owner: np.ndarray, cols: np.ndarray, vals: np.ndarray, indices: np.ndarray,
    similarities: np.ndarray,
) -> list[list[Neighbour]]:  # fmt: skip
    """Every row's evidence neighbours (the edges owner -> cols of weights vals, row by row),
    with raw similarities from the neighbour lists (N, Kmax).

    An edge i-j of the symmetrised graph is in i's list or in j's, so both are looked up.
    """
    pairs = np.stack([owner, cols], axis=1).astype(np.int64, copy=False)
    found = np.full(len(pairs), np.nan)
    if pairs.size:
        for a, b in ((0, 1), (1, 0)):
            hit = indices[pairs[:, a]] == pairs[:, b, None]
            where = hit.any(axis=1) & np.isnan(found)
            at = hit.argmax(axis=1)
            found[where] = similarities[pairs[where, a], at[where]]
    flat = list(map(Neighbour, cols.tolist(), vals.tolist(), found.tolist()))
    bounds = np.searchsorted(owner, np.arange(n + 1)).tolist()
    return [flat[bounds[i] : bounds[i + 1]] for i in range(n)]
