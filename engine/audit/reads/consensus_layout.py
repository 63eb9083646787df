"""A session's reads and text evidence laid out as one set of arrays for the consensus's EM.

Every answer of every item is one row of (A, K) arrays, K the session's largest scale; codes
beyond an item's own scale are masked (probability 0). Reads are grouped by scale
(error_model.ScaleReads); the neighbour vote is one sparse (A, A) matrix of similarities
within items; the per-answer sum of the reads' log-likelihoods is one sparse (A, R) product.
So the cost of an EM step grows with the reads, not with the number of items. Each answer's
support is where its consensus may lie: between its lowest and highest read on an ordered
scale, among the scores it was given on nominal labels (its whole scale when it has no read).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from engine.audit.reads.error_model import ScaleReads
from engine.audit.reads.item_reads import ItemReads

# Classifier probabilities are floored so one fold's missing score is strong, not infinite,
# evidence against it.
FLOOR = 1e-4


@dataclass(frozen=True)
class TextEvidence:
    """One item's text evidence. classifiers: (N, K) probabilities each, out-of-fold (never
    fitted on the answer's reads); a NaN row is no evidence for that answer. neighbours (N, k):
    indices of each answer's nearest other answers (-1: none); similarity (N, k) >= 0: their
    weights."""

    classifiers: tuple[np.ndarray, ...] = ()
    neighbours: np.ndarray | None = None
    similarity: np.ndarray | None = None


@dataclass(frozen=True)
class Layout:
    """offsets (I+1,): item i's answers are rows offsets[i]:offsets[i+1]; item (A,): each
    row's item; valid (A, K): codes on the row's scale; scales: the reads by scale; reads_of
    (A, R) sparse 0/1: which reads are each answer's; sources: per classifier, log p (A, K)
    (NaN rows: no evidence); similar (A, A) sparse neighbour weights and their row sums;
    support (A, K): the codes each answer's consensus may take (module docstring); steps: the
    longest ordered scale's steps (at least 1); item_scales: each item's (n_classes, ordered)."""

    offsets: np.ndarray
    item: np.ndarray
    valid: np.ndarray
    scales: tuple[ScaleReads, ...]
    reads_of: sparse.csr_matrix
    sources: tuple[np.ndarray, ...]
    similar: sparse.csr_matrix | None
    similar_total: np.ndarray | None
    support: np.ndarray
    steps: int
    item_scales: tuple[tuple[int, bool], ...]

    @property
    def width(self) -> int:
        return self.valid.shape[1]


def _scales(items: list[ItemReads], offsets: np.ndarray, steps: int) -> tuple[ScaleReads, ...]:
    read_offsets = np.cumsum([0] + [r.answer.size for r in items])
    found: dict[tuple[int, bool], list[int]] = {}
    for j, reads in enumerate(items):
        found.setdefault((reads.n_classes, reads.ordered), []).append(j)
    scales = []
    for (size, ordered), members in sorted(found.items()):
        positions = np.concatenate([read_offsets[j] + np.arange(items[j].answer.size)
                                    for j in members])  # fmt: skip
        answer = np.concatenate([offsets[j] + items[j].answer for j in members])
        rater = np.concatenate([items[j].rater for j in members])
        score = np.concatenate([items[j].score for j in members])
        scales.append(ScaleReads.of(size, ordered, positions, answer, rater, score, steps))
    return tuple(scales)


def _support(scales: tuple[ScaleReads, ...], valid: np.ndarray) -> np.ndarray:
    """(A, K) each answer's support (module docstring)."""
    answers, width = valid.shape
    given = np.zeros((answers, width), dtype=bool)
    low, high = np.full(answers, width), np.full(answers, -1)
    for scale in scales:
        if scale.ordered:
            np.minimum.at(low, scale.answer, scale.score)
            np.maximum.at(high, scale.answer, scale.score)
        else:
            given[scale.answer, scale.score] = True
    codes = np.arange(width)[None, :]
    support = given | ((codes >= low[:, None]) & (codes <= high[:, None]))
    return np.where(support.any(axis=1, keepdims=True), support, valid)


def _sources(items, evidence, offsets, width) -> tuple[np.ndarray, ...]:
    count = max((len(e.classifiers) for e in evidence if e is not None), default=0)
    sources = []
    for k in range(count):
        table = np.full((offsets[-1], width), np.nan)
        for j, (reads, e) in enumerate(zip(items, evidence)):
            if e is None or len(e.classifiers) <= k:
                continue
            p = np.maximum(np.asarray(e.classifiers[k], dtype=np.float64), FLOOR)
            rows = slice(offsets[j], offsets[j + 1])
            table[rows, : reads.n_classes] = np.log(p / p.sum(axis=1, keepdims=True))
        sources.append(table)
    return tuple(sources)


def _similar(evidence, offsets) -> tuple[sparse.csr_matrix | None, np.ndarray | None]:
    rows, columns, weights = [], [], []
    for j, e in enumerate(evidence):
        if e is None or e.neighbours is None:
            continue
        near = np.asarray(e.neighbours)
        answer = np.repeat(np.arange(near.shape[0]), near.shape[1])
        keep = (near.ravel() >= 0) & (near.ravel() != answer)  # never an answer's own reads
        rows.append(offsets[j] + answer[keep])
        columns.append(offsets[j] + near.ravel()[keep])
        weights.append(np.asarray(e.similarity, dtype=np.float64).ravel()[keep])
    if not rows:
        return None, None
    size = int(offsets[-1])
    matrix = sparse.csr_matrix(
        (np.concatenate(weights), (np.concatenate(rows), np.concatenate(columns))),
        shape=(size, size),
    )
    return matrix, np.asarray(matrix.sum(axis=1)).ravel()


def layout(items: list[ItemReads], evidence: list[TextEvidence | None]) -> Layout:
    offsets = np.cumsum([0] + [r.n_answers for r in items])
    width = max((r.n_classes for r in items), default=1)
    item = np.repeat(np.arange(len(items)), [r.n_answers for r in items])
    valid = np.arange(width)[None, :] < np.array([r.n_classes for r in items])[item][:, None]
    total = sum(r.answer.size for r in items)
    answers = np.concatenate([offsets[j] + r.answer for j, r in enumerate(items)] or [[]])
    reads_of = sparse.csr_matrix(
        (np.ones(total), (answers.astype(np.int64), np.arange(total))), shape=(offsets[-1], total)
    )
    similar, similar_total = _similar(evidence, offsets)
    steps = max([r.n_classes - 1 for r in items if r.ordered] + [1])
    scales = _scales(items, offsets, steps)
    return Layout(offsets, item, valid, scales, reads_of,
                  _sources(items, evidence, offsets, width), similar, similar_total,
                  _support(scales, valid), steps,
                  tuple((r.n_classes, r.ordered) for r in items))  # fmt: skip
