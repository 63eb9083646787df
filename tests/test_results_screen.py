"""The Results screen: metrics of the selected configuration, the confusion matrix, the tuning
table, parameter estimates with standard errors, warnings, copying, unordered labels."""

from __future__ import annotations

import pytest
from helpers import cells, one_item_session, show_results
from textual.widgets import Static, TabbedContent

from engine.embedding.vectors import Embedded
from engine.model.metrics import confusion
from engine.outputs.report.item_content import parameters
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
        # The cross-fitted figure leads (column 1), the in-sample one beside it (column 2).
        crossed = dict(zip(cells(table, 0), cells(table, 1)))
        shown = dict(zip(cells(table, 0), cells(table, 2)))
        assert crossed["Cohen's kappa"] == f"{grid_result.cross_fit.metrics['kappa']:.3f}"
        assert shown["Cohen's kappa"].endswith(f"{grid_result.metrics['kappa']:.3f}")
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


async def test_the_parameters_heading_stays_on_one_line(grid_result):
    from rich.console import Console

    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, grid_result)
        await pilot.press("3")
        await pilot.pause()
        panel = screen.query_one("#results-parameters", Static)
        console = Console(width=panel.content_region.width, color_system=None, record=True)
        console.print(panel.content)
        heading = console.export_text().splitlines()[0].strip()
        assert heading == f"Parameter estimates (SE: {grid_result.fitted.se_method})"


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
        crossed, kappa = grid_result.cross_fit.metrics["kappa"], grid_result.metrics["kappa"]
        line = f"Cohen's kappa: {crossed:.3f} cross-fitted, {kappa:.3f} in-sample"
        assert line in pilot.app.clipboard


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


@pytest.fixture
def one_item_file(tmp_path):
    """A file of one item (no item column) and its vectors, audited in a moment."""
    import numpy as np
    from helpers import session_frame

    frame, vectors = session_frame(items=(("A", 120, 3),), seed=9)
    frame = frame.drop(columns=["item", "rater"])
    rng = np.random.default_rng(1)
    noisy = rng.random(len(frame)) < 0.2
    frame.loc[noisy, "score"] = [str(v) for v in rng.integers(0, 3, int(noisy.sum()))]
    path = tmp_path / "answers.csv"
    frame.to_csv(path, index=False)
    np.save(tmp_path / "answers.npy", vectors)
    return path, tmp_path / "answers.npy"


async def run_in_app(pilot, first=None):
    from helpers import wait_for

    app = pilot.app
    await wait_for(pilot, lambda: app.state.items is not None, "the file")
    await app.start_audit()
    await wait_for(
        pilot, lambda: app.state.result is not None and app.state.result is not first, "the audit"
    )
    await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen), "the results")
    await pilot.pause()
    return app.state.result


async def test_a_rerun_shows_the_run_before_it_and_an_earlier_run_reopens_read_only(
    one_item_file,
):
    from textual.widgets import DataTable

    from parm_tui.screens.review import ReviewScreen

    path, vectors = one_item_file
    fast = ["similarity_top_k=[5,10]", "bootstrap_samples=0", "cross_fit_folds=0"]
    app = ParmApp(path, embeddings_path=vectors, overrides=fast)
    async with app.run_test(size=(100, 30)) as pilot:
        first = await run_in_app(pilot)
        headline = str(app.screen.query_one("#results-headline", Static).render())
        assert "Previous run" not in headline  # a first run has nothing to compare with
        app.apply_settings(app.state.config.updated(similarity_top_k=20, similarity_power=2.0))
        second = await run_in_app(pilot, first)
        headline = " ".join(str(app.screen.query_one("#results-headline", Static).render()).split())
        before, now = first.results[0], second.results[0]
        # Neither run was cross-fitted: kappa is compared in-sample, and says so.
        for name, a, b in (
            ("kappa in-sample", f"{before.metrics['kappa']:.3f}", f"{now.metrics['kappa']:.3f}"),
            ("flagged", f"{int(before.flagged.sum())}", f"{int(now.flagged.sum())}"),
            ("K", f"{before.selected.top_k}", "20"),
            ("p", "1", "2"),
        ):
            assert (f"{name} {a} → {b}" if a != b else f"{name} {a} (same)") in headline
        assert "Previous run" in headline
        # The runs list: both runs, newest first; enter on the earlier one reopens it.
        await pilot.press("5")  # one item, no raters: Runs is the fifth tab
        runs = app.screen.query_one("#results-runs", DataTable)
        assert runs.row_count == 2
        # The runs list shows the cross-fitted figures, those a headline leads with: none here.
        headers = [str(column.label) for column in runs.columns.values()]
        assert headers[4:6] == ["κ x-fit", "QWK x-fit"]
        assert str(runs.get_row_at(0)[4]) == "—"
        assert [str(runs.get_row_at(n)[-1]) for n in range(2)] == [second.run_id, first.run_id]
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.state.result.run_id == first.run_id
        assert app.state.earlier_run() is not None
        note = app.screen.query_one("#results-read-only", Static)
        assert "read-only" in str(note.render())
        assert len(str(note.render())) <= 78  # one line at 80 columns (a margin each side)
        await pilot.press("f6")
        await pilot.pause()
        review = app.screen
        assert isinstance(review, ReviewScreen) and review.model.read_only is not None
        await pilot.press("o")
        await pilot.pause()
        assert app.state.store.all() == {}  # decisions are not made on an earlier run


