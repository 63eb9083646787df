"""Several reads per answer: where a file keeps them and how they are gathered per answer.

A read is one rater's score of one answer. A file keeps them in one of two shapes (the `reads`
setting):

- wide (one row per answer): one score column per read, the audited one first: `score_column`
  alone (one read), with `second_score_column` (two), or `score_columns` (any number), each
  read's rater in `rater_column`/`second_rater_column`, or `rater_columns`; a score column
  without a rater column names its reads' rater itself (the column G2 is the grader G2).
- long (one row per read): `id_column` says which answer a row reads, `score_column` the score,
  `rater_column` who gave it, `time_column` when; an answer's text is on at least one of its
  rows, or in the answers file (`answers_file`, joined by id).

Either way an answer's first read is the one the audit is of (its score is the one PARM checks
and the review decides on); every read counts in the agreement figures, the consensus and the
rater statistics. Problems are named with their rows: a rater who reads one answer twice, an
answer whose rows carry different texts, an answer with no text at all (long form).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.core.errors import DataError
from engine.input.settings.config import AuditConfig
from engine.input.table import SHOWN_ROWS, describe_rows, missing_column

LONG, WIDE = "long", "wide"


@dataclass(frozen=True)
class Reads:
    """Every read of one item's N answers (R reads, grouped by answer, each answer's audited
    read first).

    answer: (R,) int, the answer read (0..N-1); rater: R names ("" where not recorded); score:
    (R,) int codes 0..C on the item's scale; time: (R,) float, when (NaN where not recorded);
    row: (R,) the 1-based data row each read is on; first: (R,) bool, the audited read.
    """

    answer: np.ndarray
    rater: tuple[str, ...]
    score: np.ndarray
    time: np.ndarray
    row: np.ndarray
    first: np.ndarray

    def __len__(self) -> int:
        return int(self.answer.shape[0])

    def rank(self) -> np.ndarray:
        """(R,) each read's place among its answer's reads (0: the audited one)."""
        starts = np.flatnonzero(self.first)
        return np.arange(len(self)) - np.repeat(starts, np.diff(np.r_[starts, len(self)]))

    def nth(self, k: int, n: int) -> np.ndarray:
        """(N,) each answer's k-th read's code (0: the audited one), -1 where it has none."""
        out = np.full(n, -1, dtype=np.int64)
        mine = self.rank() == k
        out[self.answer[mine]] = self.score[mine]
        return out

    def raters_of(self, k: int, n: int) -> tuple[str, ...]:
        """Who gave each answer's k-th read ("" where it has none)."""
        out = [""] * n
        for answer, rater, rank in zip(self.answer, self.rater, self.rank()):
            if rank == k:
                out[answer] = rater
        return tuple(out)

    def per_answer(self, n: int) -> np.ndarray:
        """(N,) how many reads each answer has."""
        return np.bincount(self.answer, minlength=n)

    def confirmed(self, n: int) -> np.ndarray:
        """(N,) whether an answer was read twice or more and every read gave its audited score:
        its second look was taken and agreed."""
        audited = self.nth(0, n)
        differs = np.bincount(self.answer, weights=self.score != audited[self.answer], minlength=n)
        return (self.per_answer(n) >= 2) & (differs == 0)

    def most(self, n: int) -> int:
        """The most reads any answer has."""
        return int(self.per_answer(n).max()) if len(self) else 0


@dataclass(frozen=True)
class ReadColumn:
    """One wide read: its score column and its rater column; `named` is the rater when there
    is no rater column ("" = not recorded)."""

    score: str
    rater: str | None
    named: str = ""


def read_columns(config: AuditConfig) -> list[ReadColumn]:
    """The wide file's read columns, the audited read first. With several, a column without a
    rater column names its reads' rater itself (the column G2 is the grader G2), however the
    columns were named (`score_columns`, or `score_column` and `second_score_column`); a
    file's one score column without a rater column records no rater."""
    if config.score_columns is not None:
        raters = config.rater_columns or [None] * len(config.score_columns)
        pairs = list(zip(config.score_columns, raters))
    else:
        pairs = [(config.score_column, config.rater_column)]
        if config.second_score_column is not None:
            pairs.append((config.second_score_column, config.second_rater_column))
    several = len(pairs) > 1
    return [ReadColumn(score, rater, score if rater is None and several else "")
            for score, rater in pairs]  # fmt: skip


