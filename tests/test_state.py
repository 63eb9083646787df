"""The app's state (parm_tui/state.py): its transitions, without an app. A result stays only with
the responses it is of; a saved session resumes as it was; what the review continues from."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import session_config, session_frame

from engine.core.errors import ResumeError
from engine.input.column_guess import COLUMN_KEYS
from engine.saved.store import save_session
from engine.session import run_session
from engine.workspace import OpenedFile
from parm_tui.state import AppState


@pytest.fixture
def opened(tmp_path):
    """A state with a file of two items read and its columns chosen, and the run of it."""
    frame, vectors = session_frame(seed=7)
    config = session_config(rater_column="rater")
    file = OpenedFile(tmp_path / "session.csv", "digest-1", frame)
    columns = {key: getattr(config, key) for key in COLUMN_KEYS}
    state, notes = AppState(config).file_opened(file).columns_chosen(columns).items_reloaded()
    assert notes == [] and state.items is not None and state.store is not None
    embeddings = [vectors[responses.rows - 1] for responses in state.items.audited]
    run = run_session(state.items, state.config, embeddings=embeddings)
    return state, run, tmp_path


def test_a_result_stays_with_its_responses_and_closes_with_other_ones(opened):
    state, run, _ = opened
    state = state.run_finished(run, None)
    again, notes = state.settings_applied(state.config.updated(seed=3)).items_reloaded()
    assert again.result is run and again.store is state.store and notes == []
    moved, notes = again.columns_chosen({**again.columns, "text_column": "rater"}).items_reloaded()
    assert moved.result is None and moved.store is not again.store
    assert [note.text for note in notes] == ["New data loaded: the previous results were closed."]
    moved.store.close()
    state.store.close()


def test_columns_that_give_no_responses_say_why_and_keep_the_rest(opened):
    state, run, _ = opened
    state = state.run_finished(run, None)
    refused, _ = state.columns_chosen({**state.columns, "score_column": None}).items_reloaded()
    assert refused.items is None and refused.responses is None
    assert refused.file_problem == "Choose the text and the score column."
    assert refused.result is run and refused.store is state.store
    state.store.close()


def test_a_run_that_was_not_kept_leaves_the_earlier_saved_session(opened):
    state, run, folder = opened
    saved = save_session("digest-1", "session.csv", run, folder / "data")
    assert state.run_finished(run, saved).run_finished(run, None).saved is saved
    state.store.close()


def test_a_saved_session_resumes_as_it_was_with_where_the_review_stopped(opened):
    state, run, folder = opened
    first = save_session("digest-1", state.file.path, run, folder / "data")
    saved = save_session("digest-1", state.file.path, run, folder / "data")
    saved = type(saved)(**{**saved.__dict__, "review_row": 12})
    fresh = AppState(session_config()).file_opened(state.file)
    resumed, _ = fresh.resumed(saved)
    assert resumed.config == run.config and resumed.columns["rater_column"] == "rater"
    assert [r.run_id for r in resumed.result.results] == [r.run_id for r in run.results]
    assert resumed.saved is saved and resumed.saved_result() is saved
    previous, row = resumed.review_context()
    assert row == 12 and previous == tuple(r for e in first.results for r in e.flagged_rows)
    resumed.store.close()
    state.store.close()


def test_a_session_of_other_items_does_not_resume(opened):
    state, run, folder = opened
    saved = save_session("digest-1", Path("session.csv"), run, folder / "data")
    frame, _ = session_frame(items=(("A", 60, 3),), seed=7)
    other = OpenedFile(folder / "other.csv", "digest-2", frame)
    with pytest.raises(ResumeError, match="items are not the file's items"):
        AppState(session_config()).file_opened(other).resumed(saved)
    state.store.close()


def test_a_rerun_is_compared_with_the_run_before_it_and_an_earlier_run_opens_read_only(opened):
    from dataclasses import replace as changed

    from engine.saved.store import list_runs

    state, run, folder = opened
    base = folder / "data"
    first = save_session("digest-1", state.file.path, run, base)
    rerun = changed(run, results=[changed(r, run_id="z-second") for r in run.results])
    second = save_session("digest-1", state.file.path, rerun, base)
    runs = list_runs("digest-1", base)
    state = state.file_opened(state.file.with_runs(runs)).run_finished(rerun, second, runs)
    assert state.previous_run().run_id == first.run_id and state.earlier_run() is None
    # The earlier run reopened: read-only, and nothing before it to compare with.
    reopened, _ = state.resumed(runs[1])
    assert reopened.earlier_run().run_id == first.run_id and reopened.previous_run() is None
    # Where its review stopped is kept in its own record.
    moved = reopened.saved_run_updated(changed(runs[1], review_row=4))
    assert [r.review_row for r in moved.runs] == [None, 4]
    reopened.store.close()
    state.store.close()
