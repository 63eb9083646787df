"""One file's reads for a session, read as `parm audit` reads a file (the columns chosen by the
workspace, wide or long, a workbook's sheet): every read with its item, answer, rater, score as
written (numbers in one spelling), time, period and declared kind, and every answer's text and
expert score.

An answer is known by its item and its id; a file without an id column names its answers by
their text (the same text in one item is one answer), and says so. Nothing here refuses an item
for being small or having one score: a day's file may hold few reads of an item.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from engine.core.errors import DataError
from engine.input.items import answers_table
from engine.input.labels import label_text, number_label
from engine.input.settings.config import AuditConfig
from engine.input.several_reads import LONG, RawReads, rater_name, wide_reads
from engine.input.table import as_number, describe_rows
from engine.input.times import KINDS, parse_times
from engine.live.intake.periods import read_periods

_CLOCK = re.compile(r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?")

FIRST, SECOND, VALIDITY, BACKREAD, RESOLUTION = (
    "first", "second", "validity", "backread", "resolution",
)  # fmt: skip
KINDS_OF_READ = (FIRST, SECOND, VALIDITY, BACKREAD, RESOLUTION)
# How a kind column may spell each kind (case and blanks ignored).
_SPELLINGS = {
    FIRST: ("first", "1st", "primary", "initial"),
    SECOND: ("second", "2nd", "reliability", "double"),
    VALIDITY: ("validity", "seed", "check", "calibration"),
    BACKREAD: ("backread", "back read", "back-read", "review"),
    RESOLUTION: ("resolution", "third", "3rd", "adjudication", "resolve"),
}
_KIND_OF = {spelling: kind for kind, names in _SPELLINGS.items() for spelling in names}
# Kinds that a wide file's kind column gives every read of its row.
_WHOLE_ROW = (VALIDITY, BACKREAD, RESOLUTION)


@dataclass
class FileReads:
    """A file's reads (one entry per read in each list) and answers ((item, answer) -> (text,
    expert label or "")). kind: the declared kind, "" where guessed later; time_key: what tells
    two reads of one answer by one rater apart (the time as read, "" without a time column).
    dating: how the reads' days were found, in words."""

    item: list[str] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)
    rater: list[str] = field(default_factory=list)
    time_key: list[str] = field(default_factory=list)
    time: list[float] = field(default_factory=list)
    day: list[str] = field(default_factory=list)
    half: list[str] = field(default_factory=list)
    score: list[str] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)
    row: list[int] = field(default_factory=list)
    answers: dict = field(default_factory=dict)
    dating: str = ""
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.answer)


def read_file_reads(frame: pd.DataFrame, config: AuditConfig, source: str, day: tuple[str, str]):
    """The reads of an already-read table under `config`'s columns. day: (the day of reads
    without a dated time, how it was found: engine.live.intake.periods.file_day). DataError names the
    file, row and column of what cannot be read."""
    where = source or "input"
    kind, values = _time_kind(frame, config, where)
    out = FileReads(dating=_dating(config, kind, day))
    answers = answers_table(config, source) if config.reads == LONG else None
    if config.item_column is None:
        groups = [("", frame)]
    else:
        if config.item_column not in frame.columns:
            raise DataError(f"{where}: the item column '{config.item_column}' is not in the file.")
        items = frame[config.item_column].astype(str).str.strip()
        blank = items == ""
        if blank.any():
            rows = describe_rows((frame.index[blank] + 1).tolist())
            raise DataError(f"{where}: rows {rows} have no item in '{config.item_column}'.")
        groups = [(item, frame[items == item]) for item in dict.fromkeys(items)]
    for item, rows in groups:
        _item_reads(out, item, rows, config, answers, where, values, kind, day[0])
    if config.id_column is None or config.id_column not in frame.columns:
        out.notes.append("No id column: each answer is known by its text within its item.")
    return out


