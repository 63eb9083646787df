"""Several reads per answer (engine/input/several_reads.py, engine/input/kept_reads.py): a wide file
(score columns, with or without rater columns) and the same reads in a long file (one row per
read) give the same answers and reads; the audited read is each answer's first; bad input is
named with its rows: a rater reading an answer twice, an answer whose rows carry two texts, a
long file with no text (an answers file then brings it), an unreadable other read."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.core.errors import ConfigError, DataError
from engine.input.items import split_items
from engine.input.settings.config import load_defaults


def wide_frame(n=30, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        reads = rng.integers(0, 3, size=3).astype(str)
        third = reads[2] if i % 3 else ""  # a third read on two answers in three
        rows.append([f"s{i}", f"answer number {i}", reads[0], reads[1], third])
    return pd.DataFrame(rows, columns=["id", "answer", "G1", "G2", "G3"])


def long_frame(wide: pd.DataFrame) -> pd.DataFrame:
    """The same reads, one row per read, the text on each answer's first row only."""
    rows = []
    for _, r in wide.iterrows():
        for k, grader in enumerate(("G1", "G2", "G3")):
            if r[grader]:
                rows.append([r["id"], r["answer"] if k == 0 else "", grader, r[grader]])
    return pd.DataFrame(rows, columns=["id", "answer", "grader", "score"])


WIDE = load_defaults().updated(score_column="G1", score_columns=["G1", "G2", "G3"])
LONG = load_defaults().updated(reads="long", rater_column="grader")


def test_a_wide_and_a_long_file_of_the_same_reads_give_the_same_answers_and_reads():
    wide = wide_frame()
    one = split_items(wide, WIDE).audited[0]
    other = split_items(long_frame(wide), LONG).audited[0]
    assert one.texts == other.texts and one.ids == other.ids
    np.testing.assert_array_equal(one.scores, other.scores)
    np.testing.assert_array_equal(one.second_scores, other.second_scores)
    for reads in (one.reads, other.reads):
        assert reads.per_answer(len(one)).tolist() == [2 if i % 3 == 0 else 3 for i in range(30)]
    assert one.reads.rater == other.reads.rater
    np.testing.assert_array_equal(one.reads.score, other.reads.score)
    assert one.reads.rater[2:5] == ("G1", "G2", "G3")  # a column without raters is its own rater
    np.testing.assert_array_equal(one.reads.score[one.reads.first], one.scores)


def test_two_reads_by_second_score_column_are_the_same_as_two_score_columns():
    wide = wide_frame()
    two = split_items(wide, load_defaults().updated(score_column="G1", second_score_column="G2"))
    many = split_items(wide, load_defaults().updated(score_column="G1", score_columns=["G1", "G2"]))
    a, b = two.audited[0], many.audited[0]
    np.testing.assert_array_equal(a.second_scores, b.second_scores)
    np.testing.assert_array_equal(a.reads.score, b.reads.score)
    # No rater column: each score column names its reads' rater, however the columns are named
    # (so the rater table counts G1 and G2 as a long file of the same reads does).
    assert a.reads.rater == b.reads.rater and set(a.reads.rater) == {"G1", "G2"}
    assert a.raters == b.raters == ("G1",) * len(a)
    assert a.second_raters == b.second_raters == ("G2",) * len(a)
    one = split_items(wide, load_defaults().updated(score_column="G1")).audited[0]
    assert one.raters is None and set(one.reads.rater) == {""}  # one column records no rater


def test_rater_columns_name_each_reads_rater_and_a_rater_reading_twice_is_named():
    wide = wide_frame()
    wide["r1"], wide["r2"], wide["r3"] = "ana", "ben", "cy"
    config = WIDE.updated(rater_columns=["r1", "r2", "r3"])
    responses = split_items(wide, config).audited[0]
    assert set(responses.reads.rater) == {"ana", "ben", "cy"}
    wide.loc[4, "r2"] = "ana"
    with pytest.raises(DataError, match="rater 'ana' reads the same answer twice \\(row 5\\)"):
        split_items(wide, config)


def test_long_files_name_answers_with_two_texts_and_take_texts_from_an_answers_file(tmp_path):
    long = long_frame(wide_frame())
    clash = long.copy()
    clash.loc[1, "answer"] = "another text"
    with pytest.raises(
        DataError, match="rows of answer 's0' carry different texts \\(rows 1, 2\\)"
    ):
        split_items(clash, LONG)
    bare = long.assign(answer="")
    with pytest.raises(DataError, match="no answer has a text"):
        split_items(bare, LONG)
    answers = tmp_path / "answers.csv"
    wide_frame()[["id", "answer"]].iloc[:-1].to_csv(answers, index=False)
    with pytest.raises(DataError, match="1 answer\\(s\\) have no text .* \\('s29'\\)"):
        split_items(bare, LONG.updated(answers_file=str(answers)))
    wide_frame()[["id", "answer"]].to_csv(answers, index=False)
    joined = split_items(bare, LONG.updated(answers_file=str(answers))).audited[0]
    assert joined.texts == wide_frame()["answer"].tolist()


def test_a_long_files_read_without_a_score_is_a_bad_row():
    long = long_frame(wide_frame())
    long.loc[3, "score"] = ""
    with pytest.raises(
        DataError,
        match="1 row\\(s\\) cannot be used: missing score in 1 row\\(s\\) \\(4\\)",
    ):
        split_items(long, LONG)
    kept = split_items(long, LONG.updated(on_bad_rows="skip")).audited[0]
    assert len(kept.reads) == len(split_items(long_frame(wide_frame()), LONG).audited[0].reads) - 1


def test_an_unreadable_other_read_counts_as_missing_with_a_warning():
    wide = wide_frame()
    wide.loc[2, "G3"] = "n/a"
    responses = split_items(wide, WIDE).audited[0]
    assert any("Column 'G3' has 1 score(s) that are not numbers (rows 3)" in w
               for w in responses.warnings)  # fmt: skip
    assert responses.reads.per_answer(len(responses))[2] == 2


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"score_columns": ["G1", "G2"]}, "must start with the audited score column"),
        ({"score_column": "G1", "score_columns": ["G1", "G2"], "second_score_column": "G3"},
         "both name reads"),
        ({"rater_columns": ["a", "b"]}, "needs 'score_columns'"),
        ({"reads": "long"}, "needs 'rater_column'"),
        ({"answers_file": "a.csv"}, "is for a long file"),
    ],
)  # fmt: skip
def test_settings_of_reads_that_disagree_are_refused(settings, message):
    with pytest.raises(ConfigError, match=message):
        load_defaults().updated(**settings)


def test_a_rater_is_named_one_way_in_every_output():
    """rater_name: the file's name, or a blank rater's place; who_read: one name where one
    rater gave every read of a place (G1), else the place, never "rater 1"."""
    from engine.input.several_reads import rater_name, read_pair, who_read

    assert rater_name("G2", 1) == "G2" and rater_name("", 1) == "read 2"
    assert who_read(["G1", "G1"], 0) == "G1"
    assert who_read(["ana", "ben"], 0) == "first read"
    assert who_read(["G2", ""], 1) == "second read"  # a blank rater is not G2
    assert who_read([], 3) == "read 4"
    wide = split_items(wide_frame(), WIDE).audited[0]
    long = split_items(long_frame(wide_frame()), LONG).audited[0]
    assert read_pair([wide.reads]) == read_pair([long.reads]) == ("G1", "G2")
    two = split_items(wide_frame(), load_defaults().updated(score_column="G1",
                                                            second_score_column="G2"))  # fmt: skip
    assert read_pair([two.audited[0].reads]) == ("G1", "G2")
