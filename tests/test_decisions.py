"""The decision store (engine/saved/decisions.py): decisions are saved as they are made, come back
when the same file is opened again, never attach to a changed answer, take only a score of the
response's item, survive an older schema or a killed process, and another connection's
decisions are noticed."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import (
    make_responses,
    record,
    run_frame,
    session_config,
    session_frame,
)

from engine.core.errors import ParmError, ReviewError
from engine.core.files import file_digest
from engine.input.responses import Responses
from engine.results.decision import RunContext, text_hash
from engine.saved import decision_db
from engine.saved.decision_db import SCHEMA_VERSION, connect
from engine.saved.decisions import open_store


def test_recorded_decisions_can_be_read_back_and_cleared(source, database):
    responses = make_responses()
    with open_store(source, responses, database) as store:
        kept = record(store, responses, 0, "keep")
        changed = record(store, responses, 1, "change", "2", note="clearly a 2")
        record(store, responses, 2, "unsure")
        assert store.get(1) == kept
        assert store.get(2).new_score == "2" and store.get(2).note == "clearly a 2"
        assert store.get(2) == changed
        assert list(store.all()) == [1, 2, 3]
        store.clear(3)
        assert store.get(3) is None
        assert list(store.all()) == [1, 2]


def test_a_new_decision_replaces_the_earlier_one_for_that_response(source, database):
    responses = make_responses()
    with open_store(source, responses, database) as store:
        record(store, responses, 4, "keep")
        record(store, responses, 4, "unsure", note="ask Sam")
        assert store.get(5).action == "unsure"
        assert len(store.all()) == 1


def test_reopening_the_same_file_brings_its_decisions_back(source, database, monkeypatch):
    responses = make_responses()
    with open_store(source, responses, database) as store:
        record(store, responses, 3, "change", "2", note="see rubric")
    # The same file reached through another spelling of its path is the same file.
    monkeypatch.chdir(source.parent)
    with open_store(Path(source.name), responses, database) as store:
        decision = store.get(4)
        assert decision.action == "change" and decision.new_score == "2"
        assert decision.note == "see rubric"
        assert store.stale == []


def test_decisions_belong_to_their_file(source, database, tmp_path):
    responses = make_responses()
    other = tmp_path / "other.csv"
    other.write_text("x\n")
    with open_store(source, responses, database) as store:
        record(store, responses, 0, "keep")
    with open_store(other, responses, database) as store:
        assert store.all() == {}


def test_a_decision_does_not_attach_to_a_changed_answer(source, database):
    responses = make_responses()
    with open_store(source, responses, database) as store:
        record(store, responses, 0, "keep")
        record(store, responses, 1, "unsure")
    texts = list(responses.texts)
    texts[0] = "a different answer now sits in row 1"
    changed = make_responses(texts)
    with open_store(source, changed, database) as store:
        assert store.get(1) is None
        assert store.get(2).action == "unsure"
        assert [d.row for d in store.stale] == [1]
        assert "row" in store.stale_message() and "1" in store.stale_message()


def test_a_decision_made_before_misread_characters_were_restored_still_applies(source, database):
    """An earlier parm read ASAP's "donâ\x80\x99t" as "donâ\ufffd\ufffdt"; a decision made on
    that answer is on the same answer now that it reads "don’t" (engine.core.text.
    repair_misread), and still never on another one."""
    from engine.core.text import repair_misread, sanitise

    raw = ["I don\u00e2\x80\x99t know", "it\u00e2\x80\x99s \u00e2\x80\x9cfine\u00e2\x80\x9d"]
    texts = [f"answer number {i}" for i in range(12)]
    before = make_responses([sanitise(t)[0] for t in raw] + texts[2:])
    with open_store(source, before, database) as store:
        record(store, before, 0, "keep")
        record(store, before, 1, "change", "2")
    now = make_responses([sanitise(repair_misread(t)[0])[0] for t in raw] + texts[2:])
    assert now.texts[:2] == ["I don’t know", "it’s “fine”"]
    with open_store(source, now, database) as store:
        assert store.get(1).action == "keep" and store.get(2).new_score == "2"
        assert store.stale == []
    other = make_responses(["I don’t know either", *now.texts[1:]])
    with open_store(source, other, database) as store:
        assert store.get(1) is None and [d.row for d in store.stale] == [1]


def test_invalid_decisions_are_refused_with_a_message(source, database):
    responses = make_responses()
    with open_store(source, responses, database) as store:
        with pytest.raises(ReviewError, match="Unknown action"):
            record(store, responses, 0, "maybe")
        with pytest.raises(ReviewError, match="not one of the labels"):
            record(store, responses, 0, "change", "7")
        # Row 1 has human score "0"; changing it to "0" is no change.
        with pytest.raises(ReviewError, match="human score already"):
            record(store, responses, 0, "change", "0")
        with pytest.raises(ReviewError, match="only a 'change'"):
            record(store, responses, 0, "keep", "1")
        with pytest.raises(ReviewError, match="Row 99"):
            store.record(99, "S099", "x", "keep")
        with pytest.raises(ParmError, match="different response"):
            store.record(1, responses.ids[0], "not the text", "keep")
        assert store.all() == {}


def _write_old_database(path: Path, source: Path, responses: Responses, old: tuple) -> None:
    """A decisions database of an earlier schema (its statements), holding one decision on the
    answer of the given row."""
    statements, decision, row = old
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    where = (str(source.resolve()), responses.ids[row - 1], text_hash(responses.texts[row - 1]))
    conn.execute(decision, where)
    conn.commit()
    conn.close()


# The first schema: no meta table, no note column.
SCHEMA_0 = (
    [
        "CREATE TABLE decisions (source TEXT NOT NULL, row INTEGER NOT NULL, "
        "response_id TEXT NOT NULL, text_hash TEXT NOT NULL, action TEXT NOT NULL, "
        "new_score TEXT, decided_at TEXT NOT NULL, PRIMARY KEY (source, row))"
    ],
    "INSERT INTO decisions VALUES (?, 2, ?, ?, 'change', '0', '2026-01-01T00:00:00+00:00')",
    2,
)
# Schema 1: a meta table and notes, no record of the run a decision was made on.
SCHEMA_1 = (
    [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
        "INSERT INTO meta VALUES ('schema_version', '1')",
        "CREATE TABLE decisions (source TEXT NOT NULL, row INTEGER NOT NULL, "
        "response_id TEXT NOT NULL, text_hash TEXT NOT NULL, action TEXT NOT NULL, "
        "new_score TEXT, note TEXT NOT NULL DEFAULT '', decided_at TEXT NOT NULL, "
        "PRIMARY KEY (source, row))",
    ],
    "INSERT INTO decisions VALUES (?, 3, ?, ?, 'keep', NULL, 'checked', "
    "'2026-02-01T00:00:00+00:00')",
    3,
)


def test_an_older_database_is_migrated_and_keeps_its_decisions(source, database):
    responses = make_responses()
    _write_old_database(database, source, responses, SCHEMA_0)
    with open_store(source, responses, database) as store:
        decision = store.get(2)
        assert decision.action == "change" and decision.new_score == "0"
        assert decision.note == ""
        record(store, responses, 1, "change", "0", note="now with a note")
    conn = sqlite3.connect(database)
    version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    conn.close()
    assert int(version[0]) == SCHEMA_VERSION
    with open_store(source, responses, database) as store:
        assert store.get(2).note == "now with a note"


def test_a_schema_1_database_is_migrated_and_new_decisions_record_their_run(source, database):
    responses = make_responses()
    _write_old_database(database, source, responses, SCHEMA_1)
    context = RunContext("run-b", "abc123def456", "2", 0.42)
    with open_store(source, responses, database) as store:
        earlier = store.get(3)
        assert (earlier.action, earlier.note, earlier.context) == ("keep", "checked", None)
        store.record(
            int(responses.rows[0]), responses.ids[0], responses.texts[0], "keep", context=context
        )
    with open_store(source, responses, database) as store:
        assert store.get(1).context == context
        assert store.get(3).context is None
    conn = sqlite3.connect(database)
    version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    conn.close()
    assert int(version[0]) == SCHEMA_VERSION == 6


def test_a_corrupt_database_gives_an_error_naming_it(source, database):
    database.parent.mkdir(parents=True)
    database.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ParmError, match=str(database).replace("\\", "\\\\")):
        open_store(source, make_responses(), database)


def test_a_database_from_a_newer_parm_is_refused(source, database):
    database.parent.mkdir(parents=True)
    conn = sqlite3.connect(database)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '99')")
    conn.commit()
    conn.close()
    with pytest.raises(ReviewError, match="newer parm"):
        open_store(source, make_responses(), database)


def test_the_store_lives_under_the_data_dir_by_default(source, tmp_path, monkeypatch):
    monkeypatch.setenv("PARM_DATA_DIR", str(tmp_path / "elsewhere"))
    with open_store(source, make_responses()) as store:
        assert store.path == tmp_path / "elsewhere" / "decisions.sqlite3"
        assert store.path.exists()


CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    from pathlib import Path
    from engine.input.responses import Responses
    from engine.saved.decisions import open_store

    n = 400
    responses = Responses(
        texts=[f"answer {i}" for i in range(n)], scores=np.arange(n) % 3,
        labels=("0", "1", "2"), ids=[f"S{i}" for i in range(n)], rows=np.arange(1, n + 1),
    )
    store = open_store(Path(sys.argv[1]), responses, Path(sys.argv[2]))
    for i in range(n):
        store.record(i + 1, responses.ids[i], responses.texts[i], "unsure", note=f"n{i}")
        sys.stdout.write(f"recorded {i + 1}\\n")
        sys.stdout.flush()
    """
)