def several_reads(config: AuditConfig) -> bool:
    """Whether the settings name more than one read per answer (a long file, or several score
    columns)."""
    return config.reads == LONG or len(read_columns(config)) > 1


def records_raters(config: AuditConfig) -> bool:
    """Whether the settings' reads name their raters (a rater column, or several reads: a score
    column without a rater column names its own): the rater table and its files."""
    return (several_reads(config) or config.rater_column is not None
            or config.rater_columns is not None)  # fmt: skip


def rater_column_given(config: AuditConfig) -> bool:
    """Whether the file has a column of who gave each score (a rater column, or a long file's):
    the `rater` column of the tables of answers (predictions.csv, decisions.csv). Where a wide
    file's score columns name their raters, every answer's audited read is the same column's,
    and the rater table and the reads say who is who."""
    return (config.reads == LONG or config.rater_column is not None
            or config.rater_columns is not None)  # fmt: skip


def rater_name(rater: str, place: int) -> str:
    """Who gave a read, as every output and screen names them: the file's name for the rater
    (a rater column's value, or the score column's name where a wide file has no rater column:
    read_columns); a read whose rater the file leaves blank is named by its place among its
    answer's reads ("read 2"), so two such reads of one answer stay two raters."""
    return rater or f"read {place + 1}"


ORDINALS = ("first", "second", "third")


def read_pair(reads: Iterable[Reads | None]) -> tuple[str, str]:
    """Who gave the audited reads and who the second reads of one item's reads (or a session's
    items'), by who_read: the two raters the second-rater figures compare."""
    reads = list(reads)
    return who_read_place(reads, 0), who_read_place(reads, 1)


def who_read_place(reads: Iterable[Reads | None], place: int) -> str:
    """who_read over one or several items' reads (a session: one name when one rater gave
    every item's `place`-th reads)."""
    names = [name for found in reads if found is not None
             for name, rank in zip(found.rater, found.rank()) if rank == place]  # fmt: skip
    return who_read(names, place)


def who_read(names, place: int) -> str:
    """The rater of every answer's `place`-th read (0: the audited one) by name when one rater
    gave them all (G1, score_grader2: what raters.csv calls them), else the place ("first
    read", "second read"): many raters share that place. names: those reads' raters (blank:
    not recorded)."""
    names = list(names)
    found = set(names)
    if len(found) == 1 and all(names):
        return found.pop()
    return f"{ORDINALS[place]} read" if place < len(ORDINALS) else f"read {place + 1}"


@dataclass(frozen=True)
class RawReads:
    """An item's reads as the file has them, before their labels are coded: for each read its
    answer's position among the item's rows (wide) or answers (long), its label as written, its
    rater, its time as written, its data row and the read column it is in (`column_names`);
    `first` marks each answer's audited read (a wide file's first read column; a long file's
    every read, its first usable one chosen later)."""

    position: np.ndarray
    label: list[str]
    rater: list[str]
    time: list[str]
    row: np.ndarray
    first: np.ndarray
    column: np.ndarray
    column_names: tuple[str, ...]


def wide_reads(frame: pd.DataFrame, config: AuditConfig, where: str) -> RawReads:
    """The reads of a wide item (one row per answer): every read column's non-empty cells; the
    first column's cell (even empty: a missing audited score) is each answer's first read."""
    numbers = frame.index.to_numpy(dtype=np.int64) + 1
    times = _cells(frame, config.time_column, where, "time") if config.time_column else None
    times = times or [""] * len(frame)
    parts = []
    for j, column in enumerate(read_columns(config)):
        role = "score" if j == 0 else "second score" if config.second_score_column else "read"
        labels = _cells(frame, column.score, where, role)
        raters = (
            _cells(frame, column.rater, where, "rater") if column.rater
            else [column.named] * len(frame)
        )  # fmt: skip
        for i, label in enumerate(labels):
            if j == 0 or label.strip():
                time = times[i] if j == 0 else ""
                parts.append((i, label, raters[i].strip(), time, j == 0, int(numbers[i]), j))
    _check_one_read_each(parts, where)
    position, label_of, rater_of, time_of, first, row, column_of = (
        zip(*parts) if parts else ((),) * 7
    )
    names = tuple(column.score for column in read_columns(config))
    return RawReads(np.asarray(position, dtype=np.int64), list(label_of), list(rater_of),
                    list(time_of), np.asarray(row, dtype=np.int64), np.asarray(first, dtype=bool),
                    np.asarray(column_of, dtype=np.int64), names)  # fmt: skip


