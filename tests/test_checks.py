"""The audit's checks on the Results screen (parm_tui/widgets/checks.py): bootstrap intervals and
cross-fitted agreement beside the in-sample metrics, the second-rater table, near-duplicates
scored differently (Consistency tab)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import (
    MARKUP_TEXT,
    cells,
    show_results,
    synthetic_result,
)
from textual.widgets import Static, TabbedContent

from engine.audit.queue.duplicates import NearDuplicate
from parm_tui.app import ParmApp


@pytest.fixture(scope="module")
def result():
    return synthetic_result(300)


def column(table, header: str) -> list[str]:
    index = [str(c.header) for c in table.columns].index(header)
    return cells(table, index)


@pytest.mark.slow
async def test_metrics_show_bootstrap_intervals_and_cross_fitted_values(result):
    assert result.intervals and result.cross_fit is not None
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, result)
        table = screen.query_one("#results-metrics", Static).content
        names = cells(table, 0)
        intervals = dict(zip(names, column(table, "in-sample 95% CI")))
        crossed = dict(zip(names, column(table, "cross-fit")))
        kappa = result.intervals["kappa"]
        assert intervals["Cohen's kappa"] == f"{kappa.low:.3f}–{kappa.high:.3f}"
        assert crossed["Cohen's kappa"] == f"{result.cross_fit.metrics['kappa']:.3f}"
        assert crossed["Macro F1"] == "" and intervals["Macro F1"] == ""
        note = str(screen.query_one("#results-uncertainty", Static).content)
        assert "bootstrap" in note and "without it" in note


@pytest.mark.slow
async def test_second_rater_table_compares_raters_and_model(result):
    second = result.second_rater
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, result)
        table = screen.query_one("#results-second-rater", Static).content
        # No rater column: the score columns name the two raters, as every output does.
        assert cells(table, 0) == ["score vs score2", "model vs score", "model vs score2"]
        assert column(table, "kappa")[0] == f"{second.human_human['kappa']:.3f}"
        assert column(table, "QWK")[2] == f"{second.model_vs_second['qwk']:.3f}"
        assert column(table, "adjacent")[1] == f"{second.model_vs_first['adjacent']:.3f}"
        line = str(screen.query_one("#results-disagree", Static).content)
        assert f"disagree on {int(second.disagree.sum()):,}" in line


@pytest.mark.slow
async def test_without_a_second_rater_the_table_says_so():
    single = synthetic_result(120, second=False)
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, single)
        text = str(screen.query_one("#results-second-rater", Static).content)
        assert text.startswith("Second rater: none")
        assert not screen.query_one("#results-disagree").display


@pytest.mark.slow
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


@pytest.mark.slow
async def test_late_interaction_results_say_the_consistency_check_was_skipped(result):
    late = replace(result, mode="late-interaction", near_duplicates=[])
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, late)
        heading = str(screen.query_one("#consistency-heading", Static).content)
        assert "similarity: late-interaction" in heading and "Not checked" in heading
