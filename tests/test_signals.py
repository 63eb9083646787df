"""Signals: Ctrl+C (exit code 130) and SIGTERM (143) during a headless run give one calm line,
no traceback, no outputs and no temporary files (also in the middle of an export); an interrupt
while Python is still importing leaves quietly; SIGTERM closes the app and restores the
terminal."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow


def marking_launcher(module: str, owner: str, method: str, entry: str) -> str:
    """Code that runs a real entry point (`entry`.main) with one change: `owner.method` of
    `module` touches a marker file (argv[1]) each time it is called, so a test interrupts a run
    that is surely at that point instead of guessing a delay."""
    return f"""
import importlib, pathlib, sys
marker = pathlib.Path(sys.argv[1])
owner = getattr(importlib.import_module("{module}"), "{owner}")
original = owner.{method}
def marked(self, *args, **kwargs):
    marker.touch()
    return original(self, *args, **kwargs)
owner.{method} = marked
from {entry} import main
main(sys.argv[2:])
"""


# The CLI, marked when tuning starts.
LAUNCHER = marking_launcher("engine.model.tuning", "_Search", "evaluate", "parm_tui.cli")


@pytest.fixture(scope="module")
def slow_run(tmp_path_factory):
    """3,000 responses with random embeddings and a 300-value K grid: a run of many seconds."""
    folder = tmp_path_factory.mktemp("slow")
    n = 3000
    with open(folder / "big.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "answer", "score"])
        writer.writerows([i, f"answer {i}", i % 3] for i in range(n))
    rng = np.random.default_rng(0)
    np.save(folder / "big.npy", rng.normal(size=(n, 32)).astype(np.float32))
    grid = "similarity_top_k=" + str(list(range(1, 301)))
    return folder, ["big.csv", "--embeddings", "big.npy", "--out", "out", "--set", grid]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child needs POSIX signals")
@pytest.mark.parametrize("quiet", [True, False])
def test_ctrl_c_stops_cleanly_with_one_line(slow_run, quiet):
    folder, args = slow_run
    marker = folder / "tuning-started"
    marker.unlink(missing_ok=True)
    command = [sys.executable, "-c", LAUNCHER, str(marker), "audit", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        command + (["-q"] if quiet else []),
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not marker.exists() and child.poll() is None:
            time.sleep(0.05)
        assert child.poll() is None, child.communicate()
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    output = (stdout + stderr).strip()
    assert child.returncode == 130
    assert output == "Interrupted: no outputs were written."
    assert not (folder / "out").exists()


def run_until_marker(launcher, args, folder, signum, env=None, delay=0.0):
    """Start `launcher` (with a marker path and `args`), wait until it touches the marker (and
    `delay` seconds more), send `signum`; returns (exit code, stdout + stderr)."""
    marker = folder / "marker"
    marker.unlink(missing_ok=True)
    command = [sys.executable, "-c", launcher, str(marker), *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    child = subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        while not marker.exists() and child.poll() is None:
            time.sleep(0.05)
        time.sleep(delay)
        assert child.poll() is None, child.communicate()
        child.send_signal(signum)
        stdout, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    return child.returncode, (stdout + stderr).strip()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM to a child needs POSIX signals")
def test_sigterm_stops_a_run_like_ctrl_c_with_exit_code_143(slow_run):
    folder, args = slow_run
    code, output = run_until_marker(LAUNCHER, ["audit", *args, "-q"], folder, signal.SIGTERM)
    assert code == 143
    assert output == "Terminated: no outputs were written."
    assert not (folder / "out").exists()


# Stops in the middle of an export: the first file is staged beside its target, the second
# is about to be; the test then sends the signal.
STAGING_LAUNCHER = """
import pathlib, sys, time
import engine.core.files as files
marker = pathlib.Path(sys.argv[1])
original = files._stage
staged = []
def stage(path, text):
    staged.append(path)
    if len(staged) == 2:
        marker.touch()
        time.sleep(120)
    return original(path, text)
