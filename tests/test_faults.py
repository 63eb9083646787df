"""Faults injected into real runs: a damaged embedding cache, a kill or SIGTERM in the middle of
an output set's switch, a full disk under the output and the data folders, and files in forms a
CSV reader does not expect (gzip, zip, a DOS end-of-file mark, score spellings). Each gives a
true message, never a silent wrong result or a mix of runs taken for one.

Kills and signals are injected at a chosen step (a patched rename or folder exchange), never by
timing. A full disk is a patched system call, or a small tmpfs when the tests run as root and
can mount one (skipped, with the reason, otherwise)."""

from __future__ import annotations

import csv
import errno
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers import (
    ROOT,
    cli,
    clustered_embeddings,
    make_responses,
    one_item_session,
    small_result,
    unfaulted_keep,
    write_rows,
)

from engine.core.errors import DataError, ResumeError, ReviewError
from engine.input.responses import load_responses
from engine.input.settings.config import config_from_dict
from engine.outputs.manifest import read_set
from engine.outputs.names import (
    DECISIONS_FILE,
    HTML_FILE,
    MANIFEST_FILE,
    OUTPUT_FILES,
    REVIEWED_FILE,
    WARNINGS_FILE,
)

N = 60
QUICK = ["--set", "similarity_top_k=[5,10]", "--set", "bootstrap_samples=0"]
QUICK += ["--set", "cross_fit_folds=0", "-q"]
TALKING = QUICK[:-1]  # the CLI's messages too: --quiet says nothing
TOPICS = (
    "Plants grow toward the light because of auxin",
    "The roots take in water and minerals from the soil",
    "Leaves make sugar from sunlight, water and carbon dioxide",
)


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """A 60-row file of real sentences (scores follow the topic) and clustered embeddings."""
    folder = tmp_path_factory.mktemp("answers")
    rows = [[f"s{i}", f"{TOPICS[i % 3]} ({i}).", i % 3] for i in range(N)]
    write_rows(folder / "answers.csv", ["id", "answer", "score"], rows)
    vectors, _ = clustered_embeddings(N, 3, seed=3)
    np.save(folder / "answers.npy", vectors)
    return folder


def report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def run_ids(out: Path) -> dict[str, set[str]]:
    """Every file's run, as a reader sees it (the run_id column, the report's field)."""
    found = {"report.json": {report(out)["run_id"]}}
    for name in ("predictions.csv", "tuning.csv"):
        with open(out / name, newline="", encoding="utf-8") as handle:
            found[name] = {row["run_id"] for row in csv.DictReader(handle)}
    return found


def leftovers(folder: Path) -> list[str]:
    """parm's temporary files in the folder and set folders beside it."""
    inside = [p.name for p in folder.iterdir() if ".parm-" in p.name]
    return inside + [p.name for p in folder.parent.iterdir() if p.name.endswith(".set")]


# -- a damaged embedding cache ----------------------------------------------------------------
DAMAGE = {
    "zeroed": "UPDATE answers SET data = zeroblob(length(data)) WHERE rowid % 7 = 1",
    "random": "UPDATE answers SET data = randomblob(length(data)) WHERE rowid % 7 = 1",
    "short": "UPDATE answers SET data = substr(data, 1, 100) WHERE rowid % 7 = 1",
}


@pytest.mark.parametrize("how", list(DAMAGE))
def test_a_damaged_cache_is_reported_and_gives_the_uncached_result(
    tmp_path, answers, monkeypatch, how
):
    import sqlite3

    from engine.embedding.cache.answers import ANSWERS_FILE

    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path / "cache"))
    # --rerun: each run embeds (the same file and settings would reuse the first run).
    args = [answers / "answers.csv", *TALKING, "--force", "--rerun", "--out"]
    assert cli(*args, tmp_path / "first")[0] == 0
    database = tmp_path / "cache" / ANSWERS_FILE
    conn = sqlite3.connect(database)
    damaged = conn.execute(DAMAGE[how]).rowcount
    conn.commit()
    conn.close()
    code, output = cli(*args, tmp_path / "second")
    assert code == 0
    warning = f"Warning: Embedding cache: {damaged} cached vector(s) in {database} were damaged"
    assert warning in output and output.count("Embedding cache") == 1
    first, second = report(tmp_path / "first"), report(tmp_path / "second")
    assert second["items"][0]["embedding"]["cached"] is False
    assert second["items"][0]["metrics"]["kappa"] == first["items"][0]["metrics"]["kappa"]
    assert any(w["message"].startswith("Embedding cache: ") for w in second["warnings"])
    code, output = cli(*args, tmp_path / "third")  # the entries were written again, whole
    assert code == 0 and "Embedding cache" not in output
    assert report(tmp_path / "third")["items"][0]["embedding"]["cached"] is True