def test_every_decision_reported_as_recorded_survives_a_killed_process(source, database):
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(source), str(database)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    reported = []
    for line in child.stdout:
        reported.append(int(line.split()[1]))
        if len(reported) == 25:
            # Killed mid-stream: the child is busy recording the next decisions.
            child.send_signal(signal.SIGKILL)
            break
    child.wait(timeout=30)
    child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert reported == list(range(1, 26))
    n = 400
    responses = Responses(
        texts=[f"answer {i}" for i in range(n)],
        scores=np.arange(n) % 3,
        labels=("0", "1", "2"),
        ids=[f"S{i}" for i in range(n)],
        rows=np.arange(1, n + 1),
    )
    with open_store(source, responses, database) as store:
        saved = store.all()
    assert set(reported) <= set(saved)
    assert all(saved[row].note == f"n{row - 1}" for row in reported)


def test_a_closed_store_refuses_decisions_with_a_message(source, database):
    responses = make_responses()
    store = open_store(source, responses, database)
    store.close()
    with pytest.raises(ReviewError, match="not recorded"):
        record(store, responses, 0, "keep")
    assert store.get(1) is None


def test_a_change_decision_takes_only_a_score_on_the_items_scale(tmp_path):
    from engine.core.errors import ReviewError
    from engine.saved.decisions import open_store

    frame, vectors = session_frame()
    review = run_frame(frame, vectors, session_config()).review
    store = open_store(tmp_path / "s.csv", review.responses, tmp_path / "d.db", review.on_scale)
    a = next(i for i, item in enumerate(review.items) if item == "A")
    row, rid, text = (
        int(review.responses.rows[a]),
        review.responses.ids[a],
        review.responses.texts[a],
    )
    human = review.responses.labels[review.responses.scores[a]]
    with pytest.raises(ReviewError, match="not one of the labels 0, 1, 2"):
        store.record(row, rid, text, "change", "3")
    other = next(label for label in ("0", "1", "2") if label != human)
    assert store.record(row, rid, text, "change", other).new_score == other
    store.close()


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


