"""engine.live.monitor, changes and outputs, through engine.workspace.monitor and `parm monitor`:
a session followed day by day, its files (monitor.csv with run_id, alerts.csv with its declared
columns), what changed since the last run, hostile names inert, errors as the project's."""

from __future__ import annotations

import csv

import pytest
from helpers import ROOT, live_config, live_reads, parm_command
from hostile import HTML, MARKUP, OSC52, check_csv_inert, check_html_inert

from engine import workspace
from engine.live.actions import ActionsResult
from engine.live.intake.store import DATABASE_NAME
from engine.live.monitor import FileInput, monitor_session
from engine.outputs.live_tables import ALERTS, MONITOR

SAMPLE = ROOT / "sample_data" / "live"


@pytest.fixture(scope="module")
def followed(tmp_path_factory):
    """The sample session followed day by day with `parm monitor`: each day's exit code and
    output, and the folders."""
    folder = tmp_path_factory.mktemp("live")
    session, out = folder / "session", folder / "out"
    runs = []
    for day in range(1, 6):
        since = ["--since", "last"] if day == 5 else []
        runs.append(parm_command("monitor", SAMPLE / f"day{day}.csv", "--session", session,
                                 "--out", out, *since))  # fmt: skip
    return runs, session, out


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_sample_session_alerts_the_drifting_rater_and_the_falling_item(followed):
    runs, _, out = followed
    assert [code for code, _ in runs] == [0] * 5
    assert "No open alert" in runs[0][1]
    day4, day5 = runs[3][1], runs[4][1]
    opened = day4.split("Open alerts")[1].splitlines()
    assert "rater_drift: Rater 'Dev'" in day4
    assert not [line for line in opened if "item_" in line and "plants" in line]
    assert "item_within_day: Item 'plants'" in day5 and "item_history_red: Item 'plants'" in day5
    # Day 4's change of Dev's verdict was told once: day 5 says it is not carried over, so
    # the counts add up (day 4: 2 still open, 0 cleared; the verdict and 4 statuses told once).
    assert ("Alerts: 3 raised, 0 cleared, 2 still open (5 change(s) of a verdict or status "
            "told by the run before are not carried over)") in day5  # fmt: skip
    alerts = read_csv(out / "alerts.csv")
    assert list(alerts[0])[:7] == ["kind", "item", "rater", "period", "figure", "threshold",
                                   "message"]  # fmt: skip
    assert list(alerts[0]) == ALERTS.header + ["run_id"]
    assert {(a["kind"], a["item"], a["rater"]) for a in alerts} >= {
        ("rater_drift", "", "Dev"), ("item_within_day", "plants", ""),
    }  # fmt: skip
    assert all(a["period"] in ("2026-05-08", "2026-05-08 pm") for a in alerts)


def test_monitor_csv_has_a_row_per_item_rater_and_period_with_the_run(followed):
    _, _, out = followed
    rows = read_csv(out / "monitor.csv")
    assert list(rows[0]) == MONITOR.header + ["run_id"]
    assert len({r["run_id"] for r in rows}) == 1
    keys = [(r["item"], r["rater"], r["period"]) for r in rows]
    assert len(keys) == len(set(keys))
    periods = {r["period"] for r in rows}
    assert "2026-05-04" in periods and "2026-05-08 pm" in periods
    whole = next(
        r for r in rows if r["item"] == "plants" and not r["rater"] and r["period"] == "2026-05-08"
    )
    assert float(whole["exact_low"]) <= float(whole["exact"]) <= float(whole["exact_high"])
    assert int(whole["double_reads"]) == 60


def test_adding_the_same_day_again_adds_nothing_and_since_last_says_so(followed):
    _, session, out = followed
    code, output = parm_command("monitor", SAMPLE / "day5.csv", "--session", session, "--out",
                                out, "--since", "last")  # fmt: skip
    assert code == 0 and "0 reads, 0 answers new; 492 already in the session" in output
    assert "0 reads and 0 answers added" in output and "0 raised, 0 cleared, 5 still open" in output
    code, output = parm_command("monitor", "--session", session, "--out", out, "--since", "last")
    assert code == 0 and "Added" not in output and "Open alerts: 5" in output