# -- a kill or SIGTERM between the files of a set -------------------------------------------------
# Runs the real CLI with one step of the switch patched: after rename number STEP into the
# output folder, before or after the folders are exchanged, or before a new folder is renamed
# in, the process is killed (os._exit: no clean-up, as kill -9) or sends itself SIGTERM.
FAULT_LAUNCHER = """
import os, signal, sys
import engine.outputs.sets as sets

fault, step = sys.argv[1], int(sys.argv[2])
renames = []
real_replace, real_rename, real_exchange = os.replace, os.rename, sets.exchange

def strike(kind):
    if kind == "kill":
        os._exit(137)
    os.kill(os.getpid(), signal.SIGTERM)

def replace(source, target, **kwargs):
    real_replace(source, target, **kwargs)
    if os.path.basename(os.path.dirname(os.path.abspath(target))) == "out":
        renames.append(target)
        if fault in ("kill-rename", "term-rename") and len(renames) == step:
            strike(fault.split("-")[0])

def exchange(first, second):
    if fault in ("kill-before-exchange", "term-exchange"):
        strike(fault.split("-")[0])
    done = real_exchange(first, second)
    if fault == "kill-after-exchange":
        strike("kill")
    return done

def rename(source, target):
    if fault == "term-create":
        strike("term")
    real_rename(source, target)

os.replace, os.rename, sets.exchange = replace, rename, exchange
from parm_tui.launch import main
main(sys.argv[3:])
"""


def audit_with_fault(folder: Path, fault: str, step: int = 0) -> tuple[int, str]:
    args = ["audit", "answers.csv", "--embeddings", "answers.npy", "--out", "out", "--force"]
    command = [sys.executable, "-c", FAULT_LAUNCHER, fault, str(step), *args, *QUICK]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, (done.stdout + done.stderr).strip()


@pytest.fixture
def workdir(tmp_path, answers):
    for name in ("answers.csv", "answers.npy"):
        shutil.copy(answers / name, tmp_path / name)
    return tmp_path


def first_set(workdir: Path, in_place: bool) -> str:
    """A complete set in workdir/out (with a user's file beside it when in_place); its run."""
    out = workdir / "out"
    if in_place:
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    code, _ = cli("answers.csv", "--embeddings", "answers.npy", "--out", "out", *QUICK)
    assert code == 0 and read_set(out).one_run
    return read_set(out).run_id


@pytest.mark.skipif(sys.platform == "win32", reason="os._exit and signals as on POSIX")
def test_a_kill_between_the_files_of_a_set_is_never_taken_for_one_run(workdir):
    out = workdir / "out"
    earlier = first_set(workdir, in_place=True)  # a folder with a user's file: in place
    code, _ = audit_with_fault(workdir, "kill-rename", step=2)
    assert code == 137
    runs = run_ids(out)
    assert runs["predictions.csv"] == runs["tuning.csv"] != {earlier}  # the two new files
    assert runs["report.json"] == {earlier}  # and an old one beside them
    state = read_set(out)
    assert not state.one_run and "no readable parm-manifest.json" in state.problems[0]
    assert leftovers(out)  # the killed run's temporary files
    code, _ = cli("answers.csv", "--embeddings", "answers.npy", "--out", "out", "--force", *QUICK)
    assert code == 0 and read_set(out).one_run and leftovers(out) == []
    assert (out / "notes.txt").read_text() == "mine"


@pytest.mark.skipif(sys.platform == "win32", reason="os._exit and signals as on POSIX")
@pytest.mark.parametrize("fault", ["kill-before-exchange", "kill-after-exchange"])
def test_a_kill_around_a_folder_exchange_leaves_one_whole_set(workdir, fault):
    out = workdir / "out"
    earlier = first_set(workdir, in_place=False)  # only parm's files: exchanged
    code, _ = audit_with_fault(workdir, fault)
    assert code == 137
    state = read_set(out)
    assert state.one_run and (state.run_id == earlier) == (fault == "kill-before-exchange")
    assert leftovers(out)  # the new set's or the old set's folder, beside the output folder
    code, _ = cli("answers.csv", "--embeddings", "answers.npy", "--out", "out", "--force", *QUICK)
    assert code == 0 and read_set(out).one_run and leftovers(out) == []


