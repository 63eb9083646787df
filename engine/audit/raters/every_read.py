"""Every read of an item as the rater table counts it, whatever the file's shape.

A rater is whoever gave a read: the audited one or any other (engine.input.several_reads: a wide file's
read columns, a long file's rows). Each read is one of its rater's scores, so a rater whose
reads are never the audited ones (a third grader's column, or in a long file every rater but
the one whose row comes first) has their row, reads and verdict like any other, and a wide
file and the same reads in long form count the same raters. Results whose responses carry no
reads (made by hand) count the audited score and the second score, where there is one.

`ReadPairs` are the pairs of two raters' reads of one answer, each pair once, for the rater
table's agreement between raters (`second_*` in raters.csv, the table of pairs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from engine.audit.raters.expectation import smooth


@dataclass(frozen=True)
class EveryRead:
    """An item's reads: the answer read (0..N-1), the rater (object array of names, "" where
    the file records none), the score code on the item's scale, when (NaN: not recorded), and
    the 1-based data row the read is on."""

    answer: np.ndarray
    rater: np.ndarray
    code: np.ndarray
    time: np.ndarray
    row: np.ndarray

    def __len__(self) -> int:
        return int(self.answer.size)


def every_read(responses) -> EveryRead:
    """The item's reads (Responses.reads), or the audited and second scores without them."""
    reads = responses.reads
    if reads is not None and len(reads):
        return EveryRead(np.asarray(reads.answer, np.int64), np.array(reads.rater, dtype=object),
                         np.asarray(reads.score, np.int64), np.asarray(reads.time, float),
                         np.asarray(reads.row, np.int64))  # fmt: skip
    n = len(responses)
    raters = responses.raters or ("",) * n
    times = responses.times if responses.times is not None else np.full(n, np.nan)
    answer, rater = np.arange(n), list(raters)
    code, time = np.asarray(responses.scores, np.int64), np.asarray(times, float)
    if responses.second_scores is not None:
        second = np.flatnonzero(responses.second_scores >= 0)
        seconds = responses.second_raters or ("",) * n
        answer = np.r_[answer, second]
        rater += [seconds[i] for i in second]
        code = np.r_[code, responses.second_scores[second]]
        time = np.r_[time, np.full(second.size, np.nan)]
    answer = answer.astype(np.int64)
    return EveryRead(answer, np.array(rater, dtype=object), code.astype(np.int64), time,
                     np.asarray(responses.rows, np.int64)[answer])  # fmt: skip


def read_proba(result, reads: EveryRead) -> np.ndarray:
    """(R, C+1) the probabilities each read's expected score comes from: the rater-left-out
    model's for that read (engine.audit.raters.expectation, one row per read), else its answer's
    fitted PARM probabilities (results saved before every read was counted, or made by hand),
    smoothed as that model's are: an in-sample fit is often sure to 1e-12 (Mohler's items of 30
    answers), and a score it calls impossible would weigh without limit in fit and bias."""
    proba = result.rater_proba
    if proba is not None and proba.shape[0] == len(reads):
        return np.asarray(proba, dtype=np.float64)
    return smooth(np.asarray(result.fitted.proba, dtype=np.float64)[reads.answer])


@dataclass(frozen=True)
class ReadPairs:
    """Pairs of two named raters' reads of one answer, each pair once: the raters (a, b),
    their codes on the session's pooled scale and the answer's item (0 where not given)."""

    a: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    b: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    code_a: np.ndarray = field(default_factory=lambda: np.array([], dtype=np.int64))
    code_b: np.ndarray = field(default_factory=lambda: np.array([], dtype=np.int64))
    item: np.ndarray = field(default_factory=lambda: np.array([], dtype=np.int64))

    def of(self, rater: str) -> tuple[np.ndarray, np.ndarray]:
        """The rater's codes and their co-raters' codes over every pair the rater is in."""
        mine_a, mine_b = self.a == rater, self.b == rater
        return (np.r_[self.code_a[mine_a], self.code_b[mine_b]],
                np.r_[self.code_b[mine_a], self.code_a[mine_b]])  # fmt: skip


def read_pairs(
    answer: np.ndarray, rater: np.ndarray, code: np.ndarray, item: np.ndarray | None = None
) -> ReadPairs:
    """Every pair of named reads of one answer (answer: (R,) answers unique over the session;
    code: on the pooled scale; item: (R,) each read's item, default 0), in read order within
    each answer."""
    by_answer: dict[int, list[int]] = {}
    for i in np.flatnonzero(rater != ""):
        by_answer.setdefault(int(answer[i]), []).append(int(i))
    pairs = [pair for reads in by_answer.values() for pair in combinations(reads, 2)]
    first = np.array([i for i, _ in pairs], dtype=np.int64)
    second = np.array([j for _, j in pairs], dtype=np.int64)
    item = np.zeros(len(rater), dtype=np.int64) if item is None else np.asarray(item)
    return ReadPairs(rater[first], rater[second], code[first], code[second], item[first])


def join_pairs(parts: list[ReadPairs]) -> ReadPairs:
    if not parts:
        return ReadPairs()
    return ReadPairs(*(np.concatenate([getattr(p, k) for p in parts])
                       for k in ("a", "b", "code_a", "code_b", "item")))  # fmt: skip
