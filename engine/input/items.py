"""A file of many items (questions): one `Responses` per item, each coded on its own scale, so
answers to different questions are never compared. An item too small to audit (too few usable
answers, a single score) is skipped with its reason instead of stopping the whole file."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from engine.core.errors import DataError
from engine.core.run_warnings import RunWarning
from engine.input.responses import ItemTooSmall, Responses, responses_from_frame
from engine.input.score_check import check_score_columns
from engine.input.settings.config import AuditConfig
from engine.input.settings.declared import COLUMN_KEYS
from engine.input.table import describe_rows, missing_column
from engine.input.times import parse_times
from engine.input.workbook import placed, read_file


@dataclass(frozen=True)
class SkippedItem:
    """An item that was not audited: its name, its rows in the file and why."""

    item: str
    rows: int
    reason: str


@dataclass(frozen=True)
class Items:
    """The responses of a file, one `Responses` per item in order of first appearance.

    Without an item column the whole file is one item (its `item` is None), and a file too
    small to audit is an error, as it always was.
    """

    source: str
    audited: list[Responses]
    skipped: list[SkippedItem] = field(default_factory=list)
    file_rows: int = 0
    warnings: tuple[str, ...] = ()
    # The same warnings as data: one per item it is about (None: the whole file), for the
    # run's summary (engine.core.run_warnings); `warnings` names the items in each sentence.
    notes: tuple[RunWarning, ...] = ()

    @property
    def by_item(self) -> bool:
        return bool(self.audited) and self.audited[0].item is not None


def load_items(path: str | Path, config: AuditConfig) -> Items:
    """Read `path` (a workbook's `sheet`) and split it into the items `item_column` names."""
    path = Path(path).expanduser()
    return split_items(read_file(path, config.sheet), config, source=str(path))


def split_items(frame: pd.DataFrame, config: AuditConfig, source: str = "") -> Items:
    """One `Responses` per item of an already-read table (the whole table without items); a
    long file's answers file (`answers_file`) is read once for all of them. A score column that
    cannot hold scores stops it first (engine.input.score_check), whatever the items. An error
    about a workbook's rows and columns says where they are on its sheet."""
    place = frame.attrs.get("place")
    try:
        return _split_items(frame, config, source)
    except DataError as exc:
        if place is not None:
            keys = [getattr(config, key) for key in COLUMN_KEYS]
            read = {c for value in keys for c in (value if isinstance(value, tuple) else [value])}
            exc.args = (placed(str(exc), place, read), *exc.args[1:])
        raise


def _split_items(frame: pd.DataFrame, config: AuditConfig, source: str) -> Items:
    check_score_columns(frame, config, source or "input")
    answers = answers_table(config, source)
    if config.item_column is None:
        whole = responses_from_frame(frame, config, source=source, answers=answers)
        about = tuple(RunWarning.about(w) for w in whole.warnings)
        return Items(source, [whole], [], len(frame), whole.warnings, about)
    where = source or "input"
    column = _item_column(frame, config.item_column, where)
    frame, warnings = _rows_with_an_item(frame, column, config, where)
    if config.time_column is not None and config.time_column in frame.columns:
        # One kind of time for the whole file (each item's own rows could each look fine).
        values = frame[config.time_column].astype(str).tolist()
        parse_times(values, frame.index.to_numpy() + 1, config.time_column, where)
    audited, skipped = [], []
    notes: dict[str, list[str]] = {}
    for item in dict.fromkeys(column[frame.index]):
        rows = frame[column[frame.index] == item]
        try:
            responses = responses_from_frame(rows, config, source=source, answers=answers)
        except ItemTooSmall as exc:
            skipped.append(SkippedItem(item, len(rows), exc.reason))
            continue
        audited.append(dataclasses.replace(responses, item=item))
        for note in responses.warnings:
            notes.setdefault(note, []).append(item)
    # How the file was read is said once, not once for each item.
    read = [w for w in frame.attrs.get("warnings", ()) if w in notes]
    structured = [RunWarning.about(w) for w in warnings + read]
    structured += [
        RunWarning.about(note, item)
        for note, named in notes.items()
        if note not in read
        for item in named
    ]
    warnings += [_about(note, named) for note, named in notes.items()]
    if not audited:
        reasons = "; ".join(f"'{s.item}': {s.reason}" for s in skipped[:5])
        raise DataError(f"{where}: no item can be audited ({reasons}).")
    return Items(source, audited, skipped, column.size, tuple(warnings), tuple(structured))


def answers_table(config: AuditConfig, source: str = "") -> pd.DataFrame | None:
    """The answers file a long file names (`answers_file`): as given, or beside the file."""
    if config.answers_file is None:
        return None
    path = Path(config.answers_file).expanduser()
    if not path.is_absolute() and not path.exists() and source:
        beside = Path(source).expanduser().parent / path
        path = beside if beside.exists() else path
    return read_file(path)


def _item_column(frame: pd.DataFrame, name: str, where: str) -> pd.Series:
    if name not in frame.columns:
        raise DataError(missing_column(where, "item", name, frame.columns))
    return frame[name].astype(str).str.strip()


def _rows_with_an_item(frame, column: pd.Series, config: AuditConfig, where: str):
    """Rows with a blank item cannot be placed: an error, or left out under on_bad_rows skip."""
    blank = column == ""
    if not blank.any():
        return frame, []
    rows = (frame.index[blank] + 1).tolist()
    if config.on_bad_rows == "error":
        raise DataError(
            f"{where}: {len(rows)} row(s) have no item in column '{config.item_column}' "
            f'(rows {describe_rows(rows)}). Fill them in, or set on_bad_rows to "skip" to leave them out.'
        )
    return frame[~blank], [f"Skipped {len(rows)} row(s) with no item (rows {describe_rows(rows)})."]


def _about(note: str, items: list[str]) -> str:
    """A warning with the items it concerns (a file-wide one, like a missing id column,
    comes once for all of them)."""
    if len(items) == 1:
        return f"Item '{items[0]}': {note}"
    shown = ", ".join(f"'{item}'" for item in items[:5])
    more = f" and {len(items) - 5} more" if len(items) > 5 else ""
    return f"Items {shown}{more}: {note}"
