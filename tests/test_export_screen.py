"""The export screen on its own: the chosen files are written, nothing is replaced without
asking, and problems are shown as the engine's message."""

from __future__ import annotations

import contextlib
import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from helpers import Host, one_item_session, synthetic_result
from textual.app import App
from textual.widgets import Checkbox, Input, Static

import parm_tui.app
from engine.saved.decisions import open_store
from parm_tui.screens.export import ConfirmOverwrite, ExportScreen

PARM_CSS = Path(parm_tui.app.__file__).with_name("parm.tcss")


@pytest.fixture(scope="module")
def result():
    return synthetic_result(120, second=False)


def export_host(result, store):
    return Host(one_item_session(result), store, ExportScreen)


async def export_to(pilot, folder) -> None:
    screen = pilot.app.screen
    screen.query_one("#export-folder", Input).value = str(folder)
    await pilot.press("ctrl+s")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def folder_holding(tmp_path, name: str, text: str) -> Path:
    """An output folder that already holds one file, `name`, from an earlier export."""
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / name).write_text(text)
    return folder


@contextlib.contextmanager
def store_keeping_one(result, tmp_path):
    """A decision store of a stand-in source file that keeps the first answer's score."""
    source = tmp_path / "answers.csv"
    source.write_text("x\n")
    responses = result.responses
    with open_store(source, responses, tmp_path / "d.sqlite3") as store:
        store.record(int(responses.rows[0]), responses.ids[0], responses.texts[0], "keep")
        yield store


def status(pilot) -> str:
    return str(pilot.app.screen.query_one("#export-status", Static).render())


async def test_only_the_chosen_outputs_are_written(result, tmp_path):
    out = tmp_path / "out"
    async with export_host(result, None).run_test(size=(80, 24)) as pilot:
        pilot.app.screen.query_one("#export-tuning", Checkbox).value = False
        pilot.app.screen.query_one("#export-report", Checkbox).value = False
        await export_to(pilot, out)
        assert sorted(p.name for p in out.iterdir()) == ["parm-manifest.json", "predictions.csv"]
        assert "Wrote 2 file(s)" in status(pilot) and "parm-manifest.json" in status(pilot)


async def test_without_a_store_decisions_cannot_be_chosen(result, tmp_path):
    async with export_host(result, None).run_test(size=(80, 24)) as pilot:
        box = pilot.app.screen.query_one("#export-decisions", Checkbox)
        assert box.disabled and not box.value
        await export_to(pilot, tmp_path / "out")
        assert not (tmp_path / "out" / "decisions.csv").exists()


async def test_existing_files_are_replaced_only_after_yes(result, tmp_path):
    out = folder_holding(tmp_path, "decisions.csv", "older decisions\n")
    with store_keeping_one(result, tmp_path) as store:
        async with export_host(result, store).run_test(size=(80, 24)) as pilot:
            await export_to(pilot, out)
            assert isinstance(pilot.app.screen, ConfirmOverwrite)
            assert pilot.app.screen.existing == ["decisions.csv"]
            await pilot.press("n")
            await pilot.pause()
            assert (out / "decisions.csv").read_text() == "older decisions\n"
            assert not (out / "predictions.csv").exists()
            await pilot.press("ctrl+s")
            await pilot.pause()
            await pilot.press("y")
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
    assert "keep" in (out / "decisions.csv").read_text()
    assert (out / "predictions.csv").exists()


