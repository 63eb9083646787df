"""engine.core.machine.collector: the cyclic collector kept to what a run makes."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest
from helpers import session_config, session_frame

from engine import workspace
from engine.core.machine.collector import new_objects_only


def test_the_objects_come_back_after_the_last_block_of_two_threads():
    assert gc.get_freeze_count() == 0
    inner_started, outer_may_end = threading.Event(), threading.Event()
    seen = []

    def other_block():
        with new_objects_only():
            inner_started.set()
            outer_may_end.wait(5)
            seen.append(gc.get_freeze_count())

    with new_objects_only():
        assert gc.get_freeze_count() > 0
        worker = threading.Thread(target=other_block)
        worker.start()
        inner_started.wait(5)
    assert gc.get_freeze_count() > 0  # the other thread's block still runs
    outer_may_end.set()
    worker.join(5)
    assert seen[0] > 0
    assert gc.get_freeze_count() == 0


def test_a_cycle_made_in_a_block_is_freed_there_and_one_from_before_after_it():
    """The collector still frees what the run makes (a cycle holding an array: a frame kept
    by a traceback); what was alive before waits for the block's end."""

    class Node:
        pass

    def cycle():
        node = Node()
        node.me, node.payload = node, np.zeros(10)
        return weakref.ref(node)

    before = cycle()
    with pytest.raises(ValueError), new_objects_only():
        made = cycle()
        gc.collect()
        assert made() is None
        assert before() is not None
        raise ValueError("a run that fails")
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert before() is None


def test_a_run_and_its_export_set_aside_what_was_alive_before(tmp_path, monkeypatch):
    """workspace.run and workspace.export run with the objects alive before them set aside (what
    the run computes is the same: the collector frees memory, it changes no value) and give
    them back."""
    from engine.outputs import session as outputs
    from engine.session import run_session as real_run

    states = []

    def run_session(*args, **kwargs):
        states.append(("run", gc.get_freeze_count() > 0))
        return real_run(*args, **kwargs)

    real_write = outputs.write_session

    def write_session(*args, **kwargs):
        states.append(("write", gc.get_freeze_count() > 0))
        return real_write(*args, **kwargs)

    monkeypatch.setattr("engine.session.run_session", run_session)
    monkeypatch.setattr(outputs, "write_session", write_session)
    frame, vectors = session_frame()
    path = tmp_path / "answers.csv"
    frame.to_csv(path, index=False)
    np.save(tmp_path / "emb.npy", vectors)
    prepared = workspace.prepare(workspace.open_file(path, runs=False), session_config())
    session = workspace.run(prepared, embeddings=tmp_path / "emb.npy")
    workspace.export(session, tmp_path / "out")
    assert states == [("run", True), ("write", True)]
    assert gc.get_freeze_count() == 0
