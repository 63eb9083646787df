"""Scored responses from a table (engine.input.table reads the file): columns chosen by name, score
labels coded 0..C in their order with the originals kept.

The order of the scores: numbers in numeric order (2 < 10, 1.5 < 2); text labels in the order
`score_order` states. Text labels without a stated order are nominal (`Responses.ordered` is
False): they are coded in sorted order only to have codes, and nothing that needs an order (QWK,
near agreement, "off by 2") is computed for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

import numpy as np
import pandas as pd

from engine.core.errors import DataError
from engine.core.suggest import did_you_mean
from engine.input.expert import expert_codes
from engine.input.kept_reads import keep_reads
from engine.input.labels import check_order, code_labels, is_numeric, order_notes, scale_notes
from engine.input.settings.config import AuditConfig
from engine.input.several_reads import (
    LONG,
    Reads,
    long_answers,
    read_columns,
    records_raters,
    several_reads,
    wide_reads,
)
from engine.input.table import describe_rows, missing_column
from engine.input.table import read_table as read_table  # where the tests have read it

# Below 10 responses nothing is estimable (3C parameters, K neighbours each): refused.
MIN_RESPONSES = 10
# Below 50 the audit runs but warns that its estimates are imprecise.
SMALL_SAMPLE = 50
# More distinct scores than this is almost always a text or id column chosen as the score.
MAX_CATEGORIES = 50


class ItemTooSmall(DataError):
    """Too few usable responses, or a single score category: nothing can be estimated. A file
    of many items skips such an item with this reason instead of stopping."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class Responses:
    """Scored responses ready for the engine.

    texts: N strings; scores: (N,) int codes 0..C; labels: the C+1 original labels, code order;
    ids: N strings; rows: (N,) 1-based data-row numbers in the input file (header excluded);
    second_scores: (N,) codes of a second rater, -1 where missing, or None;
    item: the item (question) these responses answer, None when the file has no item column;
    raters, second_raters: who gave each score and each second score ("" when not recorded),
    or None without a rater column; ordered: whether the codes' order means something (numbers,
    or labels in a stated score_order); times: (N,) when (or in which order) each score was
    given, NaN where blank, or None without a time column (engine.input.times).
    """

    texts: list[str]
    scores: np.ndarray
    labels: tuple[str, ...]
    ids: list[str]
    rows: np.ndarray
    second_scores: np.ndarray | None = None
    source: str = ""
    skipped: tuple[tuple[int, str], ...] = ()
    file_rows: int = 0
    warnings: tuple[str, ...] = field(default=(), compare=False)
    ordered: bool = True
    item: str | None = None
    raters: tuple[str, ...] | None = None
    second_raters: tuple[str, ...] | None = None
    times: np.ndarray | None = field(default=None, compare=False)
    # Every read of every answer, the audited one first (engine.input.several_reads).
    reads: Reads | None = field(default=None, compare=False)
    # (N,) the lead's (expert's) score code of each answer, -1 where none; None without an
    # expert column (engine.input.expert).
    expert: np.ndarray | None = field(default=None, compare=False)
    # The item's question and reference answer, when the file has them (shown in the review).
    question: str | None = field(default=None, compare=False)
    reference: str | None = field(default=None, compare=False)

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def blank(self) -> np.ndarray:
        """(N,) True for blank answers (empty or whitespace only), which are audited too."""
        return blank_answers(self.texts)

    @property
    def n_classes(self) -> int:
        return len(self.labels)

    @property
    def score_counts(self) -> np.ndarray:
        """(C+1,) number of responses with each score code."""
        return np.bincount(self.scores, minlength=self.n_classes)

    def same_as(self, other: Responses) -> bool:
        """The same file's same responses, ids, labels and (first and second) scores, so a
        result computed on one still describes the other."""

        def same(a, b):
            return (a is None and b is None) or (
                a is not None and b is not None and np.array_equal(a, b)
            )

        return (
            self.source == other.source
            and self.texts == other.texts
            and self.ids == other.ids
            and self.labels == other.labels
            and self.ordered == other.ordered
            and same(self.rows, other.rows)
            and same(self.scores, other.scores)
            and same(self.second_scores, other.second_scores)
            and self.item == other.item
            and self.raters == other.raters
            and self.second_raters == other.second_raters
        )


def blank_answers(texts: list[str]) -> np.ndarray:
    """(N,) True where an answer is empty or whitespace only. A blank answer is an answer
    (usually scored 0, and a blank scored high is an error a lead wants to see), so it is
    audited like any other; engine.embedding.blank gives all blanks one shared representation."""
    return np.array([not text.strip() for text in texts], dtype=bool)


