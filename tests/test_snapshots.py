"""A few snapshots at 80x24 (the smallest terminal parm supports): the Load screen with the
sample file, and the Results screen of a synthetic, seeded result. Nothing time-dependent or
machine-dependent is on these screens."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT
from test_app_review import synthetic_result
from textual.widgets import Input

from parm_tui.app import ParmApp

SAMPLE = Path("sample_data") / "plant_growth.csv"


@pytest.fixture
def in_repo(monkeypatch, tmp_path):
    """Paths shown relative to the repository, and an empty recent-files list."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PARM_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture(scope="module")
def sample_result():
    """A result from seeded synthetic embeddings (not the model's CPU embeddings, whose last
    digits may differ between machines), with a second rater, intervals and cross-fitting."""
    return synthetic_result(300, top_k=(5, 10, 20), power=[1.0, 2.0])


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


def test_all_styling_lives_in_parm_tcss():
    """ARCHITECTURE: parm_tui/parm.tcss holds all styling, so no widget carries its own CSS."""
    package = ROOT / "parm_tui"
    inline = [
        str(path.relative_to(ROOT))
        for path in package.rglob("*.py")
        if "DEFAULT_CSS" in path.read_text() or "\n    CSS = " in path.read_text()
    ]
    assert inline == []
