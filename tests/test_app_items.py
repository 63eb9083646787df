"""Items and raters in the app: a session file's item and rater columns are guessed, every item is
audited on its own, the Results screen shows the items overview and the raters and switches
between items, the review merges all items and filters by item and rater, and Export writes
items.csv and raters.csv. Run on seeded synthetic vectors given as --embeddings."""

from __future__ import annotations

import contextlib
import csv

import numpy as np
import pytest
from helpers import session_frame, wait_for
from textual.widgets import DataTable, Input, Select, Static, Tab, TabbedContent

from engine.core.numbers import signed
from parm_tui.app import ParmApp
from parm_tui.screens.results import ResultsScreen
from parm_tui.screens.resume import ResumeModal
from parm_tui.screens.review import ReviewScreen
from parm_tui.widgets.review_dialogs import ScoreModal

pytestmark = pytest.mark.slow

SIZE = (100, 30)
FAST = ["similarity_top_k=[5,10]", "bootstrap_samples=20", "cross_fit_folds=0"]


@pytest.fixture
def session_file(tmp_path):
    frame, vectors = session_frame(items=(("A", 70, 3), ("B", 60, 4)), seed=3)
    path = tmp_path / "session.csv"
    frame.to_csv(path, index=False)
    np.save(tmp_path / "session.npy", vectors)
    return path, tmp_path / "session.npy", frame


async def run_session_in_app(pilot):
    app = pilot.app
    await wait_for(pilot, lambda: app.state.items is not None, "the file")
    await app.start_audit()
    await wait_for(pilot, lambda: app.state.result is not None, "the audit")
    await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen), "the results")
    # Let the results screen finish mounting: leaving the app mid-mount trips Textual's Header.
    await pilot.pause()
    return app.state.result


@contextlib.asynccontextmanager
async def audited(file, overrides: list[str], size=SIZE):
    """The app on a session file (path, vectors, frame) run to its results: (app, pilot, the
    session's result)."""
    path, vectors, _ = file
    app = ParmApp(path, embeddings_path=vectors, overrides=overrides)
    async with app.run_test(size=size) as pilot:
        yield app, pilot, await run_session_in_app(pilot)


async def review_all(pilot, item: str | None = None):
    """The review screen listing every response (of one item when given)."""
    await run_session_in_app(pilot)
    await pilot.press("f6")
    review = pilot.app.screen
    assert isinstance(review, ReviewScreen)
    review.query_one("#filter-view", Select).value = "all"
    if item is not None:
        review.query_one("#filter-item", Select).value = item
    await pilot.pause()
    return review


async def decide_one(pilot) -> None:
    """Open the review of every response and keep the first."""
    await pilot.press("f6")
    pilot.app.screen.query_one("#filter-view", Select).value = "all"
    await pilot.pause()
    await pilot.press("o")
    await pilot.pause()


async def test_the_item_and_rater_columns_are_guessed_and_each_item_audited(session_file):
    path, vectors, frame = session_file
    app = ParmApp(path, embeddings_path=vectors, overrides=FAST)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state.items is not None, "the file")
        chosen = {s.id: s.value for s in app.get_screen("load").query(Select)}
        assert chosen["col-item"] == "item" and chosen["col-rater"] == "rater"
        validation = str(app.get_screen("load").query_one("#validation", Static).render())
        assert "2 item(s), 130 responses" in validation and "4 raters" in validation
        session = await run_session_in_app(pilot)
        assert [r.responses.item for r in session.results] == list(dict.fromkeys(frame["item"]))
        assert {r.responses.labels for r in session.results} == {
            ("0", "1", "2"),
            ("0", "1", "2", "3"),
        }
        assert session.raters is not None


async def test_results_show_the_items_and_the_raters_and_switch_items(session_file):
    async with audited(session_file, FAST) as (app, pilot, session):
        screen = app.screen
        await pilot.press("5")
        assert screen.query_one("#results-tabs", TabbedContent).active == "items"
        overview = screen.query_one("#results-items", DataTable)
        names = [str(overview.get_row_at(n)[0]) for n in range(overview.row_count)]
        assert names == [r.responses.item for r in session.results]
        await pilot.press("6")
        raters = screen.query_one("#results-raters", DataTable)
        assert str(raters.get_row_at(0)[0]) == session.raters.rows[0].rater
        # The per-item tabs follow the item chosen at the top.
        await pilot.press("1")
        screen.query_one("#results-item", Select).value = 1
        await pilot.pause()
        second = session.results[1]
        assert app.screen.result is second
        headline = str(app.screen.query_one("#results-headline", Static).render())
        assert f"Item {second.responses.item}" in headline