def _time_kind(frame, config: AuditConfig, where) -> tuple[str | None, pd.Series | None]:
    """The kind of the time column (engine.input.times.KINDS; checked over the whole file) and
    its values, or (None, None) without one."""
    if config.time_column is None:
        return None, None
    if config.time_column not in frame.columns:
        raise DataError(f"{where}: the time column '{config.time_column}' is not in the file.")
    values = frame[config.time_column].astype(str)
    # Checked over the whole file: one kind for the column, a bad value named with its row.
    times = parse_times(values.tolist(), frame.index.to_numpy() + 1, config.time_column, where)
    present = np.flatnonzero(np.isfinite(times))
    if present.size == 0:
        return None, None
    sample = values.iloc[int(present[0])].strip()
    if as_number(sample) is not None:
        return KINDS[0], values
    return (KINDS[2] if _CLOCK.fullmatch(sample) else KINDS[1]), values


def _dating(config: AuditConfig, kind: str | None, day: tuple[str, str]) -> str:
    if kind == KINDS[1]:
        return (f"Periods from the time column '{config.time_column}' (the day as written; "
                "half days where it gives times of day).")  # fmt: skip
    why = (
        "no time column" if kind is None else f"the time column '{config.time_column}' has no dates"
    )
    halves = " (half days from its times of day)" if kind == KINDS[2] else ""
    return f"Reads dated {day[0]}{halves}: {why}, so the day is {day[1]}."


def _item_reads(out: FileReads, item, rows, config, answers, where, times, kind, fallback):
    if config.reads == LONG:
        ids, texts, raw = long_reads(rows, config, answers, where)
        by_row = rows  # one row per read: its time, kind and expert cells
        read_rows = np.arange(len(rows))
    else:
        raw = wide_reads(rows, config, where)
        texts = rows[config.text_column].astype(str).tolist()
        ids = _ids(rows, config, texts)
        by_row = rows
        read_rows = raw.position  # every read of a row is on that row
    cells = _row_cells(by_row, config, times, kind, fallback, where)
    expert = _experts(by_row, config, raw, len(ids), where)
    seen: dict[int, int] = {}
    for k in range(len(raw.label)):
        label = _label(raw.label[k])
        if label == "":
            continue
        a, r = int(raw.position[k]), int(read_rows[k])
        place = seen.get(a, 0)
        seen[a] = place + 1
        declared = cells["kind"][r]
        if config.reads != LONG and declared not in _WHOLE_ROW:
            declared = ""
        out.item.append(item)
        out.answer.append(ids[a])
        place = int(raw.column[k]) if config.reads != LONG else place
        out.rater.append(rater_name(raw.rater[k], place))
        out.time_key.append(cells["key"][r])
        out.time.append(cells["time"][r])
        out.day.append(cells["day"][r])
        out.half.append(cells["half"][r])
        out.score.append(label)
        out.kind.append(declared)
        out.row.append(int(raw.row[k]))
        out.answers.setdefault((item, ids[a]), (texts[a], expert[a]))


def long_reads(rows: pd.DataFrame, config: AuditConfig, answers, where: str):
    """A long item's answers and reads: (ids, each answer's text, RawReads with `position` the
    answer of each row). Unlike an audit's reader, one rater may read one answer more than once
    at different times (a validity paper shown again, a cumulative export of several days);
    each answer's rows must carry one text (else DataError naming them), or the answers file
    gives it (engine.input.several_reads.long_answers' rules, grouped rather than searched)."""
    for role, column in (("id", config.id_column), ("text", config.text_column),
                         ("score", config.score_column), ("rater", config.rater_column)):  # fmt: skip
        if column is None:
            raise DataError(f"{where}: a session of one row per read needs a {role} column "
                            f"(--{role}-col COLUMN).")  # fmt: skip
        if column not in rows.columns:
            raise DataError(f"{where}: the {role} column '{column}' is not in the file.")
    ids = rows[config.id_column].astype(str).str.strip()
    order = list(dict.fromkeys(ids))
    position = pd.Series(range(len(order)), index=order)[ids].to_numpy()
    text = rows[config.text_column].astype(str)
    present = text.str.strip() != ""
    found = pd.DataFrame({"id": ids[present], "text": text[present]}).drop_duplicates()
    twice = found[found["id"].duplicated(keep=False)]
    if len(twice):
        answer = twice["id"].iloc[0]
        numbers = describe_rows((rows.index[ids == answer] + 1).tolist())
        raise DataError(f"{where}: the rows of answer '{answer}' carry different texts (rows "
                        f"{numbers}); each answer's reads must be of one text.")  # fmt: skip
    texts = dict(zip(found["id"], found["text"]))
    if answers is not None:
        given = dict(zip(answers[config.id_column].astype(str).str.strip(),
                         answers[config.text_column].astype(str)))  # fmt: skip
        texts = {**given, **texts}
    n = len(rows)
    raw = RawReads(
        position=np.asarray(position, dtype=np.int64),
        label=rows[config.score_column].astype(str).tolist(),
        rater=[v.strip() for v in rows[config.rater_column].astype(str)],
        time=[""] * n,
        row=rows.index.to_numpy(dtype=np.int64) + 1,
        first=np.ones(n, dtype=bool),
        column=np.zeros(n, dtype=np.int64),
        column_names=(config.score_column,),
    )
    return order, [texts.get(answer, "") for answer in order], raw


