"""The helper process (engine/core/machine/helper.py): a large item's checks and the severity's
embedding fits made there give the same bits as made here, work offered to it is done once (by
whichever process begins it), a helper that dies leaves its work to this process, and a
cancelled wait ends it."""

from __future__ import annotations

import os
import pickle
import time
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import clustered_embeddings

import engine.core.machine.helper as helper_module
from engine.core.errors import Cancelled
from engine.core.machine.helper import Helper, helper_wanted
from engine.core.progress import Reporter
from engine.core.stages import StageTimer
from engine.embedding.vectors import Embedded
from engine.input.responses import responses_from_frame
from engine.input.settings.config import load_defaults

CHECKS = ("intervals", "cross_fit", "near_duplicates", "second_rater", "severity", "predicted",
          "rater_proba", "read_evidence")  # fmt: skip


def _audit(monkeypatch, smallest: int):
    from engine.pipeline import run_audit

    monkeypatch.setattr(helper_module, "MIN_ANSWERS", smallest)
    n = 240
    vectors, scores = clustered_embeddings(n, 3, noise=1.5, seed=5)
    vectors[1] = vectors[0]  # a near-duplicate pair
    frame = pd.DataFrame({
        "id": [f"S{i:04d}" for i in range(n)],
        "answer": [f"answer {i}" for i in range(n)],
        "score": [str(s) for s in scores],
        "score2": [str((s + (i % 5 == 0)) % 3) for i, s in enumerate(scores)],
        "rater": [f"R{i % 3}" for i in range(n)],
        "rater2": [f"R{(i + 1) % 3}" for i in range(n)],
    })  # fmt: skip
    config = load_defaults().updated(
        similarity_top_k=[5, 10, 20], second_score_column="score2", bootstrap_samples=50,
        rater_column="rater", second_rater_column="rater2",
    )  # fmt: skip
    responses = responses_from_frame(frame, config, "helper.csv")
    return run_audit(responses, config, embedded=Embedded.precomputed(vectors))


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the helper needs two cores")
def test_checks_made_by_the_helper_are_the_same_bits_as_made_here(monkeypatch):
    here = _audit(monkeypatch, 10**9)
    submitted, offered = [], []
    real, real_offer = Helper.submit, Helper.offer
    monkeypatch.setattr(
        Helper, "submit", lambda self, f, *a: submitted.append(f) or real(self, f, *a)
    )
    monkeypatch.setattr(
        Helper, "offer", lambda self, f, *a: offered.append(f) or real_offer(self, f, *a)
    )
    there = _audit(monkeypatch, 0)
    # Cross-fitting (beside tuning), the checks of the tuned model, then the severity's
    # embedding fits, the rater expectation and the reads' evidence offered.
    assert [f.__name__ for f in submitted] == ["_cross_fit", "_tuned_checks_elsewhere"] + [
        "_unless_claimed"
    ] * 3
    assert [f.__name__ for f in offered] == [
        "embedding_probas",
        "_rater_expectation",
        "read_evidence",
    ]
    for stage in ("checks", "raters", "reads"):
        assert stage in here.timings and stage in there.timings, stage
    assert here.rater_proba is not None and here.read_evidence is not None
    for name in CHECKS:
        assert pickle.dumps(getattr(here, name)) == pickle.dumps(getattr(there, name)), name
    assert here.near_duplicates  # the pair is found either way


def test_the_helper_is_wanted_only_for_a_large_item_on_two_cores_with_nothing_else_running(
    monkeypatch,
):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    large = helper_module.MIN_ANSWERS
    assert helper_wanted(large, 1, None)
    assert not helper_wanted(large - 1, 1, None)
    assert not helper_wanted(large, 2, None)  # items already on worker processes
    assert not helper_wanted(large, 1, "tcp://127.0.0.1:8786")  # on a cluster
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not helper_wanted(large, 1, None)