@pytest.mark.skipif(sys.platform == "win32", reason="signals to a child need POSIX")
@pytest.mark.parametrize(
    ("fault", "step", "setup"),
    [("term-rename", 2, "in place"), ("term-exchange", 0, "exchange"), ("term-create", 0, "new")],
)
def test_sigterm_during_the_switch_finishes_it_and_says_what_was_written(
    workdir, fault, step, setup
):
    out = workdir / "out"
    earlier = None if setup == "new" else first_set(workdir, in_place=setup == "in place")
    code, output = audit_with_fault(workdir, fault, step)
    # What parm audit writes without item or rater columns (engine.outputs.session.output_files).
    names = [*OUTPUT_FILES, HTML_FILE, WARNINGS_FILE, DECISIONS_FILE, REVIEWED_FILE]
    names = ", ".join([*names, MANIFEST_FILE])
    assert code == 143
    assert output == f"Terminated after the outputs were written: {out} has the new {names}."
    state = read_set(out)
    assert state.one_run and state.run_id != earlier
    assert set().union(*run_ids(out).values()) == {state.run_id}
    assert leftovers(out) == []


# -- a full disk ---------------------------------------------------------------------------------
def test_a_full_disk_during_an_in_place_export_keeps_the_previous_set(workdir, monkeypatch):
    from engine.core import files

    out = workdir / "out"
    first_set(workdir, in_place=True)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    unfaulted_keep(monkeypatch)
    real_fsync, calls = os.fsync, []

    def full(fd):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", full)
    code, output = cli("answers.csv", "--embeddings", "answers.npy", "--out", "out", "--force",
                       *QUICK)  # fmt: skip
    assert code == 2 and output.count("\n") == 1 and "the disk is full" in output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before and leftovers(out) == []


def test_a_full_disk_under_the_decision_database_is_named_not_called_damage(tmp_path, monkeypatch):
    import sqlite3

    from engine.saved import decisions

    real_connect = sqlite3.connect

    def no_room(*args, **kwargs):  # SQLite's own limit: a real SQLITE_FULL
        conn = real_connect(*args, **kwargs)
        conn.execute("PRAGMA max_page_count=1")
        return conn

    monkeypatch.setattr(decisions.sqlite3, "connect", no_room)
    with pytest.raises(ReviewError) as caught:
        decisions.open_store(tmp_path / "a.csv", make_responses(), tmp_path / "d.sqlite3")
    message = str(caught.value)
    assert "cannot be written: the disk is full" in message and "not damaged" in message
    assert "cannot be read" not in message and "Move it aside" not in message


def test_a_decision_that_does_not_fit_on_the_disk_says_so(tmp_path):

    from engine.saved import decisions

    responses = make_responses([f"answer {i} " + "x" * 3000 for i in range(6)])
    with decisions.open_store(tmp_path / "a.csv", responses, tmp_path / "d.sqlite3") as store:
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count={pages}")
        with pytest.raises(ReviewError) as caught:
            for i in range(len(responses)):
                note = "n" * 3000
                store.record(int(responses.rows[i]), responses.ids[i], responses.texts[i],
                             "keep", note=note)  # fmt: skip
        assert "the disk is full" in str(caught.value) and "not recorded" in str(caught.value)


def test_a_full_disk_while_saving_a_session_says_so(tmp_path, monkeypatch):

    from engine.core import files
    from engine.saved.store import save_session

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "fsync", full)
    result = small_result()
    with pytest.raises(ResumeError, match="could not be saved: .*the disk is full"):
        save_session("0" * 64, "a.csv", one_item_session(result), base=tmp_path / "sessions")


