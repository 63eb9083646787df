"""scores_reviewed.csv (engine/outputs/reviewed.py): every input row in input order with all its
columns, the final score after the review, the decision and the run's prediction; formula-safe."""

from __future__ import annotations

import csv
import io

import pandas as pd
from helpers import FAST_SETTINGS, record, run_frame, session_frame
from hostile import check_csv_inert

from engine.input.settings.config import config_from_dict
from engine.outputs.reviewed import REVIEW_COLUMNS, reviewed_table
from engine.outputs.write import run_csv
from engine.saved.decisions import open_store


def session_with_blank_rows():
    """A file of one item whose rows 3 and 8 have no score (left out under on_bad_rows skip),
    with an extra column that starts like a formula."""
    table, vectors = session_frame(items=(("A", 60, 3),))
    table = table.drop(columns="item")
    table["comment"] = ["=1+1" if i % 10 == 0 else f"c{i}" for i in range(len(table))]
    table.loc[[2, 7], "score"] = ""
    config = config_from_dict({"id_column": None, "on_bad_rows": "skip", **FAST_SETTINGS})
    return table, run_frame(table, vectors, config)


def parsed(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_every_input_row_keeps_its_columns_and_undecided_rows_keep_their_score(tmp_path):
    table, session = session_with_blank_rows()
    rows = parsed(run_csv(reviewed_table(session, table, None), session.run_id))
    assert len(rows) == len(table)
    assert list(rows[0]) == [*table.columns, *REVIEW_COLUMNS, "run_id"]
    for k, row in enumerate(rows):
        assert row["answer"] == table["answer"][k]
        assert row["final_score"] == table["score"][k] and row["decision"] == ""
    # Rows the run left out have no prediction; the others have the run's.
    assert rows[2]["predicted"] == "" and rows[2]["severity"] == ""
    result = session.results[0]
    first = int(result.responses.rows[0]) - 1
    assert rows[first]["predicted"] == result.responses.labels[result.predicted[0]]
    assert float(rows[first]["severity"]) == round(float(result.severity[0]), 6)


def test_decisions_give_the_final_score_and_the_file_is_formula_safe(tmp_path):
    table, session = session_with_blank_rows()
    responses = session.review.responses
    with open_store(tmp_path / "f.csv", responses, database=tmp_path / "d.sqlite3") as store:
        human = responses.labels[responses.scores[0]]
        new = next(label for label in responses.labels if label != human)
        record(store, responses, 0, "change", new, note="=HYPERLINK(x)")
        record(store, responses, 1, "keep")
        record(store, responses, 4, "unsure", note="ask Sam")
        decisions = store.all()
    path = tmp_path / "scores_reviewed.csv"
    path.write_text(run_csv(reviewed_table(session, table, decisions), session.run_id))
    rows = check_csv_inert(path)
    header, body = rows[0], rows[1:]
    at = {name: k for k, name in enumerate(header)}
    changed = body[int(responses.rows[0]) - 1]
    assert changed[at["final_score"]] == new and changed[at["decision"]] == "change"
    assert changed[at["note"]] == "'=HYPERLINK(x)"  # guarded
    assert changed[at["decided_at"]] == decisions[int(responses.rows[0])].decided_at
    kept = body[int(responses.rows[1]) - 1]
    assert kept[at["decision"]] == "keep" and kept[at["final_score"]] == kept[at["score"]]
    assert body[int(responses.rows[4]) - 1][at["decision"]] == "unsure"
    assert body[0][at["comment"]] == "'=1+1"


def test_columns_of_an_earlier_review_are_replaced_by_this_ones():
    table, session = session_with_blank_rows()
    earlier = table.assign(final_score=table["score"], decision="keep", run_id="old")
    header, rows = reviewed_table(session, pd.DataFrame(earlier), None)
    assert header.count("final_score") == 1 and header.count("decision") == 1
    assert "run_id" not in header  # run_csv adds this run's
    assert all(row[header.index("decision")] == "" for row in rows)