async def test_the_review_merges_every_item_and_filters_by_item_and_rater(session_file):
    path, vectors, frame = session_file
    app = ParmApp(path, embeddings_path=vectors, overrides=FAST)
    async with app.run_test(size=SIZE) as pilot:
        review = await review_all(pilot)
        assert review.view.tolist() == review.review.review_order().tolist()
        assert len(review.view) == len(frame)
        review.query_one("#filter-item", Select).value = "B"
        await pilot.pause()
        assert {review.review.items[i] for i in review.view} == {"B"}
        assert len(review.view) == (frame["item"] == "B").sum()
        review.query_one("#filter-rater", Select).value = "r1"
        await pilot.pause()
        expected = ((frame["item"] == "B") & (frame["rater"] == "r1")).sum()
        assert len(review.view) == expected
        header = str(review.query_one("#detail-header", Static).render())
        assert "item B" in header and "rater r1" in header


async def test_a_new_score_is_chosen_from_the_items_own_scale(session_file):
    path, vectors, _ = session_file
    app = ParmApp(path, embeddings_path=vectors, overrides=FAST)
    async with app.run_test(size=SIZE) as pilot:
        review = await review_all(pilot, item="A")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ScoreModal), "the score dialog")
        human = review.review.responses.labels[review.review.responses.scores[review.shown()]]
        assert set(app.screen.choices) == {"0", "1", "2"} - {human}


async def test_export_writes_items_and_raters_and_decisions_carry_the_item(session_file, tmp_path):
    async with audited(session_file, FAST) as (app, pilot, _):
        await decide_one(pilot)
        await pilot.press("f7")
        await pilot.pause()
        app.screen.query_one("#export-folder", Input).value = str(tmp_path / "out")
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        await pilot.pause()
    names = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"items.csv", "raters.csv", "decisions.csv", "predictions.csv"} <= names
    with (tmp_path / "out" / "decisions.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 1 and rows[0]["item"] in {"A", "B"}


async def test_a_session_of_items_resumes_after_a_restart(session_file):
    path, vectors, _ = session_file
    first = ParmApp(path, embeddings_path=vectors, overrides=FAST)
    async with first.run_test(size=SIZE) as pilot:
        session = await run_session_in_app(pilot)
        await decide_one(pilot)
        queue = pilot.app.screen.view.copy()
        await pilot.press("q")
    again = ParmApp(path, overrides=FAST)
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(again.screen, ResumeModal), "the question")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(again.screen, ReviewScreen), "the review")
        assert [r.responses.item for r in again.state.result.results] == [
            r.responses.item for r in session.results
        ]
        assert again.state.result.raters is not None
        again.screen.query_one("#filter-view", Select).value = "all"
        await pilot.pause()
        assert again.screen.view.tolist() == queue.tolist()
        assert len(again.state.store.all()) == 1


async def test_a_settings_change_keeps_the_results_of_items_on_a_stated_score_order(tmp_path):
    """Text labels with score_order, and an item that never uses the middle label: the app's
    pooled responses and the review's are pooled in the same order, so a settings change that
    leaves the data as it was does not close the results."""
    frame, vectors = session_frame(items=(("A", 70, 3), ("B", 60, 3)), seed=3)
    names = {"0": "low", "1": "medium", "2": "high"}
    frame["score"] = [names[s] for s in frame["score"]]
    frame.loc[(frame["item"] == "A") & (frame["score"] == "medium"), "score"] = "high"
    path = tmp_path / "labels.csv"
    frame.to_csv(path, index=False)
    np.save(tmp_path / "labels.npy", vectors)
    overrides = [*FAST, "score_order=low,medium,high"]
    app = ParmApp(path, embeddings_path=tmp_path / "labels.npy", overrides=overrides)
    async with app.run_test(size=SIZE) as pilot:
        session = await run_session_in_app(pilot)
        await pilot.press("f3")
        await pilot.pause()
        app.screen.query_one("#seed", Input).value = "7"
        await pilot.pause()
        assert app.state.config.seed == 7
        assert app.state.result is session


@pytest.fixture
def planted_file(tmp_path):
    """A planted session (items I0-I2, raters r1-r9 with known effects, r9 biased on I0) as a
    file, with its vectors."""
    from helpers import planted_session

    frame, vectors = planted_session(seed=2, per_item=400)
    path = tmp_path / "planted.csv"
    frame.to_csv(path, index=False)
    np.save(tmp_path / "planted.npy", vectors)
    return path, tmp_path / "planted.npy", frame


PLANTED = FAST + ["rater_column=rater", "time_column=time", "id_column=null"]


async def test_a_sessions_results_open_on_its_headline_with_the_item_selector_below(planted_file):
    from engine.results.figures import run_figures
    from engine.results.lead import lead_text

    async with audited(planted_file, PLANTED) as (app, pilot, session):
        screen = app.screen
        figures = run_figures(session)
        headline = " ".join(str(screen.query_one("#session-headline", Static).render()).split())
        assert f"Session: 3 items, {figures.responses:,} responses" in headline
        assert f"{figures.flagged:,} flagged (all items pooled" in headline
        assert lead_text("kappa", figures.cross_kappa, figures.kappa) in headline
        assert "Raters who need a word: r5 (harsh, noisy)" in headline
        order = [w.id for w in screen.query("#session-headline, #results-item, #results-tabs")]
        assert order == ["session-headline", "results-item", "results-tabs"]