def test_report_html_leads_with_the_alerts(followed):
    _, _, out = followed
    page = check_html_inert((out / "report.html").read_text(encoding="utf-8"))
    assert page.index("Alerts to act on (5)") < page.index("Trends")
    assert "Item 'plants': exact agreement on the afternoon of 2026-05-08" in page


def test_a_damaged_session_is_an_error_with_exit_code_2(tmp_path):
    session = tmp_path / "s"
    session.mkdir()
    (session / DATABASE_NAME).write_bytes(b"this is not SQLite at all" * 100)
    code, output = parm_command("monitor", SAMPLE / "day1.csv", "--session", session, "--out",
                                tmp_path / "o")  # fmt: skip
    assert code == 2 and output.startswith("Error: ") and "damaged" in output
    assert (session / DATABASE_NAME).read_bytes() == b"this is not SQLite at all" * 100


def test_an_out_folder_of_another_run_needs_force(tmp_path):
    out = tmp_path / "o"
    assert (
        parm_command("monitor", SAMPLE / "day1.csv", "--session", tmp_path / "a", "--out", out)[0]
        == 0
    )
    code, output = parm_command("monitor", SAMPLE / "day1.csv", "--session", tmp_path / "b",
                                "--out", out)  # fmt: skip
    assert code == 2 and "--force" in output
    code, _ = parm_command("monitor", SAMPLE / "day1.csv", "--session", tmp_path / "b", "--out",
                           out, "--force")  # fmt: skip
    assert code == 0


def test_since_an_unknown_run_is_named(tmp_path):
    parm_command(
        "monitor", SAMPLE / "day1.csv", "--session", tmp_path / "s", "--out", tmp_path / "o"
    )
    code, output = parm_command("monitor", "--session", tmp_path / "s", "--out", tmp_path / "o",
                                "--since", "nope")  # fmt: skip
    assert code == 2 and "no such run" in output


def test_hostile_names_are_inert_in_every_file(tmp_path):
    hostile = "B" + OSC52 + MARKUP[:9]
    frames = live_reads(days=4, answers_per_day=30, seed=4, drift=(hostile, 3, 0.8),
                        items=("q1", "=cmd|' /C calc'!A0" + HTML[:20]),
                        raters=("A", hostile, "@C", "D"))  # fmt: skip
    paths = []
    for k, frame in enumerate(frames):
        paths.append(tmp_path / f"d{k}.csv")
        frame.to_csv(paths[-1], index=False)
    config = live_config()
    for path in paths:
        done = workspace.monitor(tmp_path / "s", [path], config, out=tmp_path / "o")
    assert done.result.alerts
    for name in ("monitor.csv", "alerts.csv", "backreads.csv", "third_reads.csv",
                 "rater_status.csv"):  # fmt: skip
        check_csv_inert(tmp_path / "o" / name)
    check_html_inert((tmp_path / "o" / "report.html").read_text(encoding="utf-8"))


def test_the_actions_hook_gets_the_reads_and_the_run_and_its_status_changes_are_alerts(tmp_path):
    frames = live_reads(days=2, answers_per_day=10, seed=1)
    seen = []

    def actions(reads, result):
        seen.append((len(reads), result.run_id))
        status = "watch" if len(seen) > 1 else "qualified"
        return ActionsResult((("backreads.csv", "x\n"),), {("A", "q1"): (status, "rule", 0.5)})

    def add(frame, k):
        return [FileInput(tmp_path / f"d{k}", str(k), frame, live_config(), ("2026-05-01", ""))]

    first = monitor_session(tmp_path / "s", add(frames[0], 0), live_config(), actions=actions)
    second = monitor_session(tmp_path / "s", add(frames[1], 1), live_config(), actions=actions)
    assert seen == [
        (len(frames[0]), first.run_id),
        (len(frames[0]) + len(frames[1]), second.run_id),
    ]
    status = [a for a in second.alerts if a.kind == "rater_status"]
    assert [(a.rater, a.item) for a in status] == [("A", "q1")] and "qualified to watch" in status[
        0
    ].message
    assert second.actions.files == (("backreads.csv", "x\n"),)
