"""A file's score columns checked as a whole before its items are read, so that a column that
cannot hold scores stops the run at once (before any embedding or model load), naming the
column and the ones that look like scores, instead of running for minutes on a scale of
thousands of "scores".

Two rules, on every column scores are read from (the audited one, a second score, every read):
- values: more distinct values than a rubric's scores could have (engine.input.guess's rule,
  the one the column guess applies): more than 50 (numbers counted in each item, which has its
  own scale; text over the file), or more than half the file's rows (from 20 rows on). Every
  score column of the real files parm is measured on has at most 34 (ASAP essays set 8's
  resolved scores); their text, id and question columns have from 79 to thousands.
- bad rows: under on_bad_rows "skip", more than MAX_SKIPPED_SHARE of the file's rows without a
  usable audited score (missing, or not a number among numbers) stops the run: skip is for
  stray rows, and an audit of a minority of a file would read as an audit of the file.
"""

from __future__ import annotations

import pandas as pd

from engine.core.errors import DataError
from engine.input.guess import MAX_SCORE_SHARE, MAX_SCORE_VALUES, SHARE_ROWS, score_candidates
from engine.input.labels import is_numeric
from engine.input.settings.config import AuditConfig
from engine.input.several_reads import read_columns
from engine.input.table import as_number

# Under on_bad_rows "skip", the largest share of a file's rows that may be left out for want of
# a usable score: more than this is most of the file, and the run stops instead.
MAX_SKIPPED_SHARE = 0.5


def check_score_columns(frame: pd.DataFrame, config: AuditConfig, where: str) -> None:
    """DataError (the load stops) when a column scores are read from has more distinct values
    than scores could, or when skipping bad rows would leave out most of the file."""
    columns = [c.score for c in read_columns(config)]
    for column in dict.fromkeys(columns):
        values = _values(frame, column)
        if values is not None:
            _check_values(frame, column, values, config.item_column, where)
    if config.on_bad_rows == "skip":
        values = _values(frame, columns[0])
        if values is not None:
            _check_skipped(frame, columns[0], values, config, where)


def _values(frame: pd.DataFrame, column: str | None) -> pd.Series | None:
    """The column's cells as stripped text; None when the file has no such single column (the
    load names that problem itself)."""
    if column is None or column not in frame.columns:
        return None
    cells = frame[column]
    if isinstance(cells, pd.DataFrame):
        return None
    return cells.astype(str).str.strip()


def check_named_score(frame: pd.DataFrame, column: str, items: str | None, where: str) -> None:
    """The values rule on one column named as the score: used where the columns are chosen,
    since a text column named as the score leaves no text column to guess, and that would
    otherwise be the message."""
    values = _values(frame, column)
    if values is not None:
        _check_values(frame, column, values, items, where)


def _check_values(frame: pd.DataFrame, column: str, values: pd.Series, items, where) -> None:
    present = values[values != ""]
    counts = present.value_counts(sort=False)
    numbers = sum(n for value, n in counts.items() if as_number(value) is not None)
    kind = "numbers" if numbers > 0.5 * len(present) else "text"
    many, within = len(counts), ""
    if kind == "numbers" and items in frame.columns and not isinstance(frame[items], pd.DataFrame):
        # Each item has its own scale (a file of essay sets scored 1-6, 0-24, 10-60): a rubric's
        # limit is an item's, as engine.input.responses applies it.
        by_item = present.groupby(frame[items].astype(str).str.strip()[present.index]).nunique()
        many, within = int(by_item.max()), f" in item '{_short(str(by_item.idxmax()))}'"
    too_many = many > MAX_SCORE_VALUES
    too_spread = len(frame) >= SHARE_ROWS and len(counts) > MAX_SCORE_SHARE * len(frame)
    if not (too_many or too_spread):
        return
    limit = (
        f"{many:,}{within}, more than {MAX_SCORE_VALUES}" if too_many and within
        else f"more than {MAX_SCORE_VALUES}" if too_many
        else f"more than {MAX_SCORE_SHARE:.0%} of the file's {len(frame):,} rows"
    )  # fmt: skip
    length = present.str.len().mean() if len(present) else 0
    shown = ", ".join(repr(_short(v)) for v in counts.index[:3])
    raise DataError(
        f"{where}: column '{column}' cannot hold the scores: it has {len(counts):,} different "
        f"values in {len(present):,} rows ({limit}; mostly {kind}, {length:.0f} characters on "
        f"average; e.g. {shown}), and a rubric's scores each go to several answers. "
        f"{_candidates(frame, column)}"
    )


def _candidates(frame: pd.DataFrame, refused: str) -> str:
    """The sentence naming the columns that look like scores (the column guess's ranking)."""
    found = [str(c) for c in score_candidates(frame) if c != refused]
    if not found:
        return "No column of the file looks like scores (few values, each given several times)."
    shown = ", ".join(f"'{c}'" for c in found[:6]) + (", ..." if len(found) > 6 else "")
    return (
        f"Columns that look like scores: {shown}; name the right one as the score column "
        "(--score-col, or on the Load screen)."
    )


def _check_skipped(frame, column: str, values: pd.Series, config: AuditConfig, where) -> None:
    """Stop when on_bad_rows "skip" would leave out most of the file's rows."""
    missing = values == ""
    unreadable = pd.Series(False, index=values.index)
    if config.score_order is not None:
        unreadable = ~missing & ~values.isin(config.score_order)
    elif is_numeric(values.tolist()):
        unreadable = ~missing & values.map(lambda v: as_number(v) is None)
    bad = int((missing | unreadable).sum())
    if bad <= MAX_SKIPPED_SHARE * len(frame):
        return
    raise DataError(
        f"{where}: {bad:,} of the file's {len(frame):,} rows ({bad / len(frame):.0%}) have no "
        f"usable score in column '{column}' ({int(missing.sum()):,} missing, "
        f'{int(unreadable.sum()):,} not a score); on_bad_rows "skip" leaves out at most '
        f"{MAX_SKIPPED_SHARE:.0%} of a file, so the run stops. Is '{column}' the score column? "
        f"{_candidates(frame, column)}"
    )


def _short(value: str) -> str:
    return value if len(value) <= 30 else value[:29] + "…"
