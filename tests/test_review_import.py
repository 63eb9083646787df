"""engine.saved.review_import: a colleague's decisions.csv brought into another data folder's
review takes each decision only for the answer it was made on (row, id and text, formula guard
included), keeps its reviewer, time and run, counts what was already there, keeps a differing
decision beside the one made here as a conflict, skips what no longer matches with the reason,
and changes nothing when imported twice."""

from __future__ import annotations

import pytest
from helpers import PartialResult, make_responses, record

from engine.core.errors import ReviewError
from engine.outputs.write import write_decisions
from engine.results.decision import RunContext
from engine.saved.decisions import open_store
from engine.saved.review_import import import_decisions

DIGEST = "d" * 64


def _texts():
    texts = [f"answer number {i}" for i in range(12)]
    texts[2] = '=HYPERLINK("http://evil")'  # guarded in decisions.csv
    texts[7] = "two lines,\nwith a comma"
    return texts


def _colleagues_export(tmp_path, responses):
    """Ben's review in his own data folder, exported as `parm export` writes decisions.csv."""
    with open_store(tmp_path / "ben" / "answers.csv", responses, tmp_path / "ben.sqlite3",
                    digest=DIGEST, reviewer="ben") as store:  # fmt: skip
        record(store, responses, 2, "change", "1", note="=1 is right")
        record(store, responses, 7, "keep", note="checked\nwith the rubric")
        store.record(int(responses.rows[9]), responses.ids[9], responses.texts[9], "unsure",
                     context=RunContext("r-ben", "abcdef123456", "0", 0.8))  # fmt: skip
        return write_decisions(store, PartialResult(responses), tmp_path / "ben-out"), store.all()


def test_a_review_round_trips_between_two_data_folders(tmp_path):
    responses = make_responses(_texts())
    exported, bens = _colleagues_export(tmp_path, responses)
    with open_store(tmp_path / "lead" / "answers.csv", responses, tmp_path / "lead.sqlite3",
                    digest=DIGEST, reviewer="ana") as store:  # fmt: skip
        report = import_decisions(store, exported)
        assert (report.taken, report.already, report.conflicting, report.skipped) == (3, 0, 0, [])
        assert store.all() == bens  # reviewer, time, note, run: as Ben made them
        again = import_decisions(store, exported)
        assert (again.taken, again.already, again.conflicting) == (0, 3, 0)
    assert "3 taken" in report.sentence()


def test_differing_decisions_become_conflicts_and_changed_answers_are_skipped(tmp_path):
    responses = make_responses(_texts())
    exported, _ = _colleagues_export(tmp_path, responses)
    changed = list(_texts())
    changed[9] = "answer number 9, corrected"
    mine = make_responses(changed)
    with open_store(
        tmp_path / "lead.csv", mine, tmp_path / "lead.sqlite3", reviewer="ana"
    ) as store:
        record(store, mine, 2, "change", "1", note="=1 is right")  # the same call as Ben
        record(store, mine, 7, "change", "0")  # another call
        report = import_decisions(store, exported)
        assert (report.taken, report.already, report.conflicting) == (0, 1, 1)
        assert report.skipped == [
            (6, "the answer at row 10 is not the one decided on (its id or text changed)")
        ]
        assert [d.reviewer for d in store.conflicts(8)] == ["ben"]
        assert store.get(8).new_score == "0"  # the lead's decision stands until settled
        assert import_decisions(store, exported).conflicting == 0  # kept once
    assert "1 conflicting" in report.sentence() and "line 6" in report.sentence()


def test_a_file_that_is_not_a_decisions_csv_is_refused(tmp_path, source, database):
    other = tmp_path / "scores.csv"
    other.write_text("id,answer,score\n1,x,2\n", encoding="utf-8")
    with open_store(source, make_responses(), database) as store:
        with pytest.raises(ReviewError, match="no row, text, action, new_score, note, decided_at"):
            import_decisions(store, other)
        with pytest.raises(ReviewError, match="not found"):
            import_decisions(store, tmp_path / "missing.csv")


def test_a_decision_off_the_scale_is_skipped_with_the_reason(tmp_path, source, database):
    responses = make_responses()
    bad = tmp_path / "decisions.csv"
    bad.write_text(
        "row,id,text,action,new_score,note,decided_at\n"
        "1,S000,answer number 0,change,7,,2026-11-20T10:00:00+00:00\n"
        "2,S001,answer number 1,shrug,,,2026-11-20T10:00:00+00:00\n"
        "x,S002,answer number 2,keep,,,2026-11-20T10:00:00+00:00\n",
        encoding="utf-8",
    )
    with open_store(source, responses, database) as store:
        report = import_decisions(store, bad)
    assert [line for line, _ in report.skipped] == [2, 3, 4]
    assert "not one of the labels" in report.skipped[0][1]
    assert "Unknown action" in report.skipped[1][1]
    assert "not an answer of this file" in report.skipped[2][1]


@pytest.mark.slow
def test_parm_review_import_round_trips_a_review_between_two_data_folders(
    tmp_path, monkeypatch, sample_embeddings_file
):
    """Ben reviews his copy of the sample in his data folder and exports; Ana, with another data
    folder and the file elsewhere, imports his decisions.csv; her export then holds his
    decisions, his name on them."""
    import shutil

    from helpers import SAMPLE_CSV, cli, parm_command

    from engine import workspace

    flags = ["--embeddings", sample_embeddings_file, "--set", "similarity_top_k=[5,10]",
             "--set", "bootstrap_samples=0", "--set", "cross_fit_folds=0", "-q"]  # fmt: skip
    copies = {}
    for who in ("ben", "ana"):
        (tmp_path / who).mkdir()
        copies[who] = tmp_path / who / "plant_growth.csv"
        shutil.copyfile(SAMPLE_CSV, copies[who])
    monkeypatch.setenv("PARM_DATA_DIR", str(tmp_path / "ben-data"))
    assert cli(copies["ben"], *flags, "--out", tmp_path / "ben" / "audit")[0] == 0
    file = workspace.open_file(copies["ben"])
    prepared, _ = workspace.restore(file, file.runs[0])
    monkeypatch.setenv("PARM_DATA_DIR", str(tmp_path / "ben-data"))
    review = workspace.open_review(prepared)
    with review.store as store:
        store.reviewer = "ben"
        responses = prepared.responses
        record(store, responses, 0, "change", "2" if responses.scores[0] != 2 else "1")
        record(store, responses, 4, "keep", note="fine")
    code, output = parm_command("export", copies["ben"], "--out", tmp_path / "ben" / "out")
    assert code == 0, output

    monkeypatch.setenv("PARM_DATA_DIR", str(tmp_path / "ana-data"))
    assert cli(copies["ana"], *flags, "--out", tmp_path / "ana" / "audit")[0] == 0
    bens = tmp_path / "ben" / "out" / "decisions.csv"
    code, output = parm_command("review", "import", copies["ana"], bens)
    assert code == 0, output
    assert "2 decision(s)" in output and "2 taken" in output
    code, output = parm_command("review", "import", copies["ana"], bens)
    assert "2 already here" in output
    code, output = parm_command("export", copies["ana"], "--out", tmp_path / "ana" / "out")
    assert code == 0 and "2 decisions" in output, output
    with (tmp_path / "ana" / "out" / "decisions.csv").open(newline="", encoding="utf-8") as handle:
        import csv

        rows = list(csv.DictReader(handle))
    assert [row["reviewer"] for row in rows] == ["ben", "ben"]
    assert [row["note"] for row in rows] == ["", "fine"]