def test_a_decision_put_back_is_the_one_that_was_there(source, database):
    """Undo: an earlier decision restored as it was, its time and run included, also after
    reopening the store."""
    responses = make_responses()
    context = RunContext("run-1", "abc", "2", 0.75)
    with open_store(source, responses, database) as store:
        first = store.record(1, "S000", responses.texts[0], "change", "2", "two marks", context)
        record(store, responses, 0, "keep")
        assert store.restore(first) == first
        assert store.get(1) == first
    with open_store(source, responses, database) as store:
        assert store.get(1) == first
        with pytest.raises(ReviewError, match="Row 99"):
            store.restore(first.__class__(**{**first.__dict__, "row": 99}))


# -- a review follows its file's bytes ------------------------------------------------------------
DIGEST = "a" * 64
EDITED = "b" * 64


def test_a_copy_or_a_move_of_the_file_opens_its_review(tmp_path, database):
    responses = make_responses()
    first, copy = tmp_path / "one" / "answers.csv", tmp_path / "two" / "answers.csv"
    with open_store(first, responses, database, digest=DIGEST) as store:
        record(store, responses, 3, "change", "2", note="see rubric")
        assert store.found_elsewhere() is None
    with open_store(copy, responses, database, digest=DIGEST) as store:
        assert store.get(4).new_score == "2" and store.get(4).note == "see rubric"
        assert str(first) in store.found_elsewhere() and "1 decision(s)" in store.found_elsewhere()
        record(store, responses, 5, "keep")
    with open_store(first, responses, database, digest=DIGEST) as store:  # one review, shared
        assert sorted(store.all()) == [4, 6] and store.found_elsewhere() is None


