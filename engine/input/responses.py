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

import numpy as np
import pandas as pd

from engine.core.errors import DataError
from engine.core.suggest import did_you_mean
from engine.input.config import AuditConfig
from engine.input.table import as_number, read_table
from engine.input.times import parse_times

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


def missing_column(where, role: str, name: str, columns) -> str:
    """The message about a column the file does not have, with the closest one it has."""
    columns = [str(c) for c in columns]
    return (
        f"{where}: the {role} column '{name}' does not exist.{did_you_mean(name, columns)} "
        f"Columns in the file: {', '.join(columns)}."
    )


def blank_answers(texts: list[str]) -> np.ndarray:
    """(N,) True where an answer is empty or whitespace only. A blank answer is an answer
    (usually scored 0, and a blank scored high is an error a lead wants to see), so it is
    audited like any other; engine.embedding.blank gives all blanks one shared representation."""
    return np.array([not text.strip() for text in texts], dtype=bool)


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


def _label_text(value: str) -> str:
    return value.strip()


def is_numeric(values: list[str]) -> bool:
    """Scores are numbers when more than half of the non-empty values parse as finite numbers."""
    present = [v for v in (_label_text(x) for x in values) if v != ""]
    return sum(as_number(v) is not None for v in present) > len(present) / 2


def code_labels(
    values: list[str], numeric: bool | None = None, order: tuple[str, ...] | None = None
) -> tuple[tuple[str, ...], dict[str, int], set[str]]:
    """Code score labels 0..C: in `order` when given, else numerically when most values are
    numbers, else in sorted order (nominal labels need codes too).

    Returns (labels in code order, mapping from stripped value to code, values that are bad:
    not numbers among numbers, or not in `order`). Labels of `order` that do not occur are left
    out. Labels like "2", "+2", "02" and "2.0" are the same number, shown in one canonical
    spelling (`number_label`: "2"; "2.50" is "2.5"); text labels are kept as written.
    numeric: force numeric or text coding (None: decide with `is_numeric`).
    """
    present = [v for v in (_label_text(x) for x in values) if v != ""]
    if order is not None:
        seen = set(present)
        labels = tuple(label for label in order if label in seen)
        code = {label: i for i, label in enumerate(labels)}
        return labels, code, seen - set(order)
    numbers = {v: as_number(v) for v in present}
    if numeric is None:
        numeric = is_numeric(present)
    bad: set[str] = set()
    if numeric:
        bad = {v for v in present if numbers[v] is None}
        order_found = sorted({numbers[v] for v in present if numbers[v] is not None})
        position = {n: i for i, n in enumerate(order_found)}
        labels = tuple(number_label(n) for n in order_found)
        code = {v: position[numbers[v]] for v in present if numbers[v] is not None}
    else:
        labels = tuple(sorted(set(present)))
        position = {label: i for i, label in enumerate(labels)}
        code = {v: position[v] for v in present}
    return labels, code, bad


def number_label(value: float) -> str:
    """A numeric score's canonical spelling: an integer without plus sign, leading zeros or point
    ("+2", "02", "2.0" are "2"; "-0" is "0"), else the shortest decimal that reads back as the
    same number ("2.50" is "2.5")."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _check_order(values: list[str], order: tuple[str, ...], column: str, where) -> None:
    """Every label that occurs in `column` must be in score_order: name the ones that are not."""
    missing = sorted({_label_text(v) for v in values} - set(order) - {""})
    if missing:
        shown = ", ".join(repr(v if len(v) <= 30 else v[:29] + "…") for v in missing[:10])
        raise DataError(
            f"{where}: column '{column}' has score(s) {shown} that are not in score_order "
            f"({', '.join(order)}); add them to score_order in their place, lowest first."
        )


def _order_notes(labels, numeric: bool, order, column: str) -> tuple[bool, list[str]]:
    """(whether the codes are ordered, warnings): unused score_order labels, or text labels
    without an order, which make the scores nominal."""
    if order is not None:
        unused = [label for label in order if label not in labels]
        notes = []
        if unused:
            notes.append(
                f"score_order lists {', '.join(repr(v) for v in unused)}, which no response has "
                f"in column '{column}'; left out of the scale."
            )
        return True, notes
    if numeric:
        return True, []
    shown = ", ".join(repr(v) for v in labels[:6]) + (", ..." if len(labels) > 6 else "")
    return False, [
        f"The scores in column '{column}' ({shown}) are text with no stated order, so they are "
        "treated as nominal: QWK, near agreement and the 'off by 2' filter are left out; set "
        'score_order (e.g. --score-order "low,medium,high") to give them an order.'
    ]


def _describe_rows(rows: list[int], limit: int = 8) -> str:
    shown = ", ".join(str(r) for r in rows[:limit])
    return shown + (f" and {len(rows) - limit} more" if len(rows) > limit else "")


def load_responses(path: str | Path, config: AuditConfig) -> Responses:
    """Read `path` and return the responses the config's column keys select."""
    path = Path(path).expanduser()
    return responses_from_frame(read_table(path), config, source=str(path))


def _row_problems(scores: list[str], bad_values: set[str]) -> dict[int, str]:
    """0-based row -> why it cannot be used (a missing or non-number score). Blank answers are
    not problems: they are audited."""
    problems: dict[int, str] = {}
    for i, value in enumerate(scores):
        value = _label_text(value)
        if value == "":
            problems[i] = "missing score"
        elif value in bad_values:
            problems[i] = f"score '{value}' is not a number"
    return problems


