"""parm_tui.screens.monitor: a session's folder typed on the Load screen (or given to `parm`)
opens the Monitor screen: the open alerts first with the highlighted one's sentence, the since
selector and what changed, each item's and rater's sparkline; it fits 80x24 and 120x40."""

from __future__ import annotations

import pytest
from helpers import live_config, live_reads
from textual.widgets import Select, Sparkline, Static

from engine import workspace
from parm_tui.app import ParmApp
from parm_tui.widgets.lists import VimDataTable
from parm_tui.widgets.path_input import PathInput


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    folder = tmp_path_factory.mktemp("m")
    frames = live_reads(days=6, answers_per_day=60, accuracy=0.95, seed=12, drift=("B", 4, 0.6))
    for k, frame in enumerate(frames):
        path = folder / f"day{k}.csv"
        frame.to_csv(path, index=False)
        workspace.monitor(folder / "session", [path], live_config())
    return folder / "session"


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def wait_for_look(pilot) -> None:
    for _ in range(100):
        await pilot.pause(0.05)
        screen = pilot.app.screen
        if getattr(screen, "result", None) is not None:
            return
    raise AssertionError("the session was not read")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_session_folder_opens_the_monitor_screen_alerts_first(session, size):
    async with ParmApp(session).run_test(size=size) as pilot:
        await wait_for_look(pilot)
        screen = pilot.app.screen
        assert screen.id == "monitor-screen"
        table = screen.query_one("#monitor-alerts", VimDataTable)
        alerts = screen.result.alerts
        assert alerts and table.row_count == len(alerts)
        assert alerts[0].message in text_of(pilot.app, "#monitor-alert").replace("\n", " ")
        region = table.region
        assert region.y < size[1] // 2 and region.right <= size[0]
        assert len(screen.query(Sparkline)) == 2 + 4  # two items, four raters


async def test_the_since_selector_shows_what_changed_since_the_run_chosen(session):
    async with ParmApp(session).run_test(size=(120, 40)) as pilot:
        await wait_for_look(pilot)
        select = pilot.app.screen.query_one("#monitor-since", Select)
        runs = workspace.session_runs(session)
        assert select.value == runs[-1]["run_id"]
        await pilot.pause(0.1)
        assert "0 reads and 0 answers added" in text_of(pilot.app, "#monitor-changes")
        select.value = runs[0]["run_id"]
        await pilot.pause(0.1)
        changed = text_of(pilot.app, "#monitor-changes")
        assert f"Since run {runs[0]['run_id']}" in changed and "raised" in changed


async def test_typing_a_session_folder_on_the_load_screen_opens_it(session):
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        box = pilot.app.screen.query_one("#path", PathInput)
        box.value = str(session)
        await pilot.press("enter")
        await wait_for_look(pilot)
        assert pilot.app.screen.id == "monitor-screen"
        await pilot.press("f2")
        assert pilot.app.screen.id != "monitor-screen"
        await pilot.press("f8")
        assert pilot.app.screen.id == "monitor-screen"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_todays_lists_are_shown_and_t_writes_them_beside_the_session(session, size):
    async with ParmApp(session).run_test(size=size) as pilot:
        await wait_for_look(pilot)
        screen = pilot.app.screen
        shown = text_of(pilot.app, "#monitor-lists")
        for line in screen.result.actions.lines():
            assert line.split(":")[0] in shown
        await pilot.press("t")
        await pilot.pause(0.1)
        folder = session.parent / f"{session.name}-lists"
        assert {p.name for p in folder.glob("*.csv")} == {
            "backreads.csv",
            "third_reads.csv",
            "rater_status.csv",
        }
        assert f"into {folder}" in text_of(pilot.app, "#monitor-lists").replace("\n", "")
        await pilot.press("t")  # a folder of lists written before is replaced
        await pilot.pause(0.1)
        assert "were not written" not in text_of(pilot.app, "#monitor-lists")
        box = screen.query_one("#monitor-lists", Static)
        assert box.region.right <= size[0]