def long_answers(frame: pd.DataFrame, config: AuditConfig, answers: pd.DataFrame | None, where):
    """A long item (one row per read) as one row per answer, and its reads.

    Returns (the answers: each answer's first row, its text the one its rows carry or the
    answers file's; the reads, `position` indexing those answers). DataError: an answer whose
    rows carry different texts, or with no text anywhere, or a rater reading it twice."""
    ids = _cells(frame, config.id_column, where, "id")
    texts = _cells(frame, config.text_column, where, "text")
    numbers = frame.index.to_numpy(dtype=np.int64) + 1
    order = list(dict.fromkeys(value.strip() for value in ids))
    position = {answer: k for k, answer in enumerate(order)}
    of_row = np.array([position[value.strip()] for value in ids], dtype=np.int64)
    first_rows = [int(np.flatnonzero(of_row == k)[0]) for k in range(len(order))]
    chosen = _answer_texts(order, of_row, texts, numbers, answers, config, where)
    table = frame.iloc[first_rows].copy()
    table[config.text_column] = chosen
    raw = RawReads(
        position=of_row,
        label=_cells(frame, config.score_column, where, "score"),
        rater=[value.strip() for value in _cells(frame, config.rater_column, where, "rater")],
        time=_cells(frame, config.time_column, where, "time")
        if config.time_column
        else [""] * len(frame),
        row=numbers,
        first=np.ones(len(frame), dtype=bool),
        column=np.zeros(len(frame), dtype=np.int64),
        column_names=(config.score_column,),
    )
    _check_one_read_each(
        list(zip(raw.position, raw.label, raw.rater, raw.time, raw.first, raw.row)), where
    )
    return table, raw


def _answer_texts(order, of_row, texts, numbers, answers, config, where) -> list[str]:
    """Each answer's text: the one text its rows carry (blank rows aside), else the answers
    file's. DataError naming the rows of an answer with two texts; with an answers file, the
    answers it lacks; without one, a file where no answer has a text (they must be elsewhere).
    Otherwise an answer with no text anywhere is a blank answer, audited like every answer."""
    given = None
    if answers is not None:
        given = dict(zip((v.strip() for v in _cells(answers, config.id_column, "the answers file", "id")),
                         _cells(answers, config.text_column, "the answers file", "text")))  # fmt: skip
    chosen, missing = [], []
    for k, answer in enumerate(order):
        mine = np.flatnonzero(of_row == k)
        found = {texts[i] for i in mine if texts[i].strip()}
        if len(found) > 1:
            raise DataError(
                f"{where}: the rows of answer '{answer}' carry different texts (rows "
                f"{describe_rows(numbers[mine])}); each answer's reads must be of one text."
            )
        text = found.pop() if found else None if given is None else given.get(answer)
        if text is None and given is not None:
            missing.append(answer)
        chosen.append(text or "")
    if missing:
        raise DataError(
            f"{where}: {len(missing)} answer(s) have no text on their rows and are not in the "
            f"answers file ({_named(missing)}); add them to it, or their text to one of their rows."
        )
    if order and not any(text.strip() for text in chosen):
        raise DataError(
            f"{where}: no answer has a text in column '{config.text_column}' on any of its rows; "
            "give a file of the answers' texts by id (--answers FILE), or name the text column."
        )
    return chosen


def _named(values) -> str:
    shown = ", ".join(repr(v) for v in values[:SHOWN_ROWS])
    return shown + (f" and {len(values) - SHOWN_ROWS} more" if len(values) > SHOWN_ROWS else "")


def _check_one_read_each(parts, where: str) -> None:
    """DataError naming the rows where one rater reads one answer twice. parts: (answer,
    label, rater, time, first, data row) of each read."""
    seen: dict[tuple[int, str], int] = {}
    for answer, _, rater, _, _, row, *_ in parts:
        if not rater:
            continue
        if (answer, rater) in seen:
            earlier = seen[(answer, rater)]
            rows = f"row {row}" if earlier == row else f"rows {earlier} and {row}"
            raise DataError(
                f"{where}: rater '{rater}' reads the same answer twice ({rows}); a rater reads "
                "an answer once."
            )
        seen[(answer, rater)] = row


def _cells(frame: pd.DataFrame, column: str | None, where: str = "", role: str = "") -> list[str]:
    if column not in frame.columns:
        raise DataError(missing_column(where, role or "read", str(column), frame.columns))
    return frame[column].astype(str).tolist()
