"""The app (parm_tui/app.py), driven as a rater-lead would: load the sample file, run the audit (with
the sample's precomputed embeddings), review, decide, export; decisions that outlive the app; the
decision store handed to the review; quitting while an audit runs; the command palette."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import threading

import pytest
from helpers import (
    SAMPLE_CSV,
    load_and_run,
    open_review,
    wait_for,
)
from textual.widgets import Input, Static

from engine.saved.decisions import open_store
from parm_tui.app import ParmApp
from parm_tui.screens.export import ConfirmOverwrite, ExportScreen
from parm_tui.screens.resume import ResumeModal
from parm_tui.widgets.review_dialogs import ScoreModal
from parm_tui.widgets.review_list import ReviewTable

SIZE = (100, 30)


def read_csv(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


async def test_load_run_review_decide_and_export(sample_copy, sample_embeddings_file, tmp_path):
    app = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    out = tmp_path / "out"
    async with app.run_test(size=SIZE) as pilot:
        await load_and_run(pilot)
        review = await open_review(pilot)
        assert len(review.view) == int(app.state.result.flagged.sum()) > 0
        i = review.current()
        responses = app.state.responses
        row, human = int(responses.rows[i]), responses.labels[responses.scores[i]]
        new = next(label for label in responses.labels if label != human)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ScoreModal), "the score dialog")
        await pilot.press(new, "enter")  # the picker chooses, enter confirms
        await pilot.pause()
        assert app.state.store.get(row).new_score == new
        assert f"→{new}" in str(review.query_one(ReviewTable).get_cell(str(i), "decision"))

        await pilot.press("f7")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
        export = app.screen
        export.query_one("#export-folder", Input).value = str(out)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: (out / "decisions.csv").exists(), "the export")
        await pilot.pause()
        status = str(export.query_one("#export-status", Static).render())
        # The sample is read twice (score2): consensus.csv and agreement.csv too; the status
        # counts every file the folder now holds.
        written = sorted(p.name for p in out.iterdir() if p.is_file())
        assert f"Wrote {len(written)} file(s)" in status and str(out) in status
        assert "consensus.csv" in written and "agreement.csv" in written

        # A second export into the same folder asks first; "n" keeps the files.
        before = (out / "predictions.csv").stat().st_mtime_ns
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmOverwrite), "the question")
        await pilot.press("n")
        await pilot.pause()
        assert (out / "predictions.csv").stat().st_mtime_ns == before
        assert "existing files were kept" in str(export.query_one("#export-status").render())

    predictions = read_csv(out / "predictions.csv")
    assert len(predictions) == len(responses)
    decisions = read_csv(out / "decisions.csv")
    assert [(d["row"], d["action"], d["new_score"], d["score"]) for d in decisions] == [
        (str(row), "change", new, human)
    ]
    assert decisions[0]["id"] == responses.ids[i]


async def test_a_decision_survives_starting_fresh_and_running_again(
    sample_copy, sample_embeddings_file
):
    first = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    async with first.run_test(size=SIZE) as pilot:
        await load_and_run(pilot)
        review = await open_review(pilot)
        i = review.current()
        row = int(first.state.responses.rows[i])
        await pilot.press("e", *"second look", "enter", "question_mark")
        await pilot.pause()
        assert first.state.store.get(row).note == "second look"

    again = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(again.screen, ResumeModal), "the question")
        await pilot.press("n")
        await load_and_run(pilot)
        assert again.state.store.get(row).action == "unsure"
        review = await open_review(pilot)
        table = review.query_one(ReviewTable)
        assert str(table.get_cell(str(i), "decision")) == "?✎"
        assert "1 decided" in str(review.query_one("#review-status", Static).render())

        # Searching the answers narrows the list to the ones that contain the words.
        word = max(again.state.responses.texts[i].split(), key=len).lower()
        await pilot.press("a", "slash", *word, "enter")
        await pilot.pause()
        assert 0 < len(review.view) < len(again.state.responses)
        assert all(word in again.state.responses.texts[j].lower() for j in review.view)
        assert i in review.view.tolist()


def test_quitting_cancels_a_running_audit_and_waits_for_it():
    from types import SimpleNamespace

    from engine.core.progress import CancelToken
    from parm_tui.app import stop_audit_threads

    token = CancelToken()

    def engine_loop():
        while not token.cancelled:
            threading.Event().wait(0.01)

    thread = threading.Thread(target=engine_loop)
    thread.start()
    stop_audit_threads(SimpleNamespace(cancel_token=token, audit_threads={thread}), 30.0)
    assert token.cancelled and not thread.is_alive()


def test_sigterm_while_an_audit_thread_runs_still_exits_143(monkeypatch):
    """A thread that does not stop in time (a model loading) is left behind with os._exit: with
    the app's return code (143 after SIGTERM), not 0."""
    import os
    from types import SimpleNamespace

    from engine.core.progress import CancelToken
    from parm_tui.app import stop_audit_threads

    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    exits = []
    monkeypatch.setattr(os, "_exit", exits.append)
    app = SimpleNamespace(cancel_token=CancelToken(), audit_threads={thread}, return_code=143)
    try:
        stop_audit_threads(app, 0.05)
    finally:
        release.set()
        thread.join()
    assert exits == [143]