def test_a_file_edited_in_place_keeps_its_review(source, database):
    responses = make_responses()
    with open_store(source, responses, database, digest=DIGEST) as store:
        record(store, responses, 0, "keep")
    edited = make_responses([*make_responses().texts[:11], "a late answer, typed again"])
    with open_store(source, edited, database, digest=EDITED) as store:
        assert list(store.all()) == [1]
        assert [d.row for d in store.stale] == []
    other = make_responses(["something else entirely"] * 12)
    with open_store(source, other, database, digest="c" * 64) as store:  # another file there
        assert store.all() == {} and [d.row for d in store.stale] == [1]


def test_a_database_written_by_the_previous_parm_migrates_with_nothing_lost(tmp_path):
    """tests/data/decisions-schema2.sqlite3 was written by parm before schema 3 (its
    engine/audit/decisions.py) for /srv/scoring/answers.csv: three decisions, two with their
    run."""
    database = tmp_path / "decisions.sqlite3"
    database.write_bytes(
        (Path(__file__).parent / "data" / "decisions-schema2.sqlite3").read_bytes()
    )
    responses = make_responses()
    with open_store("/srv/scoring/answers.csv", responses, database, digest=DIGEST) as store:
        decisions = store.all()
        assert sorted(decisions) == [1, 5, 9]
        assert (decisions[1].action, decisions[1].note) == ("keep", "checked twice")
        assert (decisions[5].new_score, decisions[5].note) == ("2", "rubric point 3")
        assert decisions[5].context == RunContext(
            "20261126T101500Z-a1b2c3", "0123456789ab", "2", 0.91
        )
        assert decisions[9].context is None and decisions[9].reviewer == ""
        assert store.key == "/srv/scoring/answers.csv"
    # Once opened with its bytes, a copy anywhere finds that review too.
    with open_store(tmp_path / "copy.csv", responses, database, digest=DIGEST) as store:
        assert sorted(store.all()) == [1, 5, 9]
        assert "/srv/scoring/answers.csv" in store.found_elsewhere()
    conn = sqlite3.connect(database)
    assert conn.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)
    assert conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0] == 3
    conn.close()


def test_a_decision_names_its_reviewer(source, database, monkeypatch):
    responses = make_responses()
    with open_store(source, responses, database, reviewer="ana") as store:
        assert record(store, responses, 0, "keep").reviewer == "ana"
    monkeypatch.setattr("getpass.getuser", lambda: "sam")
    with open_store(source, responses, database) as store:
        assert store.reviewer == "sam"
        assert store.get(1).reviewer == "ana"


