"""Resuming a saved session in the app: quit in the middle of a review, reopen the file and continue
exactly where it stopped (same results, same queue, same decisions, same response on screen)
without running anything; a re-run then says what changed under the decisions; a damaged session
is reported and the file opens as usual."""

from __future__ import annotations

import csv
import json

import pytest
from helpers import load_and_run, open_review, wait_for
from textual.widgets import Input

from engine.core.files import file_digest
from engine.saved.store import find_session, session_folder
from parm_tui.app import ParmApp
from parm_tui.screens.export import ExportScreen
from parm_tui.screens.results import ResultsScreen
from parm_tui.screens.resume import ResumeModal
from parm_tui.screens.review import ReviewScreen

pytestmark = pytest.mark.slow

SIZE = (80, 24)


async def decide_some(pilot, review) -> dict[int, str]:
    """Keep the first response, mark the second unsure, skip the third (n): rows -> action."""
    rows = review.review.responses.rows
    decided = {int(rows[review.shown()]): "keep"}
    await pilot.press("o")
    decided[int(rows[review.shown()])] = "unsure"
    await pilot.press("question_mark", "n")
    await pilot.pause()
    return decided


async def test_quitting_mid_review_and_reopening_resumes_where_it_stopped(
    sample_copy, sample_embeddings_file, tmp_path
):
    first = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    async with first.run_test(size=SIZE) as pilot:
        await load_and_run(pilot)
        review = await open_review(pilot)
        decided = await decide_some(pilot, review)
        result, queue, stopped_at = first.state.result, review.view.copy(), review.shown_row()
        await pilot.press("q")
    assert {row: d.action for row, d in first.state.store.all().items()} == decided

    # No embeddings this time: resuming must not run (or embed) anything.
    again = ParmApp(path=sample_copy)
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(again.screen, ResumeModal), "the question")
        question = str(again.screen.query_one("Label.session-summary").render())
        assert f"{int(result.flagged.sum()):,} flagged" in question and "2 decided" in question
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(again.screen, ReviewScreen), "the review")
        await pilot.pause()
        review = again.screen
        assert again.audit_worker is None
        assert again.state.result.run_id == result.run_id
        assert review.view.tolist() == queue.tolist()
        assert {row: d.action for row, d in again.state.store.all().items()} == decided
        assert review.shown_row() == stopped_at
        assert not review.query_one("#review-rerun").display

        # Decide more, then export: decisions.csv names the run each was made on.
        row = review.shown_row()
        await pilot.press("o")
        await pilot.press("f7")
        await wait_for(pilot, lambda: isinstance(again.screen, ExportScreen), "the export")
        out = tmp_path / "out"
        again.screen.query_one("#export-folder", Input).value = str(out)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: (out / "decisions.csv").exists(), "the export")
        # The folder is kept with the saved run: the next Export offers it.
        await wait_for(pilot, lambda: again.state.saved.out_folder == str(out), "the folder kept")
    third = ParmApp(path=sample_copy)
    async with third.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(third.screen, ResumeModal), "the question")
        await pilot.press("r")
        await wait_for(pilot, lambda: third.state.result is not None, "the resumed run")
        await pilot.press("f7")
        await wait_for(pilot, lambda: isinstance(third.screen, ExportScreen), "the export")
        assert third.screen.query_one("#export-folder", Input).value == str(out)
    with (out / "decisions.csv").open(newline="", encoding="utf-8") as handle:
        rows = {int(r["row"]): r for r in csv.DictReader(handle)}
    assert set(rows) == set(decided) | {row}
    assert {r["decided_run_id"] for r in rows.values()} == {result.run_id}
    assert json.loads((out / "report.json").read_text())["run_id"] == result.run_id


async def test_a_rerun_after_resuming_counts_the_new_flags(sample_copy, sample_embeddings_file):
    app = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=SIZE) as pilot:
        await load_and_run(pilot)
        first = app.state.result
        review = await open_review(pilot)
        await pilot.press("o")
        # Other settings flag other responses.
        # (on a file read twice throughout the count of flags is seen, so a precision asked
        # for is what moves them)
        app.apply_settings(app.state.config.updated(similarity_top_k=5, flag_precision=0.2))
        await app.start_audit()
        await wait_for(pilot, lambda: app.state.result is not first, "the second run")
        await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen), "the results")
        review = await open_review(pilot)
        assert review.model.previous_flagged_rows == tuple(
            int(r) for r in first.review.responses.rows[first.flagged]
        )
        line = str(review.query_one("#review-rerun").render())
        assert review.query_one("#review-rerun").display
        new = int((app.state.result.flagged & ~first.flagged).sum())
        assert f"{new} newly flagged undecided" in line
    session = find_session(file_digest(sample_copy))
    assert session.results[0].run_id == app.state.result.run_id


async def test_starting_fresh_keeps_the_session_and_asks_no_more(sample_copy, tmp_path):
    digest = file_digest(sample_copy)
    folder = session_folder(digest)
    folder.mkdir(parents=True)
    (folder / "session.json").write_text("{ damaged")
    app = ParmApp(path=sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state.responses is not None, "the file")
        await pilot.pause()
        assert not isinstance(app.screen, ResumeModal)
        messages = " ".join(n.message for n in app._notifications)
        assert "saved session of this file cannot be used" in messages
        assert str(folder / "session.json") in messages
