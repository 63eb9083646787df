"""The rater effects in a session's outputs (engine/outputs/report/rater_outputs.py): raters.csv's new
columns, rater_item_bias.csv, the per-rater feedback file (formula-safe with hostile rater ids
and answers), report.json and report.md."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from helpers import audit_planted, planted_session
from hostile import FORMULAS, HTML, MARKUP, check_csv_inert
from markdown_it import MarkdownIt

from engine.outputs.declared import BIAS, FEEDBACK, RATERS, WITH_EXPERT
from engine.outputs.report.rater_outputs import verdicts_section
from engine.outputs.session import output_files, write_session

HOSTILE = {"r4": '=HYPERLINK("x")' + HTML[:20], "r6": "@r6 " + MARKUP[:12], "r1": "-r1|`#"}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    frame, vectors = planted_session(seed=2, per_item=400)
    frame["rater"] = frame["rater"].replace(HOSTILE)
    frame.loc[::7, "answer"] = [FORMULAS[i % len(FORMULAS)] + f" {i}"
                                for i in range(len(frame.loc[::7]))]  # fmt: skip
    session = audit_planted(frame, vectors)
    out = tmp_path_factory.mktemp("out")
    write_session(session, out)
    return session, out


def read(path):
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_a_session_with_raters_writes_the_bias_and_feedback_files(written):
    session, out = written
    names = output_files(session.config)
    assert {"raters.csv", "rater_item_bias.csv", "rater_feedback.csv"} <= set(names)
    for name in ("raters.csv", "rater_item_bias.csv", "rater_feedback.csv"):
        check_csv_inert(out / name)


def test_raters_csv_has_the_verdict_rule_and_effect_columns(written):
    session, out = written
    rows = read(out / "raters.csv")
    assert list(rows[0]) == [*RATERS.without(WITH_EXPERT).header, "run_id"]
    by_name = {r.rater: r for r in session.raters.rows}
    for row in rows:
        rater = row["rater"].lstrip("'")
        assert row["verdict"] == by_name[rater].verdict
        if by_name[rater].judged:
            assert row["rule"].startswith(row["verdict"].split(",")[0])
            assert float(row["infit"]) == pytest.approx(by_name[rater].effects.infit, abs=1e-6)
    lenient = next(r for r in rows if r["rater"].lstrip("'") == HOSTILE["r4"])
    assert "lenient" in lenient["verdict"] and "(rule: leniency >= " in lenient["rule"]
    assert lenient["rater"].startswith("'=")  # a formula-looking id stays text


def test_bias_file_lists_every_cell_and_marks_the_ones_beyond_the_rule(written):
    session, out = written
    rows = read(out / "rater_item_bias.csv")
    assert list(rows[0]) == [*BIAS.header, "run_id"] and len(rows) == len(session.raters.bias)
    assert {row["listed"] for row in rows} <= {"True", "False"}
    first = rows[0]
    assert float(first["observed"]) - float(first["expected"]) == pytest.approx(
        float(first["bias"]), abs=1e-5
    )


def test_feedback_holds_each_raters_flagged_scores_most_severe_first(written):
    session, out = written
    rows = read(out / "rater_feedback.csv")
    assert list(rows[0]) == [*FEEDBACK.header, "run_id"]
    # raters.csv's model_differs: each rater's reads the model would score otherwise (not the queue's
    # likely wrong scores, which are of the audited read only)
    flagged = sum(row.model_differs for row in session.raters.rows)
    assert len(rows) == flagged
    order = [r.rater for r in session.raters.rows]
    seen = [row["rater"].lstrip("'") for row in rows]
    assert seen == sorted(seen, key=order.index)
    for rater in set(seen):
        severity = [float(row["severity"]) for row in rows if row["rater"].lstrip("'") == rater]
        assert severity == sorted(severity, reverse=True)
    row = rows[0]
    assert row["score"] != row["model_score"]
    assert row["neighbours"].count("(") >= 1 and row["nearest_answer"]
    guarded = [r["answer"] for r in rows if r["answer"].lstrip("' ").startswith(("=", "@"))]
    assert guarded and all(answer.startswith("'") for answer in guarded)


def test_report_json_has_each_raters_effects_verdicts_and_the_bias_cells(written):
    session, out = written
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    raters = data["raters"]
    assert raters["time_column"] == "time" and "cross-fitted by rater" in raters["expectation"]
    assert set(raters["rules"]) >= {"lenient", "noisy", "central tendency", "drifting"}
    row = next(r for r in raters["raters"] if r["rater"] == HOSTILE["r6"])
    assert row["verdict"].startswith("noisy")
    assert row["effects"]["verdicts"][0]["rule"] == raters["rules"]["noisy"]
    assert len(row["effects"]["drift"]["periods"]) >= 2
    assert len(raters["bias_cells"]) == len(session.raters.bias)


def test_report_md_shows_verdicts_fit_bias_and_drift_with_ids_escaped(written):
    _, out = written
    text = (out / "report.md").read_text(encoding="utf-8")
    for heading in ("### Verdicts", "infit (ZSTD)", "Rater x item bias cells", "Drift:"):
        assert heading in text
    # The rater id's HTML is text: escaped with a backslash, shown as written when rendered.
    assert "\\<img" in text
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<img" not in rendered and "&lt;img" in rendered
    assert np.sum([line.startswith("- **") for line in text.splitlines()]) >= 9


def test_two_graders_read_as_two_score_columns_have_their_rows_and_a_note_on_the_midpoint():
    """Mohler's shape: score and score2, no rater column. Each column is a rater in raters.csv
    (every read counted), and report.md says that with two raters leniency is half their
    difference; every flagged read in rater_feedback.csv is its rater's score the model
    would change."""
    from helpers import run_frame, session_config, session_frame

    from engine.outputs.report.rater_outputs import feedback_table, verdicts_section

    frame, vectors = session_frame(items=(("A", 90, 3),), seed=7)
    raised = np.minimum(frame["score"].astype(int) + (np.arange(len(frame)) % 2), 2)
    frame["score2"] = raised.astype(str)  # score2 one step up on every other answer
    session = run_frame(frame, vectors, session_config(second_score_column="score2"))
    rows = {r.rater: r for r in session.raters.rows}
    assert set(rows) == {"score", "score2"} and rows["score"].n == rows["score2"].n == 90
    assert rows["score2"].leniency > 0 > rows["score"].leniency
    text = "\n".join(verdicts_section(session))
    assert "Two raters: the typical rater is their midpoint" in text
    # One item: no rater x item cell can be judged, and the report says so ("0 of 0 cells" before).
    assert session.raters.bias == [] and "Rater x item bias cells: no cell to judge (" in text
    assert "0 of 0 cells" not in text
    _, feedback = feedback_table(session)
    result = session.results[0]
    for rater, column in (("score", "score"), ("score2", "score2")):
        given = frame.loc[result.responses.rows - 1, column].astype(int).to_numpy()
        flagged = int(np.sum(np.asarray(result.responses.labels, int)[result.predicted] != given))
        assert sum(row[0] == rater for row in feedback) == flagged == rows[rater].model_differs


def test_a_fresh_run_with_an_item_of_one_rater_does_not_call_itself_a_saved_session():
    """Issue 43: a fresh run said "this saved session predates the rater-left-out expectation"
    because one item had a single rater (a long file whose other raters were lost)."""
    frame, vectors = planted_session(seed=3, items=2, per_item=120)
    frame.loc[frame["item"] == "I1", "rater"] = "r1"
    session = audit_planted(frame, vectors)
    assert not session.raters.rater_left_out
    note = "\n".join(verdicts_section(session))
    assert "saved session predates" not in note
    assert "items scored by a single rater" in note


def test_the_middle_share_is_not_applicable_where_no_scale_has_a_middle_score():
    """Two-point scales have no score strictly inside: their middle share and its expectation
    are 0 by construction, shown as n/a rather than as a figure."""
    import types

    from engine.outputs.report.rater_outputs import _middle

    binary = types.SimpleNamespace(middle_share=0.0, middle_expected=0.0)
    wider = types.SimpleNamespace(middle_share=0.25, middle_expected=0.5)
    assert _middle(binary) == "n/a" and _middle(wider) == "25.0% (50.0%)"
