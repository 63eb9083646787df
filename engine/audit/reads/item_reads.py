"""Every read of one item: which answer it is of, who read it and the score given, as plain
arrays (the representation the agreement and consensus figures are computed over).

A read is one rater's score of one answer. An item has N answers, M raters shared across the
session's items (indices 0..M-1 into the session's rater names), and a scale of C+1 codes.
Answers may be read once, twice or more; a rater reads an answer at most once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.errors import DataError


@dataclass(frozen=True)
class ItemReads:
    """One item's reads.

    answer: (R,) int in 0..N-1, the answer each read is of; rater: (R,) int in 0..M-1, who read
    it; score: (R,) int code in 0..C; n_answers: N; n_classes: C+1; ordered: whether the codes
    have an order (text labels without a stated order do not); values: (C+1,) the codes' values
    in points, for the interval level (None: the codes themselves); name: the item, for tables.
    """

    answer: np.ndarray
    rater: np.ndarray
    score: np.ndarray
    n_answers: int
    n_classes: int
    ordered: bool
    values: np.ndarray | None = None
    name: str = ""

    def __post_init__(self) -> None:
        for field in ("answer", "rater", "score"):
            object.__setattr__(self, field, np.asarray(getattr(self, field), dtype=np.int64))
        if self.values is not None:
            object.__setattr__(self, "values", np.asarray(self.values, dtype=np.float64))
        check_reads(self)

    @property
    def points(self) -> np.ndarray:
        """(C+1,) each code's value: `values`, or the codes 0..C."""
        return (
            self.values if self.values is not None else np.arange(self.n_classes, dtype=np.float64)
        )

    def reads_per_answer(self) -> np.ndarray:
        """(N,) how many reads each answer has."""
        return np.bincount(self.answer, minlength=self.n_answers)

    def with_reads(self, answer, rater, score) -> ItemReads:
        """The item with more reads added (a third read typed in the review, say)."""
        return ItemReads(
            np.concatenate([self.answer, answer]),
            np.concatenate([self.rater, rater]),
            np.concatenate([self.score, score]),
            self.n_answers,
            self.n_classes,
            self.ordered,
            self.values,
            self.name,
        )


def check_reads(reads: ItemReads) -> None:
    """DataError naming the first problem: arrays of different lengths, an answer, rater or
    score code out of range, a rater reading one answer twice, values of the wrong shape."""
    size = reads.answer.shape[0]
    if reads.rater.shape != (size,) or reads.score.shape != (size,):
        raise DataError(f"item {reads.name!r}: answer, rater and score arrays differ in length")
    bounds = (("answer", reads.n_answers), ("score", reads.n_classes))
    for field, top in (*bounds, ("rater", np.iinfo(np.int64).max)):
        codes = getattr(reads, field)
        bad = np.flatnonzero((codes < 0) | (codes >= top))
        if bad.size:
            raise DataError(f"item {reads.name!r}: read {bad[0]} has {field} {codes[bad[0]]}")
    if reads.values is not None and reads.values.shape != (reads.n_classes,):
        raise DataError(f"item {reads.name!r}: {reads.n_classes} codes but values of shape "
                        f"{reads.values.shape}")  # fmt: skip
    order = np.lexsort((reads.rater, reads.answer))
    twice = np.flatnonzero((np.diff(reads.answer[order]) == 0) & (np.diff(reads.rater[order]) == 0))
    if twice.size:
        read = order[twice[0] + 1]
        raise DataError(
            f"item {reads.name!r}: rater {reads.rater[read]} reads answer {reads.answer[read]} "
            "more than once"
        )


def read_counts(reads: ItemReads) -> np.ndarray:
    """(N, C+1) int: how many reads of each answer gave each code."""
    cells = reads.answer * reads.n_classes + reads.score
    counts = np.bincount(cells, minlength=reads.n_answers * reads.n_classes)
    return counts.reshape(reads.n_answers, reads.n_classes)


@dataclass(frozen=True)
class ReadPairs:
    """Every unordered pair of reads of one answer, sorted by rater pair, then answer.

    unit: (P,) the answer; rater_a < rater_b: (P,) who read it; code_a, code_b: (P,) the codes
    they gave; reads: (P,) how many reads that answer has (Krippendorff's m_u)."""

    unit: np.ndarray
    rater_a: np.ndarray
    rater_b: np.ndarray
    code_a: np.ndarray
    code_b: np.ndarray
    reads: np.ndarray

    def groups(self) -> list[tuple[int, int, slice]]:
        """(rater a, rater b, the slice of their pairs) for each pair of raters, a < b."""
        a, b = self.rater_a, self.rater_b
        bounds = np.flatnonzero(np.r_[True, (np.diff(a) != 0) | (np.diff(b) != 0), True])
        if a.size == 0:
            return []
        return [(int(a[s]), int(b[s]), slice(s, e)) for s, e in zip(bounds[:-1], bounds[1:])]


def read_pairs(reads: ItemReads) -> ReadPairs:
    """Every pair of reads that share an answer (see ReadPairs)."""
    order = np.lexsort((reads.rater, reads.answer))
    answer, rater, score = reads.answer[order], reads.rater[order], reads.score[order]
    starts = np.flatnonzero(np.r_[True, np.diff(answer) != 0]) if answer.size else answer
    lengths = np.diff(np.r_[starts, answer.size])
    parts: list[tuple[np.ndarray, ...]] = []
    # Answers have few reads, so the loops run over positions within an answer, not answers.
    for length in np.unique(lengths[lengths >= 2]):
        begin = starts[lengths == length]
        for i in range(length):
            for j in range(i + 1, length):
                first, second = begin + i, begin + j
                parts.append((answer[first], rater[first], rater[second], score[first],
                              score[second], np.full(begin.size, length)))  # fmt: skip
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return ReadPairs(empty, empty, empty, empty, empty, empty)
    unit, a, b, ca, cb, m = (np.concatenate(column) for column in zip(*parts))
    key = np.lexsort((unit, b, a))
    return ReadPairs(unit[key], a[key], b[key], ca[key], cb[key], m[key])