async def test_a_folder_that_is_a_file_shows_the_engine_message(result, tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("x")
    async with export_host(result, None).run_test(size=(80, 24)) as pilot:
        await export_to(pilot, blocked)
        assert "exists and is not a folder" in status(pilot)
        assert str(blocked) in status(pilot)


async def test_a_tilde_folder_is_expanded(result, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    async with export_host(result, None).run_test(size=(80, 24)) as pilot:
        await export_to(pilot, "~/exports")
        assert (tmp_path / "exports" / "predictions.csv").exists()


def test_decisions_are_written_in_the_same_all_or_nothing_batch(result, tmp_path, monkeypatch):
    """A failure while writing decisions.csv leaves every earlier output untouched."""
    import engine.core.files
    from engine import workspace
    from engine.core.errors import ExportError
    from engine.outputs.write import DECISIONS_FILE

    folder = folder_holding(tmp_path, "predictions.csv", "old predictions\n")
    real_stage = engine.core.files._stage

    def failing_stage(path, text):
        if path.name == DECISIONS_FILE:
            raise ExportError(f"Could not write {path}: the disk is full")
        return real_stage(path, text)

    monkeypatch.setattr(engine.core.files, "_stage", failing_stage)
    with store_keeping_one(result, tmp_path) as store, pytest.raises(ExportError):
        workspace.export(
            one_item_session(result), folder, ["predictions.csv", DECISIONS_FILE], store,
            force=True,
        )  # fmt: skip
    assert (folder / "predictions.csv").read_text() == "old predictions\n"
    assert sorted(p.name for p in folder.iterdir()) == ["predictions.csv"]


class TableHost(App):
    """The export screen with the input file as read, as ParmApp gives it."""

    CSS_PATH = PARM_CSS

    def __init__(self, session, store, table) -> None:
        super().__init__()
        self.session, self.store, self.table = session, store, table

    def on_mount(self) -> None:
        self.push_screen(ExportScreen(self.session, self.store, self.table))


def input_table(result):
    responses = result.responses
    labels = responses.labels
    return pd.DataFrame(
        {
            "id": responses.ids,
            "answer": responses.texts,
            "score": [labels[c] for c in responses.scores],
        }
    )


async def test_every_file_parm_audit_writes_is_offered_and_chosen(result, tmp_path):
    out = tmp_path / "out"
    source = tmp_path / "synthetic.csv"
    source.write_text("placeholder\n")
    responses = result.responses
    with open_store(source, responses, tmp_path / "d.sqlite3") as store:
        human = responses.labels[responses.scores[0]]
        new = next(label for label in responses.labels if label != human)
        store.record(int(responses.rows[0]), responses.ids[0], responses.texts[0], "change", new)
        host = TableHost(one_item_session(result), store, input_table(result))
        async with host.run_test(size=(80, 24)) as pilot:
            boxes = pilot.app.screen.query(Checkbox)
            # Every file parm audit writes; the workbook is offered, off until chosen.
            assert all(box.value for box in boxes if box.id != "export-workbook")
            assert not pilot.app.screen.query_one("#export-workbook", Checkbox).value
            assert "report.html" in str(pilot.app.screen.query_one("#export-report").label)
            await export_to(pilot, out)
            # The list of what was written fits at 80x24, in view, one name after another.
            await pilot.pause(0.2)
            shown = pilot.app.screen.query_one("#export-status", Static)
            # whole on screen above the footer (its height follows the folder's path length)
            assert shown.region.y > 0 and shown.region.bottom <= 23
            assert f"Wrote 9 file(s) to {out}:" in status(pilot)
            assert "report.html, warnings.txt, decisions.csv" in " ".join(status(pilot).split())
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["predictions.csv", "tuning.csv", "report.json", "report.md", "report.html",
         "warnings.txt", "decisions.csv", "scores_reviewed.csv", "parm-manifest.json"]
    )  # fmt: skip
    with (out / "scores_reviewed.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0]["final_score"] == new and rows[0]["decision"] == "change"
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["review"]["scores_changed"] == 1


async def test_without_the_input_table_scores_reviewed_cannot_be_chosen(result, tmp_path):
    async with export_host(result, None).run_test(size=(80, 24)) as pilot:
        box = pilot.app.screen.query_one("#export-reviewed", Checkbox)
        assert box.disabled and not box.value
        assert "not loaded" in str(box.label)
        await export_to(pilot, tmp_path / "out")
    assert not (tmp_path / "out" / "scores_reviewed.csv").exists()
    assert (tmp_path / "out" / "report.html").exists()


async def test_a_session_with_raters_offers_the_bias_and_feedback_files(tmp_path):
    from helpers import audit_planted, planted_session

    frame, vectors = planted_session(seed=2, items=2, per_item=300)
    session = audit_planted(frame, vectors)
    out = tmp_path / "out"
    async with Host(session, None, ExportScreen).run_test(size=(80, 30)) as pilot:
        screen = pilot.app.screen
        raters = screen.query_one("#export-raters", Checkbox)
        assert raters.value and "rater_item_bias.csv, rater_feedback.csv" in str(raters.label)
        await export_to(pilot, out)
    names = {p.name for p in out.iterdir()}
    assert {"rater_item_bias.csv", "rater_feedback.csv", "raters.csv", "items.csv"} <= names


async def test_a_colleagues_decisions_are_imported_into_the_open_review(result, tmp_path):
    from helpers import PartialResult, record

    from engine.outputs.write import write_decisions

    responses = result.responses
    source = tmp_path / "synthetic.csv"
    with open_store(source, responses, tmp_path / "ben.sqlite3", reviewer="ben") as bens:
        record(bens, responses, 3, "keep", note="fine")
        exported = write_decisions(bens, PartialResult(responses), tmp_path / "ben")
    with open_store(source, responses, tmp_path / "ana.sqlite3", reviewer="ana") as store:
        async with export_host(result, store).run_test(size=(80, 24)) as pilot:
            screen = pilot.app.screen
            screen.query_one("#import-path", Input).value = str(exported)
            await pilot.press("ctrl+i")
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            said = str(screen.query_one("#import-status", Static).render())
            assert "1 decision(s)" in said and "1 taken" in said
            assert "(1 decision)" in str(screen.query_one("#export-decisions").label)
        assert store.get(int(responses.rows[3])).reviewer == "ben"


async def test_the_folder_offered_is_where_the_run_last_wrote(result, tmp_path):
    """`parm audit --out` (or an earlier export) wrote the run's outputs there: Export offers
    that folder, not ./parm-out, and says the folder once written to."""
    from functools import partial

    class Keeper(Host):  # told the folder, as ParmApp is (it keeps it with the saved run)
        folders: list = []

        def on_export_screen_written(self, message) -> None:
            self.folders.append(message.folder)

    written = tmp_path / "audit-out"
    screen = partial(ExportScreen, folder=str(written))
    async with Keeper(one_item_session(result), None, screen).run_test(size=(80, 24)) as pilot:
        assert pilot.app.screen.query_one("#export-folder", Input).value == str(written)
        await export_to(pilot, written)
        assert pilot.app.folders == [written]


async def test_the_decisions_line_is_whole_at_80_columns(result, source, database):
    """The decisions.csv choice says its counts in a line that 80 columns show whole."""
    from engine.saved.decisions import open_store

    session = one_item_session(result)
    store = open_store(source, session.review.responses, database)
    responses = session.review.responses
    for i in range(3):
        store.record(int(responses.rows[i]), responses.ids[i], responses.texts[i], "keep")
    async with export_host(result, store).run_test(size=(80, 24)) as pilot:
        box = pilot.app.screen.query_one("#export-decisions", Checkbox)
        label = str(box.label)
        assert label == "decisions.csv (3 decisions)"
        assert label in box.render_line(0).text
    store.close()


async def test_the_workbook_is_written_when_chosen(result, tmp_path):
    out = tmp_path / "out"
    async with export_host(result, None).run_test(size=(80, 24)) as pilot:
        screen = pilot.app.screen
        for key in ("predictions", "tuning", "report"):
            screen.query_one(f"#export-{key}", Checkbox).value = False
        screen.query_one("#export-workbook", Checkbox).value = True
        await export_to(pilot, out)
    assert sorted(p.name for p in out.iterdir()) == ["parm-manifest.json", "results.xlsx"]
    from openpyxl import load_workbook

    assert load_workbook(out / "results.xlsx").sheetnames[:3] == ["about", "predictions", "tuning"]


async def test_ctrl_t_writes_todays_lists_alone(tmp_path):
    """One key: backreads.csv, third_reads.csv and rater_status.csv (and the manifest)."""
    from helpers import MULTI_READ_SETTINGS, multi_read_frame, run_frame, session_config

    frame, vectors, _ = multi_read_frame(n=(40, 30))
    session = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS))
    out = tmp_path / "lists"
    async with Host(session, None, ExportScreen).run_test(size=(80, 24)) as pilot:
        pilot.app.screen.query_one("#export-folder", Input).value = str(out)
        await pilot.press("ctrl+t")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert sorted(p.name for p in out.iterdir()) == [
            "backreads.csv", "parm-manifest.json", "rater_status.csv", "third_reads.csv"
        ]  # fmt: skip
        assert "Wrote 4 file(s)" in status(pilot)
    async with export_host(synthetic_result(60, second=False), None).run_test() as pilot:
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert "no lists" in status(pilot)
