"""The session's reads as arrays, each with its kind and its code on its item's scale: what the
figures, the alerts and the lead's actions (engine.live.actions) are computed from.

Kinds: a read's declared kind (the kind column) stands. Otherwise a read of an answer with an
expert score is a validity read, and of an answer's other reads the earliest (by day, time,
then the order they were added) is its first read and the others are second reads; an answer
with a declared first read has only second reads besides. Agreement counts first and second
reads (independent reads); backreads and resolutions know the earlier scores and are not
counted in it; validity accuracy counts every first, second or validity read of an
expert-scored answer.

Each item's scale is coded from every score the session holds for it (engine.input.labels: numbers
in numeric order, or the `score_order`), so a score first seen on day 5 takes its place among
the others; a score off the scale (text among numbers, a label not in score_order) is counted
and left out. An item's size in score points is the span of its integer scores (0-3 is four
points even before anyone gives a 2), else its number of labels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.input.labels import code_labels
from engine.input.table import as_number
from engine.live.intake.reading import BACKREAD, FIRST, RESOLUTION, SECOND, VALIDITY
from engine.live.intake.store import SessionStore

INDEPENDENT = (FIRST, SECOND)


@dataclass(frozen=True)
class Scale:
    """An item's scale: its labels in code order, their points (numbers, else the codes),
    whether the order means something, and its size in score points."""

    labels: tuple[str, ...]
    points: np.ndarray
    ordered: bool
    size: int


@dataclass(frozen=True)
class SessionReads:
    """Every read of the session (R reads, by item, answer, then time) and its answers (A).

    item, rater: (R,) indices into `items` and `raters`; answer: (R,) index of the answer
    (0..A-1); score: (R,) code on the item's scale (-1: off the scale, left out); points: (R,)
    its value in points; kind: (R,) str; declared: (R,) whether the kind was the file's; day,
    half: (R,) the period (half "" without a time of day); time: (R,) float, NaN without one;
    answer_item: (A,) the item of each answer; answer_id: A ids as the files give them;
    expert: (A,) the expert score's code, -1 where none."""

    items: tuple[str, ...]
    raters: tuple[str, ...]
    scales: tuple[Scale, ...]
    item: np.ndarray
    answer: np.ndarray
    rater: np.ndarray
    score: np.ndarray
    points: np.ndarray
    kind: np.ndarray
    declared: np.ndarray
    day: np.ndarray
    half: np.ndarray
    time: np.ndarray
    answer_item: np.ndarray
    answer_id: tuple[str, ...]
    expert: np.ndarray
    off_scale: int = 0

    def __len__(self) -> int:
        return int(self.item.size)

    @property
    def days(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.day.tolist())))

    def independent(self) -> np.ndarray:
        """(R,) reads that count in agreement: first and second reads on the scale."""
        return np.isin(self.kind, INDEPENDENT) & (self.score >= 0)

    def validity(self) -> np.ndarray:
        """(R,) reads that count in validity accuracy: of an expert-scored answer, not a
        backread or a resolution, on the scale."""
        scored = self.expert[self.answer] >= 0
        return scored & ~np.isin(self.kind, (BACKREAD, RESOLUTION)) & (self.score >= 0)


def load_reads(store: SessionStore, score_order: tuple[str, ...] | None = None) -> SessionReads:
    """The session's reads as they stand in `store`."""
    rows = store.query(
        "SELECT r.item, r.answer, r.rater, r.score, r.kind, r.day, r.half, r.time, a.expert "
        "FROM reads r JOIN answers a USING (item, answer) ORDER BY r.item, r.answer, r.day, "
        "r.time, r.rowid"
    )
    return from_rows(rows, score_order)