files._stage = stage
from parm_tui.launch import main
main(sys.argv[2:])
"""


@pytest.mark.skipif(sys.platform == "win32", reason="signals to a child need POSIX")
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_export_leaves_previous_outputs_and_no_temporary_file(
    tmp_path, signum, code
):
    from helpers import write_rows

    rows = [[i, f"answer {i}", i % 3] for i in range(60)]
    write_rows(tmp_path / "small.csv", ["id", "answer", "score"], rows)
    np.save(tmp_path / "small.npy", np.random.default_rng(1).normal(size=(60, 8)))
    out = tmp_path / "out"
    out.mkdir()
    names = ("predictions.csv", "tuning.csv", "report.json", "report.md")
    for name in names:
        (out / name).write_text("previous")
    args = ["audit", "small.csv", "--embeddings", "small.npy", "--out", "out", "--force", "-q"]
    args += ["--set", "similarity_top_k=[5]", "--set", "bootstrap_samples=0"]
    exit_code, output = run_until_marker(STAGING_LAUNCHER, args, tmp_path, signum)
    assert exit_code == code, output
    assert output.endswith("no outputs were written.") and "Traceback" not in output
    assert sorted(p.name for p in out.iterdir()) == sorted(names)  # no .tmp file left
    assert all((out / name).read_text() == "previous" for name in names)


# Makes one import slow, as a cold disk makes typer's or textual's, and says when it started.
SLOW_IMPORT_LAUNCHER = """
import importlib.abc, pathlib, sys, time
marker, slow = pathlib.Path(sys.argv[1]), sys.argv[2]
class SlowImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == slow:
            marker.touch()
            time.sleep(120)
        return None
sys.meta_path.insert(0, SlowImport())
from parm_tui.launch import main
main(sys.argv[3:])
"""


@pytest.mark.skipif(sys.platform == "win32", reason="signals to a child need POSIX")
@pytest.mark.parametrize(
    ("slow", "args", "signum", "code"),
    [
        ("typer", ["audit", "answers.csv"], signal.SIGINT, 130),
        ("typer", ["audit", "answers.csv"], signal.SIGTERM, 143),
        ("textual", ["answers.csv"], signal.SIGINT, 130),
    ],
)
def test_an_interrupt_while_python_imports_is_quiet(tmp_path, slow, args, signum, code):
    exit_code, output = run_until_marker(SLOW_IMPORT_LAUNCHER, [slow, *args], tmp_path, signum)
    assert (exit_code, output) == (code, "")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_sigterm_closes_the_app_and_restores_the_terminal(tmp_path):
    import pty
    import select

    pid, fd = pty.fork()
    if pid == 0:  # the child: the real `parm` entry point on a pseudo-terminal
        try:
            os.environ.update(TERM="xterm-256color", PYTHONPATH=str(ROOT))
            entry = "from parm_tui.launch import main; main()"
            os.execv(sys.executable, [sys.executable, "-c", entry])
        finally:
            os._exit(1)  # only if exec failed: never run the test suite twice
    screen = b""
    try:
        while b"Preview" not in screen:
            ready, _, _ = select.select([fd], [], [], 120)
            assert ready, "the app did not draw its first screen"
            screen += os.read(fd, 65536)
        os.kill(pid, signal.SIGTERM)
        while True:
            ready, _, _ = select.select([fd], [], [], 30)
            chunk = os.read(fd, 65536) if ready else b""
            if not chunk:
                break
            screen += chunk
    except OSError:
        pass  # the pseudo-terminal closes when the app has exited
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 143
    assert b"\x1b[?1049l" in screen  # the alternate screen is left


# The real `parm` entry point, marked whenever the model starts encoding a batch, so the
# interrupt lands inside torch's work.
EMBEDDING_LAUNCHER = marking_launcher(
    "engine.embedding.minilm", "MiniLM", "encode", "parm_tui.launch"
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child needs POSIX signals")
def test_ctrl_c_while_the_model_embeds_always_leaves_with_130(tmp_path):
    """Ctrl+C inside torch's encoding once aborted the process ("terminate called without an
    active exception", exit -6) instead of leaving with 130: repeated at varied moments of the
    embedding, every run leaves with 130 and its one line."""
    rng = np.random.default_rng(5)
    words = "roots water light leaves soil sun grow plant stem seed warm cold dry wet".split()
    with open(tmp_path / "answers.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "answer", "score"])
        for i in range(3000):
            writer.writerow([i, " ".join(rng.choice(words, 40)), i % 3])
    for attempt in range(6):
        delay = 0.05 * attempt  # from the first batch's start to well inside the run
        env = {"PARM_CACHE_DIR": str(tmp_path / f"cache-{attempt}")}  # nothing cached
        code, output = run_until_marker(
            EMBEDDING_LAUNCHER + f"\n# {delay}",
            ["audit", "answers.csv", "--out", "out", "-q"],
            tmp_path,
            signal.SIGINT,
            env,
            delay,
        )
        assert "terminate called" not in output, output
        assert (code, output) == (130, "Interrupted: no outputs were written."), attempt
