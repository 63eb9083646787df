"""CLI = app: both drive the same workspace (engine.workspace), so one check is left: `parm audit`
writes the output set the app's Export writes (run ids, dates and timings aside). And the
decisions a rater-lead makes in the app reach `parm export`'s scores_reviewed.csv and reports
without anything being run again."""

from __future__ import annotations

import csv
import json

import pytest
from helpers import load_and_run, open_review, output_differences, read_rows, wait_for
from textual.widgets import Input
from typer.testing import CliRunner

from parm_tui.app import ParmApp
from parm_tui.cli import app as cli_app
from parm_tui.screens.export import ExportScreen
from parm_tui.widgets.review_dialogs import ScoreModal

pytestmark = pytest.mark.slow
SIZE = (100, 30)


def invoke(*args):
    result = CliRunner().invoke(cli_app, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


async def export_from_the_app(pilot, folder) -> None:
    app = pilot.app
    await pilot.press("f7")
    await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
    app.screen.query_one("#export-folder", Input).value = str(folder)
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: (folder / "parm-manifest.json").exists(), "the export")
    await pilot.pause()


async def test_parm_audit_writes_the_files_and_report_the_apps_export_writes(
    sample_copy, sample_embeddings_file, tmp_path
):
    app_out, cli_out = tmp_path / "app", tmp_path / "cli"
    app = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=SIZE) as pilot:
        await load_and_run(pilot)
        assert app.state.config.second_score_column == "score2"  # the Load screen's guess
        await export_from_the_app(pilot, app_out)
    code, output = invoke(
        "audit", sample_copy, "--embeddings", sample_embeddings_file, "--out", cli_out, "-q"
    )
    assert code == 0, output
    assert output_differences(app_out, cli_out) == []


async def test_decisions_made_in_the_app_reach_parm_export(
    sample_copy, sample_embeddings_file, tmp_path
):
    out = tmp_path / "exported"
    app = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=SIZE) as pilot:
        await load_and_run(pilot)
        review = await open_review(pilot)
        responses = app.state.responses
        decided = []
        keys = {"keep": "o", "change": "c", "unsure": "question_mark"}  # the review's own keys
        for action in ("keep", "change", "unsure"):
            i = review.current()
            row, human = int(responses.rows[i]), responses.labels[responses.scores[i]]
            await pilot.press(keys[action])
            new = None
            if action == "change":
                await wait_for(pilot, lambda: isinstance(app.screen, ScoreModal), "the dialog")
                new = next(label for label in responses.labels if label != human)
                await pilot.press(new, "enter")
            await pilot.pause()
            decided.append((row, action, human, new))
        run_id = app.state.result.run_id
    code, output = invoke("export", sample_copy, "--out", out)
    assert code == 0, output
    assert f"Exported run {run_id}" in output and "3 decisions, 1 score changed." in output
    rows = read_rows(out / "scores_reviewed.csv")
    with sample_copy.open(newline="", encoding="utf-8") as handle:
        source = list(csv.DictReader(handle))
    assert len(rows) == len(source)
    assert [{k: r[k] for k in source[0]} for r in rows] == source  # every row, as it was
    by_row = {k + 1: r for k, r in enumerate(rows)}
    for row, action, human, new in decided:
        assert by_row[row]["decision"] == action
        assert by_row[row]["final_score"] == (new if action == "change" else human)
    undecided = [r for k, r in by_row.items() if k not in {d[0] for d in decided}]
    assert all(r["decision"] == "" and r["final_score"] == r["score"] for r in undecided)
    assert {r["run_id"] for r in rows} == {run_id}
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    counts = report["review"]["counts"]["flagged"]
    assert (counts["decided"], counts["keep"], counts["change"], counts["unsure"]) == (3, 1, 1, 1)
    assert report["review"]["scores_changed"] == 1
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "The review changed 1 score (3 decisions: 1 kept, 1 changed, 1 unsure)" in page
    assert "## Review decisions" in (out / "report.md").read_text(encoding="utf-8")
