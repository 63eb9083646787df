"""Usable at 80x24 (the smallest terminal parm supports): every screen's own keys and `q` are in
the footer, the Results tables are not cut off, dialog hints fit, and preview cells are shown
whole."""

from __future__ import annotations

import pytest
from helpers import SAMPLE_CSV, one_item_session, synthetic_result
from textual.widgets import Label, Select
from textual.widgets._footer import FooterKey
from textual.widgets._select import SelectCurrent

from parm_tui.app import ParmApp
from parm_tui.recent import add_recent
from parm_tui.widgets.review_dialogs import ScoreModal
from parm_tui.widgets.toggles import MarkedSwitch

# slow: every test here drives the whole app (a ParmApp).
pytestmark = pytest.mark.slow

WIDTH = 80


@pytest.fixture(scope="module")
def result():
    return synthetic_result(200)


def footer_keys(screen) -> dict[str, FooterKey]:
    return {key.description: key for key in screen.query(FooterKey)}


def visible_end(keys: dict[str, FooterKey]) -> int:
    """Where the footer's keys stop being readable: the palette hint, docked right, covers them."""
    palette = keys.get("palette")
    return WIDTH if palette is None else palette.region.x


async def with_result(pilot, result, name: str):
    pilot.app.finish_run(one_item_session(result), None)
    await pilot.app.action_show(name)
    await pilot.pause()
    return pilot.app.screen


@pytest.mark.parametrize("name", ["load", "settings", "run", "results", "review", "export"])
async def test_every_screen_key_and_quit_fit_in_the_footer(result, name):
    """The screen's own keys and q come first; screen-switching F-keys follow only whole."""
    async with ParmApp().run_test(size=(WIDTH, 24)) as pilot:
        pilot.app.finish_run(one_item_session(result), None)
        await pilot.app.action_show(name)
        await pilot.pause()
        screen = pilot.app.screen
        # In a text field q and c are letters, so the footer leaves them out there.
        screen.set_focus(None)
        await pilot.pause()
        keys = footer_keys(screen)
        own = [b.description for b in screen.BINDINGS if getattr(b, "show", True)]
        assert set(own) | {"Quit"} <= set(keys)
        assert all(key.region.right <= visible_end(keys) for key in keys.values())


async def test_a_wide_footer_shows_every_screen_key():
    async with ParmApp().run_test(size=(160, 40)) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        keys = footer_keys(pilot.app.screen)
        assert {"Load", "Settings", "Run", "Results", "Review", "Export", "Quit"} <= set(keys)


async def test_results_tables_are_not_cut_off_at_80_columns(result):
    async with ParmApp().run_test(size=(WIDTH, 24)) as pilot:
        screen = await with_result(pilot, result, "results")
        metrics = screen.query_one("#results-metrics")
        confusion = screen.query_one("#results-confusion")
        assert confusion.region.x >= 0 and confusion.region.right <= WIDTH
        assert confusion.region.y > metrics.region.y  # below the metrics, not beside them


async def test_results_tables_stand_side_by_side_when_there_is_room(result):
    async with ParmApp().run_test(size=(120, 40)) as pilot:
        screen = await with_result(pilot, result, "results")
        metrics = screen.query_one("#results-metrics")
        confusion = screen.query_one("#results-confusion")
        assert confusion.region.y == metrics.region.y
        assert confusion.region.right <= 120


async def test_the_new_score_dialog_shows_its_whole_hint():
    async with ParmApp().run_test(size=(WIDTH, 24)) as pilot:
        await pilot.app.push_screen(ScoreModal(12, ["0", "1", "2"], "1", "2"))
        await pilot.pause()
        hint = list(pilot.app.screen.query(Label))[-1]
        assert hint.region.right <= hint.parent.content_region.right


async def test_preview_cells_are_shown_whole_with_recent_files(tmp_path, monkeypatch):
    monkeypatch.setenv("PARM_DATA_DIR", str(tmp_path))
    add_recent(SAMPLE_CSV)
    app = ParmApp(SAMPLE_CSV)
    async with app.run_test(size=(WIDTH, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one("#preview")
        first_id = str(app.state.responses.ids[0])
        assert first_id in table.render_line(1).text


async def test_switch_and_checkbox_states_read_without_colour():
    async with ParmApp().run_test(size=(WIDTH, 24)) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        switch = pilot.app.screen.query_one("#normalize_similarities", MarkedSwitch)
        assert str(switch.render()) == "[x] on"
        switch.value = False
        await pilot.pause()
        assert str(switch.render()) == "[ ] off"


def reversed_cells(widget) -> bool:
    """Whether the widget (a dropdown: its current value) is drawn in reverse video."""
    shown = widget.query_one(SelectCurrent) if isinstance(widget, Select) else widget
    return bool(shown.rich_style.reverse)


async def test_focus_on_a_dropdown_or_switch_shows_in_reverse():
    async with ParmApp().run_test(size=(WIDTH, 24)) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        screen = pilot.app.screen
        mode = screen.query_one("#power-mode", Select)
        switch = screen.query_one("#normalize_similarities", MarkedSwitch)
        assert not reversed_cells(mode) and not reversed_cells(switch)
        mode.focus()
        await pilot.pause()
        assert reversed_cells(mode)
        switch.focus()
        await pilot.pause()
        assert reversed_cells(switch) and not reversed_cells(mode)