def test_importing_the_app_does_not_import_torch_or_scipy_stats():
    """The Load screen shows, and the model loads behind it, without waiting for these."""
    code = (
        "import sys, parm_tui.app\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'engine.embedding.sentence', "
        "'sklearn', 'scipy.stats') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow
async def test_the_command_palette_names_actions_by_group():
    app = ParmApp()
    async with app.run_test(size=(80, 24)):
        titles = {command.title for command in app.get_system_commands(app.screen)}
    for title in (
        "file: open",
        "settings: save",
        "run: start audit",
        "run: cancel",
        "results: show",
        "review: open",
        "export: write outputs",
    ):
        assert title in titles


async def test_a_new_file_hands_its_decision_store_to_the_review(tmp_path, sample_embeddings_file):
    first, second = tmp_path / "a" / "answers.csv", tmp_path / "b" / "answers.csv"
    for path in (first, second):
        path.parent.mkdir()
        shutil.copy(SAMPLE_CSV, path)
    app = ParmApp(path=first, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=(100, 30)) as pilot:
        await load_and_run(pilot)
        await open_review(pilot)
        old_store = app.state.store
        await pilot.press("f2")
        app.get_screen("load").open_path(str(second))
        await wait_for(pilot, lambda: app.state.store is not old_store, "the second file")
        # A copy has the same bytes, so its first run's session is offered: start fresh.
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeModal), "the question")
        await pilot.press("n")
        await load_and_run(pilot)
        review = await open_review(pilot)
        assert review.store is app.state.store
        i = review.current()
        row = int(app.state.responses.rows[i])
        await pilot.press("o")
        await pilot.pause()
        assert app.state.store.get(row).action == "keep"
        assert app.state.store.source.endswith(str(second))


async def test_reopening_the_store_rebuilds_the_review_with_the_new_one(
    sample_copy, sample_embeddings_file
):
    app = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=(100, 30)) as pilot:
        await load_and_run(pilot)
        await open_review(pilot)
        await pilot.press("f2")
        old_store = app.state.store
        # The file's store opened again (as for a file chosen anew); the result stays.
        state = app.state
        store = open_store(state.source_path, state.responses, on_scale=state.on_scale)
        app.change((state.items_loaded(state.prepared, store), []))
        assert app.state.store is not old_store
        review = await open_review(pilot)
        assert review.store is app.state.store and review.parm_result is app.state.result
        row = int(app.state.responses.rows[review.current()])
        await pilot.press("o")
        await pilot.pause()
        assert app.state.store.get(row).action == "keep"
        await pilot.press("f7")
        await pilot.pause()
        assert app.screen.store is app.state.store
