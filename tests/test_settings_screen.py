"""The Settings screen: every key as a widget, the engine's messages under the field they
name, live application of valid settings, and save/load round trips."""

from __future__ import annotations

from contextlib import asynccontextmanager

import pandas as pd
import pytest
from helpers import engine_message
from textual.widgets import Input, Select, Static, Switch

from engine.input.settings.config import config_from_dict, load_config, load_defaults
from parm_tui.app import ParmApp
from parm_tui.widgets.path_input import PathInput

# slow: every test here drives the whole app (a ParmApp).
pytestmark = pytest.mark.slow


async def open_settings(pilot):
    await pilot.press("f3")
    await pilot.pause()
    return pilot.app.screen


@asynccontextmanager
async def on_settings(app: ParmApp | None = None):
    """The app (a new one unless given) at 80x24 on its Settings screen: the pilot and the
    screen."""
    async with (app or ParmApp()).run_test(size=(80, 24)) as pilot:
        yield pilot, await open_settings(pilot)


async def set_input(screen, selector: str, value: str, pilot) -> None:
    screen.query_one(selector, Input).value = value
    await pilot.pause()


async def set_select(screen, selector: str, value: str, pilot) -> None:
    screen.query_one(selector, Select).value = value
    await pilot.pause()


def error_under(screen, key: str) -> str:
    box = screen.query_one(f"#error-{key}", Static)
    return str(box.content) if box.display else ""


async def test_power_interval_with_min_not_below_max_shows_the_engine_message():
    async with on_settings() as (pilot, screen):
        await set_select(screen, "#power-mode", "interval", pilot)
        await set_input(screen, "#power-min", "2", pilot)
        await set_input(screen, "#power-max", "1", pilot)
        expected = engine_message(similarity_power={"min": 2, "max": 1, "tol": 0.02})
        assert error_under(screen, "similarity_power") == expected
        assert "min < max" in expected
        # The app keeps the last valid settings (the interval before max was lowered).
        applied = pilot.app.state.config.similarity_power
        assert applied.min < applied.max
        assert "Fix the settings" in str(screen.query_one("#settings-status", Static).content)


async def test_every_bad_field_shows_its_own_message_at_once():
    async with on_settings() as (pilot, screen):
        await set_input(screen, "#seed", "abc", pilot)
        await set_input(screen, "#near_duplicate_threshold", "1.5", pilot)
        assert error_under(screen, "seed") == engine_message(seed="abc")
        assert error_under(screen, "near_duplicate_threshold") == engine_message(
            near_duplicate_threshold=1.5
        )
        assert error_under(screen, "embedding_batch_size") == ""


async def test_a_valid_change_is_applied_to_the_app():
    async with on_settings() as (pilot, screen):
        await set_select(screen, "#top-k-mode", "fixed", pilot)
        await set_input(screen, "#top-k-fixed", "12", pilot)
        screen.query_one("#selection_metric", Select).value = "qwk"
        screen.query_one("#normalize_similarities", Switch).value = False
        await pilot.pause()
        config = pilot.app.state.config
        assert (config.similarity_top_k, config.selection_metric) == (12, "qwk")
        assert config.normalize_similarities is False


async def test_colbert_keys_show_only_for_a_late_interaction_model():
    async with on_settings() as (pilot, screen):
        assert not screen.query_one("#colbert-keys").display
        await set_input(screen, "#embedding_model", "lightonai/colbertv2.0", pilot)
        assert screen.query_one("#colbert-keys").display
        assert pilot.app.state.config.late_interaction


async def test_save_then_load_round_trips_the_settings(tmp_path):
    path = tmp_path / "settings.json"
    async with on_settings() as (pilot, screen):
        await set_input(screen, "#top-k-list", "5, 10", pilot)
        await set_select(screen, "#power-mode", "list", pilot)
        await set_input(screen, "#power-list", "0.5, 2", pilot)
        await set_select(screen, "#class_weight", "none", pilot)
        edited = pilot.app.state.config
        assert edited.similarity_top_k == (5, 10)
        assert edited.similarity_power == (0.5, 2.0)
        assert edited.class_weight is None

        screen.query_one("#settings-file", PathInput).value = str(path)
        await pilot.click("#settings-save")
        assert load_config(path) == edited

        await pilot.click("#settings-defaults")
        assert pilot.app.state.config == load_defaults()
        await pilot.click("#settings-load")
        await pilot.pause()
        assert pilot.app.state.config == edited
        assert screen.query_one("#top-k-list", Input).value == "5, 10"
        assert screen.query_one("#power-list", Input).value == "0.5, 2"


async def test_loading_a_broken_settings_file_shows_the_engine_message(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"seed": -1}')
    async with on_settings() as (pilot, screen):
        screen.query_one("#settings-file", PathInput).value = str(path)
        await pilot.click("#settings-load")
        message = str(screen.query_one("#settings-file-message", Static).content)
        assert "'seed'" in message and str(path) in message
        assert pilot.app.state.config == load_defaults()


async def test_a_config_file_given_on_start_fills_the_form(tmp_path):
    path = tmp_path / "start.json"
    path.write_text('{"similarity_top_k": 7, "seed": 3}')
    async with on_settings(ParmApp(config_path=path)) as (_, screen):
        assert screen.query_one("#top-k-mode", Select).value == "fixed"
        assert screen.query_one("#top-k-fixed", Input).value == "7"
        assert screen.query_one("#seed", Input).value == "3"


