"""engine.live.actions and engine.live.ledger: each monitor run's lists (backreads.csv,
third_reads.csv, rater_status.csv) from the session's reads alone, reproducible from the run;
the third reads assigned by a run followed up by the next (read by their rater, no longer
needed, still open with their rater), the cap counting those still open; backreads drawn from
the latest day; a read's risk from the consensus of the reads."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest
from helpers import live_config, live_reads

from engine import workspace
from engine.actions.ledger import CONSENSUS, READ_ONCE, RESOLUTION
from engine.actions.rules import STATUSES
from engine.live.intake.session_reads import from_rows
from engine.live.ledger import live_ledger
from engine.live.monitor import FileInput, monitor_session
from engine.outputs.declared_actions import ACTION_TABLES


def _write(tmp_path, frames, name="d"):
    paths = []
    for k, frame in enumerate(frames):
        paths.append(tmp_path / f"{name}{k}.csv")
        frame.to_csv(paths[-1], index=False)
    return paths


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """Three days of a simulated session (a drifting rater from day 2, validity papers), each
    day added by its own run."""
    folder = tmp_path_factory.mktemp("actions")
    frames = live_reads(days=3, answers_per_day=40, seed=7, drift=("C", 1, 0.6),
                        seeds_per_rater=4)  # fmt: skip
    runs = [workspace.monitor(folder / "s", [path], live_config(), out=folder / f"o{k}").result
            for k, path in enumerate(_write(folder, frames))]  # fmt: skip
    return folder, frames, runs


def test_each_run_writes_the_three_lists_with_their_columns_and_run(session):
    folder, _, runs = session
    for k, run in enumerate(runs):
        for table in ACTION_TABLES:
            text = (folder / f"o{k}" / table.file).read_text(encoding="utf-8")
            header = next(csv.reader(io.StringIO(text)))
            assert header == table.header + ["run_id"]
            assert {row["run_id"] for row in _rows(text)} <= {run.run_id}
        statuses = _rows((folder / f"o{k}" / "rater_status.csv").read_text(encoding="utf-8"))
        read = {(r, i) for r, i in zip(run.reads.rater, run.reads.item)}
        assert {(s["rater"], s["item"]) for s in statuses} == {
            (run.reads.raters[r], run.reads.items[i]) for r, i in read
        }
        assert {s["status"] for s in statuses} <= set(STATUSES)


def test_the_lists_are_the_same_when_the_run_is_made_again(session):
    """No read added: every status stays (none moves from retrain to stop on the same reads),
    the same backreads, the same answers with the same raters."""
    folder, _, runs = session
    again = monitor_session(folder / "s", [], live_config(), record=False)
    assert again.actions.lists.statuses == runs[-1].actions.lists.statuses
    assert again.actions.lists.backreads == runs[-1].actions.lists.backreads
    # The same answers and raters; what the last run assigned is now "assigned before".
    before = runs[-1].actions.lists.third_reads
    now = again.actions.lists.third_reads
    assert [(t.id, t.assigned_rater) for t in now] == [(t.id, t.assigned_rater) for t in before]
    for old, new in zip(before, now):
        if old.assigned_rater:
            assert new.why.endswith("still open") and new.why.startswith(old.why.split(";")[0])


def test_backreads_are_drawn_from_the_latest_day(session):
    _, frames, runs = session
    for frame, run in zip(frames, runs):
        day = set(zip(frame["rater"], frame["id"], frame["item"]))
        chosen = run.actions.lists.backreads
        assert chosen and all((b.rater, b.id, b.item) in day for b in chosen)


def test_no_rater_holds_more_third_reads_than_the_cap(session):
    _, _, runs = session
    cap = live_config().third_read_cap
    for run in runs:
        held = pd.Series([t.assigned_rater for t in run.actions.lists.third_reads
                          if t.assigned_rater])  # fmt: skip
        assert held.value_counts().max() <= cap


def test_third_reads_are_followed_up_the_next_morning(tmp_path):
    """Day 1's third reads: three read by their rater on day 2 close (answered), the rest
    stay with their rater; the session remembers the open ones with the run that assigned
    them."""
    config = live_config(third_read_cap=500)
    day1 = live_reads(days=1, answers_per_day=60, seed=3, accuracy=0.6)[0]
    (path,) = _write(tmp_path, [day1])
    first = workspace.monitor(tmp_path / "s", [path], config, out=tmp_path / "o1").result
    assigned = [t for t in first.actions.lists.third_reads if t.assigned_rater]
    assert len(assigned) >= 5
    answered = assigned[:3]
    rows = [(t.id, t.item, f"resolution of {t.id}", t.assigned_rater, "1", "2026-05-05T10:00", "")
            for t in answered]  # fmt: skip
    day2 = pd.DataFrame(rows, columns=day1.columns)
    (path2,) = _write(tmp_path, [day2], "e")
    second = workspace.monitor(tmp_path / "s", [path2], config, out=tmp_path / "o2").result
    follow = second.actions.follow_up
    assert follow.answered == 3
    assert follow.answered + follow.no_longer_needed + follow.still_open + follow.reassigned == (
        len(assigned)
    )
    now = {(t.item, t.id): t for t in second.actions.lists.third_reads}
    assert not any((t.item, t.id) in now for t in answered)
    for t in assigned[3:]:
        kept = now.get((t.item, t.id))
        if kept is not None and kept.why.endswith("still open"):
            assert kept.assigned_rater == t.assigned_rater
    remembered = {(a["item"], a["id"]): a for a in second.record["assigned"]}
    for t in assigned[3:]:
        if (t.item, t.id) in remembered and remembered[(t.item, t.id)]["rater"] == t.assigned_rater:
            assert remembered[(t.item, t.id)]["run_id"] == first.run_id
    assert "3 read by their rater" in second.changes.markdown()


def _reads(rows):
    """SessionReads of (item, answer, rater, score, kind, day) rows (no time, no expert)."""
    full = [(i, a, r, s, k, d, "", None, "") for i, a, r, s, k, d in rows]
    return from_rows(sorted(full, key=lambda row: (row[0], row[1], row[5])))


def test_a_reads_risk_comes_from_the_consensus_or_from_the_single_read():
    rows = []
    for j in range(40):  # A and B agree on 40 answers; C reads 20 answers alone
        rows += [("q", f"a{j:02d}", "A", str(j % 3), "", "d1"),
                 ("q", f"a{j:02d}", "B", str(j % 3), "", "d1")]  # fmt: skip
    rows += [("q", f"b{j:02d}", "C", str(j % 3), "", "d1") for j in range(20)]
    rows += [("q", "c00", "A", "0", "", "d1"), ("q", "c00", "B", "2", "", "d1")]
    reads = _reads(rows)
    ledger = live_ledger(reads, {}, {}, seed=0)
    twice = ledger.evidence == CONSENSUS
    assert twice.sum() == 82 and (ledger.evidence[~twice] == READ_ONCE).all()
    assert np.all((ledger.wrong >= 0) & (ledger.wrong <= 1))
    # Agreeing reads are the consensus; the split answer's reads are the least sure.
    split = ledger.unit == ledger.items[0].ids.index("c00")
    assert ledger.wrong[twice & ~split].max() < 1e-9
    assert ledger.wrong[split].min() > 0.2
    assert np.all(ledger.risk[split] >= ledger.risk[twice & ~split].max())


def test_a_read_by_the_rater_assigned_its_third_read_is_its_resolution():
    rows = [("q", "a0", "A", "0", "", "d1"), ("q", "a0", "B", "2", "", "d1"),
            ("q", "a0", "C", "1", "", "d2"), ("q", "a1", "A", "1", "", "d1"),
            ("q", "a1", "C", "1", "", "d2")]  # fmt: skip
    ledger = live_ledger(_reads(rows), {}, {("q", "a0"): "C"}, seed=0)
    resolved = ledger.kind == RESOLUTION
    assert resolved.sum() == 1
    assert ledger.raters[ledger.rater[resolved][0]] == "C"
    assert ledger.items[0].ids[ledger.answer[resolved][0]] == "a0"


def test_a_rater_reading_an_answer_twice_counts_once_in_the_consensus():
    rows = [("q", "a0", "A", "0", "", "d1"), ("q", "a0", "A", "1", "", "d2"),
            ("q", "a0", "B", "1", "", "d1")]  # fmt: skip
    ledger = live_ledger(_reads(rows), {}, {}, seed=0)
    assert len(ledger) == 3 and np.isfinite(ledger.consensus_p).all()


def test_a_session_without_reads_has_no_lists(tmp_path):
    empty = monitor_session(tmp_path / "s", [], live_config())
    assert empty.actions.lists is None and empty.actions.files == ()


def test_a_file_input_with_a_kind_column_keeps_backreads_out_of_the_routed_reads(tmp_path):
    """A supervisor's backread of an answer settles it: it is not asked for a third read."""
    frame = live_reads(days=1, answers_per_day=30, seed=5, accuracy=0.5)[0]
    config = live_config()
    first = monitor_session(tmp_path / "s", [FileInput(tmp_path / "d0", "0", frame, config,
                                                       ("2026-05-04", ""))], config)  # fmt: skip
    needing = [t for t in first.actions.lists.third_reads]
    assert needing
    target = needing[0]
    back = pd.DataFrame([(target.id, target.item, "x", "Lead", "1", "2026-05-05T09:00", "",
                          "backread")], columns=[*frame.columns, "kind"])  # fmt: skip
    config2 = live_config(kind_column="kind")
    second = monitor_session(tmp_path / "s", [FileInput(tmp_path / "d1", "1", back, config2,
                                                        ("2026-05-05", ""))], config)  # fmt: skip
    assert (target.item, target.id) not in {
        (t.item, t.id) for t in second.actions.lists.third_reads
    }


def test_a_drift_alerted_this_morning_is_read_by_the_lists_as_a_drifting_verdict():
    """The rater with an open rater_drift alert is on watch for it, and the sign of the drift
    aims their backreads (engine.actions.backreads.pattern)."""
    from engine.audit.raters.verdicts import Verdict
    from engine.live.actions import with_drift
    from engine.live.alerts.alert import Alert

    drift = Alert("rater_drift", "", "Dev", "2026-05-08", 0.31, 0.1, "m", 0.0003, 52,
                  "rater_drift")  # fmt: skip
    other = Alert("item_target", "q1", "", "2026-05-08", 0.6, 0.8, "m", 0.001, 60, "item_target")
    lenient = Verdict("lenient", "leniency +0.10 points", 1.4)
    verdicts, signs = with_drift({"Dev": (lenient,), "Ana": ()}, [other, drift])
    assert signs == {"Dev": 1}
    assert [v.name for v in verdicts["Dev"]] == ["drifting", "lenient"]  # strongest first
    assert verdicts["Ana"] == ()
    assert "+0.31 points on 2026-05-08" in verdicts["Dev"][0].because
