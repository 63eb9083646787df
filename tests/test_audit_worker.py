"""parm_tui.audit_worker: a run started from the app goes through engine.session.run_session
with the app's settings, so the Settings screen's Dask scheduler sends its items to that
cluster (the CLI's engine path), with the same results as a run on this machine."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import session_frame, wait_for
from textual.widgets import Input, Select, Static

from engine.embedding.precomputed import load_for_items
from engine.session import run_session
from parm_tui.app import ParmApp
from parm_tui.widgets.settings_summary import settings_text

# slow: drives the whole app (a ParmApp).
pytestmark = pytest.mark.slow

pytest.importorskip("distributed")

SIZE = (100, 30)
FAST = ["similarity_top_k=[5,10]", "bootstrap_samples=20", "cross_fit_folds=0"]


async def test_the_apps_scheduler_setting_runs_the_items_on_that_cluster(
    in_process_cluster, tmp_path
):
    frame, vectors = session_frame(items=(("A", 70, 3), ("B", 60, 4)), seed=3)
    path = tmp_path / "session.csv"
    frame.to_csv(path, index=False)
    np.save(tmp_path / "session.npy", vectors)
    address = in_process_cluster.scheduler_address
    app = ParmApp(path, embeddings_path=tmp_path / "session.npy", overrides=FAST)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state.items is not None, "the file")
        await pilot.press("f3")
        await pilot.pause()
        settings = app.screen
        settings.query_one("#scheduler", Input).value = "local:zero"
        await pilot.pause()
        error = settings.query_one("#error-scheduler", Static)
        assert error.display and "'scheduler'" in str(error.content)
        settings.query_one("#scheduler", Input).value = address
        settings.query_one("#scheduler_timeout", Input).value = "5"
        settings.query_one("#device", Select).value = "cpu"
        await pilot.pause()
        config = app.state.config
        assert (config.scheduler, config.scheduler_timeout, config.device) == (address, 5, "cpu")
        assert f"Dask {address}" in settings_text(config)
        await app.start_audit()
        run = app.get_screen("run")
        await wait_for(pilot, lambda: app.state.result is not None, "the audit")
        assert run.query_one("#stage-cluster").display
        assert "2 worker(s) (2 threads)" in str(run.query_one("#detail-cluster", Static).content)
        there = app.state.result
        items = app.state.items
        await pilot.pause()
    given = load_for_items(tmp_path / "session.npy", items, config.text_column)
    here = run_session(items, config.updated(scheduler=None), embeddings=given)
    items_in_order = [r.responses.item for r in there.results]
    assert sorted(items_in_order) == ["A", "B"]
    assert items_in_order == [r.responses.item for r in here.results]
    for a, b in zip(here.results, there.results):
        np.testing.assert_array_equal(a.fitted.proba, b.fitted.proba)
        np.testing.assert_array_equal(a.severity, b.severity)


async def test_a_run_on_this_machine_shows_no_cluster_stage(tmp_path):
    frame, vectors = session_frame(items=(("A", 60, 3),), seed=4)
    frame.to_csv(tmp_path / "one.csv", index=False)
    np.save(tmp_path / "one.npy", vectors)
    app = ParmApp(tmp_path / "one.csv", embeddings_path=tmp_path / "one.npy", overrides=FAST)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state.items is not None, "the file")
        await app.start_audit()
        await wait_for(pilot, lambda: app.state.result is not None, "the audit")
        assert not app.get_screen("run").query_one("#stage-cluster").display
        await pilot.pause()
