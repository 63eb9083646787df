"""The whole app, driven like a rater-lead would: load the sample file, run the audit (with the
sample's precomputed embeddings), review, decide, export; and decisions that outlive the app."""

from __future__ import annotations

import csv

from textual.widgets import Input, Static

from parm_tui.app import ParmApp
from parm_tui.screens.export import ConfirmOverwrite, ExportScreen
from parm_tui.screens.resume import ResumeModal
from parm_tui.screens.review import ReviewScreen
from parm_tui.widgets.review_dialogs import ScoreModal
from parm_tui.widgets.review_list import ReviewTable

SIZE = (100, 30)


async def wait_for(pilot, condition, what: str, limit: float = 180.0) -> None:
    """Let the app work until `condition()` holds (a guard against hanging, not a timing test)."""
    for _ in range(int(limit / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"gave up waiting for {what}")


async def load_and_run(pilot) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.responses is not None and app.store is not None, "the file")
    await pilot.press("f4")
    await wait_for(pilot, lambda: app.screen.id == "run-screen", "the run screen")
    await pilot.press("s")
    await wait_for(pilot, lambda: app.result is not None, "the audit")
    await pilot.pause()


async def open_review(pilot) -> ReviewScreen:
    await pilot.press("f6")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReviewScreen), "the review")
    await pilot.pause()
    return pilot.app.screen


def read_csv(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


async def test_load_run_review_decide_and_export(sample_copy, sample_embeddings_file, tmp_path):
    app = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    out = tmp_path / "out"
    async with app.run_test(size=SIZE) as pilot:
        await load_and_run(pilot)
        review = await open_review(pilot)
        assert len(review.view) == int(app.result.flagged.sum()) > 0
        i = review.current()
        responses = app.responses
        row, human = int(responses.rows[i]), responses.labels[responses.scores[i]]
        new = next(label for label in responses.labels if label != human)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ScoreModal), "the score dialog")
        await pilot.press(new)
        await pilot.pause()
        assert app.store.get(row).new_score == new
        assert f"→{new}" in str(review.query_one(ReviewTable).get_cell(str(i), "decision"))

        await pilot.press("f7")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
        export = app.screen
        export.query_one("#export-folder", Input).value = str(out)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: (out / "decisions.csv").exists(), "the export")
        await pilot.pause()
        status = str(export.query_one("#export-status", Static).render())
        assert "Wrote 6 file(s)" in status and str(out / "predictions.csv") in status

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
        row = int(first.responses.rows[i])
        await pilot.press("e", *"second look", "enter", "u")
        await pilot.pause()
        assert first.store.get(row).note == "second look"

    again = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(again.screen, ResumeModal), "the question")
        await pilot.press("n")
        await load_and_run(pilot)
        assert again.store.get(row).action == "unsure"
        review = await open_review(pilot)
        table = review.query_one(ReviewTable)
        assert str(table.get_cell(str(i), "decision")) == "?✎"
        assert "1 decided" in str(review.query_one("#review-status", Static).render())

        # Searching the answers narrows the list to the ones that contain the words.
        word = max(again.responses.texts[i].split(), key=len).lower()
        await pilot.press("a", "slash", *word, "enter")
        await pilot.pause()
        assert 0 < len(review.view) < len(again.responses)
        assert all(word in again.responses.texts[j].lower() for j in review.view)
        assert i in review.view.tolist()
