"""Choosing the columns a run reads (engine/input/column_guess.py), as the app's Load screen and
`parm audit` both do: named columns as named, the settings' columns where the file has them, the
guess for the rest, and final_score (the reviewed scores) as the score column."""

from __future__ import annotations

import pandas as pd

from engine.input.column_guess import CHOSEN_KEYS, choose_columns
from engine.input.settings.config import load_defaults


def frame(*columns):
    rows = [[f"an answer about roots {i}" if c == "answer" else str(i % 3) for c in columns]
            for i in range(30)]  # fmt: skip
    return pd.DataFrame(rows, columns=list(columns)).astype(str)


def test_the_settings_columns_stay_and_the_guess_fills_the_others():
    choice = choose_columns(frame("id", "answer", "score", "score2"), load_defaults())
    assert choice.columns["text_column"] == "answer" and choice.columns["score_column"] == "score"
    assert choice.columns["second_score_column"] == "score2"
    assert choice.guessed == ("second_score_column",)
    assert choice.sentence() == "Guessed columns: second score = score2."
    assert set(choice.columns) == set(CHOSEN_KEYS)


def test_nothing_guessed_says_nothing():
    choice = choose_columns(frame("id", "answer", "score"), load_defaults())
    assert choice.guessed == () and choice.sentence() is None


def test_a_column_named_explicitly_is_never_replaced_by_a_guess():
    config = load_defaults().updated(second_score_column=None, score_column="score2")
    choice = choose_columns(
        frame("id", "answer", "score", "score2"), config, {"second_score_column", "score_column"}
    )
    assert choice.columns["score_column"] == "score2"
    assert choice.columns["second_score_column"] is None


def test_a_guess_never_reads_a_column_chosen_for_another_role():
    # score2 is the score column, so the second-score guess (score2) is dropped.
    config = load_defaults().updated(score_column="score2")
    choice = choose_columns(frame("id", "answer", "score", "score2"), config, {"score_column"})
    assert choice.columns["score_column"] == "score2"
    assert choice.columns["second_score_column"] != "score2"


def test_a_missing_id_column_is_said_in_the_sentence():
    choice = choose_columns(frame("answer", "score"), load_defaults())
    assert choice.columns["id_column"] is None
    assert "id = none (row numbers identify the responses)" in choice.sentence()


def test_final_score_is_the_score_column_of_a_reviewed_file_and_the_sentence_says_so():
    reviewed = frame("id", "answer", "score", "score2", "final_score", "predicted", "severity")
    choice = choose_columns(reviewed, load_defaults())
    assert choice.reviewed and choice.columns["score_column"] == "final_score"
    assert "score = final_score" in choice.sentence()
    assert "scores_reviewed.csv" in choice.sentence()
    # Named explicitly, the original score column wins.
    named = choose_columns(reviewed, load_defaults(), {"score_column"})
    assert named.columns["score_column"] == "score" and not named.reviewed


def test_three_numbered_score_columns_are_guessed_as_every_read():
    """Powergrading's shape: G1, G2, G3 are three graders' reads of each answer."""
    choice = choose_columns(frame("id", "answer", "G1", "G2", "G3"), load_defaults())
    assert choice.columns["score_column"] == "G1"
    assert choice.columns["score_columns"] == ("G1", "G2", "G3")
    assert choice.columns["second_score_column"] is None
    assert "reads = G1, G2, G3 (3 reads)" in choice.sentence()


def test_a_file_whose_ids_repeat_beside_a_rater_column_is_guessed_long():
    rows = [[f"a{i // 2}", f"answer {i // 2}", str(i % 3), f"r{i % 2}"] for i in range(40)]
    long = pd.DataFrame(rows, columns=["id", "answer", "score", "rater"])
    choice = choose_columns(long, load_defaults())
    assert choice.columns["reads"] == "long" and choice.columns["rater_column"] == "rater"
    assert "shape = long (one row per read)" in choice.sentence()
    named = choose_columns(long, load_defaults(), {"reads"})
    assert named.columns["reads"] == "wide"


def beetle_like(n=60, seed=0):
    """The SemEval Beetle file's shape: text labels beside counts and splits."""
    import numpy as np

    rng = np.random.default_rng(seed)
    labels = ["correct", "partially_correct_incomplete", "contradictory", "irrelevant"]
    return pd.DataFrame({
        "id": [f"b{i}" for i in range(n)], "question_id": [f"q{i % 3}" for i in range(n)],
        "question": [f"Why does bulb {i % 3} light?" for i in range(n)],
        "answer": [f"because the circuit is closed {i}" for i in range(n)],
        "label": rng.choice(labels, n), "reference_answer": ["a closed path" for _ in range(n)],
        "split": rng.choice(["train", "test"], n), "module": rng.choice(["m1", "m2"], n),
        "dup_count": rng.integers(1, 9, n).astype(str),
    })  # fmt: skip


def test_a_text_label_column_beats_a_count_of_duplicates():
    choice = choose_columns(beetle_like(), load_defaults())
    assert choice.columns["score_column"] == "label" and choice.question() is None
    assert choice.columns["item_column"] == "question_id"
    assert choice.columns["question_column"] == "question"
    assert choice.columns["reference_column"] == "reference_answer"


def test_a_doubtful_score_guess_names_its_candidates_and_parm_audit_stops(tmp_path):
    from helpers import cli

    frame = (
        beetle_like()
        .drop(columns="label")
        .assign(level=lambda f: (f.index % 3).astype(str), band=lambda f: (f.index % 4).astype(str))
    )
    choice = choose_columns(frame, load_defaults())
    assert choice.doubtful[:2] == ("level", "band")
    assert "Which column holds the scores?" in choice.question()
    path = tmp_path / "doubtful.csv"
    frame.to_csv(path, index=False)
    code, output = cli(path, "--out", tmp_path / "out", "-q")
    assert code == 2
    assert "Which column holds the scores?" in output and "--score-col COLUMN" in output
    assert not (tmp_path / "out").exists()


def test_the_text_column_named_as_the_score_is_refused_by_name_not_as_a_missing_text_column():
    """Issue 43: `--score-col EssayText` left no text column to guess, and the message was
    "Setting 'text_column' = null is invalid"; it names the column and the score columns."""
    import dataclasses

    import pytest

    from engine.core.errors import DataError

    n = 60
    frame = pd.DataFrame({
        "Id": [str(i) for i in range(n)], "Score1": [str(i % 3) for i in range(n)],
        "Score2": [str((i + 1) % 3) for i in range(n)],
        "EssayText": [f"answer {i} about the experiment" for i in range(n)],
    })  # fmt: skip
    config = dataclasses.replace(load_defaults(), score_column="EssayText")
    with pytest.raises(DataError) as refused:
        choose_columns(frame, config, {"score_column"})
    message = str(refused.value)
    assert "column 'EssayText' cannot hold the scores" in message
    assert "'Score1', 'Score2'" in message