def responses_from_frame(frame: pd.DataFrame, config: AuditConfig, source: str = "") -> Responses:
    """Select, validate and code the columns of an already-read table.

    Rows with a missing or unreadable score stop the load (on_bad_rows "error") or are left out
    with a warning ("skip"); blank answers are kept (and counted in a warning); kept rows keep their
    original 1-based data-row numbers, taken from the frame's index (0-based positions in the
    file), so a slice of a table (one item's rows) keeps the file's numbering.
    """
    where = source or "input"
    numbers = frame.index.to_numpy(dtype=np.int64) + 1
    text_list = _column(frame, config.text_column, "text", where).tolist()
    raw_scores = _column(frame, config.score_column, "score", where).tolist()
    second = _column(frame, config.second_score_column, "second score", where)
    raw_second = second.tolist() if second is not None else []
    order = config.score_order
    if order is not None:
        _check_order(raw_scores, order, config.score_column, where)
        _check_order(raw_second, order, config.second_score_column, where)
    numeric = order is None and is_numeric(raw_scores + raw_second)
    _, _, bad_values = code_labels(raw_scores + raw_second, numeric, order)
    problems = _row_problems(raw_scores, bad_values)
    keep, skipped, warnings = _apply_bad_rows(numbers, problems, config.on_bad_rows, where)
    # What reading the file noticed (a fallback encoding, replaced control characters) first.
    warnings = list(frame.attrs.get("warnings", ())) + warnings
    # Categories come from the rows kept, so a score seen only in skipped rows is no category.
    kept_scores = [raw_scores[i] for i in keep]
    kept_second = [raw_second[i] for i in keep] if second is not None else []
    labels, code, _ = code_labels(kept_scores + kept_second, numeric, order)
    coded = np.array([code[_label_text(v)] for v in kept_scores], dtype=np.int64)
    _check_categories(coded, labels, config.score_column, where)
    ordered, order_notes = _order_notes(labels, numeric, order, config.score_column)
    warnings += order_notes + _category_warnings(coded, labels, numbers[keep], config.score_column)
    second_codes = None
    if second is not None:
        second_codes = np.array([code.get(_label_text(v), -1) for v in kept_second], dtype=np.int64)
        warnings += _second_warnings(
            kept_second, numbers[keep], bad_values, config.second_score_column
        )
    id_list, id_notes = _ids(frame, config.id_column, keep, numbers, where)
    warnings += id_notes + _blank_warnings([text_list[i] for i in keep], numbers[keep])
    return Responses(
        texts=[text_list[i] for i in keep],
        scores=coded,
        labels=labels,
        ids=id_list,
        rows=numbers[keep],
        second_scores=second_codes,
        source=source,
        skipped=skipped,
        file_rows=len(frame),
        warnings=tuple(warnings),
        ordered=ordered,
        raters=_who(frame, config.rater_column, keep, where),
        second_raters=_who(frame, config.second_rater_column, keep, where),
        times=_when(frame, config.time_column, keep, numbers, where),
    )


def _apply_bad_rows(numbers: np.ndarray, problems: dict[int, str], on_bad_rows: str, where):
    """(kept positions, skipped (row, reason) pairs, warnings); raises under "error".

    numbers: the 1-based file row of every position."""
    keep = [i for i in range(len(numbers)) if i not in problems]
    skipped = tuple((int(numbers[i]), problems[i]) for i in sorted(problems))
    warnings: list[str] = []
    if problems:
        summary = _summarise_problems(skipped)
        if on_bad_rows == "error":
            raise DataError(
                f"{where}: {len(problems)} row(s) cannot be used: {summary}. Fix them, or set "
                'on_bad_rows to "skip" to leave them out.'
            )
        warnings.append(f"Skipped {len(problems)} row(s): {summary}.")
    if len(keep) < MIN_RESPONSES:
        raise ItemTooSmall(
            where, f"{len(keep)} usable response(s); parm needs at least {MIN_RESPONSES}."
        )
    return keep, skipped, warnings


def _who(frame: pd.DataFrame, column: str | None, keep: list[int], where):
    """Who gave each kept row's score (a rater or second-rater column), "" where blank."""
    if column is None:
        return None
    values = _column(frame, column, "rater", where).tolist()
    return tuple(values[i].strip() for i in keep)


def _when(frame: pd.DataFrame, column: str | None, keep: list[int], numbers, where):
    """The kept rows' times (engine.input.times), or None without a time column."""
    if column is None:
        return None
    values = _column(frame, column, "time", where).tolist()
    return parse_times([values[i] for i in keep], numbers[keep], column, where)


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


def _second_warnings(values: list[str], kept_rows, bad: set[str], column) -> list[str]:
    """Unreadable second-rater scores are left out of the agreement (empty ones silently: a
    second rater usually scores only a sample)."""
    unreadable = [int(kept_rows[j]) for j, v in enumerate(values) if _label_text(v) in bad]
    if not unreadable:
        return []
    return [
        f"Column '{column}' has {len(unreadable)} score(s) that are not numbers "
        f"(rows {_describe_rows(unreadable)}); they count as missing."
    ]


def _blank_warnings(texts: list[str], kept_rows: np.ndarray) -> list[str]:
    """Say how many answers are blank: they are audited, all alike, so a blank scored like a
    real answer stands out in the review queue."""
    rows = kept_rows[blank_answers(texts)].tolist()
    if not rows:
        return []
    return [
        f"{len(rows)} blank answer(s) (rows {_describe_rows(rows)}): audited like every answer, "
        "all blanks alike, so a blank scored like a real answer stands out."
    ]


def _summarise_problems(skipped: tuple[tuple[int, str], ...]) -> str:
    by_reason: dict[str, list[int]] = {}
    for row, reason in skipped:
        key = "score is not a number" if reason.startswith("score '") else reason
        by_reason.setdefault(key, []).append(row)
    return "; ".join(
        f"{reason} in {len(rows)} row(s) ({_describe_rows(rows)})"
        for reason, rows in by_reason.items()
    )


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
