"""A session's outputs (engine/outputs/session.py): the item column, every score on any item's
scale, the items overview first in report.md, items.csv; a file of one item writes what a single
audit writes."""

from __future__ import annotations

import csv
import json

import pytest
from helpers import run_frame, session_config, session_frame

from engine.outputs.declared import ITEMS
from engine.outputs.report.report_json import session_dict
from engine.outputs.session import (
    prediction_table,
    session_markdown,
    tuning_table,
    write_session,
)


def test_outputs_carry_the_item_and_every_score_on_any_scale():
    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config())
    header, rows = prediction_table(session)
    assert header[:3] == ["row", "id", "item"]
    assert [h for h in header if h.startswith("p_")] == ["p_0", "p_1", "p_2", "p_3"]
    assert [row[0] for row in rows] == list(range(1, len(frame) + 1))
    for row in rows:
        assert row[2] == frame.iloc[row[0] - 1]["item"]
        # Item A's scale has no 3: its probability column stays empty.
        assert (row[header.index("p_3")] == "") == (row[2] == "A")
    tuning_header, tuning_rows = tuning_table(session)
    assert tuning_header[0] == "item" and {r[0] for r in tuning_rows} == {"A", "B"}


@pytest.mark.parametrize(
    ("codes", "order", "expected"),
    [
        # Numbers: numeric order, not the order the items first used them (p_1, p_10, p_2 ...).
        ({"A": ["10", "2", "1"], "B": ["0.5", "4", "0", "3"]}, None,
         ["0", "0.5", "1", "2", "3", "4", "10"]),
        # Ordered text labels: the stated scale's order.
        ({"A": ["high", "low", "mid"], "B": ["top", "mid", "low", "high"]},
         "low,mid,high,top", ["low", "mid", "high", "top"]),
    ],
)  # fmt: skip
def test_the_probability_columns_are_in_score_order(codes, order, expected):
    frame, vectors = session_frame()
    levels = frame["score"].astype(int)
    frame["score"] = [codes[item][level] for item, level in zip(frame["item"], levels)]
    settings = {} if order is None else {"score_order": order.split(",")}
    header, _ = prediction_table(run_frame(frame, vectors, session_config(**settings)))
    assert [h for h in header if h.startswith("p_")] == [f"p_{label}" for label in expected]
    first = header.index(f"p_{expected[0]}")
    assert header[first : first + len(expected)] == [f"p_{label}" for label in expected]


def test_report_puts_the_overview_first_and_every_item_after_it():
    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config())
    text = session_markdown(session)
    # What the lead concludes first (engine.outputs.report.conclusions), then the items overview.
    assert text.startswith("# parm audit report\n\n## Summary\n")
    assert text.index("## Summary") < text.index("\n## Items\n") < text.index("## Item A")
    for name in ("A", "B"):
        assert f"\n## Item {name}\n" in text
    assert text.index("## Items") < text.index("## Item A") and "\n### Data\n" in text
    data = session_dict(session)
    assert [row["item"] for row in data["items_overview"]] == list(dict.fromkeys(frame["item"]))
    assert len(data["items"]) == 2 and data["input"]["items_audited"] == 2
    json.dumps(data, allow_nan=False)


def test_write_session_writes_items_csv_with_the_documented_columns(tmp_path):
    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config())
    written = write_session(session, tmp_path)
    assert {p.name for p in written} == {
        "predictions.csv", "tuning.csv", "report.json", "report.md", "report.html", "items.csv",
        "warnings.txt", "parm-manifest.json",
    }  # fmt: skip
    with (tmp_path / "items.csv").open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0]) == [*ITEMS.header, "run_id"]
    for row in table:
        result = next(r for r in session.results if r.responses.item == row["item"])
        assert float(row["kappa"]) == pytest.approx(result.metrics["kappa"], abs=1e-6)
        assert int(row["flagged"]) == int(result.flagged.sum())


