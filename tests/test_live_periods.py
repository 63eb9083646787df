"""engine.live.intake.periods: a read's period is the day as written, with its half where a time of day
is given; reads without a date take the file's day; periods sort in time order."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.core.errors import DataError
from engine.live.intake.periods import Period, file_day, parse_period, read_periods, sort_key


def test_dated_values_keep_their_written_day_and_half():
    values = ["2026-05-04T09:30", "2026-05-04 16:00:05+02:00", "2026-05-05", "20260506T1200", ""]
    days, halves = read_periods(values, "date and time", "2026-01-01")
    assert days == ["2026-05-04", "2026-05-04", "2026-05-05", "2026-05-06", "2026-01-01"]
    assert halves == ["am", "pm", "", "pm", ""]


def test_times_of_day_and_numbers_take_the_files_day():
    assert read_periods(["08:15", "13:00", ""], "time of day", "2026-05-04") == (
        ["2026-05-04"] * 3, ["am", "pm", ""])  # fmt: skip
    assert read_periods(["1", "2.5"], "number", "2026-05-04") == (["2026-05-04"] * 2, ["", ""])


def test_the_files_day_is_the_period_given_or_its_modification_date():
    assert file_day("2026-05-04", 0.0) == ("2026-05-04", "--period")
    stamp = dt.datetime(2026, 3, 2, 12, 0).timestamp()
    assert file_day(None, stamp) == ("2026-03-02", "the file's modification date")
    with pytest.raises(DataError, match="half day"):
        file_day("2026-05-04 am", 0.0)


@pytest.mark.parametrize("bad", ["04/05/2026", "2026-13-01", "2026-05-04 noon", "", "2026-5-4"])
def test_a_period_that_is_not_a_day_is_refused(bad):
    with pytest.raises(DataError, match="not a day"):
        parse_period(bad)


@given(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2999, 12, 31)),
       st.sampled_from(["", "am", "pm"]))  # fmt: skip
def test_periods_parse_back_and_sort_in_time_order(day, half):
    period = Period(day.isoformat(), half)
    assert parse_period(period.name) == period
    later = Period((day + dt.timedelta(days=1)).isoformat(), "")
    assert sort_key(period.name) < sort_key(later.name)
    assert sort_key(day.isoformat()) <= sort_key(period.name)
