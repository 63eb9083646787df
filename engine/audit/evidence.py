"""Turning a fitted model into an audit: severity ranking, flags, evidence neighbours, agreement
with a second rater and near-duplicate responses that were scored differently."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from engine.model.metrics import agreement

EVIDENCE_COUNT = 5


@dataclass(frozen=True)
class Neighbour:
    """One evidence neighbour: its position in the responses, its edge weight in the fitted graph
    (normalised similarity to the power p) and its raw cosine similarity (NaN when unknown)."""

    index: int
    weight: float
    similarity: float = float("nan")


def severity(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """1 - p(human score), in [0, 1] (a candidate the severity benchmark compares)."""
    return 1.0 - proba[np.arange(scores.shape[0]), scores]


def margin_severity(proba: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """max_{c != x_i} p_ic - p_{i, x_i}, in [-1, 1].

    This is the severity parm ships (chosen by tests/benchmarks/bench_severity.py): it is positive
    exactly when the model prefers another score to the human one, so the flagged responses are
    the ones with positive severity, and it ranks them by how clearly the model prefers another.
    proba: (N, C+1); scores: (N,) codes. Returns (N,).
    """
    rows = np.arange(scores.shape[0])
    chosen = proba[rows, scores]
    others = proba.copy()
    others[rows, scores] = -np.inf
    return others.max(axis=1) - chosen


def flags(predicted: np.ndarray, scores: np.ndarray) -> np.ndarray:
    return predicted != scores


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


@dataclass(frozen=True)
class SecondRater:
    """Agreement between the two human raters and between the model and each rater.

    Each agreement dict holds exact, adjacent (|a - b| <= 1), kappa and qwk; human_human and
    model_vs_second use only the rows where both scores exist (None when there are none).
    disagree: (N,) bool, True where both raters scored the response and differ.
    """

    rows_with_both: int
    human_human: dict[str, float] | None
    model_vs_first: dict[str, float]
    model_vs_second: dict[str, float] | None
    disagree: np.ndarray

    def as_dict(self) -> dict:
        return {
            "rows_with_both_scores": self.rows_with_both,
            "rater1_vs_rater2": self.human_human,
            "model_vs_rater1": self.model_vs_first,
            "model_vs_rater2": self.model_vs_second,
            "raters_disagree": int(self.disagree.sum()),
        }


def _agreement(a: np.ndarray, b: np.ndarray, n_classes: int) -> dict[str, float] | None:
    if a.size == 0:
        return None
    m = agreement(a, b, n_classes)
    return {"exact": m["accuracy"], "adjacent": m["near"], "kappa": m["kappa"], "qwk": m["qwk"]}


def second_rater(
    scores: np.ndarray, second: np.ndarray | None, predicted: np.ndarray, n_classes: int
) -> SecondRater | None:
    """Agreement figures for a second rater's codes `second` (N,), -1 where missing."""
    if second is None:
        return None
    both = second >= 0
    return SecondRater(
        rows_with_both=int(both.sum()),
        human_human=_agreement(scores[both], second[both], n_classes),
        model_vs_first=_agreement(scores, predicted, n_classes),
        model_vs_second=_agreement(second[both], predicted[both], n_classes),
        disagree=both & (second != scores),
    )


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


def review_view(
    result, show_all=False, human=None, predicted=None, off_by_two=False, search="", folded=None
) -> np.ndarray:
    """Indices of the responses to list, in review order (flagged first, most severe first).

    human/predicted: score codes to keep (None = any); off_by_two: |model - human| >= 2 codes;
    search: case-insensitive text (or id) to look for; folded: texts already casefolded.
    """
    scores, model = result.responses.scores, result.predicted
    order = result.review_order()
    keep = np.ones(len(scores), dtype=bool)
    if not show_all:
        keep &= model != scores
    if human is not None:
        keep &= scores == human
    if predicted is not None:
        keep &= model == predicted
    if off_by_two:
        keep &= np.abs(model.astype(int) - scores.astype(int)) >= 2
    if search:
        needle = search.casefold()
        texts = folded if folded is not None else [t.casefold() for t in result.responses.texts]
        ids = result.responses.ids
        found = [needle in t or needle in ids[i].casefold() for i, t in enumerate(texts)]
        keep &= np.asarray(found, dtype=bool)
    return order[keep[order]]
