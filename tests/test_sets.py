"""Output sets (engine.outputs.sets and engine.outputs.manifest): every file names its run, the
manifest lists them, the set is switched into place in one step where the file system allows
(a new folder renamed in, or two folders exchanged) and renamed in with signals held
elsewhere; files parm did not write are never touched; what killed runs left is tidied."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import run_frame, session_config, session_frame, small_result

from engine.core import files, signals
from engine.core.errors import ExportError, OutputsExist
from engine.outputs import sets
from engine.outputs.manifest import read_set
from engine.outputs.names import MANIFEST_FILE, OUTPUT_FILES, WARNINGS_FILE
from engine.outputs.write import write_files, write_outputs

N = 60


@pytest.fixture(scope="module")
def runs():
    """Two results of different runs (different run ids)."""
    return small_result(5), small_result(6)


def snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def csv_run_ids(path) -> set[str]:
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["run_id"] for row in csv.DictReader(handle)}


# -- what a set holds ---------------------------------------------------------------------------
def test_every_file_of_a_session_set_names_its_run_and_the_manifest_lists_them(tmp_path):
    from engine import workspace
    from engine.saved.decisions import open_store

    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config(rater_column="rater"))
    responses = session.review.responses
    names = [*OUTPUT_FILES, "items.csv", "raters.csv", "decisions.csv"]
    with open_store(tmp_path / "session.csv", responses, tmp_path / "d.sqlite3") as store:
        store.record(int(responses.rows[0]), responses.ids[0], responses.texts[0], "keep")
        written = workspace.export(session, tmp_path / "out", names, store)
    out = tmp_path / "out"
    assert [p.name for p in written] == [*names, MANIFEST_FILE]
    for name in ("predictions.csv", "tuning.csv", "items.csv", "raters.csv", "decisions.csv"):
        assert csv_run_ids(out / name) == {session.run_id}, name
    assert json.loads((out / "report.json").read_text())["run_id"] == session.run_id
    assert f"Run: {session.run_id}" in (out / "report.md").read_text()
    manifest = json.loads((out / MANIFEST_FILE).read_text())
    assert manifest["run_id"] == session.run_id
    assert [f["name"] for f in manifest["files"]] == names
    for listed in manifest["files"]:
        assert listed["bytes"] == (out / listed["name"]).stat().st_size
        assert listed["sha256"] == files.file_digest(out / listed["name"])
    state = read_set(out)
    assert state.one_run and state.run_id == session.run_id


def test_a_single_audits_report_md_names_its_run(tmp_path, runs):
    write_outputs(runs[0], tmp_path / "out")
    assert f"- Run: {runs[0].run_id}\n" in (tmp_path / "out" / "report.md").read_text()


# -- the three ways to switch -------------------------------------------------------------------
def test_a_new_folder_appears_in_one_step_with_every_file(tmp_path, runs, monkeypatch):
    out = tmp_path / "new" / "out"
    real_rename = os.rename
    seen = []

    def rename(source, target):
        seen.append((sorted(os.listdir(source)), os.path.exists(target)))
        real_rename(source, target)

    monkeypatch.setattr(sets.os, "rename", rename)
    write_outputs(runs[0], out)
    assert seen == [(sorted([*OUTPUT_FILES, MANIFEST_FILE]), False)]
    assert sorted(os.listdir(out.parent)) == ["out"]  # no staging folder left
    assert read_set(out).one_run


def test_a_folder_of_parm_files_is_exchanged_in_one_step(tmp_path, runs):
    out = tmp_path / "out"
    write_outputs(runs[0], out)
    before = os.stat(out).st_ino
    write_outputs(runs[1], out, overwrite=True)
    assert os.stat(out).st_ino != before  # a new folder took the old one's place
    assert sorted(os.listdir(tmp_path)) == ["out"]  # the old set is gone
    state = read_set(out)
    assert state.one_run and state.run_id == runs[1].run_id
    assert csv_run_ids(out / "predictions.csv") == {runs[1].run_id}


def test_files_an_export_leaves_alone_are_carried_over_with_their_own_run(tmp_path, runs):
    out = tmp_path / "out"
    write_files(out, runs[0].run_id, [("decisions.csv", "row,action\n1,keep\n")])
    decisions = os.stat(out / "decisions.csv").st_ino
    write_outputs(runs[1], out)
    assert (out / "decisions.csv").read_text() == "row,action\n1,keep\n"
    assert os.stat(out / "decisions.csv").st_ino == decisions  # a hard link, not a copy
    state = read_set(out)
    assert not state.problems and not state.one_run  # two runs, and the manifest says so
    assert {f.name: f.run_id for f in state.files}["decisions.csv"] == runs[0].run_id


@pytest.mark.parametrize("switch", ["exchange", "in place"])
def test_a_whole_set_carries_no_file_of_another_run(tmp_path, runs, monkeypatch, switch):
    out = tmp_path / "out"
    first = [("predictions.csv", "row\n1\n"), ("decisions.csv", "row,action\n1,keep\n")]
    write_files(out, runs[0].run_id, first)
    if switch == "in place":
        monkeypatch.setattr(sets, "exchange", lambda first, second: False)
    second = [("predictions.csv", "row\n2\n")]
    with pytest.raises(OutputsExist) as refused:  # dropping a file replaces it: --force too
        write_files(out, runs[1].run_id, second, whole=True)
    assert refused.value.names == ("predictions.csv", "decisions.csv")
    write_files(out, runs[1].run_id, second, overwrite=True, whole=True)
    assert sorted(os.listdir(out)) == [MANIFEST_FILE, "predictions.csv"]
    state = read_set(out)
    assert state.one_run and state.run_id == runs[1].run_id and not state.problems


def test_a_run_that_could_not_open_its_review_writes_a_set_of_its_own(tmp_path, monkeypatch):
    """`parm audit` into the --out of another run, without its decision store (a database that
    cannot be read): its set holds no decisions.csv of the other run, names one run, and its
    warnings.txt holds the warning -q did not print."""
    from helpers import FAST_CLI, cli, clustered_embeddings, write_rows

    vectors, scores = clustered_embeddings(N, 3, seed=5)
    np.save(tmp_path / "emb.npy", vectors)
    rows = [[f"s{i}", f"Stems carry water {i}", int(scores[i])] for i in range(N)]
    path = write_rows(tmp_path / "answers.csv", ["id", "answer", "score"], rows)
    out, flags = tmp_path / "out", ["--embeddings", tmp_path / "emb.npy", *FAST_CLI]
    other = [("predictions.csv", "row\n1\n"), ("decisions.csv", "row,action\n1,keep\n")]
    write_files(out, "20260101T000000Z-0other", other)
    broken = tmp_path / "broken-data"
    broken.mkdir()
    (broken / "decisions.sqlite3").write_bytes(b"not a database" * 100)
    monkeypatch.setenv("PARM_DATA_DIR", str(broken))
    assert cli(path, "--out", out, "--force", *flags) == (0, "")  # -q: errors only
    state = read_set(out)
    assert state.one_run and not state.problems and not (out / "decisions.csv").exists()
    listed = (out / WARNINGS_FILE).read_text()
    assert "[review_store] Review decisions cannot be saved or read" in listed
    assert "No warnings" not in listed
    report = json.loads((out / "report.json").read_text())
    assert "review_store" in {warning["kind"] for warning in report["warnings"]}


@pytest.mark.parametrize("force", [True, False])
def test_a_new_folder_another_run_made_meanwhile_is_switched_with_when_allowed(
    tmp_path, runs, monkeypatch, force
):
    out = tmp_path / "out"
    real_rename = os.rename

    def another_run_first(source, target):  # two runs into one new --out: the other wins
        monkeypatch.setattr(sets.os, "rename", real_rename)
        write_files(out, "20260101T000000Z-0other", [("decisions.csv", "row\n1\n")])
        real_rename(source, target)

    monkeypatch.setattr(sets.os, "rename", another_run_first)
    if not force:
        with pytest.raises(ExportError, match="appeared while the outputs were being written"):
            write_outputs(runs[0], out)
        assert read_set(out).run_id == "20260101T000000Z-0other"
        return
    write_files(out, runs[0].run_id, [("predictions.csv", "row\n2\n")], True, whole=True)
    state = read_set(out)
    assert state.one_run and state.run_id == runs[0].run_id and not state.problems
    assert sorted(os.listdir(tmp_path)) == ["out"] and not (out / "decisions.csv").exists()


@pytest.mark.parametrize("where", ["working folder", "folder with a file of the user's"])
def test_folders_holding_other_files_are_written_in_place_and_the_files_kept(tmp_path, runs, where):
    out = tmp_path if where == "working folder" else tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / "notes.txt").write_text("mine")
    before = os.stat(out).st_ino
    target = "." if where == "working folder" else out
    write_outputs(runs[0], target)
    write_outputs(runs[1], target, overwrite=True)
    assert os.stat(out).st_ino == before and (out / "notes.txt").read_text() == "mine"
    state = read_set(out)
    assert state.one_run and state.run_id == runs[1].run_id


def test_where_folders_cannot_be_exchanged_the_set_is_written_in_place(tmp_path, runs, monkeypatch):
    out = tmp_path / "out"
    write_outputs(runs[0], out)
    monkeypatch.setattr(sets, "exchange", lambda first, second: False)
    before = os.stat(out).st_ino
    write_outputs(runs[1], out, overwrite=True)
    assert os.stat(out).st_ino == before and sorted(os.listdir(tmp_path)) == ["out"]
    assert read_set(out).run_id == runs[1].run_id and read_set(out).one_run


@pytest.mark.parametrize("mode", ["exchange", "in place"])
def test_a_failure_while_staging_leaves_the_previous_set_byte_identical(
    tmp_path, runs, monkeypatch, mode
):
    out = tmp_path / "out"
    if mode == "in place":
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    write_outputs(runs[0], out)
    before = snapshot(out)
    real_fsync, calls = os.fsync, []

    def full_disk(fd):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(28, os.strerror(28))
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", full_disk)
    with pytest.raises(ExportError, match="the disk is full"):
        write_outputs(runs[1], out, overwrite=True)
    assert snapshot(out) == before
    assert sorted(os.listdir(tmp_path)) == ["out"]
    assert read_set(out).one_run and read_set(out).run_id == runs[0].run_id


def test_a_rename_failing_half_way_says_which_files_are_new(tmp_path, runs, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")  # in place
    write_outputs(runs[0], out)
    real_replace, calls = os.replace, []

    def replace(source, target):
        calls.append(target)
        if len(calls) == 3:
            raise OSError(13, os.strerror(13))
        real_replace(source, target)

    monkeypatch.setattr(sets.os, "replace", replace)
    with pytest.raises(ExportError) as caught:
        write_outputs(runs[1], out, overwrite=True)
    message = str(caught.value)
    assert "report.json: permission denied" in message
    assert "Already replaced: predictions.csv, tuning.csv" in message
    assert not read_set(out).one_run  # no manifest: never taken for one run
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


# -- reading a set ------------------------------------------------------------------------------
def test_read_set_finds_a_changed_a_missing_and_an_unlisted_file(tmp_path, runs):
    out = tmp_path / "out"
    write_outputs(runs[0], out, names=("predictions.csv", "tuning.csv", "report.md"))
    assert read_set(out).one_run
    (out / "tuning.csv").write_text("edited\n")
    (out / "report.md").unlink()
    (out / "report.json").write_text("{}\n")
    problems = " ".join(read_set(out).problems)
    assert "tuning.csv is not the file the manifest lists" in problems
    assert "report.md is listed in the manifest but missing" in problems
    assert "report.json is not listed in the manifest" in problems
    (out / MANIFEST_FILE).unlink()
    state = read_set(out)
    assert state.run_id is None and not state.one_run and "no readable" in state.problems[0]


# -- tidying what killed runs left ---------------------------------------------------------------
def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_temporaries_of_killed_runs_are_removed_and_nothing_else(tmp_path, runs):
    out = tmp_path / "out"
    out.mkdir()
    gone = dead_pid()
    stale = [
        out / f".predictions.csv.parm-{gone}-abcd1234.tmp",
        out / ".report.md.k2j3_x9q.tmp",  # an older parm's name, an hour old
        tmp_path / f".out.parm-{gone}-abcd1234.set",
    ]
    stale[0].write_text("half")
    stale[1].write_text("half")
    os.utime(stale[1], (time.time() - 3600,) * 2)
    stale[2].mkdir()
    (stale[2] / "report.md").write_text("half")
    kept = [
        out / f".tuning.csv.parm-{os.getppid()}-abcd1234.tmp",  # a live process's
        out / ".report.json.zzzzzzzz.tmp",  # an older parm's name, but fresh
        out / "notes.parm-1-abcd1234.txt",
        out / ".mine.tmp",
        tmp_path / f".other.parm-{gone}-abcd1234.set",  # beside another output folder
    ]
    for path in kept:
        path.write_text("keep")
    write_outputs(runs[0], out)
    assert not any(path.exists() for path in stale)
    assert all(path.read_text() == "keep" for path in kept)


def test_a_set_folder_holding_a_users_file_is_not_removed(tmp_path):
    folder = tmp_path / f".out.parm-{dead_pid()}-abcd1234.set"
    folder.mkdir()
    (folder / "report.md").write_text("parm's")
    (folder / "mine.txt").write_text("user's")
    assert not sets.remove_set_folder(folder)
    assert sorted(os.listdir(folder)) == ["mine.txt"]


# -- signals during the switch -------------------------------------------------------------------
def test_a_signal_during_a_switch_is_delivered_after_it():
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with signals.deferred_signals():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler would have run by now
            steps.append("switch finished")
    assert steps == ["switch finished"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_app_waits_for_a_switch_in_another_thread():
    import threading

    entered, release = threading.Event(), threading.Event()

    def switch():
        with signals.deferred_signals():
            entered.set()
            release.wait(5)

    worker = threading.Thread(target=switch)
    worker.start()
    entered.wait(5)
    assert signals.wait_for_switch(timeout=0.1) is False
    release.set()
    assert signals.wait_for_switch(timeout=5) is True
    worker.join()
