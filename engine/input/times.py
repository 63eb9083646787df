"""The time column (`time_column`): when, or in which order, each score was given, as one number
per row for the raters' drift (engine.audit.raters.drift).

A column is read as one of three kinds, decided over all its non-blank values: numbers (an order
or a time in any unit: `1`, `2.5`, `1e3`), ISO 8601 dates and times (`2026-05-01`,
`2026-05-01T09:30`, `2026-05-01 09:30:15+02:00`, `...Z`; values without a zone are taken as UTC,
and all are turned into seconds since 1970), or times of day (`09:30`, `09:30:15`: seconds since
midnight). A column that is none of these is an error naming the column, a bad value and its row:
`01/05/2026` could be the 1st of May or the 5th of January, so it is refused rather than guessed.
Blank values are missing (NaN): those scores are left out of the drift, and counted.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from engine.core.errors import DataError
from engine.input.table import as_number

_TIME_OF_DAY = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?")
KINDS = ("number", "date and time", "time of day")


def parse_times(values: list[str], rows: np.ndarray, column: str, where: str) -> np.ndarray:
    """(N,) float64 times of `values` (NaN where blank), of one kind for the whole column.

    rows: the 1-based file row of each value (for the message); raises DataError naming the
    column, the first value that fits no kind and its row."""
    text = ["" if v is None or v != v else str(v).strip() for v in values]  # NaN != NaN
    present = [i for i, v in enumerate(text) if v]
    out = np.full(len(text), np.nan)
    if not present:
        return out
    numbers = [as_number(text[i]) for i in present]
    clock = [_seconds_of_day(text[i]) for i in present]
    stamps = pd.to_datetime(
        pd.Series([text[i] for i in present]), format="ISO8601", utc=True, errors="coerce"
    )
    kinds = [
        "number" if n is not None else "time of day" if c is not None else
        "date and time" if not pd.isna(t) else None
        for n, c, t in zip(numbers, clock, stamps)
    ]  # fmt: skip
    if all(kind == "number" for kind in kinds):
        out[present] = numbers
    elif all(kind == "time of day" for kind in kinds):
        out[present] = clock
    elif all(kind == "date and time" for kind in kinds):
        seconds = (stamps - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(microseconds=1)
        out[present] = seconds.to_numpy(dtype=np.float64) / 1e6
    else:
        # A value of no kind, else the first value of another kind than the first one.
        odd = next((j for j, kind in enumerate(kinds) if kind is None), None)
        if odd is None:
            odd = next(j for j, kind in enumerate(kinds) if kind != kinds[0])
        value, row = text[present[odd]], int(rows[present[odd]])
        shown = value if len(value) <= 40 else value[:39] + "…"
        what = "fits no kind" if kinds[odd] is None else f"is a {kinds[odd]} among {kinds[0]}s"
        raise DataError(
            f"{where}: the time column '{column}' has {shown!r} in row {row}, which {what}: "
            "every value must be a number (an order), an ISO 8601 date or time "
            "(2026-05-01, 2026-05-01T09:30) or a time of day (09:30), all of one kind."
        )
    return out


def _seconds_of_day(value: str) -> float | None:
    match = _TIME_OF_DAY.fullmatch(value)
    if match is None:
        return None
    hours, minutes = int(match.group(1)), int(match.group(2))
    seconds = float(match.group(3) or 0.0)
    if hours > 23 or minutes > 59 or seconds >= 60:
        return None
    return hours * 3600.0 + minutes * 60.0 + seconds
