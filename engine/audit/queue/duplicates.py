"""Consistency: near-duplicate responses that received different scores."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NearDuplicate:
    """Two responses (positions first < second) with raw similarity above the threshold and
    different human scores."""

    first: int
    second: int
    similarity: float


def near_duplicates(
    indices: np.ndarray, similarities: np.ndarray, scores: np.ndarray, threshold: float
) -> list[NearDuplicate]:
    """Pairs among each response's nearest neighbours (the graph's (N, Kmax) lists, so no extra
    O(N^2) work) whose raw similarity exceeds `threshold` but whose scores differ, most similar
    first. A response with more than Kmax near-duplicates shows only its Kmax closest ones."""
    rows = np.broadcast_to(np.arange(indices.shape[0])[:, None], indices.shape)
    keep = (similarities > threshold) & (scores[indices] != scores[rows])
    first = np.minimum(rows[keep], indices[keep])
    second = np.maximum(rows[keep], indices[keep])
    sims = similarities[keep].astype(np.float64)
    pairs: dict[tuple[int, int], float] = {}
    for a, b, s in zip(first.tolist(), second.tolist(), sims.tolist()):
        pairs[(a, b)] = max(s, pairs.get((a, b), -np.inf))
    ordered = sorted(pairs.items(), key=lambda item: (-item[1], item[0]))
    return [NearDuplicate(a, b, s) for (a, b), s in ordered]