def _ids(rows, config: AuditConfig, texts: list[str]) -> list[str]:
    """A wide file's answer ids: the id column's, else each answer's text digest."""
    if config.id_column is not None and config.id_column in rows.columns:
        return [str(v).strip() for v in rows[config.id_column].astype(str)]
    return ["text:" + hashlib.sha256(t.strip().encode()).hexdigest()[:16] for t in texts]


def _label(value: str) -> str:
    """A score as the session keeps it: a number in one spelling ("2.0", "+2", "02" are "2")."""
    text = label_text(str(value))
    if text.lower() == "nan":
        return ""
    number = as_number(text)
    return number_label(number) if number is not None else text


def _row_cells(rows, config: AuditConfig, times, kind, fallback, where) -> dict:
    """Per row: the time's key and value, day, half and declared kind."""
    n = len(rows)
    out: dict[str, list[Any]] = {"key": [""] * n, "time": [float("nan")] * n,  # str or float
                                 "day": [fallback] * n, "half": [""] * n, "kind": [""] * n}  # fmt: skip
    if times is not None:
        assert config.time_column is not None  # the times are its values (_time_kind)
        values = times.loc[rows.index].tolist()
        parsed = parse_times(values, rows.index.to_numpy() + 1, config.time_column, where)
        days, halves = read_periods(values, kind, fallback)
        for i in range(n):
            if np.isfinite(parsed[i]):
                out["time"][i] = float(parsed[i])
                key = repr(float(parsed[i]))
                out["key"][i] = f"{days[i]}T{key}" if kind == KINDS[2] else key
        out["day"], out["half"] = days, halves
    if config.kind_column is not None:
        if config.kind_column not in rows.columns:
            raise DataError(f"{where}: the kind column '{config.kind_column}' is not in the file.")
        numbers = rows.index.to_numpy() + 1
        for i, value in enumerate(rows[config.kind_column].astype(str)):
            out["kind"][i] = kind_of(value, int(numbers[i]), config.kind_column, where)
    return out


def kind_of(value: str, row: int, column: str, where: str) -> str:
    """A kind column's value as a kind of read ("" when blank: guessed); DataError naming the
    row for a value that is none."""
    text = " ".join(str(value).strip().lower().replace("_", " ").split())
    if text in ("", "nan", "none"):
        return ""
    found = _KIND_OF.get(text) or _KIND_OF.get(text.replace(" ", ""))
    if found is None:
        shown = text if len(text) <= 30 else text[:29] + "…"
        raise DataError(
            f"{where}: the kind column '{column}' has {shown!r} in row {row}: a read is first, "
            "second, validity (seed), backread or resolution (blank: guessed)."
        )
    return found


def _experts(rows, config: AuditConfig, raw, n_answers: int, where) -> list[str]:
    """Each answer's expert score as written ("" where none); DataError for an answer whose
    rows give two."""
    out = [""] * n_answers
    if config.expert_column is None:
        return out
    if config.expert_column not in rows.columns:
        raise DataError(f"{where}: the expert column '{config.expert_column}' is not in the file.")
    cells = rows[config.expert_column].astype(str).tolist()
    position = raw.position if config.reads == LONG else np.arange(len(rows))
    numbers = rows.index.to_numpy() + 1
    for value, a, row in zip(cells, position, numbers):
        label = _label(value)
        if label == "":
            continue
        if out[a] not in ("", label):
            raise DataError(
                f"{where}: row {row} gives the answer an expert score {label!r}, another of its "
                f"rows {out[a]!r}; an answer has one expert score."
            )
        out[a] = label
    return out
