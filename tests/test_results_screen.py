"""The Results screen: metrics of the selected configuration, the confusion matrix, the tuning
table, parameter estimates with standard errors, warnings, copying, unordered labels."""

from __future__ import annotations

import pytest
from helpers import cells, one_item_session, show_results
from textual.widgets import Static, TabbedContent

from engine.embedding.vectors import Embedded
from engine.model.metrics import confusion
from engine.outputs.report import parameters
from parm_tui.app import ParmApp
from parm_tui.screens.results import ResultsScreen
from parm_tui.widgets.metrics import metrics_summary
from parm_tui.widgets.tuning_table import TuningTable


@pytest.fixture(scope="module")
def grid_result(sample_responses, sample_embeddings, sample_config):
    """A finished audit over K in (5, 10) and p in (1, 2): four configurations."""
    from engine.pipeline import run_audit

    config = sample_config.updated(similarity_top_k=[5, 10], similarity_power=[1.0, 2.0])
    return run_audit(sample_responses, config, embedded=Embedded.precomputed(sample_embeddings))


async def test_metrics_are_those_of_the_selected_configuration(grid_result):
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, grid_result)
        assert isinstance(screen, ResultsScreen)
        table = screen.query_one("#results-metrics", Static).content
        shown = dict(zip(cells(table, 0), cells(table, 1)))
        assert shown["Cohen's kappa"] == f"{grid_result.metrics['kappa']:.3f}"
        assert shown["Neg. log-likelihood"] == f"{grid_result.metrics['nll']:.3f}"
        headline = str(screen.query_one("#results-headline", Static).content)
        assert f"K={grid_result.selected.top_k}, p={grid_result.selected.power:.3g}" in headline
        assert f"{int(grid_result.flagged.sum()):,} of" in headline


async def test_confusion_matrix_counts_every_response(grid_result):
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, grid_result)
        table = screen.query_one("#results-confusion", Static).content
        responses = grid_result.responses
        expected = confusion(responses.scores, grid_result.predicted, responses.n_classes)
        for j in range(responses.n_classes):
            assert cells(table, j + 1) == [f"{n:,}" for n in expected[:, j]]


async def test_tuning_tab_lists_every_configuration_and_plots_the_metric(grid_result):
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, grid_result)
        await pilot.press("2")
        assert screen.query_one("#results-tabs", TabbedContent).active == "tuning"
        table = screen.query_one("#results-tuning", TuningTable)
        assert table.row_count == len(grid_result.tuning.rows) == 4
        assert table.tuning_rows[table.best_index].selected
        plot = str(screen.query_one("#results-plot", Static).content)
        assert "K=5" in plot and "K=10" in plot
        assert "p=1" in plot and "p=2" in plot


async def test_parameters_show_estimates_with_standard_errors(grid_result):
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, grid_result)
        await pilot.press("3")
        table = screen.query_one("#results-parameters", Static).content
        expected = parameters(grid_result)
        assert cells(table, 2) == [f"{p['estimate']:.3f}" for p in expected]
        assert cells(table, 3) == [f"{p['se']:.3f}" for p in expected]


async def test_warnings_of_the_result_are_shown(grid_result):
    grid_result.warnings.append("A [bold]warning[/bold] with brackets.")
    try:
        async with ParmApp().run_test(size=(80, 24)) as pilot:
            screen = await show_results(pilot, grid_result)
            text = str(screen.query_one("#results-warnings", Static).content)
            assert "A [bold]warning[/bold] with brackets." in text
    finally:
        grid_result.warnings.pop()


async def test_c_copies_the_metrics_summary(grid_result):
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        await show_results(pilot, grid_result)
        await pilot.press("c")
        assert pilot.app.clipboard == metrics_summary(grid_result)
        assert f"Cohen's kappa: {grid_result.metrics['kappa']:.3f}" in pilot.app.clipboard


@pytest.fixture(scope="module")
def nominal_result(sample_embeddings, sample_config):
    """The sample data with its scores written as unordered text (c, a, b for 0, 1, 2)."""
    import pandas as pd
    from helpers import SAMPLE_CSV

    from engine.input.responses import responses_from_frame
    from engine.pipeline import run_audit

    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    letters = {"0": "c", "1": "a", "2": "b"}
    frame["score"] = frame["score"].map(letters)
    frame["score2"] = frame["score2"].map(letters)
    config = sample_config.updated(
        similarity_top_k=[5, 10], second_score_column="score2", bootstrap_samples=20
    )
    responses = responses_from_frame(frame, config, "letters.csv")
    return run_audit(responses, config, embedded=Embedded.precomputed(sample_embeddings))


async def test_unordered_labels_show_no_qwk_or_near_and_say_why(nominal_result):
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, nominal_result)
        metrics = screen.query_one("#results-metrics", Static).content
        assert cells(metrics, 0) == [
            "Exact agreement",
            "Cohen's kappa",
            "Macro F1",
            "Neg. log-likelihood",
        ]
        note = str(screen.query_one("#results-uncertainty", Static).content)
        assert note.startswith("QWK and near agreement are left out")
        second = screen.query_one("#results-second-rater", Static).content
        assert [str(c.header) for c in second.columns] == ["", "exact", "kappa"]
        await pilot.press("2")
        table = screen.query_one("#results-tuning", TuningTable)
        headers = [str(column.label) for column in table.columns.values()]
        assert headers == ["", "K", "p", "acc", "kappa", "F1", "NLL", "conv"]


async def test_the_off_by_two_filter_is_hidden_for_unordered_labels(nominal_result):
    from textual.widgets import Checkbox

    async with ParmApp().run_test(size=(100, 30)) as pilot:
        pilot.app.finish_run(one_item_session(nominal_result), None)
        await pilot.app.action_show("review")
        await pilot.pause()
        off_by_two = pilot.app.screen.query_one("#filter-off2", Checkbox)
        assert off_by_two.disabled and not off_by_two.display