def test_another_reviewers_differing_decision_is_kept_until_settled(source, database):
    from engine.results.decision import Decision

    responses = make_responses()
    with open_store(source, responses, database, reviewer="ana") as store:
        record(store, responses, 2, "keep")
        theirs = Decision(3, "S002", "change", "1", "too generous", "2026-11-20T10:00:00+00:00",
                          None, "ben")  # fmt: skip
        store.add_conflict(theirs, responses.texts[2], "ben/decisions.csv")
        assert store.conflicts(3) == [theirs] and store.known_conflict(theirs)
    with open_store(source, responses, database, reviewer="ana") as store:
        assert store.conflicts(3) == [theirs]  # kept on disk
        record(store, responses, 2, "change", "1", note="agreed with Ben")
        assert store.conflicts(3) == []
    with open_store(source, responses, database) as store:
        assert store.conflicts(3) == [] and store.known_conflict(theirs)  # settled, not lost


def test_the_review_offers_the_files_whole_scale_up_to_the_items_highest_score():
    """Mohler's question 3.2 has 1, 3, 4 and 5: the review offers every half point of the
    file's scale (0 to 5) up to 5; an item scored 0-2 in a file of 0-3 items is not offered 3."""
    from dataclasses import replace

    from engine.input.scale import file_scale, pool_responses

    assert file_scale(("1", "3", "4", "5")) == ("1", "2", "3", "4", "5")
    assert file_scale(("0", "0.5", "5")) == tuple(str(v / 2).removesuffix(".0") for v in range(11))
    assert file_scale(("low", "high"), ("low", "mid", "high")) == ("low", "mid", "high")
    assert file_scale(("apple", "pear")) is None
    base = make_responses()
    halves = replace(base, labels=("0", "0.5", "5"))
    gapped = replace(base, labels=("1", "3", "4"))
    pooled, _, on_scale = pool_responses([halves, gapped])
    assert pooled.labels == tuple(str(v / 2).removesuffix(".0") for v in range(11))
    assert on_scale[len(base) :].sum(axis=1).max() == 9  # 0 to 4 in half points, not 4.5 or 5
    nominal = replace(base, labels=("apple", "pear", "plum"), ordered=False)
    _, _, on_scale = pool_responses([nominal, replace(nominal, labels=("fig", "kiwi", "lime"))])
    assert on_scale.sum(axis=1).tolist() == [3] * 24


# -- other parm processes on the same database ----------------------------------------------------
CONTEXT = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


def _decide_elsewhere(path: str, database: str, digest: str) -> None:
    """Another parm process: opens the review of the file at `path` and decides on row 3."""
    responses = make_responses()
    with open_store(Path(path), responses, Path(database), digest=digest) as store:
        record(store, responses, 2, "unsure", note="the other window")


def _in_another_process(target, *args) -> None:
    child = CONTEXT.Process(target=target, args=args)
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0


@pytest.mark.parametrize("other", ["another file", "the same file", "a copy of the file"])
def test_only_another_writer_of_the_same_review_is_news(tmp_path, database, other):
    mine = tmp_path / "mine.csv"
    mine.write_text("id,answer,score\n1,roots,0\n")
    target = {"another file": tmp_path / "theirs.csv", "the same file": mine,
              "a copy of the file": tmp_path / "copy" / "mine.csv"}[other]  # fmt: skip
    target.parent.mkdir(exist_ok=True)
    if target != mine:
        target.write_text(mine.read_text() if other == "a copy of the file" else "id\n2\n")
    responses = make_responses()
    with open_store(mine, responses, database, digest=file_digest(mine)) as store:
        record(store, responses, 0, "keep")
        _in_another_process(_decide_elsewhere, str(target), str(database), file_digest(target))
        same_review = other != "another file"
        assert store.changed_elsewhere() is same_review
        assert (store.get(3) is not None) is same_review
        assert not store.changed_elsewhere()  # nothing new since
        assert store.get(1).action == "keep"


