"""Which reads and answers of an item an audit keeps: an answer whose audited read is missing or
unreadable, and a long file's read without a usable score, are bad rows (the load stops under
on_bad_rows "error", they are left out with a warning under "skip"); a wide file's other reads
that are unreadable count as missing, with a warning (empty ones silently: a second rater
usually reads only a sample). The kept reads, coded on the item's scale, are its `Reads`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.errors import DataError
from engine.input.labels import label_text
from engine.input.settings.config import AuditConfig
from engine.input.several_reads import LONG, RawReads, Reads
from engine.input.table import describe_rows
from engine.input.times import parse_times


@dataclass(frozen=True)
class Kept:
    """answers: positions of the kept answers (sorted); reads: indices of the kept raw reads,
    each kept answer's first read first; skipped: (row, reason) of the bad rows left out."""

    answers: list[int]
    reads: list[int]
    skipped: tuple[tuple[int, str], ...]
    warnings: list[str]

    def coded(self, raw: RawReads, code: dict, config: AuditConfig, where: str) -> Reads:
        """The kept reads with their labels coded (`code`, stripped label -> code) and their
        answers numbered among the kept answers."""
        index = {position: k for k, position in enumerate(self.answers)}
        picked = np.asarray(self.reads, dtype=np.int64)
        answer = np.array([index[raw.position[k]] for k in picked], dtype=np.int64)
        first = np.r_[True, answer[1:] != answer[:-1]] if picked.size else np.zeros(0, bool)
        time = np.full(picked.size, np.nan)
        if config.time_column is not None:
            values = [raw.time[k] for k in picked]
            time = parse_times(values, raw.row[picked], config.time_column, where)
        return Reads(
            answer=answer,
            rater=tuple(raw.rater[k] for k in picked),
            score=np.array([code[label_text(raw.label[k])] for k in picked], dtype=np.int64),
            time=time,
            row=raw.row[picked],
            first=first,
        )


def keep_reads(raw: RawReads, bad: set[str], numbers, config: AuditConfig, where: str) -> Kept:
    """The kept answers and reads of an item (numbers: each answer's 1-based data row)."""
    usable = [label_text(v) != "" and label_text(v) not in bad for v in raw.label]
    problems = {}  # a bad row's number -> why
    for k, label in enumerate(raw.label):
        if not usable[k] and (raw.first[k] or config.reads == LONG):
            problems[int(raw.row[k])] = _why(label)
    skipped = tuple(sorted(problems.items()))
    warnings = _bad_rows(skipped, config.on_bad_rows, where)
    if config.reads != LONG:
        bad_first = {
            int(raw.position[k]) for k in range(len(usable)) if raw.first[k] and not usable[k]
        }
        warnings += _unreadable_reads(raw, usable, bad)
    else:
        bad_first = set()
    reads = [k for k in range(len(usable)) if usable[k] and raw.position[k] not in bad_first]
    # Each answer's reads together, in read-column order (a wide file: the audited read first)
    # or row order (a long file: its first usable row is the audited read).
    reads.sort(key=lambda k: (raw.position[k], raw.column[k], raw.row[k]))
    answers = sorted({int(raw.position[k]) for k in reads})
    return Kept(answers, reads, skipped, warnings)


def _why(label: str) -> str:
    value = label_text(label)
    return "missing score" if value == "" else f"score '{value}' is not a number"


def _bad_rows(skipped, on_bad_rows: str, where: str) -> list[str]:
    """The warning about the bad rows left out; DataError under on_bad_rows "error"."""
    if not skipped:
        return []
    summary = summarise_problems(skipped)
    if on_bad_rows == "error":
        raise DataError(
            f"{where}: {len(skipped)} row(s) cannot be used: {summary}. Fix them, or set "
            'on_bad_rows to "skip" to leave them out.'
        )
    return [f"Skipped {len(skipped)} row(s): {summary}."]


def _unreadable_reads(raw: RawReads, usable: list[bool], bad: set[str]) -> list[str]:
    """A wide file's other reads that are not numbers count as missing: one warning per read
    column."""
    notes = []
    for j, column in enumerate(raw.column_names):
        rows = [int(raw.row[k]) for k in range(len(usable))
                if raw.column[k] == j and not raw.first[k] and label_text(raw.label[k]) in bad]  # fmt: skip
        if rows:
            notes.append(
                f"Column '{column}' has {len(rows)} score(s) that are not numbers "
                f"(rows {describe_rows(rows)}); they count as missing."
            )
    return notes


def summarise_problems(skipped: tuple[tuple[int, str], ...]) -> str:
    by_reason: dict[str, list[int]] = {}
    for row, reason in skipped:
        key = "score is not a number" if reason.startswith("score '") else reason
        by_reason.setdefault(key, []).append(row)
    return "; ".join(
        f"{reason} in {len(rows)} row(s) ({describe_rows(rows)})"
        for reason, rows in by_reason.items()
    )