@overload
def _column(frame: pd.DataFrame, name: str, role: str, path) -> pd.Series: ...
@overload
def _column(frame: pd.DataFrame, name: None, role: str, path) -> None: ...
def _column(frame: pd.DataFrame, name: str | None, role: str, path) -> pd.Series | None:
    if name is None:
        return None
    if name not in frame.columns:
        raise DataError(missing_column(path, role, name, frame.columns))
    column = frame[name]
    if isinstance(column, pd.DataFrame):
        raise DataError(f"{path}: more than one column is named '{name}'; rename them.")
    return column.astype(str)


def every_text(frame: pd.DataFrame, config: AuditConfig, source: str = "") -> list[str]:
    """The text column of every data row, as an audit reads it, blank and bad rows included
    (what `parm embed` embeds: one vector per data row, as `--embeddings` takes them)."""
    return _column(frame, config.text_column, "text", source or "input").tolist()


def load_responses(path: str | Path, config: AuditConfig) -> Responses:
    """Read `path` (a workbook's `sheet`) and return the responses the column keys select."""
    from engine.input.workbook import read_file

    path = Path(path).expanduser()
    return responses_from_frame(read_file(path, config.sheet), config, source=str(path))


def responses_from_frame(
    frame: pd.DataFrame, config: AuditConfig, source: str = "", answers=None
) -> Responses:
    """Select, validate and code the columns of an already-read table (one item's rows).

    Every read is gathered (engine.input.several_reads: wide or long); an answer whose audited read
    (its first) is missing or unreadable stops the load (on_bad_rows "error") or is left out
    with a warning ("skip"), and so is a long file's read without a usable score; blank answers
    are kept (and counted in a warning); kept answers keep their original 1-based data-row
    numbers (a long file's answer: its first row), taken from the frame's index (0-based
    positions in the file), so a slice of a table (one item's rows) keeps the file's numbering.
    answers: a long file's answers file, read (the `answers_file` setting), or None.
    """
    where = source or "input"
    file_rows, read_warnings = len(frame), list(frame.attrs.get("warnings", ()))
    by_row = frame  # one row per read in a long file: where its expert scores are
    if config.reads == LONG:
        frame, raw = long_answers(frame, config, answers, where)
    else:
        raw = wide_reads(frame, config, where)
    numbers = frame.index.to_numpy(dtype=np.int64) + 1
    text_list = _column(frame, config.text_column, "text", where).tolist()
    numeric = config.score_order is None and is_numeric(raw.label)
    for column, labels in _labels_by_column(raw, config):
        if config.score_order is not None:
            check_order(labels, config.score_order, column, where)
    _, _, bad_values = code_labels(raw.label, numeric, config.score_order)
    kept = keep_reads(raw, bad_values, numbers, config, where)
    if len(kept.answers) < MIN_RESPONSES:
        raise ItemTooSmall(
            where, f"{len(kept.answers)} usable response(s); parm needs at least {MIN_RESPONSES}."
        )
    keep = kept.answers
    labels, code, _ = code_labels([raw.label[k] for k in kept.reads], numeric, config.score_order)
    reads = kept.coded(raw, code, config, where)
    coded = reads.score[reads.first]
    _check_categories(coded, labels, config.score_column, where)
    ordered, notes = order_notes(labels, numeric, config.score_order, config.score_column)
    warnings = read_warnings + kept.warnings + notes
    if numeric and config.reads != LONG:
        warnings += scale_notes(raw.column_names, raw.position, raw.column, raw.label)
    warnings += _category_warnings(coded, labels, numbers[keep], config.score_column)
    id_list, id_notes = _ids(frame, config.id_column, keep, numbers, where)
    warnings += id_notes + _blank_warnings([text_list[i] for i in keep], numbers[keep])
    several, named = several_reads(config), records_raters(config)
    return Responses(
        texts=[text_list[i] for i in keep],
        scores=coded,
        labels=labels,
        ids=id_list,
        rows=numbers[keep],
        second_scores=reads.nth(1, len(keep)) if several else None,
        source=source,
        skipped=kept.skipped,
        file_rows=file_rows,
        warnings=tuple(warnings),
        ordered=ordered,
        raters=reads.raters_of(0, len(keep)) if named else None,
        second_raters=reads.raters_of(1, len(keep)) if several else None,
        times=reads.time[reads.first] if config.time_column is not None else None,
        reads=reads,
        expert=_expert(by_row, raw, config, keep, labels, numeric, where),
        question=_item_text(frame, config.question_column, keep, where),
        reference=_item_text(frame, config.reference_column, keep, where),
    )


