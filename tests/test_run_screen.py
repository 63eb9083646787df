"""The Run screen and the audit worker: a finished run fills the tuning table and opens the
results; Esc cancels at once and leaves no result; engine and unexpected errors go to the error
modal and the app keeps running."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from helpers import SAMPLE_CSV
from textual.widgets import Button, Input, Static

import engine.session
from engine.core.places import log_dir
from engine.core.progress import ProgressEvent
from parm_tui.app import ParmApp
from parm_tui.screens.error import ErrorModal
from parm_tui.screens.load import LoadScreen
from parm_tui.screens.results import ResultsScreen
from parm_tui.screens.run import RunScreen, StageClock
from parm_tui.screens.waiting import WaitingScreen
from parm_tui.widgets.tuning_table import TuningTable


async def loaded_app(pilot):
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    assert pilot.app.state.responses is not None
    return pilot.app


async def run_to_end(pilot):
    app = pilot.app
    await pilot.press("f4")
    await pilot.press("s")
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app


async def test_a_run_with_precomputed_embeddings_fills_the_table_and_shows_results(
    sample_embeddings_file,
):
    app = ParmApp(SAMPLE_CSV, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_app(pilot)
        await run_to_end(pilot)
        assert app.state.result is not None
        result = app.state.result.results[0]
        assert len(result.tuning.rows) == len(app.state.config.top_k_values)
        run_table = app.get_screen("run").query_one("#run-tuning", TuningTable)
        assert run_table.row_count == len(result.tuning.rows)
        marked = run_table.tuning_rows[run_table.best_index]
        assert (marked.top_k, marked.power) == (result.selected.top_k, result.selected.power)
        assert isinstance(app.screen, ResultsScreen)
        headline = str(app.screen.query_one("#results-headline", Static).content)
        assert f"K={result.selected.top_k}," in headline
        metrics = app.screen.query_one("#results-metrics", Static).content
        # The cross-fitted figure leads (column 1), the in-sample one beside it (column 2).
        names = list(map(str, metrics.columns[0]._cells))
        crossed = dict(zip(names, map(str, metrics.columns[1]._cells)))
        shown = dict(zip(names, map(str, metrics.columns[2]._cells)))
        assert crossed["Cohen's kappa"] == f"{result.cross_fit.metrics['kappa']:.3f}"
        assert shown["Cohen's kappa"].endswith(f"{result.metrics['kappa']:.3f}")


async def test_a_second_run_replaces_the_screens_of_the_first(sample_embeddings_file):
    app = ParmApp(SAMPLE_CSV, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_app(pilot)
        await run_to_end(pilot)
        first = app.state.result
        await pilot.press("f6")
        assert app.screen.parm_result is first
        await app.start_audit()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.result is not first
        assert isinstance(app.screen, ResultsScreen) and app.screen.session is app.state.result
        await pilot.press("f6")
        assert app.screen.parm_result is app.state.result


def slow_fake_audit(reached_end: threading.Event, stopped: threading.Event):
    """A run_session that reports progress until it is cancelled (it never finishes by itself
    within the test)."""

    def fake(responses, config, progress=None, cancel=None, embeddings=None, **reuse):
        try:
            for i in range(100_000):
                cancel.check()
                progress(ProgressEvent("embedding", i, 100_000, f"{i} of 100000"))
                threading.Event().wait(0.005)
        except Exception:
            stopped.set()
            raise
        reached_end.set()
        return None

    return fake


@pytest.mark.slow
async def test_escape_cancels_and_leaves_the_app_usable(monkeypatch, tmp_path):
    reached_end, stopped = threading.Event(), threading.Event()
    monkeypatch.setattr(engine.session, "run_session", slow_fake_audit(reached_end, stopped))
    app = ParmApp(SAMPLE_CSV)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_app(pilot)
        await pilot.press("f4", "s")
        await pilot.pause()
        assert app.audit_running
        await pilot.press("escape")
        await pilot.pause()
        assert not app.audit_running
        assert stopped.wait(timeout=30)
        assert not reached_end.is_set()
        assert app.state.result is None
        assert "Cancelled" in str(app.screen.query_one("#run-status", Static).content)
        await pilot.press("f2")
        assert isinstance(app.screen, LoadScreen)
        await pilot.press("f5")  # no result: what Results will hold
        assert isinstance(app.screen, WaitingScreen)
    assert not list(tmp_path.iterdir())


async def test_a_run_can_start_again_after_cancelling(monkeypatch, sample_embeddings_file):
    reached_end, stopped = threading.Event(), threading.Event()
    real_run_audit = engine.session.run_session
    monkeypatch.setattr(engine.session, "run_session", slow_fake_audit(reached_end, stopped))
    app = ParmApp(SAMPLE_CSV, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_app(pilot)
        await pilot.press("f4", "s")
        await pilot.press("escape")
        assert stopped.wait(timeout=30)
        monkeypatch.setattr(engine.session, "run_session", real_run_audit)
        await pilot.press("s")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.result is not None
        assert isinstance(app.screen, ResultsScreen)


@pytest.mark.slow
async def test_embeddings_with_the_wrong_row_count_show_the_error_modal(tmp_path):
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.ones((5, 8), dtype=np.float32))
    app = ParmApp(SAMPLE_CSV, embeddings_path=wrong)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_app(pilot)
        await run_to_end(pilot)
        assert isinstance(app.screen, ErrorModal)
        message = str(app.screen.query_one("#error-message", Static).content)
        assert "has 5 rows" in message and str(wrong) in message
        assert "Traceback" not in message
        await pilot.press("escape")
        assert isinstance(app.screen, RunScreen)
        assert app.state.result is None
        await pilot.press("f3")
        assert app.screen.id == "settings-screen"


@pytest.mark.slow
async def test_an_unexpected_error_shows_its_type_and_logs_the_traceback(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the graph fell over")

    monkeypatch.setattr(engine.session, "run_session", broken)
    app = ParmApp(SAMPLE_CSV)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_app(pilot)
        await run_to_end(pilot)
        assert isinstance(app.screen, ErrorModal)
        message = str(app.screen.query_one("#error-message", Static).content)
        assert message.startswith("RuntimeError: the graph fell over")
        logs = list(log_dir().glob("parm-error-*.log"))
        assert len(logs) == 1 and str(logs[0]) in message
        log = logs[0].read_text()
        assert "Traceback" in log and "the graph fell over" in log
        assert app.is_running


@pytest.mark.slow
async def test_two_errors_share_one_modal():
    app = ParmApp()
    async with app.run_test(size=(80, 24)) as pilot:
        from engine.core.errors import DataError

        app.show_error(DataError("first problem"))
        app.show_error(DataError("second problem"))
        await pilot.pause()
        assert len([s for s in app.screen_stack if isinstance(s, ErrorModal)]) == 1
        message = str(app.screen.query_one("#error-message", Static).content)
        assert "first problem" in message and "second problem" in message


@pytest.mark.slow
async def test_result_screens_need_a_run_first():
    app = ParmApp()
    async with app.run_test(size=(80, 24)) as pilot:
        for key, name in (("f5", "results"), ("f6", "review"), ("f7", "export")):
            await pilot.press(key)
            assert isinstance(app.screen, WaitingScreen) and app.screen.target == name
            assert "Next: F2 opens a file." in str(app.screen.query_one("#waiting-next").render())


@pytest.mark.slow
async def test_starting_without_a_file_asks_for_one():
    app = ParmApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4", "s")
        assert app.audit_worker is None
        assert app.screen.query_one("#run-start", Button).disabled
        status = str(app.screen.query_one("#run-status", Static).content)
        assert status == "Cannot start: load a file first (F2)."


def staged_fake_audit(stages):
    """A run_session that reports each (stage, done, total, message), then stops as cancelled."""

    def fake(responses, config, progress=None, cancel=None, embeddings=None, **reuse):
        from engine.core.errors import Cancelled

        for stage, done, total, message in stages:
            progress(ProgressEvent(stage, done, total, message))
        raise Cancelled("stopped by the test")

    return fake


LATE_STAGES = [
    ("embedding", 758, 758, "758 of 758 responses (tokens)"),
    ("neighbours", 758, 758, "758 of 758 rows"),
    ("colbert", 4000, 9000, "MaxSim 4,000 of 9,000 pairs"),
    ("tuning", 3, 10, "K=15 p=1 kappa 0.61"),
    ("audit", 120, 200, "bootstrap 120 of 200"),
]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["sentence-transformers/all-MiniLM-L6-v2", "lightonai/colbert"])
async def test_every_stage_the_engine_reports_is_shown(monkeypatch, model):
    monkeypatch.setattr(engine.session, "run_session", staged_fake_audit(LATE_STAGES))
    late = "colbert" in model
    stages = LATE_STAGES if late else [s for s in LATE_STAGES if s[0] != "colbert"]
    app = ParmApp(SAMPLE_CSV)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_app(pilot)
        app.apply_settings(app.state.config.updated(embedding_model=model))
        await run_to_end(pilot)
        screen = app.get_screen("run")
        assert screen.query_one("#stage-colbert").display == late
        for stage, done, total, _ in stages:
            assert screen.query_one(f"#stage-{stage}").display
            assert screen.query_one(f"#bar-{stage}").progress == done
            detail = str(screen.query_one(f"#detail-{stage}", Static).content)
            assert detail.startswith(f"{done:,}/{total:,}")
        audit = str(screen.query_one("#detail-audit", Static).content)
        assert audit.endswith("bootstrap")
        if late:
            assert str(screen.query_one("#detail-colbert", Static).content).endswith("MaxSim")


def test_a_new_loop_within_a_stage_restarts_its_clock():
    clock = StageClock()
    for step in range(4):
        clock.describe(50 * step, 400, now=float(step))
    assert clock.describe(400, 400, now=10.0) == "37.5/s · 0:00 left"
    for step in range(3):  # cross-fitting after the bootstrap: its own first batches
        assert clock.describe(1 + step, 50, now=11.0 + step) == ""
    assert clock.describe(11, 50, now=21.0) == "1.0/s · 0:39 left"


def test_the_time_left_comes_from_the_rate_after_the_first_batches():
    """Loading a model takes 12 s before the first batch of 32 of 758; then 64 answers a
    second. The estimate waits for the first batches and then measures from them: 0:10 left,
    not the 4:30 the whole 12.5 s would give."""
    clock = StageClock()
    assert clock.describe(0, 758, now=0.0) == ""  # loading the model
    assert clock.describe(32, 758, now=12.0) == ""
    assert clock.describe(64, 758, now=12.5) == ""
    assert clock.describe(96, 758, now=13.0) == ""
    assert clock.describe(128, 758, now=13.5) == "64.0/s · 0:10 left"


def test_stage_clock_reports_rate_and_time_left():
    clock = StageClock()
    assert clock.describe(0, 100, now=10.0) == ""
    assert clock.describe(10, 100, now=11.0) == ""
    assert clock.describe(20, 100, now=12.0) == ""
    assert clock.describe(50, 100, now=20.0) == "3.8/s · 0:13 left"


@pytest.mark.slow
@pytest.mark.parametrize("key", ["q", "ctrl+q"])
async def test_quit_keys_close_the_app(key):
    app = ParmApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        await pilot.press(key)
        assert not app.is_running


async def shown_run_screen(pilot) -> RunScreen:
    """The Run screen of an app with no file: one progress event waiting in its queue."""
    await pilot.app.action_show("run")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, RunScreen)
    screen.feed.append(ProgressEvent("tuning", 1, 2, "K=5"))
    return screen


@pytest.mark.slow
async def test_progress_arriving_while_the_run_screen_is_torn_down_is_ignored():
    """The drain timer can fire once more while the screen's children are being removed."""
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await shown_run_screen(pilot)
        await screen.query("#run-tuning").remove()
        screen.drain()
        screen.finish("Cancelled.")
        assert screen.running is False


