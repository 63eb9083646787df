"""The audit's checks in the app: bootstrap intervals and cross-fitted agreement beside the
in-sample metrics, the second-rater table, near-duplicates scored differently (Consistency tab),
rater disagreements marked in the review, and severity shown with a legend of what it means."""

from __future__ import annotations

import shutil
from dataclasses import replace

import numpy as np
import pytest
from helpers import (
    MARKUP_TEXT,
    SAMPLE_CSV,
    Host,
    cells,
    load_and_run,
    open_review,
    show_results,
    synthetic_result,
    text_of,
    wait_for,
)
from textual.widgets import Static, TabbedContent

from engine.audit.duplicates import NearDuplicate
from parm_tui.app import ParmApp
from parm_tui.screens.resume import ResumeModal
from parm_tui.widgets.review_list import ReviewTable


@pytest.fixture(scope="module")
def result():
    return synthetic_result(300)


def column(table, header: str) -> list[str]:
    index = [str(c.header) for c in table.columns].index(header)
    return cells(table, index)


async def test_metrics_show_bootstrap_intervals_and_cross_fitted_values(result):
    assert result.intervals and result.cross_fit is not None
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, result)
        table = screen.query_one("#results-metrics", Static).content
        names = cells(table, 0)
        intervals = dict(zip(names, column(table, "95% CI")))
        crossed = dict(zip(names, column(table, "cross-fit")))
        kappa = result.intervals["kappa"]
        assert intervals["Cohen's kappa"] == f"{kappa.low:.3f}–{kappa.high:.3f}"
        assert crossed["Cohen's kappa"] == f"{result.cross_fit.metrics['kappa']:.3f}"
        assert crossed["Macro F1"] == "" and intervals["Macro F1"] == ""
        note = str(screen.query_one("#results-uncertainty", Static).content)
        assert "bootstrap" in note and "without it" in note


async def test_second_rater_table_compares_raters_and_model(result):
    second = result.second_rater
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, result)
        table = screen.query_one("#results-second-rater", Static).content
        assert cells(table, 0) == ["rater 1 vs rater 2", "model vs rater 1", "model vs rater 2"]
        assert column(table, "kappa")[0] == f"{second.human_human['kappa']:.3f}"
        assert column(table, "QWK")[2] == f"{second.model_vs_second['qwk']:.3f}"
        assert column(table, "adjacent")[1] == f"{second.model_vs_first['adjacent']:.3f}"
        line = str(screen.query_one("#results-disagree", Static).content)
        assert f"disagree on {int(second.disagree.sum()):,}" in line


async def test_without_a_second_rater_the_table_says_so():
    single = synthetic_result(120, second=False)
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, single)
        text = str(screen.query_one("#results-second-rater", Static).content)
        assert text.startswith("Second rater: none")
        assert not screen.query_one("#results-disagree").display


async def test_consistency_tab_lists_both_answers_of_each_pair_as_typed(result):
    responses = result.responses
    other = next(i for i in range(len(responses)) if responses.scores[i] != responses.scores[7])
    pairs = [NearDuplicate(min(7, other), max(7, other), 0.987)]
    with_pairs = replace(result, near_duplicates=pairs)
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, with_pairs)
        await pilot.press("4")
        assert screen.query_one("#results-tabs", TabbedContent).active == "consistency"
        heading = str(screen.query_one("#consistency-heading", Static).content)
        assert "similarity: single-vector" in heading and "1 pair(s)" in heading
        assert "model: " in heading
        shown = str(screen.query_one("#consistency-pairs", Static).content)
        assert "similarity 0.987" in shown
        assert MARKUP_TEXT in shown and " ".join(responses.texts[other].split()) in shown
        for i in (7, other):
            assert f"row {int(responses.rows[i])}" in shown


async def test_late_interaction_results_say_the_consistency_check_was_skipped(result):
    late = replace(result, mode="late-interaction", near_duplicates=[])
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, late)
        heading = str(screen.query_one("#consistency-heading", Static).content)
        assert "similarity: late-interaction" in heading and "Not checked" in heading


async def test_review_marks_rows_where_the_raters_disagree(result, tmp_path):
    disagree = result.raters_disagree
    # Wide enough for the full set of columns, the second rater's among them.
    async with Host(result, None).run_test(size=(160, 40)) as pilot:
        screen = pilot.app.screen
        table = screen.query_one(ReviewTable)
        labels = result.responses.labels
        for key in table.rows:
            i = int(key.value)
            cell = str(table.get_cell(key, "second"))
            assert cell == labels[result.responses.second_scores[i]] + ("≠" if disagree[i] else "")
        i = next(int(j) for j in screen.view if disagree[int(j)])
        screen.go_to(int(np.flatnonzero(screen.view == i)[0]))
        await pilot.pause()
        assert "raters disagree" in text_of(screen, "#detail-header")


async def test_severity_shows_its_value_and_a_legend_of_what_it_means(result):
    async with Host(result, None).run_test(size=(160, 40)) as pilot:
        screen = pilot.app.screen
        i = screen.current()
        header = " ".join(text_of(screen, "#detail-scores").split())
        assert f"severity {result.severity[i]:.3f}" in header
        assert "1 − p(human score) from a model that never saw it" in header
        assert "0 looks right … 1 check first" in header
        assert str(screen.query_one(ReviewTable).get_cell(str(i), "severity")) == (
            f"{result.severity[i]:.2f}"
        )


async def test_a_new_file_hands_its_decision_store_to_the_review(tmp_path, sample_embeddings_file):
    first, second = tmp_path / "a" / "answers.csv", tmp_path / "b" / "answers.csv"
    for path in (first, second):
        path.parent.mkdir()
        shutil.copy(SAMPLE_CSV, path)
    app = ParmApp(path=first, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=(100, 30)) as pilot:
        await load_and_run(pilot)
        await open_review(pilot)
        old_store = app.store
        await pilot.press("f2")
        app.get_screen("load").open_path(str(second))
        await wait_for(pilot, lambda: app.store is not old_store, "the second file")
        # A copy has the same bytes, so its first run's session is offered: start fresh.
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeModal), "the question")
        await pilot.press("n")
        await load_and_run(pilot)
        review = await open_review(pilot)
        assert review.store is app.store
        i = review.current()
        row = int(app.responses.rows[i])
        await pilot.press("k")
        await pilot.pause()
        assert app.store.get(row).action == "keep"
        assert app.store.source.endswith(str(second))


async def test_reopening_the_store_rebuilds_the_review_with_the_new_one(
    sample_copy, sample_embeddings_file
):
    app = ParmApp(path=sample_copy, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=(100, 30)) as pilot:
        await load_and_run(pilot)
        await open_review(pilot)
        await pilot.press("f2")
        old_store = app.store
        app.open_store()  # as accept_items does for a new file; the result stays
        assert app.store is not old_store
        review = await open_review(pilot)
        assert review.store is app.store and review.parm_result is app.result
        row = int(app.responses.rows[review.current()])
        await pilot.press("k")
        await pilot.pause()
        assert app.store.get(row).action == "keep"
        await pilot.press("f7")
        await pilot.pause()
        assert app.screen.store is app.store