def _expert(frame, raw, config: AuditConfig, keep, labels, numeric, where) -> np.ndarray | None:
    """Each kept answer's expert score code (-1: none), or None without an expert column."""
    if config.expert_column is None:
        return None
    cells = _column(frame, config.expert_column, "expert score", where).tolist()
    rows = frame.index.to_numpy(dtype=np.int64) + 1
    position = raw.position if config.reads == LONG else np.arange(len(frame))
    return expert_codes(cells, position, rows, keep, labels, numeric, config.expert_column, where)


def _item_text(frame: pd.DataFrame, column: str | None, keep: list[int], where) -> str | None:
    """An item's question or reference answer: the commonest non-blank value of the column on
    its kept rows (one per item in the files that have one), None without the column."""
    if column is None:
        return None
    values = [value.strip() for value in _column(frame, column, "question", where).iloc[keep]]
    present = [value for value in values if value]
    return max(set(present), key=present.count) if present else None


def _labels_by_column(raw, config: AuditConfig):
    """(column, the labels read from it) for each column scores are read from."""
    if config.reads == LONG:
        yield config.score_column, raw.label
        return
    columns = read_columns(config)
    for j, column in enumerate(columns):
        yield column.score, [label for label, n in zip(raw.label, raw.column) if n == j]


def _ids(frame: pd.DataFrame, column: str | None, keep: list[int], numbers, where):
    """The kept rows' ids and warnings. Ids are only shown to people (rows are told apart by
    their numbers), so a missing id column falls back to row numbers with a warning."""
    if column and column not in frame.columns:
        return [str(numbers[i]) for i in keep], [
            f"The id column '{column}' does not exist; responses are identified by their row "
            f"numbers.{did_you_mean(column, frame.columns)} Columns in the file: "
            f"{', '.join(map(str, frame.columns))}."
        ]
    if not column:
        return [str(numbers[i]) for i in keep], []
    values = _column(frame, column, "id", where).tolist()
    ids = [values[i].strip() for i in keep]
    return ids, _id_warnings(ids, column)


def _check_categories(coded: np.ndarray, labels: tuple[str, ...], column: str, where) -> None:
    """Refuse one score category, and a column with so many distinct scores it is no score."""
    used = np.unique(coded)
    if used.size < 2:
        raise ItemTooSmall(
            where,
            f"every usable response has score '{labels[used[0]]}' in column '{column}'; an "
            "audit needs at least two score categories.",
        )
    if len(labels) > MAX_CATEGORIES:
        shown = ", ".join(repr(v if len(v) <= 30 else v[:29] + "…") for v in labels[:3])
        raise DataError(
            f"{where}: column '{column}' has {len(labels)} distinct scores (e.g. {shown}); parm "
            f"accepts at most {MAX_CATEGORIES}. Is it the score column?"
        )


def _category_warnings(
    coded: np.ndarray, labels: tuple[str, ...], kept_rows: np.ndarray, column: str
) -> list[str]:
    """Warn about categories with 0 or 1 responses (their parameters are not identifiable)."""
    counts = np.bincount(coded, minlength=len(labels))
    notes = []
    for c in np.flatnonzero(counts <= 1):
        if counts[c] == 0:
            where = "appears only in the second rater's column"
            notes.append(
                f"Score '{labels[c]}' {where} and has no responses in column '{column}': its "
                "parameters cannot be estimated."
            )
        else:
            row = int(kept_rows[int(np.flatnonzero(coded == c)[0])])
            notes.append(
                f"Score '{labels[c]}' in column '{column}' has a single response (row {row}): "
                "its parameters are not identifiable and its estimates are unreliable."
            )
    if len(coded) < SMALL_SAMPLE:
        notes.append(
            f"Only {len(coded)} usable responses: the estimates and agreement figures are "
            f"imprecise (parm is meant for {SMALL_SAMPLE} or more)."
        )
    return notes


def _blank_warnings(texts: list[str], kept_rows: np.ndarray) -> list[str]:
    """Say how many answers are blank: they are audited, all alike, so a blank scored like a
    real answer stands out in the review queue."""
    rows = kept_rows[blank_answers(texts)].tolist()
    if not rows:
        return []
    return [
        f"{len(rows)} blank answer(s) (rows {describe_rows(rows)}): audited like every answer, "
        "all blanks alike, so a blank scored like a real answer stands out."
    ]


def _id_warnings(ids: list[str], column: str | None) -> list[str]:
    seen: dict[str, int] = {}
    for value in ids:
        seen[value] = seen.get(value, 0) + 1
    dupes = [v for v, n in seen.items() if n > 1]
    if not dupes:
        return []
    shown = ", ".join(repr(v) for v in dupes[:5])
    return [
        f"Column '{column}' has {len(dupes)} duplicated id(s), e.g. {shown}; rows are still "
        "told apart by their row numbers."
    ]
