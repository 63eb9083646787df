"""Snapshots of the main screens at 80x24 (the smallest terminal parm supports) and 120x40: Load
with the sample file, Settings, Run before a run, Results (summary and tuning), Review (with
decisions, and after a re-run), Export and the resume question. Results come from seeded
synthetic data; nothing time-dependent or machine-dependent is on these screens."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, one_item_session, synthetic_result
from textual.widgets import Input

from engine.saved.decisions import open_store
from engine.saved.store import SavedResult, SavedSession
from parm_tui.app import ParmApp
from parm_tui.screens.resume import ResumeModal
from parm_tui.screens.review import ReviewScreen

pytestmark = pytest.mark.slow

SAMPLE = Path("sample_data") / "plant_growth.csv"
SIZES = {"80x24": (80, 24), "120x40": (120, 40)}


@pytest.fixture
def in_repo(monkeypatch, tmp_path):
    """Paths shown relative to the repository, and an empty recent-files list."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PARM_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture(scope="module")
def sample_session():
    """A result from seeded synthetic embeddings (not the model's CPU embeddings, whose last
    digits may differ between machines), with a second rater, intervals and cross-fitting."""
    return one_item_session(synthetic_result(300, top_k=(5, 10, 20), power=[1.0, 2.0]))


async def loaded(pilot):
    """Wait for the file to be read; stop the cursor blinking so the frame is always the same."""
    await pilot.app.workers.wait_for_complete()
    await settle(pilot)


async def settle(pilot):
    """The screen as it stays: no blinking cursor, every worker done (a busy machine finishes
    them later than a quiet one), what they posted handled."""
    for text_input in pilot.app.screen.query(Input):
        text_input.cursor_blink = False
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def show(session, name: str, *keys: str, store=None):
    """Show a screen of `session` (with this decision store) as a finished run leaves it."""

    async def run_before(pilot):
        if store is not None:  # a store of synthetic responses: no file chose it
            pilot.app.state = replace(pilot.app.state, store=store)
        pilot.app.finish_run(session, None)
        await pilot.app.action_show(name)
        await pilot.press(*keys)
        await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_load_screen_with_the_sample_file(snap_compare, in_repo, size):
    assert snap_compare(ParmApp(SAMPLE), terminal_size=SIZES[size], run_before=loaded)