def test_a_helper_that_dies_says_so_and_the_checks_are_made_here(monkeypatch):
    from engine import pipeline

    helper = Helper()
    try:
        with pytest.raises(BrokenProcessPool):
            helper.result(helper.submit(os._exit, 3))
        # Work handed to a helper already dead fails the same way, at its result (it raised at
        # submit before, out of every caller's fallback: an internal error for the user).
        late = helper.submit(time.sleep, 0)
        with pytest.raises(BrokenProcessPool):
            helper.result(late)
    finally:
        helper.close()

    class Dead(Helper):  # a helper whose process is gone: its result raises
        def __init__(self) -> None:
            pass

        def result(self, future, check=None):
            raise BrokenProcessPool("gone")

    made = []
    monkeypatch.setattr(pipeline, "_cross_fit", lambda *args: made.append("cross") or "crossed")
    monkeypatch.setattr(pipeline, "_tuned_checks", lambda *args: made.append("tuned") or {"x": 1})
    timer = StageTimer()

    class Tuned:
        item_features = "features"

    inputs = ("graph", Tuned(), "responses", "config", "predicted")
    pending = (Future(), Future())
    checks = pipeline._checks_from(Dead(), pending, inputs, timer, Reporter())
    assert checks == {"x": 1, "cross_fit": "crossed"} and made == ["cross", "tuned"]
    assert "checks" in timer.timings


