"""engine.live.intake.reading: every shape `parm audit` reads gives the session its reads: long or
wide, with or without ids, a workbook; kinds from a kind column; periods from the time column or
the file's day; problems named with their rows."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import live_config, live_reads

from engine.core.errors import DataError
from engine.input.settings.config import load_defaults
from engine.live.intake.reading import kind_of, read_file_reads

DAY = ("2026-05-01", "--period")


def test_a_long_file_gives_one_read_per_row_with_its_period():
    frame = live_reads(days=1, answers_per_day=4, seeds_per_rater=1)[0]
    reads = read_file_reads(frame, live_config(), "day.csv", DAY)
    assert len(reads) == len(frame)
    assert set(reads.day) == {"2026-05-04"} and set(reads.half) == {"am", "pm"}
    seeds = {a: e for (_, a), (_, e) in reads.answers.items() if "seed" in a}
    assert seeds and all(e != "" for e in seeds.values())
    assert "Periods from the time column 'time'" in reads.dating


def test_a_wide_file_reads_every_score_column_and_its_rater():
    frame = pd.DataFrame({"id": ["a", "b"], "answer": ["x", "y"], "score": ["1", "2.0"],
                          "r1": ["Ann", "Bo"], "score2": ["1", ""], "r2": ["Cy", ""]})  # fmt: skip
    config = load_defaults().updated(second_score_column="score2", rater_column="r1",
                                     second_rater_column="r2")  # fmt: skip
    reads = read_file_reads(frame.astype(str), config, "w.csv", DAY)
    assert sorted(zip(reads.answer, reads.rater, reads.score)) == [
        ("a", "Ann", "1"), ("a", "Cy", "1"), ("b", "Bo", "2")]  # fmt: skip
    assert set(reads.day) == {"2026-05-01"} and "no time column" in reads.dating


def test_without_an_id_column_answers_are_known_by_their_text():
    frame = pd.DataFrame({"answer": ["same", "same", "other"], "score": ["1", "1", "0"]})
    config = load_defaults().updated(id_column=None)
    reads = read_file_reads(frame, config, "t.csv", DAY)
    assert len(set(reads.answer)) == 2 and all(a.startswith("text:") for a in reads.answer)
    assert any("known by its text" in note for note in reads.notes)


def test_a_workbook_is_read_like_a_csv(tmp_path):
    from engine.workspace import open_file

    frame = live_reads(days=1, answers_per_day=4)[0]
    path = tmp_path / "day.xlsx"
    frame.to_excel(path, index=False, sheet_name="Reads")
    opened = open_file(path, runs=False)
    reads = read_file_reads(opened.frame, live_config(), str(path), DAY)
    assert sorted(reads.score) == sorted(frame["score"])


def test_times_of_day_take_the_files_day_and_keep_their_half():
    frame = live_reads(days=1, answers_per_day=4)[0]
    frame["time"] = frame["time"].str[11:]
    reads = read_file_reads(frame, live_config(), "d.csv", DAY)
    assert set(reads.day) == {"2026-05-01"} and set(reads.half) == {"am", "pm"}
    assert "half days from its times of day" in reads.dating


@pytest.mark.parametrize("value,kind", [("First", "first"), ("2nd", "second"), ("seed", "validity"),
                                        ("Back read", "backread"), ("third", "resolution"), (" ", "")])  # fmt: skip
def test_a_kind_column_names_each_reads_kind(value, kind):
    assert kind_of(value, 2, "kind", "f.csv") == kind


def test_an_unknown_kind_and_two_expert_scores_are_named_with_their_rows():
    with pytest.raises(DataError, match="row 7"):
        kind_of("maybe", 7, "kind", "f.csv")
    frame = live_reads(days=1, answers_per_day=4, seeds_per_rater=1)[0]
    seed = frame.index[frame["expert"] != ""]
    frame.loc[seed[1], "id"] = frame.loc[seed[0], "id"]
    frame.loc[seed[1], "answer"] = frame.loc[seed[0], "answer"]
    frame.loc[seed[1], "expert"] = str((int(frame.loc[seed[0], "expert"]) + 1) % 3)
    with pytest.raises(DataError, match="expert score"):
        read_file_reads(frame, live_config(), "f.csv", DAY)


def test_an_answer_with_two_texts_and_a_bad_time_are_refused():
    frame = live_reads(days=1, answers_per_day=4)[0]
    twice = frame.copy()
    twice.loc[1, "answer"] = "something else"
    with pytest.raises(DataError, match="different texts"):
        read_file_reads(twice, live_config(), "f.csv", DAY)
    frame.loc[2, "time"] = "04/05/2026"
    with pytest.raises(DataError, match="row 3"):
        read_file_reads(frame, live_config(), "f.csv", DAY)