def write_text_labels(path):
    labels = ["low", "medium", "high"] * 6
    frame = pd.DataFrame(
        {"id": range(18), "answer": [f"answer {i}" for i in range(18)], "score": labels}
    )
    frame.to_csv(path, index=False)
    return path


async def test_score_order_typed_in_settings_orders_the_loaded_labels(tmp_path):
    path = write_text_labels(tmp_path / "levels.csv")
    async with ParmApp(path).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert pilot.app.state.responses.ordered is False
        screen = await open_settings(pilot)
        hint = str(screen.query_one("#score-order-hint", Static).content)
        assert "high, low, medium (no order: nominal" in hint
        await set_input(screen, "#score_order", "low, medium, high", pilot)
        assert pilot.app.state.config.score_order == ("low", "medium", "high")
        # The Load screen re-codes the file with the new order.
        assert pilot.app.state.responses.labels == ("low", "medium", "high")
        assert pilot.app.state.responses.ordered
        assert "low, medium, high (ordered)" in str(
            screen.query_one("#score-order-hint", Static).content
        )


async def test_a_score_order_that_misses_a_label_says_so(tmp_path):
    path = write_text_labels(tmp_path / "levels.csv")
    async with ParmApp(path).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen = await open_settings(pilot)
        await set_input(screen, "#score_order", "low, high", pilot)
        assert pilot.app.state.responses is None
        assert "does not fit these settings" in str(
            screen.query_one("#score-order-hint", Static).content
        )
        load = pilot.app.get_screen("load")
        message = str(load.query_one("#validation", Static).content)
        assert "'medium'" in message and "not in score_order" in message
        await set_input(screen, "#score_order", "low, low", pilot)
        assert error_under(screen, "score_order") == engine_message(score_order="low, low")


async def test_score_order_round_trips_through_a_settings_file(tmp_path):
    path = tmp_path / "settings.json"
    async with on_settings() as (pilot, screen):
        await set_input(screen, "#score_order", "poor, fair, good", pilot)
        screen.query_one("#settings-file", PathInput).value = str(path)
        await pilot.click("#settings-save")
        assert load_config(path).score_order == ("poor", "fair", "good")
        await pilot.click("#settings-defaults")
        assert screen.query_one("#score_order", Input).value == ""
        await pilot.click("#settings-load")
        await pilot.pause()
        assert screen.query_one("#score_order", Input).value == "poor, fair, good"


async def test_worker_processes_are_a_setting_and_the_run_lists_them_with_the_session_columns():
    from parm_tui.widgets.settings_summary import columns_text, settings_text

    async with on_settings() as (pilot, screen):
        await set_input(screen, "#jobs", "2", pilot)
        assert pilot.app.state.config.jobs == 2
        assert "2 worker processes" in settings_text(pilot.app.state.config)
        await set_input(screen, "#jobs", "0", pilot)
        assert error_under(screen, "jobs") == engine_message(jobs=0)
    config = config_from_dict(
        {
            "item_column": "item",
            "rater_column": "rater",
            "second_score_column": "score2",
            "second_rater_column": "rater2",
        }
    )
    assert columns_text(config).endswith("item=item, rater=rater, 2nd rater=rater2")
    assert "worker" not in settings_text(config)


async def test_a_focused_field_shows_one_line_of_help_and_technical_ones_are_advanced():
    from textual.widgets import Collapsible

    async with on_settings() as (pilot, screen):
        screen.query_one("#seed", Input).focus()
        await pilot.pause()
        shown = [box.id for box in screen.query(".field-help") if box.display]
        assert shown == ["help-seed"]
        assert "the same figures" in str(screen.query_one("#help-seed", Static).render())
        screen.query_one("#selection_metric", Select).focus()
        await pilot.pause()
        shown = [box.id for box in screen.query(".field-help") if box.display]
        assert shown == ["help-selection_metric"]
        # Chunk size, embedding batch, worker processes and saved runs: Advanced, closed.
        advanced = screen.query_one("#advanced", Collapsible)
        assert advanced.collapsed
        for key in ("similarity_top_k_chunk", "embedding_batch_size", "jobs", "saved_runs"):
            assert advanced in screen.query_one(f"#{key}", Input).ancestors
        # The line saying whether the settings are applied is in view at 80x24.
        status = screen.query_one("#settings-status", Static)
        assert "Settings valid and applied" in str(status.render())
        assert status.region.height and status.region.bottom <= 24


def test_the_columns_line_names_every_read_its_rater_and_the_file_s_other_columns():
    """The Run screen and the resume question list what a multi-read run reads, not only the
    audited score (sample_data/reads.csv's columns)."""
    from parm_tui.widgets.settings_summary import columns_text

    config = config_from_dict(
        {
            "item_column": "item",
            "rater_column": "rater1",
            "score_column": "score1",
            "score_columns": ["score1", "score2", "score3"],
            "rater_columns": ["rater1", "rater2", "rater3"],
            "expert_column": "expert_score",
            "question_column": "question",
        }
    )
    assert columns_text(config) == (
        "columns: text=answer, score=score1, id=id, more reads=score2,score3, item=item, "
        "rater=rater1, more raters=rater2,rater3, question=question, expert=expert_score"
    )
    long = config_from_dict({"reads": "long", "id_column": "id", "rater_column": "rater"})
    assert columns_text(long).endswith("rater=rater (long: one row per read)")