async def test_before_a_run_the_result_screens_say_what_they_will_hold(one_item_file):
    path, vectors = one_item_file
    async with ParmApp(path, embeddings_path=vectors).run_test(size=(80, 24)) as pilot:
        from helpers import wait_for

        await wait_for(pilot, lambda: pilot.app.state.items is not None, "the file")
        for key, name in (("f5", "Results"), ("f6", "Review"), ("f7", "Export")):
            await pilot.press(key)
            await pilot.pause()
            text = " ".join(str(s.render()) for s in pilot.app.screen.query(Static))
            assert f"{name} will show here after an audit" in text
            assert "Next: F4, then s, runs the audit" in text
        assert not pilot.app._notifications  # no stack of "Run an audit first"


async def test_the_summary_scrolls_with_the_keys_at_once(grid_result):
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await show_results(pilot, grid_result)
        summary = screen.query_one("#summary-scroll")
        assert screen.focused is summary
        await pilot.press("pagedown")
        await pilot.pause()
        assert summary.scroll_y > 0


async def test_the_raters_tab_lists_every_pair_of_raters_where_answers_are_read_twice():
    from helpers import synthetic_result

    from parm_tui.widgets.session_tables import PairsTable

    result = synthetic_result(200)  # a second read of every answer, no rater column: the score
    # columns name the two raters, who have the rater table (focused) above the pairs
    async with ParmApp().run_test(size=(160, 40)) as pilot:  # wide: with intervals
        screen = await show_results(pilot, result)
        await pilot.press(str(screen.tabs_shown().index("raters") + 1))
        await pilot.pause()
        table = screen.query_one(PairsTable)
        assert screen.query_one("#results-tabs", TabbedContent).active == "raters"
        assert table.row_count == 1 and not table.has_focus
        row = [str(cell) for cell in table.get_row_at(0)]
        first, second = result.config.score_column, result.config.second_score_column
        assert row[1:4] == [first, second, "200"]
        pair = screen.session.reads.agreement.pairs[0]
        assert row[4].startswith(f"{pair.figures['exact'].estimate:.3f} (")
        lines = str(screen.query_one("#agreement-lines", Static).content)
        assert "Krippendorff's alpha" in lines and "need a third read" in lines


def test_a_sessions_summary_tab_lists_its_warnings_one_line_per_kind():
    from helpers import run_frame, session_config, session_frame

    from engine.core.run_warnings import KINDS
    from parm_tui.screens.results import ResultsScreen

    frame, vectors = session_frame(items=tuple((f"q{k}", 30, 3) for k in range(5)))
    session = run_frame(frame, vectors, session_config())
    text = ResultsScreen(session).warnings_text().plain
    n = len(session.warnings)
    assert f"All items: {n} warnings" in text
    assert text.count(KINDS["small_item"].summary) == 1 and "and 2 more" in text


async def test_the_raters_tab_shows_each_raters_status_and_todays_third_reads():
    """The status column (the rater's most severe status and its item), the line on today's
    lists and the routed third reads, from the lists the outputs write (engine.actions)."""
    from helpers import MULTI_READ_SETTINGS, multi_read_frame, run_frame, session_config

    from engine import workspace
    from parm_tui.widgets.action_tables import ThirdReadsTable
    from parm_tui.widgets.session_tables import RatersTable

    frame, vectors, _ = multi_read_frame()
    session = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS))
    lists = workspace.todays_lists(session)
    worst = workspace.status_by_rater(lists)
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        pilot.app.finish_run(session, None)
        await pilot.app.action_show("results")
        await pilot.pause()
        screen = pilot.app.screen
        await pilot.press(str(screen.tabs_shown().index("raters") + 1))
        await pilot.pause()
        table = screen.query_one(RatersTable)
        column = table.rater_columns.index("status")
        for n, row in enumerate(session.raters.rows):
            status, item, _ = worst[row.rater]
            shown = str(table.get_row_at(n)[column])
            assert shown.startswith(status) and (status == "qualified" or item in shown)
        line = str(screen.query_one("#lists-line", Static).content)
        assert f"{len(lists.backreads):,} backreads" in line and "ctrl+t" in line
        third = screen.query_one(ThirdReadsTable)
        assert third.row_count == len(lists.third_reads) > 0
        first = [str(cell) for cell in third.get_row_at(0)]
        assert first[0] == lists.third_reads[0].id
        assert (lists.third_reads[0].assigned_rater or "—") in first
