"""Validity papers (engine/input/expert.py): the lead's expert score of some answers is read on
the item's scale, one per answer, in a wide file (on the answer's row) and a long one (on any of
its rows); a value off the scale and an answer given two are errors naming their rows; the
column is guessed by its name and is never taken for a read."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.core.errors import DataError
from engine.input.guess import guess_columns
from engine.input.items import split_items
from engine.input.settings.config import load_defaults
from tests.test_several_reads import long_frame, wide_frame

WIDE = load_defaults().updated(
    score_column="G1", score_columns=["G1", "G2", "G3"], expert_column="expert_score"
)
LONG = load_defaults().updated(reads="long", rater_column="grader", expert_column="expert_score")


def with_expert(frame: pd.DataFrame) -> pd.DataFrame:
    """An expert score ("2.0" spelled as a number, so it must match the label "2") on every
    fifth answer."""
    frame = frame.copy()
    frame["expert_score"] = ["2.0" if i % 5 == 0 else "" for i in range(len(frame))]
    return frame


def long_with_expert(wide: pd.DataFrame) -> pd.DataFrame:
    """The long shape, the expert score on the answer's last row only."""
    rows = long_frame(wide)
    experts = dict(zip(wide["id"], wide["expert_score"]))
    last = ~rows["id"].duplicated(keep="last")
    rows["expert_score"] = [experts[i] if is_last else "" for i, is_last in zip(rows["id"], last)]
    return rows


def test_expert_scores_are_codes_on_the_items_scale_in_wide_and_long_files():
    wide = with_expert(wide_frame())
    one = split_items(wide, WIDE).audited[0]
    other = split_items(long_with_expert(wide), LONG).audited[0]
    expected = np.where(np.arange(30) % 5 == 0, one.labels.index("2"), -1)
    np.testing.assert_array_equal(one.expert, expected)
    np.testing.assert_array_equal(other.expert, expected)


def test_without_an_expert_column_there_is_no_expert_score():
    assert split_items(wide_frame(), load_defaults().updated(
        score_column="G1", score_columns=["G1", "G2", "G3"])).audited[0].expert is None  # fmt: skip


def test_an_expert_score_off_the_scale_names_its_rows():
    wide = with_expert(wide_frame())
    wide.loc[[3, 7], "expert_score"] = "9"
    with pytest.raises(DataError, match=r"not on the item's scale \(0, 1, 2\): '9' \(rows 4, 8\)"):
        split_items(wide, WIDE)


def test_two_expert_scores_of_one_long_answer_name_both_rows():
    rows = long_with_expert(with_expert(wide_frame()))
    first = rows.index[rows["id"] == "s0"][0]
    rows.loc[first, "expert_score"] = "1"
    with pytest.raises(DataError, match=r"two expert scores, '1' \(row 1\) and '2' \(row \d+\)"):
        split_items(rows, LONG)


def test_an_expert_score_column_is_guessed_by_name_and_never_read_as_a_score():
    frame = with_expert(wide_frame()).rename(columns={"G1": "score"})[
        ["id", "answer", "expert_score", "score"]
    ]
    guesses = guess_columns(frame)
    assert guesses["expert"] == "expert_score" and guesses["score"] == "score"
    assert guess_columns(frame.rename(columns={"expert_score": "Gold"}))["expert"] == "Gold"