@pytest.mark.slow
async def test_an_event_drained_before_any_run_began_is_shown():
    """The drain timer runs from mount: an event it meets before begin() must not crash it."""
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        screen = await shown_run_screen(pilot)
        screen.drain()
        assert "1/2" in str(screen.query_one("#detail-tuning", Static).content)


@pytest.mark.slow
async def test_with_an_invalid_setting_the_run_is_disabled_and_says_why(monkeypatch):
    started = []
    monkeypatch.setattr(engine.session, "run_session", lambda *a, **k: started.append(1))
    app = ParmApp(SAMPLE_CSV)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_app(pilot)
        await pilot.press("f3")
        await pilot.pause()
        app.screen.query_one("#seed", Input).value = "abc"
        await pilot.pause()
        await pilot.press("f4")
        await pilot.pause()
        run = app.screen
        assert run.query_one("#run-start", Button).disabled
        status = str(run.query_one("#run-status", Static).content)
        assert status.startswith("Cannot start: the settings have an error (F3)")
        assert "'seed'" in status
        await pilot.press("s")
        await app.start_audit()  # the palette's "run: start audit" too
        await pilot.pause()
        assert app.audit_worker is None and not started
        # Fixed on the Settings screen, the run can start again.
        await pilot.press("f3")
        app.screen.query_one("#seed", Input).value = "7"
        await pilot.pause()
        await pilot.press("f4")
        await pilot.pause()
        assert not run.query_one("#run-start", Button).disabled
        assert str(run.query_one("#run-status", Static).content).startswith("Ready")


