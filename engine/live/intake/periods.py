"""A read's period: the ISO day it was given on, `YYYY-MM-DD`, and its half day, ` am` (before
noon) or ` pm`, where the file gives times of day.

The day is the date as written: `2026-05-04T16:30+02:00` is 4 May, afternoon, wherever the
session is followed (the zone a scoring centre writes is its own). A time column of numbers (an
order) or without dates (times of day) gives no day: those reads take the file's day, from
`--period` or else the file's modification date, and say so. Values are checked as
engine.input.times checks a time column (one kind for the column, bad values named with their
row) before their period is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np

from engine.core.errors import DataError

AM, PM = "am", "pm"
_ISO_DAY = re.compile(r"\s*(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{1,2})(?::?\d{2})?)?")
_CLOCK = re.compile(r"\s*(\d{1,2}):\d{2}")


@dataclass(frozen=True)
class Period:
    """A day and, where times of day are known, its half ("" for the whole day)."""

    day: str
    half: str = ""

    @property
    def name(self) -> str:
        """As monitor.csv and alerts.csv write it: '2026-05-04' or '2026-05-04 pm'."""
        return f"{self.day} {self.half}" if self.half else self.day


def parse_period(text: str) -> Period:
    """A period as written ('2026-05-04', '2026-05-04 am'); DataError for anything else."""
    value = str(text).strip()
    day, _, half = value.partition(" ")
    if half not in ("", AM, PM) or not _is_day(day):
        raise DataError(
            f"The period {value!r} is not a day (YYYY-MM-DD) with an optional ' am' or ' pm'."
        )
    return Period(day, half)


def _is_day(text: str) -> bool:
    try:
        return date.fromisoformat(text).isoformat() == text
    except ValueError:
        return False


def file_day(given: str | None, modified: float) -> tuple[str, str]:
    """(The day of a file's reads without dates, how it was found): `given` (--period, a day)
    or else the day of the file's modification time (local)."""
    if given is not None:
        period = parse_period(given)
        if period.half:
            raise DataError(f"--period {given!r}: give a day (YYYY-MM-DD), not a half day.")
        return period.day, "--period"
    return datetime.fromtimestamp(modified).date().isoformat(), "the file's modification date"


def read_periods(values: list[str], kind: str, fallback: str) -> tuple[list[str], list[str]]:
    """(day, half) of each value of a time column already checked to be of `kind`
    (engine.input.times.KINDS); blank values, numbers and times of day take the `fallback` day
    (times of day keep their half)."""
    days, halves = [], []
    for value in values:
        text = "" if value is None else str(value).strip()
        day, half = fallback, ""
        if text and kind == "date and time":
            day, half = _dated(text)
        elif text and kind == "time of day":
            clock = _CLOCK.match(text)
            if clock is None:  # the column was checked to hold times of day: not reached
                raise DataError(f"{text!r} is not a time of day.")
            half = _half(int(clock.group(1)))
        days.append(day)
        halves.append(half)
    return days, halves


def _dated(text: str) -> tuple[str, str]:
    match = _ISO_DAY.match(text)
    if match is not None:
        day = f"{match.group(1)}-{match.group(2)}-{match.group(3)}"
        hour = match.group(4)
        if _is_day(day):
            return day, "" if hour is None else _half(int(hour))
    # Another ISO 8601 form parse_times accepted (a week date): pandas reads the wall clock.
    import pandas as pd

    stamp = pd.Timestamp(text)
    has_time = re.search(r"[T ]\d", text) is not None
    return stamp.date().isoformat(), _half(stamp.hour) if has_time else ""


def _half(hour: int) -> str:
    return AM if hour < 12 else PM


def sort_key(name: str) -> tuple[str, int]:
    """Periods in time order, a day before its morning before its afternoon."""
    day, _, half = name.partition(" ")
    return day, {"": 0, AM: 1, PM: 2}[half]


def days_before(days: np.ndarray, day: str) -> np.ndarray:
    """(n,) which of `days` (ISO strings) come before `day`."""
    return np.asarray(days, dtype=object) < day
