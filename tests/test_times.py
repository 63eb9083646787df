"""The time column (engine/input/times.py, `time_column`, `--time-col`): numbers, ISO dates and
times and times of day are read; anything else is an error naming the column, a value and its
row; blanks are missing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.core.errors import ConfigError, DataError
from engine.input.items import split_items
from engine.input.settings.config import config_from_dict
from engine.input.times import parse_times

ROWS = np.arange(1, 10)


def test_numbers_are_an_order_and_blanks_are_missing():
    found = parse_times(["3", "1", "", " 2.5 ", "1e3"], ROWS, "when", "f.csv")
    np.testing.assert_array_equal(found, [3.0, 1.0, np.nan, 2.5, 1000.0])


def test_iso_dates_and_times_are_seconds_since_1970_in_utc():
    found = parse_times(
        ["2026-05-01", "2026-05-01T10:30", "2026-05-01 12:30:00+02:00", "2026-05-02T00:00Z", ""],
        ROWS, "when", "f.csv",
    )  # fmt: skip
    start = pd.Timestamp("2026-05-01", tz="UTC").timestamp()
    np.testing.assert_allclose(found[:4], [start, start + 37800, start + 37800, start + 86400])
    assert np.isnan(found[4])


def test_times_of_day_are_seconds_since_midnight():
    found = parse_times(["09:30", "10:00:30", "23:59:59.5"], ROWS, "when", "f.csv")
    np.testing.assert_allclose(found, [34200, 36030, 86399.5])


@pytest.mark.parametrize(
    "values, bad, row",
    [
        (["2026-05-01", "01/05/2026"], "01/05/2026", 2),
        (["1", "2", "soon"], "soon", 3),
        (["09:30", "25:00"], "25:00", 2),
    ],
)
def test_a_value_of_no_kind_is_an_error_naming_column_value_and_row(values, bad, row):
    with pytest.raises(DataError) as caught:
        parse_times(values, ROWS, "when", "f.csv")
    message = str(caught.value)
    assert "'when'" in message and repr(bad) in message and f"row {row}" in message


def test_time_column_needs_a_rater_column_and_is_validated_as_a_column_name():
    with pytest.raises(ConfigError, match="'time_column'.*needs 'rater_column'"):
        config_from_dict({"time_column": "when"})
    with pytest.raises(ConfigError, match="time_column"):
        config_from_dict({"time_column": "", "rater_column": "rater"})
    config = config_from_dict({"time_column": "when", "rater_column": "rater"})
    assert config.time_column == "when" and config.to_dict()["time_column"] == "when"


def frame(times):
    n = len(times)
    return pd.DataFrame({
        "item": ["A", "B"] * (n // 2), "answer": [f"answer {i}" for i in range(n)],
        "score": [str(i % 3) for i in range(n)], "rater": ["r1", "r2"] * (n // 2),
        "when": times,
    })  # fmt: skip


def test_each_items_responses_carry_their_times_and_a_missing_column_is_named():
    config = config_from_dict({"item_column": "item", "rater_column": "rater",
                               "time_column": "when", "id_column": None})  # fmt: skip
    items = split_items(frame([str(i) for i in range(40)]), config, "s.csv")
    for responses in items.audited:
        np.testing.assert_array_equal(responses.times, responses.rows - 1.0)
    with pytest.raises(DataError, match="time column 'when2' does not exist"):
        split_items(frame(["1"] * 40), config.updated(time_column="when2"), "s.csv")


def test_a_file_mixing_kinds_across_items_is_refused_though_each_item_is_one_kind():
    """Item A's times are numbers, item B's dates: each alone would parse."""
    times = [str(i) if i % 2 == 0 else "2026-05-01" for i in range(40)]
    config = config_from_dict({"item_column": "item", "rater_column": "rater",
                               "time_column": "when", "id_column": None})  # fmt: skip
    with pytest.raises(DataError, match="time column 'when'"):
        split_items(frame(times), config, "s.csv")


def test_parm_audit_takes_the_time_column_and_reports_each_raters_drift(tmp_path):
    import json

    from helpers import session_frame
    from typer.testing import CliRunner

    from parm_tui.cli import app

    frame, vectors = session_frame(items=(("A", 120, 3), ("B", 120, 3)), seed=2)
    frame["when"] = [f"2026-05-{1 + i % 20:02d}T{i % 24:02d}:00" for i in range(len(frame))]
    frame.to_csv(tmp_path / "s.csv", index=False)
    np.save(tmp_path / "s.npy", vectors)
    args = ["audit", str(tmp_path / "s.csv"), "--embeddings", str(tmp_path / "s.npy"),
            "--item-col", "item", "--rater-col", "rater", "--time-col", "when", "--quiet",
            "--out", str(tmp_path / "out"), "--set", "similarity_top_k=[5,10]",
            "--set", "bootstrap_samples=0", "--set", "cross_fit_folds=0"]  # fmt: skip
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    raters = json.loads((tmp_path / "out" / "report.json").read_text())["raters"]
    assert raters["time_column"] == "when"
    assert all(row["effects"]["drift"]["n"] == row["n"] for row in raters["raters"])
    frame.loc[3, "when"] = "next tuesday"
    frame.to_csv(tmp_path / "s.csv", index=False)
    bad = CliRunner().invoke(app, [*args[:-6], "--out", str(tmp_path / "o2")])
    assert bad.exit_code == 2 and "'next tuesday' in row 4" in bad.output
