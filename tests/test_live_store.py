"""engine.live.intake.store and engine.live.intake.lock: a file added twice (or an overlapping export) changes
nothing, in any order; a changed score or text is kept as a conflict, never replaced; a file goes
in whole or not at all, even when its run is killed; a damaged database is reported and left as
it is; two runs on one session wait for each other."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest
from helpers import ROOT, live_config, live_reads
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.errors import SessionError
from engine.live.intake import store as store_module
from engine.live.intake.lock import session_lock
from engine.live.intake.reading import read_file_reads
from engine.live.intake.store import DATABASE_NAME, open_store

CONFIG = live_config()
DAYS = live_reads(days=3, answers_per_day=6, seeds_per_rater=1, seed=3)


def file_reads(frame, name="day.csv"):
    return read_file_reads(frame, CONFIG, name, ("2026-05-01", "--period"))


def contents(store):
    """The session as sets: what adding files may change."""
    reads = set(store.query("SELECT item, answer, rater, time_key, day, half, score, kind "
                            "FROM reads"))  # fmt: skip
    answers = set(store.query("SELECT item, answer, text, expert FROM answers"))
    return reads, answers


def test_adding_a_file_twice_changes_nothing(tmp_path):
    with open_store(tmp_path / "s") as store:
        first = store.add(file_reads(DAYS[0]), "d1", "x", "run1")
        before = contents(store)
        again = store.add(file_reads(DAYS[0]), "d1", "x", "run2")
        assert contents(store) == before
    assert (first.reads, first.repeated) == (len(DAYS[0]), 0)
    assert (again.reads, again.answers, again.repeated, again.conflicts) == (0, 0, len(DAYS[0]), 0)


@settings(max_examples=8, deadline=None)
@given(st.permutations([0, 1, 2, 3]), st.lists(st.integers(0, 3), max_size=3))
def test_any_order_and_overlap_of_the_same_files_gives_the_same_session(
    tmp_path_factory, order, extra
):
    """Day files and a cumulative export of all three (file 3), in any order, repeated."""
    files = [*DAYS, pd.concat(DAYS, ignore_index=True)]
    folder = tmp_path_factory.mktemp("s")
    with open_store(folder) as store:
        for k in [*order, *extra]:
            store.add(file_reads(files[k]), f"f{k}", str(k), "run")
        assert contents(store) == REFERENCE


with open_store(__import__("tempfile").mkdtemp()) as _store:
    for _frame in DAYS:
        _store.add(file_reads(_frame), "ref", "ref", "run")
    REFERENCE = contents(_store)


def test_a_changed_score_or_text_is_kept_as_a_conflict_and_the_first_stays(tmp_path):
    changed = DAYS[0].copy()
    changed.loc[0, "score"] = str((int(changed.loc[0, "score"]) + 1) % 3)
    rows = changed["id"] == changed.loc[1, "id"]
    changed.loc[rows, "answer"] = "another text"
    with open_store(tmp_path / "s") as store:
        store.add(file_reads(DAYS[0]), "d1", "x", "run1")
        before = contents(store)
        added = store.add(file_reads(changed), "d1b", "y", "run2")
        assert contents(store) == before
        kinds = sorted(c[0] for c in store.conflicts("run2"))
    assert added.conflicts == 2 and kinds == ["score", "text"]


def test_a_kind_declared_later_fills_in_a_guessed_one(tmp_path):
    declared = DAYS[0].assign(kind="second")
    config = live_config(kind_column="kind")
    with open_store(tmp_path / "s") as store:
        store.add(file_reads(DAYS[0]), "d1", "x", "run1")
        store.add(read_file_reads(declared, config, "k", ("2026-05-01", "")), "k", "k", "run2")
        kinds = {k for (k,) in store.query("SELECT DISTINCT kind FROM reads")}
    assert kinds == {"second"}


def test_a_failure_inside_a_files_transaction_leaves_the_session_as_it_was(tmp_path, monkeypatch):
    with open_store(tmp_path / "s") as store:
        store.add(file_reads(DAYS[0]), "d1", "x", "run1")
        before = contents(store)

        def broken(*args):
            raise RuntimeError("stopped half-way")

        monkeypatch.setattr(store_module, "_add_answers", broken)
        with pytest.raises(RuntimeError):
            store.add(file_reads(DAYS[1]), "d2", "y", "run2")
        assert contents(store) == before
        assert not store.conn.in_transaction


def test_a_damaged_database_is_reported_and_never_rebuilt(tmp_path):
    folder = tmp_path / "s"
    with open_store(folder) as store:
        store.add(file_reads(DAYS[0]), "d1", "x", "run1")
    path = folder / DATABASE_NAME
    damaged = bytearray(path.read_bytes())
    damaged[:16] = b"not a database!!"
    path.write_bytes(bytes(damaged))
    with pytest.raises(SessionError, match="damaged|not a parm session"):
        with open_store(folder) as store:
            store.query("SELECT count(*) FROM reads")
    assert path.read_bytes() == bytes(damaged)


def test_another_programs_database_of_that_name_is_refused(tmp_path):
    import sqlite3

    (tmp_path / "s").mkdir()
    with sqlite3.connect(tmp_path / "s" / DATABASE_NAME) as conn:
        conn.execute("CREATE TABLE notes (x)")
    with pytest.raises(SessionError, match="not a parm session"):
        open_store(tmp_path / "s")
    with pytest.raises(SessionError, match="not a parm session"):
        open_store(tmp_path / "elsewhere", create=False)


def _hold(folder, seconds, started):
    with session_lock(folder):
        started.set()
        time.sleep(seconds)


@pytest.mark.slow
def test_two_runs_on_one_session_wait_for_each_other(tmp_path):
    context = multiprocessing.get_context("spawn")
    started = context.Event()
    holder = context.Process(target=_hold, args=(tmp_path, 1.0, started))
    holder.start()
    try:
        assert started.wait(30)
        waited, begun = [], time.monotonic()
        with session_lock(tmp_path, on_wait=lambda: waited.append(True)):
            took = time.monotonic() - begun
    finally:
        holder.join(10)
    assert waited == [True] and took > 0.3


KILLED = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    from helpers import live_config, live_reads
    from engine.live.intake import store as s
    from engine.live.intake.reading import read_file_reads
    days = live_reads(days=2, answers_per_day=6, seed=3)
    reads = [read_file_reads(d, live_config(), "f", ("2026-05-01", "")) for d in days]
    slow = s._add_answers
    def paused(*args):
        out = slow(*args)
        print("inside", flush=True)
        time.sleep(30)
        return out
    with s.open_store({folder!r}) as store:
        store.add(reads[0], "f1", "a", "run")
        print("first", flush=True)
        s._add_answers = paused
        store.add(reads[1], "f2", "b", "run")
""")


@pytest.mark.slow
@pytest.mark.parametrize("when", ["first", "inside"])
def test_killing_a_run_keeps_whole_files_only(tmp_path, when):
    folder = tmp_path / "s"
    script = KILLED.format(tests=str(ROOT / "tests"), folder=str(folder))
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                               env=env)  # fmt: skip
    for line in process.stdout:
        if line.strip() == when:
            break
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    with open_store(folder) as store:
        (reads,), = store.query("SELECT count(*) FROM reads")  # fmt: skip
        runs = store.query("SELECT DISTINCT file FROM reads")
    assert reads == len(live_reads(days=2, answers_per_day=6, seed=3)[0])
    assert runs == [("f1",)]
