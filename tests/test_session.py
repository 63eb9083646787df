"""`run_session` (engine/session.py): every item audited on its own, in this process or on worker
processes, with progress per item and cancellation."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from helpers import run_frame, session_config, session_frame

from engine.core.errors import Cancelled
from engine.core.progress import CancelToken


def test_a_sessions_results_are_built_once_with_one_run_id():
    """The run id is given to every item as it runs, the severity learned from the reads before
    the session's results are made: nothing is patched afterwards (AuditResult is frozen)."""
    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config())
    assert len({result.run_id for result in session.results}) == 1
    assert session.run_id == session.results[0].run_id
    with pytest.raises(FrozenInstanceError):
        session.results[0].severity = np.zeros(3)  # type: ignore[misc]


def test_items_never_share_neighbours_even_with_identical_answers():
    """Both items hold the same texts and similar vectors: pooled, each answer's nearest
    neighbour would be its twin in the other item."""
    frame, vectors = session_frame(items=(("A", 40, 3), ("B", 40, 3)), same_texts=True)
    session = run_frame(frame, vectors, session_config())
    for result in session.results:
        own = set(result.responses.rows.tolist())
        assert result.graph.n == len(result.responses)
        for neighbours in result.evidence:
            assert {int(result.responses.rows[nb.index]) for nb in neighbours} <= own


def test_an_item_audited_in_a_session_equals_that_item_audited_alone():
    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config())
    for result in session.results:
        alone_rows = frame["item"] == result.responses.item
        alone = frame[alone_rows]
        single = run_frame(
            alone.reset_index(drop=True), vectors[alone_rows.to_numpy()], session_config()
        )
        other = single.results[0]
        np.testing.assert_allclose(result.fitted.proba, other.fitted.proba, rtol=1e-9)
        np.testing.assert_array_equal(result.predicted, other.predicted)
        assert result.selected.top_k == other.selected.top_k
        assert result.metrics == pytest.approx(other.metrics)


@pytest.mark.slow
def test_worker_processes_give_the_same_results_as_one_process():
    frame, vectors = session_frame()
    one = run_frame(frame, vectors, session_config())
    two = run_frame(frame, vectors, session_config(jobs=2))
    for a, b in zip(one.results, two.results):
        assert a.responses.item == b.responses.item
        np.testing.assert_array_equal(a.fitted.proba, b.fitted.proba)
        assert a.metrics == b.metrics


def test_progress_names_each_item_and_counts_items():
    frame, vectors = session_frame()
    events = []
    run_frame(frame, vectors, session_config(), progress=events.append)
    items = [e for e in events if e.stage == "items"]
    assert (items[0].done, items[-1].done, items[-1].total) == (0, 2, 2)
    tuning = [e.message for e in events if e.stage == "tuning"]
    assert any(m.startswith("item A: ") for m in tuning)
    assert any(m.startswith("item B: ") for m in tuning)
    assert events[-1].stage == "done"


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [1, 2])
def test_cancelling_a_session_stops_it(jobs):
    frame, vectors = session_frame()
    token = CancelToken()

    def cancel_at_first_tuning(event):
        if event.stage == "tuning":
            token.cancel()

    with pytest.raises(Cancelled):
        run_frame(
            frame, vectors, session_config(jobs=jobs), progress=cancel_at_first_tuning, cancel=token
        )


def test_an_answer_several_items_share_is_embedded_once(monkeypatch, tmp_path):
    from helpers import FakeEncoder, session_config, session_frame, use_fake_model

    from engine.input.items import split_items
    from engine.session import run_session

    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path / "cache"))
    model = use_fake_model(monkeypatch, FakeEncoder(dim=12))
    frame, _ = session_frame(items=(("A", 40, 3), ("B", 30, 3)), same_texts=True)
    config = session_config()
    session = run_session(split_items(frame, config, source="s.csv"), config)
    assert sorted(model.encoded) == sorted({f"answer {i}" for i in range(40)})
    assert [r.embedding.cached for r in session.results] == [False, False]
    model.encoded.clear()
    again = run_session(split_items(frame, config, source="s.csv"), config)
    assert model.encoded == [] and all(r.embedding.cached for r in again.results)
