"""engine.outputs.declared: every table parm writes is declared once, and what the writers put in
each file is what the declaration says: the fixed tables come from it, the others have only
declared columns (or members of a declared family), and the output reference names them all."""

from __future__ import annotations

import pytest
from helpers import run_frame, session_config, session_frame

from engine.outputs import declared
from engine.outputs.names import SET_FILES
from engine.outputs.reviewed import reviewed_table
from engine.outputs.session import decisions_table, prediction_table, tuning_table
from engine.results.decision import DECISION_COLUMNS


@pytest.fixture(scope="module")
def session():
    frame, vectors = session_frame()
    frame["score2"] = frame["score"].sample(frac=1, random_state=0).to_numpy()
    config = session_config(rater_column="rater", second_score_column="score2")
    return run_frame(frame, vectors, config), frame


def test_every_declared_table_is_a_file_of_the_output_set():
    assert {table.file for table in declared.TABLES} <= set(SET_FILES)


def test_predictions_and_tuning_have_only_declared_columns(session):
    result, _ = session
    header, _ = prediction_table(result)
    fixed = set(declared.PREDICTIONS.header)
    assert all(name in fixed or name.startswith("p_") for name in header)
    assert fixed <= set(header)  # items, raters and a second score: every conditional column
    header, _ = tuning_table(result)
    metrics = set(header) - set(declared.TUNING.header)
    assert metrics <= {"accuracy", "kappa", "qwk", "near", "f1", "nll"} and metrics


def test_decisions_have_the_declared_columns(session):
    result, _ = session
    conditional = {c.name for c in declared.DECISIONS.columns if c.when}
    assert [n for n in declared.DECISIONS.header if n not in conditional] == DECISION_COLUMNS

    class NoDecisions:
        def all(self):
            return {}

        def conflicts(self, row):
            return []

        def added_reads(self):
            return []

    header, _ = decisions_table(NoDecisions(), result)
    assert header == declared.DECISIONS.header


def test_scores_reviewed_adds_the_declared_columns_to_the_input(session):
    result, frame = session
    header, _ = reviewed_table(result, frame.astype(str), None)
    assert header == [*map(str, frame.columns), *declared.REVIEWED.header]


def test_the_reference_names_every_column_of_every_table():
    text = declared.reference_markdown()
    for table in declared.TABLES:
        assert f"### `{table.file}`" in text
        for column in (*table.columns, *table.families):
            assert f"- `{column.name}`" in text


def test_a_column_declared_twice_is_refused():
    from engine.outputs.columns import Column, OutputTable

    with pytest.raises(ValueError, match="declared twice"):
        OutputTable("x.csv", "thing", (Column("a", "one"), Column("a", "again")))


def test_people_see_intervals_after_the_value_and_csvs_six_decimals():
    from types import SimpleNamespace

    from engine.outputs.columns import csv_cell

    row = SimpleNamespace(leniency=0.25, leniency_low=0.1, leniency_high=0.4)
    assert declared.RATERS.cell("leniency", row) == "+0.25 (+0.10 to +0.40)"
    assert declared.RATERS.cell("leniency", row, with_interval=False) == "+0.25"
    assert csv_cell(0.25, "points") == "0.250000" and csv_cell(float("nan"), "figure") == ""
