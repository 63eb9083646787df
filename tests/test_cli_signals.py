"""Ctrl+C during a headless run: exit code 130, one calm line, no traceback, no outputs."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import ROOT

# Runs the real CLI; the only change is a marker file written when tuning starts, so the test
# interrupts a run that is surely in progress instead of guessing a delay.
LAUNCHER = """
import pathlib, sys
import engine.model.tuning as tuning
marker = pathlib.Path(sys.argv[1])
original = tuning._Search.evaluate
def evaluate(self, *args, **kwargs):
    marker.touch()
    return original(self, *args, **kwargs)
tuning._Search.evaluate = evaluate
from parm_tui.cli import main
main(sys.argv[2:])
"""


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