@pytest.fixture
def full_tmpfs(tmp_path):
    """A 1 MiB tmpfs mounted for the test (root only, and where `mount` works), unmounted after;
    fill(folder) then fills it."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and the mount command")
    point = tmp_path / "tmpfs"
    point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(point)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def fill(folder: Path) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, bytes(4096))
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


def test_a_full_tmpfs_under_the_output_folder_keeps_the_previous_set(full_tmpfs, answers):
    out = full_tmpfs / "out"
    args = [answers / "answers.csv", "--embeddings", answers / "answers.npy", *QUICK, "--out"]
    assert cli(*args, out)[0] == 0
    earlier = read_set(out).run_id
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    fill(full_tmpfs)
    code, output = cli(*args, out, "--force")
    assert code == 2 and "the disk is full" in output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before and leftovers(out) == []
    assert read_set(out).one_run and read_set(out).run_id == earlier


def test_a_full_tmpfs_under_the_data_folder_is_named_everywhere_parm_writes(
    full_tmpfs, monkeypatch
):

    from engine.core.crash_log import write_crash_log
    from engine.saved.decisions import open_store
    from engine.saved.store import save_session

    result = small_result()
    monkeypatch.setenv("PARM_DATA_DIR", str(full_tmpfs / "data"))
    fill(full_tmpfs)
    with pytest.raises(ReviewError, match="cannot be written: the disk is full"):
        open_store(full_tmpfs / "a.csv", make_responses())
    with pytest.raises(ResumeError, match="the disk is full"):
        save_session("0" * 64, "a.csv", one_item_session(result))
    assert write_crash_log(RuntimeError("boom")) == (
        None,
        "the disk is full (no space left on device)",
    )


def test_a_read_only_tmpfs_under_the_data_folder_is_named(full_tmpfs, monkeypatch):

    from engine.saved.decisions import open_store

    (full_tmpfs / "data").mkdir()
    done = subprocess.run(["mount", "-o", "remount,ro", str(full_tmpfs)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot remount the tmpfs read-only")
    monkeypatch.setenv("PARM_DATA_DIR", str(full_tmpfs / "data"))
    with pytest.raises(ReviewError, match="cannot be written: read-only file system"):
        open_store(full_tmpfs / "a.csv", make_responses())


# -- files in unexpected forms ---------------------------------------------------------------------
def test_a_gzip_compressed_csv_is_read_with_a_warning(tmp_path, answers):
    packed = tmp_path / "answers.csv.gz"
    packed.write_bytes(gzip.compress((answers / "answers.csv").read_bytes()))
    config = config_from_dict({})
    plain = load_responses(answers / "answers.csv", config)
    unpacked = load_responses(packed, config)
    assert unpacked.texts == plain.texts and unpacked.labels == plain.labels
    assert (
        unpacked.warnings[0] == f"File {packed} is gzip-compressed; it was decompressed in memory."
    )
    code, output = cli(packed, "--embeddings", answers / "answers.npy", "--out", tmp_path / "o",
                       *TALKING)  # fmt: skip
    assert code == 0 and "Warning: File" in output and "gzip-compressed" in output


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (gzip.compress(b"id,answer,score\n" + b"1,a,0\n" * 30)[:-6], "but cut short"),
        (b"\x1f\x8b\x08\x00" + bytes(6) + b"\xff" * 40, "gzip-compressed but damaged"),
        (gzip.compress(b"id,answer,score\n" + b"1,a,0\n" * 400), "holds more than 1,000 bytes"),
    ],
    ids=["truncated", "damaged", "too large"],
)
def test_a_gzip_file_that_cannot_be_used_is_named(tmp_path, monkeypatch, content, expected):
    from engine.input import table

    monkeypatch.setattr(table, "MAX_GUNZIPPED_BYTES", 1000)
    path = tmp_path / "answers.csv.gz"
    path.write_bytes(content)
    with pytest.raises(DataError, match=expected) as caught:
        load_responses(path, config_from_dict({}))
    assert str(path) in str(caught.value)


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        ({"answers.csv": b"id,answer,score\n1,a,0\n"}, "Unzip it"),
        (
            {"[Content_Types].xml": b"<Types/>", "xl/workbook.xml": b"<w/>"},
            "looks like a workbook but cannot be read.*save it as CSV",
        ),  # fmt: skip
    ],
    ids=["zip", "xlsx"],
)
def test_zip_archives_are_told_apart_from_workbooks(tmp_path, members, expected):
    path = tmp_path / "answers.csv"
    path.write_bytes(zipped(members))
    with pytest.raises(DataError, match=expected):
        load_responses(path, config_from_dict({}))


@pytest.mark.parametrize("ending", [b"\r\n\x1a", b"\x1a", b"\n\x1a\r\n"])
def test_a_trailing_dos_end_of_file_mark_is_not_a_row(tmp_path, ending):
    rows = b"\r\n".join(b"%d,answer %d,%d" % (i, i, i % 3) for i in range(12))
    path = tmp_path / "dos.csv"
    path.write_bytes(b"id,answer,score\r\n" + rows + ending)
    responses = load_responses(path, config_from_dict({}))
    assert len(responses) == 12 and responses.file_rows == 12
    assert not any("control character" in w for w in responses.warnings)


def test_numeric_score_labels_are_shown_in_one_spelling_in_every_output(tmp_path, answers):
    spellings = ["0", "+1", "01", "1.0", "2.50", "2.5", "+2.5", "0.0"]
    rows = [[f"s{i}", f"{TOPICS[i % 3]} ({i}).", spellings[i % 8]] for i in range(N)]
    path = write_rows(tmp_path / "spelled.csv", ["id", "answer", "score"], rows)
    code, _ = cli(path, "--embeddings", answers / "answers.npy", "--out", tmp_path / "o", *QUICK)
    assert code == 0
    assert list(report(tmp_path / "o")["items"][0]["input"]["score_counts"]) == ["0", "1", "2.5"]
    with open(tmp_path / "o" / "predictions.csv", newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert {row["score"] for row in table} == {"0", "1", "2.5"}
    assert {row["predicted"] for row in table} <= {"0", "1", "2.5"}
    assert [c for c in table[0] if c.startswith("p_")] == ["p_0", "p_1", "p_2.5"]