@pytest.mark.slow
async def test_the_run_screen_lists_the_settings_it_runs_with():
    app = ParmApp(SAMPLE_CSV)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_app(pilot)
        app.apply_settings(app.state.config.updated(similarity_top_k=[5, 10], bootstrap_samples=50))
        await pilot.press("f4")
        await pilot.pause()
        listed = str(app.screen.query_one("#run-settings", Static).content)
        assert (
            "plant_growth.csv · 758 responses · columns: text=answer, score=score, id=id" in listed
        )
        assert "K 5, 10 · p 1 · by kappa · balanced\nbootstrap 50 · 5 folds" in listed


async def test_a_finished_run_s_status_does_not_outlive_its_result(sample_embeddings_file):
    app = ParmApp(SAMPLE_CSV, embeddings_path=sample_embeddings_file)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_app(pilot)
        await run_to_end(pilot)
        await pilot.press("f4")
        await pilot.pause()
        status = app.get_screen("run").query_one("#run-status", Static)
        assert str(status.content).startswith("Finished in")
        # Another score column closes the result: the screen no longer reports its run.
        # (the two reads swapped: score2 audited, score the second read)
        swapped = {"score_column": "score2", "second_score_column": "score"}
        app.choose_columns({**app.state.columns, **swapped})
        assert app.state.prepared is not None, app.state.file_problem
        assert app.state.result is None
        await pilot.press("f2", "f4")
        await pilot.pause()
        assert str(status.content).startswith("Ready")
        feed = app.get_screen("run").begin(app.state.config, False)
        assert str(status.content).startswith("Running…") and feed is not None
