"""A few snapshots at 80x24 (the smallest terminal parm supports): the Load screen with the
sample file, and the Results screen. Nothing time-dependent is on these screens."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT
from textual.widgets import Input

from parm_tui.app import ParmApp

SAMPLE = Path("sample_data") / "plant_growth.csv"


@pytest.fixture
def in_repo(monkeypatch, tmp_path):
    """Paths shown relative to the repository, and an empty recent-files list."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PARM_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture(scope="module")
def sample_result(sample_responses, sample_embeddings, sample_config):
    from engine.pipeline import run_audit

    return run_audit(sample_responses, sample_config, embeddings=sample_embeddings)


async def loaded(pilot):
    """Wait for the file to be read; stop the cursor blinking so the frame is always the same."""
    await pilot.app.workers.wait_for_complete()
    for text_input in pilot.app.screen.query(Input):
        text_input.cursor_blink = False
    await pilot.pause()


def test_load_screen_with_the_sample_file(snap_compare, in_repo):
    assert snap_compare(ParmApp(SAMPLE), terminal_size=(80, 24), run_before=loaded)


def test_load_screen_with_a_missing_file(snap_compare, in_repo):
    app = ParmApp(Path("no-such-file.csv"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded)


def test_results_screen_summary(snap_compare, in_repo, sample_result):
    async def show(pilot):
        pilot.app.result = sample_result
        await pilot.app.action_show("results")
        await pilot.pause()

    assert snap_compare(ParmApp(), terminal_size=(80, 24), run_before=show)


def test_results_screen_tuning_tab(snap_compare, in_repo, sample_result):
    async def show(pilot):
        pilot.app.result = sample_result
        await pilot.app.action_show("results")
        await pilot.press("2")
        await pilot.pause()

    assert snap_compare(ParmApp(), terminal_size=(80, 24), run_before=show)