def test_load_screen_with_a_missing_file(snap_compare, in_repo):
    app = ParmApp(Path("no-such-file.csv"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded)


@pytest.mark.parametrize("size", SIZES)
def test_settings_screen(snap_compare, in_repo, size):
    async def run_before(pilot):
        await pilot.press("f3", "tab", "tab", "tab", "tab")  # focus on the power mode select
        await settle(pilot)

    assert snap_compare(ParmApp(), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_run_screen_before_a_run_lists_its_settings(snap_compare, in_repo, size):
    async def run_before(pilot):
        await loaded(pilot)
        await pilot.press("f4")
        await settle(pilot)

    assert snap_compare(ParmApp(SAMPLE), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_results_screen_summary(snap_compare, in_repo, sample_session, size):
    run_before = show(sample_session, "results")
    assert snap_compare(ParmApp(), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_results_screen_tuning_tab(snap_compare, in_repo, sample_session, size):
    run_before = show(sample_session, "results", "2")
    assert snap_compare(ParmApp(), terminal_size=SIZES[size], run_before=run_before)


def with_decisions(session, folder: Path):
    """A decision store with the two most severe responses decided (keep, and change)."""
    review = session.review
    source = folder / "answers.csv"
    source.write_text("placeholder\n")
    store = open_store(source, review.responses, folder / "decisions.sqlite3")
    responses = review.responses
    first, second = (int(i) for i in review.review_order()[:2])
    # Both decided on this run, so the screen is a first run's (no re-run line).
    context = review.run_context(first)
    store.record(
        int(responses.rows[first]),
        responses.ids[first],
        responses.texts[first],
        "keep",
        context=context,
    )
    human = responses.labels[responses.scores[second]]
    new = next(label for label in responses.labels if label != human)
    row, rid, text = int(responses.rows[second]), responses.ids[second], responses.texts[second]
    store.record(row, rid, text, "change", new, "two marks", context=review.run_context(second))
    return store


@pytest.mark.parametrize("size", SIZES)
def test_review_screen_with_decisions(snap_compare, in_repo, sample_session, tmp_path, size):
    store = with_decisions(sample_session, tmp_path)

    run_before = show(sample_session, "review", store=store)

    assert snap_compare(ParmApp(), terminal_size=SIZES[size], run_before=run_before)
    store.close()


def test_review_screen_after_a_rerun(snap_compare, in_repo, sample_session, tmp_path):
    store = with_decisions(sample_session, tmp_path)
    review = sample_session.review
    flagged = np.flatnonzero(review.flagged)
    previous = [int(review.responses.rows[i]) for i in flagged[:-4]]

    async def run_before(pilot):
        screen = partial(ReviewScreen, previous_flagged_rows=previous)
        await pilot.app.push_screen(screen(review, store))
        await settle(pilot)

    assert snap_compare(ParmApp(), terminal_size=(80, 24), run_before=run_before)
    store.close()


@pytest.mark.parametrize("size", SIZES)
def test_export_screen(snap_compare, in_repo, sample_session, monkeypatch, size):
    monkeypatch.chdir("/")  # the folder is shown as an absolute path: the same on every machine
    run_before = show(sample_session, "export")
    assert snap_compare(ParmApp(), terminal_size=SIZES[size], run_before=run_before)


@pytest.fixture(scope="module")
def session_result():
    """A seeded synthetic session of two items scored by four raters, r0 lenient, with noise
    so that some scores are flagged."""
    from helpers import run_frame, session_config, session_frame

    frame, vectors = session_frame(items=(("volcano", 120, 3), ("fractions", 100, 4)), seed=5)
    rng = np.random.default_rng(6)
    frame["rater"] = [f"r{k}" for k in rng.integers(0, 4, len(frame))]
    scores = frame["score"].astype(int).to_numpy().copy()
    noisy = rng.random(len(frame)) < 0.15
    scores[noisy] = rng.integers(0, 3, int(noisy.sum()))
    lenient = (frame["rater"] == "r0").to_numpy() & (rng.random(len(frame)) < 0.4)
    scores[lenient] = np.minimum(scores[lenient] + 1, 2)
    frame["score"] = [str(v) for v in scores]
    settings = session_config(rater_column="rater", bootstrap_samples=20)
    return run_frame(frame, vectors, settings)


@pytest.mark.parametrize("tab", ["5", "6"])
def test_results_of_a_session_items_and_raters(snap_compare, in_repo, session_result, tab):
    run_before = show(session_result, "results", tab)
    assert snap_compare(ParmApp(), terminal_size=(80, 24), run_before=run_before)


@pytest.fixture(scope="module")
def skipped_item_session():
    """Items of a Mohler-like file read twice, cross-fitted (with the session model), one of
    them too small for its scores and one skipped (every answer has the same score)."""
    from helpers import run_frame, session_config, session_frame

    items = (("1.1", 29, 4), ("12.11", 90, 3), ("8.2", 25, 1))
    frame, vectors = session_frame(items=items, seed=3)
    rng = np.random.default_rng(4)
    second = frame["score"].astype(int).to_numpy().copy()
    moved = rng.random(second.size) < 0.2
    second[moved] = np.maximum(second[moved] - 1, 0)
    frame["score2"] = [str(v) for v in second]
    config = session_config(second_score_column="score2", cross_fit_folds=3)
    return run_frame(frame, vectors, config)


def test_the_items_tab_keeps_its_figures_in_view_beside_a_skipped_item(
    snap_compare, in_repo, skipped_item_session
):
    """At 80x24 the cross-fitted figures, flags and the raters' kappa are in view; the skipped
    item's reason is under the table, not in a figure's column (it pushed them off screen)."""
    assert skipped_item_session.items.skipped  # the file's third item is skipped
    run_before = show(skipped_item_session, "results", "5")
    assert snap_compare(ParmApp(), terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_review_of_a_session(snap_compare, in_repo, session_result, tmp_path, size):
    review = session_result.review
    source = tmp_path / "session.csv"
    source.write_text("placeholder\n")
    store = open_store(source, review.responses, tmp_path / "d.sqlite3", review.on_scale)

    run_before = show(session_result, "review", store=store)

    assert snap_compare(ParmApp(), terminal_size=SIZES[size], run_before=run_before)
    store.close()


@pytest.fixture(scope="module")
def multi_read_session():
    """A session with answers read once, twice or three times by four raters."""
    from helpers import MULTI_READ_SETTINGS, multi_read_frame, run_frame, session_config

    frame, vectors, _ = multi_read_frame()
    return run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS))


def test_results_of_a_session_read_twice_or_more_raters_tab(
    snap_compare, in_repo, multi_read_session
):
    """The Raters tab of a session with answers read once, twice or three times: the rater
    table, then every pair of raters with its figures, alpha and the consensus."""
    run_before = show(multi_read_session, "results", "6")
    assert snap_compare(ParmApp(), terminal_size=(120, 56), run_before=run_before)


def test_the_third_read_view_at_80x24(snap_compare, in_repo, multi_read_session, tmp_path):
    """`T`: the answers whose consensus needs a third read; the view's name whole in its
    selector, the footer naming r and T."""
    review = multi_read_session.review
    source = tmp_path / "reads.csv"
    source.write_text("placeholder\n")
    store = open_store(source, review.responses, tmp_path / "d.sqlite3", review.on_scale)
    run_before = show(multi_read_session, "review", "T", store=store)
    assert snap_compare(ParmApp(), terminal_size=(80, 24), run_before=run_before)
    store.close()


# A Mohler-like scale: 0-5 in half points, with the quarter points two graders' means give.
QUARTERS = ["0", "0.5", "1", "1.25", "1.5", "2", "2.5", "3", "3.25", "3.5", "3.75", "4", "4.25",
            "4.5", "4.75", "5"]  # fmt: skip


def test_the_score_picker_shows_every_score_at_80x24(snap_compare, in_repo):
    """All 16 scores in view, the human score and the model's marked, the model's chosen."""
    from parm_tui.widgets.review_dialogs import ScoreModal

    async def run_before(pilot):
        await pilot.app.push_screen(ScoreModal(468, QUARTERS, "4", "1"))
        await settle(pilot)

    assert snap_compare(ParmApp(), terminal_size=(80, 24), run_before=run_before)


def test_the_read_dialog_takes_the_rater_first_at_80x24(snap_compare, in_repo):
    """The rater field has the keys: a typed name replaced the one offered."""
    from rich.text import Text

    from parm_tui.widgets.review_dialogs import ReadModal

    reads = Text("reads: 1st 4 · 2nd 5 · consensus 5 (p 1.00)")
    dialog = ReadModal(468, QUARTERS, "root", ["lead"], reads, {"4": "1st", "5": "2nd"})

    async def run_before(pilot):
        await pilot.app.push_screen(dialog)
        await pilot.press(*"lead")
        await settle(pilot)

    assert snap_compare(ParmApp(), terminal_size=(80, 24), run_before=run_before)


def test_the_resume_question(snap_compare, in_repo, sample_session):
    entry = SavedResult("result-0", None, "run-1", "abc", 758, tuple(range(1, 164)))
    session = SavedSession(
        Path("/data/sessions/abc"),
        "abc",
        "/home/lead/plant_growth.csv",
        "2026-11-21T16:05:00+00:00",
        sample_session.config.to_dict(),
        (entry,),
    )

    async def run_before(pilot):
        await pilot.app.push_screen(ResumeModal(session, sample_session.config, 12))
        await settle(pilot)

    assert snap_compare(ParmApp(), terminal_size=(80, 24), run_before=run_before)


def test_widgets_carry_their_own_styles_and_screens_keep_theirs_in_parm_tcss():
    """ARCHITECTURE: a widget's own look lives in its DEFAULT_CSS (parm_tui/widgets), the app's
    and the screens' layout in parm_tui/parm.tcss, which overrides a widget's defaults where a
    screen needs to; no module outside the widgets carries CSS of its own, and no widget's rule
    is declared in both places."""
    package = ROOT / "parm_tui"
    outside = [
        str(path.relative_to(ROOT))
        for path in package.rglob("*.py")
        if path.parent.name != "widgets"
        and ("DEFAULT_CSS" in path.read_text() or "\n    CSS = " in path.read_text())
    ]
    assert outside == []
    sheet = (package / "parm.tcss").read_text()
    widgets = [p for p in (package / "widgets").glob("*.py") if "DEFAULT_CSS" in p.read_text()]
    assert len(widgets) >= 5, "widgets keep their own styles in DEFAULT_CSS"
    for path in (package / "widgets").glob("*.py"):
        for css in re.findall(r'DEFAULT_CSS = """(.*?)"""', path.read_text(), re.S):
            for selector in re.findall(r"^\s*([^{}\n]+?)\s*\{", css, re.M):
                assert not re.search(rf"^{re.escape(selector)}\s*\{{", sheet, re.M), (
                    f"{path.name}: {selector!r} is also in parm.tcss"
                )