def _until(condition, seconds: float = 60.0) -> None:
    """Wait for `condition()`, failing (not hanging) after `seconds`: a helper that never
    starts."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the helper did not begin the offered work"
        time.sleep(0.01)


def test_offered_work_is_done_by_whichever_process_begins_it_and_only_once():
    helper = Helper()
    try:
        taken = helper.offer(pow, 3, 4)
        assert taken is not None
        assert helper.result(taken.future)[0] == 81  # the helper began it, so it is its result
        assert taken.result_or_here(lambda: pytest.fail("made twice"))[0] == 81
        helper.submit(time.sleep, 1.0)  # busy: the next offer waits behind it
        queued = helper.offer(pow, 2, 5)
        assert queued is not None
        assert queued.result_or_here(lambda: "here") == ("here", None)
        assert helper.result(queued.future)[0] is None  # the helper skipped it when free
        slow = helper.offer(time.sleep, 0.6)
        assert slow is not None
        _until(lambda: helper.claims[slow.slot])  # the helper has begun it
        waited = []
        made, seconds = slow.result_or_here(
            lambda: pytest.fail("made twice"), lambda: waited.append(1)
        )
        assert made is None and seconds is not None and seconds >= 0.5  # the helper's own
        assert len(waited) >= 3  # the wait looks at its check every POLL_SECONDS
        while helper.offer(pow, 1, 1) is not None:
            pass
        assert helper.offers == helper_module.OFFERS  # no flag left: the caller does the work
    finally:
        helper.close()


def test_work_offered_to_a_helper_that_dies_is_made_here():
    helper = Helper()
    try:
        dying = helper.offer(os._exit, 3)
        assert dying is not None
        with pytest.raises(BrokenProcessPool):
            helper.result(dying.future)
        assert dying.result_or_here(lambda: "here") == ("here", None)
        late = helper.offer(pow, 2, 2)  # offered to a helper already dead
        assert late is not None and late.result_or_here(lambda: "here") == ("here", None)
    finally:
        helper.close()


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the helper needs two cores")
@pytest.mark.parametrize("where", ["helper", "here"])
def test_the_severity_with_its_embedding_fits_offered_is_the_same_bits(monkeypatch, where):
    """review_severity's embedding fits taken by the helper (it began them before the lexical
    fits ended here) or made here (the helper busy): the same severities as without a helper."""
    from engine.audit.queue import severity

    n = 300
    vectors, scores = clustered_embeddings(n, 3, noise=1.5, seed=2)
    texts = [f"answer {i % 17} about {i % 5}" for i in range(n)]
    rng = np.random.default_rng(0)
    t = rng.random((n, 3))
    features = (t, t.sum(axis=1))
    alone = severity.review_severity(vectors, texts, features, scores, 3, 0)
    helper = Helper(("engine.audit.queue.severity",))
    try:
        if where == "here":
            helper.submit(time.sleep, 3.0)
        else:
            real_rows = severity.lexical_rows

            def after_the_helper_began(*args, **kwargs):
                _until(lambda: helper.claims[0])
                return real_rows(*args, **kwargs)

            monkeypatch.setattr(severity, "lexical_rows", after_the_helper_began)
        offers = []
        real_offer = helper.offer
        monkeypatch.setattr(helper, "offer", lambda *a: offers.append(real_offer(*a)) or offers[-1])
        started = severity.start_severity(vectors, scores, 3, 0, helper=helper)
        offered = severity.review_severity(vectors, texts, features, scores, 3, 0, started=started)
        made_there = helper.result(offers[0].future)[0]
        assert (made_there is not None) == (where == "helper")  # None: the helper skipped it
    finally:
        helper.close()
    assert alone is not None and offered is not None
    assert alone.tobytes() == offered.tobytes()


def test_a_cancelled_wait_for_the_helper_stops_at_once_and_close_ends_it():
    helper = Helper()
    processes = list(helper.pool._processes.values())
    pending = helper.submit(time.sleep, 30)

    def cancelled():
        raise Cancelled()

    started = time.perf_counter()
    with pytest.raises(Cancelled):
        helper.result(pending, cancelled)
    helper.close()
    assert time.perf_counter() - started < 10
    assert processes and not any(p.is_alive() for p in processes)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the helper needs two cores")
def test_a_session_models_folds_fitted_on_the_helper_are_the_same_bits():
    """Half the cross-fitting folds on the helper (summarise_session's `helper`): the same
    probabilities and figures bit for bit, and every fit still reported."""
    from session_sim import simulated_items

    from engine.model.session.cross_fit import SessionOptions, distinct_top_k
    from engine.model.session.summary import summarise_session

    items = simulated_items(items=4, answers=40, raters=3, double=0.4, top_k=8, sweeps=30, seed=3)
    options = SessionOptions(top_k_values=(4, 8), folds=4)
    alone = summarise_session(items, options)
    steps = []
    helper = Helper(("engine.model.session.summary",))
    try:
        shared = summarise_session(items, options, step=lambda: steps.append(1), helper=helper)
    finally:
        helper.close()
    for a, b in zip(alone.items, shared.items):
        for name in ("proba", "predicted", "cross_proba", "cross_predicted"):
            assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
        assert a.cross_fitted == b.cross_fitted and a.in_sample == b.in_sample
    assert len(steps) == (options.folds + 1) * len(distinct_top_k(items, options.top_k_values))


def test_the_helpers_share_of_the_items_is_about_half_the_answers():
    from engine.session import their_share

    assert their_share([10, 10]) == [1]
    theirs = their_share([30, 28, 29, 31, 27, 26, 30, 28, 300])
    sizes = [30, 28, 29, 31, 27, 26, 30, 28, 300]
    assert theirs == sorted(theirs) and 0 < len(theirs) < len(sizes)
    there = sum(sizes[t] for t in theirs)
    assert abs(there - (sum(sizes) - there)) <= max(sizes)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the helper needs two cores")
def test_a_session_whose_items_share_a_helper_gives_the_same_bits(monkeypatch):
    """Half the items audited on the run's helper (and the session model's later folds there):
    every item's audit and the session model's figures as one after another here."""
    from helpers import run_frame, session_config, session_frame

    import engine.session

    frame, vectors = session_frame()
    config = session_config(cross_fit_folds=3)
    monkeypatch.setattr(engine.session, "HELPER_ITEMS", 10**6)
    monkeypatch.setattr(engine.session, "HELPER_ITEM_ANSWERS", 10**6)
    alone = run_frame(frame, vectors, config)
    monkeypatch.setattr(engine.session, "HELPER_ITEMS", 2)
    shared_by = []
    real = Helper.submit
    monkeypatch.setattr(
        Helper, "submit", lambda self, f, *a: shared_by.append(f) or real(self, f, *a)
    )
    shared = run_frame(frame, vectors, config)
    assert "audit_items" in [f.__name__ for f in shared_by]
    for a, b in zip(alone.results, shared.results):
        for name in CHECKS:
            assert pickle.dumps(getattr(a, name)) == pickle.dumps(getattr(b, name)), name
        # The tuning itself (its item features hold a cache of the last graph asked for).
        for name in ("rows", "best", "fitted", "features"):
            got = (getattr(a.tuning, name), getattr(b.tuning, name))
            assert pickle.dumps(got[0]) == pickle.dumps(got[1]), name
    assert alone.session_model == shared.session_model and alone.session_model is not None


def test_the_helper_starts_where_stderr_has_no_file_descriptor_as_in_the_app(tmp_path):
    """Textual replaces sys.stderr with an object whose fileno() is -1; multiprocessing started
    its resource tracker with it and failed ("bad value(s) in fds_to_keep"), so any run in the
    app with a helper or worker processes failed. A fresh process, whose tracker has not
    started yet, as the app's."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "class Captured:\n"
        "    def write(self, text): return len(text)\n"
        "    def flush(self): pass\n"
        "    def fileno(self): return -1\n"
        "sys.stderr = Captured()\n"
        "from engine.core.machine.helper import Helper\n"
        "if __name__ == '__main__':\n"
        "    helper = Helper()\n"
        "    print(helper.result(helper.submit(abs, -3))[0])\n"
        "    helper.close()\n"
    )
    script = tmp_path / "app_like.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "3", done.stderr