def _open_fresh(database: str, barrier, results) -> None:
    barrier.wait(timeout=30)
    try:
        connect(Path(database)).close()
        results.put("ok")
    except ReviewError as exc:
        results.put(str(exc))


def test_processes_creating_the_database_at_once_all_get_it(tmp_path):
    processes = 4
    for attempt in range(6):
        database = tmp_path / f"try{attempt}" / "decisions.sqlite3"
        barrier, results = CONTEXT.Barrier(processes), CONTEXT.Queue()
        children = [
            CONTEXT.Process(target=_open_fresh, args=(str(database), barrier, results))
            for _ in range(processes)
        ]
        for child in children:
            child.start()
        got = [results.get(timeout=60) for _ in children]
        for child in children:
            child.join(timeout=60)
        assert got == ["ok"] * processes


def _hold(database: Path, seconds: float, begin: str) -> threading.Thread:
    """Another program's connection holding the database's lock for `seconds` (in a thread)."""
    holder = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    holder.execute(begin)

    def release() -> None:
        time.sleep(seconds)
        holder.execute("ROLLBACK")
        holder.close()

    thread = threading.Thread(target=release)
    thread.start()
    return thread


@pytest.mark.parametrize("begin", ["BEGIN IMMEDIATE", "BEGIN EXCLUSIVE"])
def test_a_lock_let_go_within_the_wait_is_waited_for(tmp_path, source, begin):
    # Held while it is being created: turning it to WAL under another's write lock fails at
    # once, without sqlite3's busy handler (what two parm processes starting together hit).
    fresh = tmp_path / "fresh" / "decisions.sqlite3"
    fresh.parent.mkdir()
    holding = _hold(fresh, 0.3, begin)
    connect(fresh).close()
    holding.join()
    responses = make_responses()
    with open_store(source, responses, fresh) as store:
        holding = _hold(fresh, 0.3, "BEGIN IMMEDIATE")  # a writer of another review
        record(store, responses, 0, "keep")
        holding.join()
        assert store.get(1).action == "keep"


def test_a_database_held_past_the_wait_is_in_use_never_damaged(tmp_path, source, monkeypatch):
    monkeypatch.setattr(decision_db, "BUSY_WAIT_SECONDS", 0.3)
    database = tmp_path / "decisions.sqlite3"
    responses = make_responses()
    with open_store(source, responses, database) as store:
        holding = _hold(database, 2.0, "BEGIN IMMEDIATE")
        with pytest.raises(ReviewError) as saving:
            record(store, responses, 0, "keep")
        with pytest.raises(ReviewError) as opening:  # it notes the file it opens: a write
            open_store(source, responses, database, digest=file_digest(source))
        holding.join()
        record(store, responses, 0, "keep")  # let go: saved as ever
    for caught in (saving, opening):
        message = str(caught.value)
        assert "is in use" in message and "not damaged" in message, message
        assert "cannot be read" not in message and "Move it aside" not in message
    assert "It was not recorded" in str(saving.value)


def test_a_schema_4_database_keeps_its_typed_reads_as_resolutions(source, database):
    """Schema 5 adds the kind of a read typed in the review; those typed before were the
    review's third reads."""
    responses = make_responses()
    with open_store(source, responses, database) as store:
        store.reads.add(int(responses.rows[0]), responses.ids[0], responses.texts[0], "Zoe", "1")
    conn = sqlite3.connect(database)
    conn.execute("ALTER TABLE added_reads DROP COLUMN kind")
    conn.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with open_store(source, responses, database) as store:
        (read,) = store.added_reads()
        assert (read.rater, read.score, read.kind) == ("Zoe", "1", "resolution")
        store.reads.add(int(responses.rows[1]), responses.ids[1], responses.texts[1], "Zoe", "2",
                        "backread")  # fmt: skip
    with open_store(source, responses, database) as store:
        assert [r.kind for r in store.added_reads()] == ["resolution", "backread"]
        with pytest.raises(ReviewError, match="a typed read is one of"):
            store.reads.add(int(responses.rows[2]), responses.ids[2], responses.texts[2], "Zoe",
                            "0", "gossip")  # fmt: skip
