"""Reading tables (engine/input/table.py): which columns are guessed for text, score and id."""

from __future__ import annotations

import pandas as pd
import pytest

from engine.input.guess import guess_columns


@pytest.mark.parametrize(
    "columns, expected_id",
    [
        (["student", "answer", "score"], "student"),
        (["Student ID", "answer", "score"], "Student ID"),
        (["StudentID", "answer", "score"], "StudentID"),
        (["respondent", "answer", "score"], "respondent"),
        (["participant_id", "essay", "mark"], "participant_id"),
        (["answer", "score", "essay_id"], "essay_id"),
        (["id", "student", "answer", "score"], "id"),
        (["answer", "score"], None),
    ],
)
def test_id_columns_are_guessed_by_name(columns, expected_id):
    values = {"answer": "roots take up water", "essay": "roots", "score": "1", "mark": "1"}
    frame = pd.DataFrame([[values.get(c, "1001") for c in columns]] * 3, columns=columns)
    guessed = guess_columns(frame)
    assert guessed["id"] == expected_id
    # A numeric id column is neither the text nor the score.
    assert guessed["text"] not in (expected_id, None)
    assert guessed["score"] != expected_id


def test_a_response_id_column_is_not_taken_for_the_text():
    frame = pd.DataFrame(
        {"response_id": ["r1", "r2"], "response": ["a b c", "d e f"], "s": ["1", "0"]}
    )
    assert guess_columns(frame) == {
        "text": "response",
        "score": "s",
        "id": "response_id",
        "second": None,
        "score_candidates": None,
        "reads": None,
        "read_raters": None,
        "item": None,
        "rater": None,
        "second_rater": None,
        "time": None,
        "question": None,
        "reference": None,
        "expert": None,
        "kind": None,
    }


def test_a_time_column_is_guessed_beside_a_rater_column_only():
    frame = pd.DataFrame(
        {"answer": ["a b", "c d"], "score": ["1", "0"], "marker": ["m1", "m2"],
         "marked_at": ["2026-01-01T10:00", "2026-01-01T10:05"]}
    )  # fmt: skip
    guessed = guess_columns(frame)
    assert (guessed["rater"], guessed["time"], guessed["score"]) == ("marker", "marked_at", "score")
    assert guess_columns(frame.drop(columns="marker"))["time"] is None


def test_a_column_with_one_value_throughout_is_never_guessed_as_the_item_column():
    """One essay set's file has EssaySet = 1 on every row: one item, not an item column; with
    two sets in the file it splits them."""
    frame = pd.DataFrame(
        {"EssaySet": ["1", "1", "1"], "EssayText": ["a b", "c d", "e f"], "Score1": ["1", "0", "2"]}
    )
    guessed = guess_columns(frame)
    assert guessed["item"] is None and guessed["score"] == "Score1"
    frame.loc[2, "EssaySet"] = "2"
    assert guess_columns(frame)["item"] == "EssaySet"