async def test_the_tabs_are_numbered_without_gaps_and_the_item_selector_follows_them(session_file):
    async with audited(session_file, FAST) as (app, pilot, _):
        screen = app.screen
        tabs = screen.query_one("#results-tabs", TabbedContent)
        labels = [str(tab.label) for tab in tabs.query(Tab)]
        assert [label.split()[0] for label in labels] == [str(n) for n in range(1, 8)]
        selector = screen.query_one("#results-item", Select)
        for key, tab, shown in (
            ("6", "raters", False),
            ("2", "tuning", True),
            ("5", "items", False),
        ):
            await pilot.press(key)
            await pilot.pause()
            assert (tabs.active, selector.display) == (tab, shown)


async def test_enter_on_an_item_a_rater_or_a_bias_cell_opens_the_review_on_it(planted_file):
    frame = planted_file[2]
    async with audited(planted_file, PLANTED) as (app, pilot, session):
        review = session.review
        await pilot.press("5", "down", "enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        item = session.results[1].responses.item
        assert screen.query_one("#filter-item", Select).value == item
        assert len(screen.view) and {review.items[i] for i in screen.view} == {item}
        await pilot.press("f5", "6", "enter")
        await pilot.pause()
        rater = session.raters.rows[0].rater
        assert app.screen.query_one("#filter-rater", Select).value == rater
        assert {review.responses.raters[i] for i in app.screen.view} == {rater}
        # A bias cell: every score of that rater on that item, flagged or not.
        await pilot.press("f5", "6")
        cell = session.raters.listed_bias()[0]
        app.screen.query_one("#results-bias").focus()
        await pilot.press("enter")
        await pilot.pause()
        mine = (frame["rater"] == cell.rater) & (frame["item"] == cell.item)
        assert len(app.screen.view) == int(mine.sum())
        assert app.screen.query_one("#filter-view", Select).value == "all"


async def test_the_raters_tab_shows_each_verdict_its_rule_and_the_bias_cells(planted_file):
    async with audited(planted_file, PLANTED, size=(80, 24)) as (app, pilot, session):
        await pilot.press("6")
        screen = app.screen
        table = screen.query_one("#results-raters", DataTable)
        headers = [str(c.label) for c in table.ordered_columns]
        # at 80 columns: the status (the lead's lists) beside the verdict, then the figures
        assert headers == ["rater", "verdict", "status", "n", "model differs", "leniency", "infit"]
        rows = {str(table.get_row_at(n)[0]): table.get_row_at(n) for n in range(table.row_count)}
        lean = headers.index("leniency")
        assert str(rows["r5"][1]) == "harsh, noisy" and str(rows["r5"][lean]).endswith("▼")
        assert str(rows["r4"][lean]).endswith("▲")
        assert not str(rows["r1"][lean]).endswith(("▲", "▼"))
        rule = str(screen.query_one("#rater-rule", Static).render())
        first = session.raters.rows[0]
        assert rule.startswith(f"{first.rater}: {first.effects.verdicts[0].name} (")
        bias = screen.query_one("#results-bias", DataTable)
        assert bias.row_count == len(session.raters.listed_bias()) > 0


async def test_wider_the_raters_tab_shows_more_effects(planted_file):
    async with audited(planted_file, PLANTED, size=(140, 40)) as (app, pilot, _):
        await pilot.press("6")
        table = app.screen.query_one("#results-raters", DataTable)
        headers = [str(c.label) for c in table.ordered_columns]
        assert {"outfit", "spread", "drift", "fair avg", "bias cells"} <= set(headers)


async def test_with_an_expert_column_the_raters_tab_shows_each_rater_against_the_expert(tmp_path):
    """A guessed `expert_score` column (the human score on every fourth answer): the Raters tab
    gains the rater's mean difference from the expert (narrow) and n and exact agreement (wide)."""
    frame, vectors = session_frame(items=(("A", 70, 3), ("B", 60, 4)), seed=3)
    np.save(tmp_path / "session.npy", vectors)
    for n, (size, expected) in enumerate((((80, 24), ["vs expert"]),
                                          ((140, 40), ["expert n", "expert exact",
                                                       "vs expert (95%)"]))):  # fmt: skip
        # Other answers each time: a file the app has not run (no resume question).
        frame["expert_score"] = [s if k % 4 == n else "" for k, s in enumerate(frame["score"])]
        path = tmp_path / f"session-{n}.csv"
        frame.to_csv(path, index=False)
        app = ParmApp(path, embeddings_path=tmp_path / "session.npy", overrides=FAST)
        async with app.run_test(size=size) as pilot:
            session = await run_session_in_app(pilot)
            assert session.config.expert_column == "expert_score"
            await pilot.press("6")
            table = app.screen.query_one("#results-raters", DataTable)
            headers = [str(c.label) for c in table.ordered_columns]
            assert headers[-len(expected) :] == expected
            first = session.raters.rows[0]
            shown = str(table.get_row_at(0)[-1])
            assert shown.startswith(signed(session.raters.expert[first.rater].difference))