def from_rows(rows: list[tuple], score_order: tuple[str, ...] | None = None) -> SessionReads:
    """SessionReads from (item, answer, rater, score, kind, day, half, time, expert) rows,
    sorted by item, answer, day, time (NULL first) and the order they were added."""
    columns = list(zip(*rows)) if rows else [()] * 9
    item_name, answer_name, rater_name, label, kind, day, half, time, expert_label = columns
    items = tuple(dict.fromkeys(item_name))
    raters = tuple(sorted(set(rater_name)))
    item = _codes(item_name, items)
    rater = _codes(rater_name, raters)
    keys = np.array([f"{i}\x00{a}" for i, a in zip(item_name, answer_name)], dtype=object)
    new_answer = np.r_[True, keys[1:] != keys[:-1]] if len(keys) else np.zeros(0, bool)
    answer = np.cumsum(new_answer) - 1
    firsts = np.flatnonzero(new_answer)
    score = np.full(len(rows), -1, dtype=np.int64)
    points = np.full(len(rows), np.nan)
    expert = np.full(firsts.size, -1, dtype=np.int64)
    labels = np.array(label, dtype=object)
    experts = np.array(expert_label, dtype=object)
    scales = []
    for k in range(len(items)):
        mine = np.flatnonzero(item == k)
        scale, code = _scale(labels[mine], experts[firsts[np.isin(firsts, mine)]], score_order)
        scales.append(scale)
        score[mine] = [code.get(v, -1) for v in labels[mine]]
        points[mine] = np.where(score[mine] >= 0, scale.points[np.maximum(score[mine], 0)], np.nan)
        heads = firsts[np.isin(firsts, mine)]
        expert[answer[heads]] = [code.get(v, -1) if v else -1 for v in experts[heads]]
    kinds = np.array(kind, dtype=object)
    declared = kinds != ""
    times = np.array([np.nan if t is None else t for t in time], dtype=float)
    kinds = _guessed(kinds, answer, expert)
    return SessionReads(
        items, raters, tuple(scales), item, answer, rater, score, points, kinds, declared,
        np.array(day, dtype=object), np.array(half, dtype=object), times,
        item[firsts] if firsts.size else np.zeros(0, np.int64),
        tuple(answer_name[i] for i in firsts), expert, int(np.sum(score < 0)),
    )  # fmt: skip


def _codes(values, names) -> np.ndarray:
    index = {name: k for k, name in enumerate(names)}
    return np.array([index[v] for v in values], dtype=np.int64)


def _scale(labels: np.ndarray, experts: np.ndarray, order) -> tuple[Scale, dict]:
    # Each distinct label once (a session holds hundreds of thousands of reads), weighed by how
    # often it is given when deciding whether the scores are numbers (engine.input.labels).
    every = np.array([str(v) for v in labels] + [str(v) for v in experts if v], dtype=object)
    distinct, counts = np.unique(every, return_counts=True) if every.size else (every, every)
    numbers_given = sum(int(c) for v, c in zip(distinct, counts) if as_number(str(v)) is not None)
    numeric_given = numbers_given > counts.sum() / 2 if every.size else None
    coded, code, _ = code_labels([str(v) for v in distinct], numeric_given, order)
    numbers = [as_number(v) for v in coded]
    numeric = order is None and all(n is not None for n in numbers) and bool(numbers)
    points = np.array(numbers, dtype=float) if numeric else np.arange(len(coded), dtype=float)
    whole = numeric and all(n is not None and float(n).is_integer() for n in numbers)
    size = int(points.max() - points.min()) + 1 if whole else len(coded)
    ordered = numeric or order is not None
    return Scale(tuple(coded), points, ordered, max(size, 1)), code


def _guessed(kinds: np.ndarray, answer: np.ndarray, expert: np.ndarray) -> np.ndarray:
    """Each undeclared read's kind (the module docstring); reads are sorted by answer, then
    time."""
    out = kinds.copy()
    guess = out == ""
    out[guess & (expert[answer] >= 0)] = VALIDITY
    guess &= out == ""
    has_first = np.zeros(expert.size, dtype=bool)
    has_first[answer[kinds == FIRST]] = True
    open_ = guess & ~has_first[answer]
    # The earliest undeclared read of an answer without a declared first read is its first.
    order = np.flatnonzero(open_)
    earliest = order[np.r_[True, answer[order][1:] != answer[order][:-1]]] if order.size else order
    out[guess] = SECOND
    out[earliest] = FIRST
    return out
