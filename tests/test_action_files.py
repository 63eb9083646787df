"""engine.outputs.report.action_outputs: a run with reads writes backreads.csv, third_reads.csv and
rater_status.csv with their declared columns and run_id, the same from the same run every time;
a run without reads writes none; report.md and report.html carry the short section; names from
the data stay inert; the app's export of today's lists (one key) writes the three files."""

from __future__ import annotations

import csv
import io

import pytest
from helpers import (
    FAST_SETTINGS,
    MULTI_READ_RATERS,
    MULTI_READ_SETTINGS,
    multi_read_frame,
    run_frame,
    session_config,
    session_frame,
)
from hostile import FORMULAS, HTML, MARKDOWN, UNSAFE, check_csv_inert, check_html_inert

from engine import workspace
from engine.actions.plan import plan_actions
from engine.input.table import read_table
from engine.outputs.declared_actions import BACKREADS, RATER_STATUS, THIRD_READS
from engine.outputs.names import ACTION_FILES, BACKREADS_FILE, STATUS_FILE, THIRD_READS_FILE
from engine.outputs.session import output_files, session_contents


@pytest.fixture(scope="module")
def written(planted_lists):
    return dict(session_contents(planted_lists[0]))


def lists_of(session) -> dict[str, str]:
    return dict(session_contents(session, list(ACTION_FILES)))


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_the_three_lists_have_their_declared_columns_and_the_run(planted_lists, written):
    session, _, _ = planted_lists
    lists = plan_actions(session)
    for name, table, found in ((BACKREADS_FILE, BACKREADS, lists.backreads),
                               (THIRD_READS_FILE, THIRD_READS, lists.third_reads),
                               (STATUS_FILE, RATER_STATUS, lists.statuses)):  # fmt: skip
        header, *body = rows(written[name])
        assert header == [*table.header, "run_id"]
        assert len(body) == len(found) > 0
        assert {row[-1] for row in body} == {session.run_id}
    status = rows(written[STATUS_FILE])[1:]
    assert {row[2] for row in status} <= {"qualified", "watch", "retrain", "stop"}
    assert {row[6] for row in rows(written[BACKREADS_FILE])[1:]} == {"random", "risk"}


def test_the_same_run_writes_the_same_lists_and_a_run_of_the_same_file_too(planted_lists):
    session, frame, vectors = planted_lists
    again = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS))
    first, second, other = lists_of(session), lists_of(session), lists_of(again)
    for name in ACTION_FILES:
        assert first[name] == second[name]
        assert [row[:-1] for row in rows(first[name])] == [row[:-1] for row in rows(other[name])]


def test_a_run_without_reads_writes_no_lists():
    frame, vectors = session_frame()
    config = session_config(**FAST_SETTINGS)
    assert not set(ACTION_FILES) & set(output_files(config))
    found = dict(session_contents(run_frame(frame, vectors, config), ["report.md"]))
    assert "Today's lists" not in found["report.md"]


def test_the_reports_carry_a_short_section(written):
    section = written["report.md"].split("## Today's lists")[1]
    assert "Backreads:" in section and "Third reads:" in section
    shown = check_html_inert(written["report.html"])
    assert "Today's lists" in shown and 'id="actions"' in written["report.html"]


def test_names_from_the_data_are_inert_in_the_lists(tmp_path):
    hostile = dict(zip([FORMULAS[0], "<b>" + HTML[:20], MARKDOWN[:30], "Dev"],
                       MULTI_READ_RATERS.values()))  # fmt: skip
    frame, vectors, _ = multi_read_frame(n=(40, 30), seed=3, raters=hostile)
    frame.to_csv(tmp_path / "hostile.csv", index=False)
    frame = read_table(tmp_path / "hostile.csv")
    session = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS))
    written = dict(session_contents(session, [*ACTION_FILES, "report.md", "report.html"]))
    for name in ACTION_FILES:
        (tmp_path / name).write_text(written[name], encoding="utf-8")
        check_csv_inert(tmp_path / name)
    check_html_inert(written["report.html"])
    assert not UNSAFE.search(written["report.md"])


def test_the_workspace_export_writes_todays_lists_alone(planted_lists, tmp_path):
    session, _, _ = planted_lists
    written = workspace.export(session, tmp_path / "out", list(ACTION_FILES))
    assert sorted(p.name for p in written) == sorted([*ACTION_FILES, "parm-manifest.json"])
    status = rows((tmp_path / "out" / STATUS_FILE).read_text(encoding="utf-8"))
    lists = workspace.todays_lists(session)
    assert len(status) - 1 == len(lists.statuses)
    by_rater = workspace.status_by_rater(lists)
    assert set(by_rater) == {s.rater for s in lists.statuses}
    assert set(workspace.backread_rows(lists)) == {b.row for b in lists.backreads}