def test_a_file_without_items_writes_what_a_single_audit_writes(tmp_path):
    from engine.outputs.write import write_outputs

    frame, vectors = session_frame(items=(("A", 60, 3),))
    session = run_frame(frame, vectors, session_config(item_column=None))
    assert not session.by_item and session.results[0].responses.item is None
    write_session(session, tmp_path / "session")
    write_outputs(session.results[0], tmp_path / "audit")
    for name in ("predictions.csv", "tuning.csv", "report.md"):
        session_text = (tmp_path / "session" / name).read_text(encoding="utf-8")
        assert session_text == (tmp_path / "audit" / name).read_text(encoding="utf-8")


def test_decisions_of_a_session_name_the_item_and_the_rater(tmp_path):
    from engine.outputs.session import decisions_table
    from engine.saved.decisions import open_store

    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config(rater_column="rater"))
    review = session.review
    responses = review.responses
    source = tmp_path / "session.csv"
    source.write_text("x\n")
    with open_store(source, responses, tmp_path / "d.sqlite3", review.on_scale) as store:
        for i in (0, 5, 70):
            store.record(int(responses.rows[i]), responses.ids[i], responses.texts[i], "keep")
        header, rows = decisions_table(store, session)
    assert header[:4] == ["row", "id", "item", "rater"]
    assert [row[0] for row in rows] == sorted(int(responses.rows[i]) for i in (0, 5, 70))
    for row in rows:
        original = frame.iloc[row[0] - 1]
        assert (row[2], row[3]) == (original["item"], original["rater"])


def test_report_json_has_one_shape_for_one_item_and_for_many(tmp_path):
    """A file without an item column is a session of one item: the same keys at the top, its
    report under items[0] with a null item; a file of items has one entry per item."""
    from engine.outputs.report.report_json import SCHEMA_VERSION

    frame, vectors = session_frame()
    many = session_dict(run_frame(frame, vectors, session_config()))
    one_frame = frame[frame["item"] == "A"].reset_index(drop=True)
    one = session_dict(
        run_frame(one_frame, vectors[frame.index[frame["item"] == "A"]],
                  session_config(item_column=None))
    )  # fmt: skip
    assert one.keys() == many.keys()
    assert one["schema_version"] == many["schema_version"] == SCHEMA_VERSION
    assert [item["item"] for item in one["items"]] == [None]
    assert [item["item"] for item in many["items"]] == ["A", "B"]
    assert one["items"][0].keys() == many["items"][0].keys()
    assert one["input"]["item_column"] is None and many["input"]["item_column"] == "item"


def test_the_schemas_settings_are_the_settings_table():
    from engine.input.settings.declared import SETTINGS
    from engine.outputs.report.report_json import report_schema

    config = report_schema()["$defs"]["config"]
    assert config["required"] == [s.name for s in SETTINGS] == list(config["properties"])


def test_the_items_tables_have_a_reads_column_only_where_answers_are_read_twice():
    """SciEntsBank (one read per answer) had an empty "first read vs second read (exact,
    kappa)" column in report.md's and report.html's items tables and in the app's Items tab."""
    from engine.outputs.session import html_report
    from parm_tui.widgets.session_tables import PAIR_HEADER, item_cells, items_headers

    frame, vectors = session_frame()
    once = run_frame(frame, vectors, session_config())
    second = frame.assign(score2=[str((int(s) + (k % 7 == 0)) % 3) for k, s in
                                  enumerate(frame["score"])])  # fmt: skip
    twice = run_frame(second, vectors, session_config(second_score_column="score2"))
    for session, shown in ((once, False), (twice, True)):
        markdown = session_markdown(session)
        items = markdown[markdown.index("## Items") :]
        lines = items.splitlines()
        start = next(k for k, line in enumerate(lines) if line.startswith("| item"))
        end = next(k for k in range(start, len(lines)) if not lines[k].startswith("|"))
        header, rows = lines[start], lines[start + 2 : end]
        assert ("(exact, kappa)" in header) is shown
        assert len(rows) == 2 and all(r.count("|") == header.count("|") for r in rows)
        page = html_report(session, None)
        assert ("(exact, kappa)</th>" in page) is shown
        modelled = session.session_model is not None
        headers = items_headers(modelled, session.second_reads)
        assert (PAIR_HEADER in headers) is shown
        rows = [item_cells(s, modelled, session.second_reads) for s in session.overview]
        assert all(len(row) == len(headers) for row in rows)
