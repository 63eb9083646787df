"""Two parm windows on one decision database: each notices the other's decisions (SQLite's
data_version) and the review screen shows them and says so; a schema_version this parm does not
know is a clear message, not a bare ValueError."""

from __future__ import annotations

import sqlite3

import pytest
from helpers import Host, make_responses, record, synthetic_result

from engine.audit.decisions import SCHEMA_VERSION, open_store
from engine.core.errors import ReviewError
from parm_tui.widgets.review_list import ReviewTable


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "answers.csv"
    path.write_text("id,answer,score\n")
    return path


def test_a_store_notices_decisions_saved_by_another_connection(source, tmp_path):
    responses = make_responses()
    database = tmp_path / "decisions.sqlite3"
    with (
        open_store(source, responses, database) as mine,
        open_store(source, responses, database) as other,
    ):
        record(mine, responses, 0, "keep")
        assert not mine.changed_elsewhere()  # its own writes are not news
        assert other.changed_elsewhere() and other.get(1).action == "keep"
        record(other, responses, 0, "change", "2", note="other window")
        record(other, responses, 3, "unsure")
        assert mine.changed_elsewhere()
        assert mine.get(1).action == "change" and mine.get(1).note == "other window"
        assert mine.get(4).action == "unsure"
        assert not mine.changed_elsewhere()
        other.clear(4)
        assert mine.changed_elsewhere() and mine.get(4) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("banana", "unknown schema_version 'banana'"),
        ("-7", "schema_version -7, which this parm cannot read"),
        (
            "99",
            f"schema_version 99, which this parm cannot read (it reads 0 to {SCHEMA_VERSION}); "
            "a newer parm",
        ),
    ],
)
def test_an_unknown_schema_version_is_a_clear_message(source, tmp_path, value, expected):
    database = tmp_path / "decisions.sqlite3"
    conn = sqlite3.connect(database)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (value,))
    conn.commit()
    conn.close()
    with pytest.raises(ReviewError) as caught:
        open_store(source, make_responses(), database)
    assert expected in str(caught.value) and str(database) in str(caught.value)


async def test_the_review_screen_shows_another_windows_decision_and_says_so(tmp_path):
    result = synthetic_result(120)
    source = tmp_path / "synthetic.csv"
    source.write_text("placeholder\n")
    database = tmp_path / "decisions.sqlite3"
    with (
        open_store(source, result.responses, database) as mine,
        open_store(source, result.responses, database) as other,
    ):
        async with Host(result, mine).run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            screen = pilot.app.screen
            i = screen.current()
            responses = result.responses
            other.record(int(responses.rows[i]), responses.ids[i], responses.texts[i], "keep")
            screen.check_other_writers()
            await pilot.pause()
            assert mine.get(int(responses.rows[i])).action == "keep"
            cell = screen.query_one(ReviewTable).get_cell(str(i), "decision")
            assert "keep" in str(cell)
            messages = " ".join(n.message for n in pilot.app._notifications)
            assert "saved by another parm window" in messages
