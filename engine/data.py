"""Reading scored responses: CSV/TSV with a sniffed delimiter, UTF-8 (BOM or not) or latin-1,
columns chosen by name, score labels coded 0..C in sorted order with the originals kept."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from engine.config import AuditConfig
from engine.errors import DataError

MIN_RESPONSES = 10
_SNIFF_BYTES = 256 * 1024


@dataclass(frozen=True)
class Responses:
    """Scored responses ready for the engine.

    texts: N strings; scores: (N,) int codes 0..C; labels: the C+1 original labels, code order;
    ids: N strings; rows: (N,) 1-based data-row numbers in the input file (header excluded);
    second_scores: (N,) codes of a second rater, -1 where missing, or None.
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

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def n_classes(self) -> int:
        return len(self.labels)


def read_text_file(path: str | Path) -> str:
    """The file's text: UTF-8 (with or without BOM), else latin-1. Errors name the file."""
    path = Path(path).expanduser()
    if not path.exists():
        raise DataError(f"File not found: {path}")
    if not path.is_file():
        raise DataError(f"Not a file: {path}")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"File {path} cannot be read: {exc.strerror or exc}") from None
    if not raw.strip():
        raise DataError(f"File {path} is empty.")
    if b"\x00" in raw[:_SNIFF_BYTES]:
        raise DataError(f"File {path} looks binary, not a CSV or TSV text file.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def sniff_delimiter(text: str, path: Path | None = None) -> str:
    """The delimiter among , ; tab |, from the first lines; tab for .tsv files."""
    sample = text[:_SNIFF_BYTES]
    if path is not None and path.suffix.lower() in (".tsv", ".tab"):
        return "\t"
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        header = sample.splitlines()[0] if sample else ""
        counts = {d: header.count(d) for d in ",;\t|"}
        best = max(counts, key=counts.get)
        return best if counts[best] else ","


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV/TSV as strings (no NA guessing), delimiter sniffed."""
    path = Path(path).expanduser()
    text = read_text_file(path)
    delimiter = sniff_delimiter(text, path)
    try:
        frame = pd.read_csv(
            io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False, na_filter=False
        )
    except (pd.errors.ParserError, ValueError, csv.Error) as exc:
        raise DataError(f"File {path} is not a readable CSV/TSV file: {exc}") from None
    if frame.shape[1] < 2:
        raise DataError(
            f"File {path} has {frame.shape[1]} column(s); expected at least a text and a score "
            "column (is it a CSV or TSV file?)."
        )
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _column(frame: pd.DataFrame, name: str | None, role: str, path) -> pd.Series | None:
    if name is None:
        return None
    if name not in frame.columns:
        raise DataError(
            f"{path}: the {role} column '{name}' does not exist. "
            f"Columns in the file: {', '.join(map(str, frame.columns))}."
        )
    return frame[name]


def _as_number(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _label_text(value: str) -> str:
    return value.strip()


def code_labels(values: list[str]) -> tuple[tuple[str, ...], dict[str, int], set[str]]:
    """Code score labels 0..C in sorted order (numerically when most values are numbers).

    Returns (labels in code order, mapping from stripped value to code, values that are bad).
    Labels like "2" and "2.0" are the same score; the first spelling seen is kept.
    """
    present = [v for v in (_label_text(x) for x in values) if v != ""]
    numbers = {v: _as_number(v) for v in present}
    numeric = sum(n is not None for n in numbers.values()) > len(present) / 2
    bad: set[str] = set()
    if numeric:
        spelling: dict[float, str] = {}
        for v in present:
            n = numbers[v]
            if n is None:
                bad.add(v)
            else:
                spelling.setdefault(n, v)
        order = sorted(spelling)
        labels = tuple(spelling[n] for n in order)
        code = {v: order.index(numbers[v]) for v in present if numbers[v] is not None}
    else:
        labels = tuple(sorted(set(present)))
        code = {v: labels.index(v) for v in present}
    return labels, code, bad


def _describe_rows(rows: list[int], limit: int = 8) -> str:
    shown = ", ".join(str(r) for r in rows[:limit])
    return shown + (f" and {len(rows) - limit} more" if len(rows) > limit else "")


def load_responses(path: str | Path, config: AuditConfig) -> Responses:
    """Read `path` and return the responses the config's column keys select."""
    path = Path(path).expanduser()
    return responses_from_frame(read_table(path), config, source=str(path))


def responses_from_frame(frame: pd.DataFrame, config: AuditConfig, source: str = "") -> Responses:
    """Select, validate and code the columns of an already-read table."""
    where = source or "input"
    texts = _column(frame, config.text_column, "text", where)
    scores = _column(frame, config.score_column, "score", where)
    ids = _column(frame, config.id_column, "id", where) if config.id_column else None
    second = _column(frame, config.second_score_column, "second score", where)
    raw_scores = scores.astype(str).tolist()
    raw_second = second.astype(str).tolist() if second is not None else []
    labels, code, bad_values = code_labels(raw_scores + raw_second)

    problems: dict[int, str] = {}
    text_list = texts.astype(str).tolist()
    for i, (text, value) in enumerate(zip(text_list, raw_scores)):
        value = _label_text(value)
        if value == "":
            problems[i] = "missing score"
        elif value in bad_values:
            problems[i] = f"score '{value}' is not a number"
        elif not text.strip():
            problems[i] = "empty text"
    keep = [i for i in range(len(frame)) if i not in problems]
    skipped = tuple((i + 1, problems[i]) for i in sorted(problems))
    warnings: list[str] = []
    if problems:
        summary = _summarise_problems(skipped)
        if config.on_bad_rows == "error":
            raise DataError(
                f"{where}: {len(problems)} row(s) cannot be used: {summary}. Fix them, or set "
                'on_bad_rows to "skip" to leave them out.'
            )
        warnings.append(f"Skipped {len(problems)} row(s): {summary}.")

    if len(keep) < MIN_RESPONSES:
        raise DataError(
            f"{where}: {len(keep)} usable response(s); parm needs at least {MIN_RESPONSES}."
        )
    coded = np.array([code[_label_text(raw_scores[i])] for i in keep], dtype=np.int64)
    used = np.unique(coded)
    if used.size < 2:
        raise DataError(
            f"{where}: every usable response has score '{labels[used[0]]}' in column "
            f"'{config.score_column}'; an audit needs at least two score categories."
        )
    second_codes = None
    if second is not None:
        second_codes = np.array(
            [code.get(_label_text(raw_second[i]), -1) for i in keep], dtype=np.int64
        )
    id_list = (
        [str(ids.iloc[i]).strip() for i in keep] if ids is not None else [str(i + 1) for i in keep]
    )
    warnings += _id_warnings(id_list, config.id_column)
    return Responses(
        texts=[text_list[i] for i in keep],
        scores=coded,
        labels=labels,
        ids=id_list,
        rows=np.array([i + 1 for i in keep], dtype=np.int64),
        second_scores=second_codes,
        source=source,
        skipped=skipped,
        file_rows=len(frame),
        warnings=tuple(warnings),
    )


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
    if not dupes or column is None:
        return []
    shown = ", ".join(repr(v) for v in dupes[:5])
    return [
        f"Column '{column}' has {len(dupes)} duplicated id(s), e.g. {shown}; rows are still "
        "told apart by their row numbers."
    ]


def guess_columns(frame: pd.DataFrame) -> dict[str, str | None]:
    """Guess the text, score, id and second-score columns of a table (for the app's selectors)."""
    columns = list(frame.columns)
    lowered = {c: c.lower() for c in columns}

    def numeric_share(col):
        values = [v for v in frame[col].astype(str).head(200) if v.strip()]
        return sum(_as_number(v) is not None for v in values) / max(len(values), 1)

    def mean_length(col):
        return frame[col].astype(str).head(200).str.len().mean()

    text_hint = ("answer", "response", "text", "essay")
    text = next((c for c in columns if any(h in lowered[c] for h in text_hint)), None)
    if text is None:
        text = max(columns, key=mean_length)
    scoreish = [c for c in columns if c != text and numeric_share(c) > 0.9]
    named = [
        c for c in scoreish if any(h in lowered[c] for h in ("score", "grade", "mark", "rating"))
    ]
    ordered = named + [c for c in scoreish if c not in named]
    ids = [
        c
        for c in columns
        if lowered[c] in ("id", "uid", "response_id", "student_id") or lowered[c].endswith("_id")
    ]
    score = ordered[0] if ordered else None
    candidates = [c for c in ordered[1:] if not ids or c != ids[0]]
    second = next((c for c in candidates if any(ch.isdigit() for ch in c) or "2" in c), None)
    return {"text": text, "score": score, "id": ids[0] if ids else None, "second": second}
