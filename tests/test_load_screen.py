"""The Load screen: specific path messages, column guesses, the engine's validation messages,
the recent-files list and copying a preview row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import SAMPLE_CSV
from textual.widgets import Select, Static

from engine.core.errors import DataError
from parm_tui.app import ParmApp
from parm_tui.recent import recent_files
from parm_tui.widgets.path_input import PathInput, PathSuggester, path_problem


def shown(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


async def open_typed_path(pilot, text: str) -> None:
    path_input = pilot.app.screen.query_one("#path", PathInput)
    path_input.focus()
    path_input.value = text
    await pilot.press("enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def write_csv(path, scores, texts=None):
    texts = texts or [f"answer number {i}" for i in range(len(scores))]
    ids = [f"S{i:03d}" for i in range(1, len(scores) + 1)]
    frame = pd.DataFrame({"id": ids, "answer": texts, "score": scores})
    frame.to_csv(path, index=False)
    return path


@pytest.mark.slow
async def test_a_path_that_does_not_exist_says_not_found(tmp_path):
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        await open_typed_path(pilot, str(tmp_path / "nothing-here.csv"))
        assert shown(pilot.app, "#path-message").startswith("Not found:")
        assert pilot.app.state.responses is None


@pytest.mark.slow
async def test_a_folder_says_not_a_file(tmp_path):
    async with ParmApp().run_test(size=(80, 24)) as pilot:
        await open_typed_path(pilot, str(tmp_path))
        assert shown(pilot.app, "#path-message").startswith("Not a file:")


def test_path_problems_name_the_missing_folder(tmp_path):
    assert "does not exist" in path_problem(str(tmp_path / "no-folder" / "a.csv"))
    assert path_problem(str(write_csv(tmp_path / "a.csv", [0, 1] * 6))) is None


async def test_path_completion_expands_the_last_component(tmp_path):
    write_csv(tmp_path / "plants.csv", [0, 1] * 6)
    (tmp_path / "plots").mkdir()
    suggester = PathSuggester()
    assert await suggester.get_suggestion(f"{tmp_path}/pla") == f"{tmp_path}/plants.csv"
    assert await suggester.get_suggestion(f"{tmp_path}/plo") == f"{tmp_path}/plots/"
    assert await suggester.get_suggestion(f"{tmp_path}/zzz") is None


@pytest.mark.slow
async def test_sample_file_prefills_the_columns_and_shows_counts():
    async with ParmApp(SAMPLE_CSV).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        app = pilot.app
        chosen = {s.id: s.value for s in app.screen.query(Select)}
        assert chosen == {
            "col-text": "answer",
            "col-score": "score",
            "col-id": "id",
            "col-second": "score2",
            "col-item": Select.NULL,
            "col-rater": Select.NULL,
            "col-second-rater": Select.NULL,
            "col-time": Select.NULL,
            "col-expert": Select.NULL,
            "col-kind": Select.NULL,
            "col-question": Select.NULL,
            "col-reference": Select.NULL,
            "col-reads-shape": "wide",
            "col-sheet": Select.NULL,  # not a workbook: hidden
        }
        assert not app.screen.query_one("#choice-col-sheet").display
        assert app.state.responses is not None
        assert app.state.source_path == SAMPLE_CSV.resolve()
        assert app.state.config.second_score_column == "score2"
        counts = np.bincount(app.state.responses.scores)
        text = shown(app, "#validation")
        assert f"{len(app.state.responses):,} responses" in text
        for label, n in zip(app.state.responses.labels, counts):
            assert f"{label}: {n:,}" in text
        assert app.state.store is not None


@pytest.mark.slow
async def test_a_single_score_category_shows_the_engine_message(tmp_path):
    from engine.input.responses import read_table, responses_from_frame
    from engine.input.settings.config import load_defaults

    path = write_csv(tmp_path / "one-score.csv", [1] * 12)
    with pytest.raises(DataError) as expected:
        responses_from_frame(read_table(path), load_defaults(), source=str(path.resolve()))
    async with ParmApp(path).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert shown(pilot.app, "#validation") == str(expected.value)
        assert "at least two score categories" in str(expected.value)
        assert pilot.app.state.responses is None


@pytest.mark.slow
async def test_non_numeric_scores_are_counted_with_examples(tmp_path):
    scores = [0, 1, 2] * 5 + ["lots", "none"]
    path = write_csv(tmp_path / "bad-scores.csv", scores)
    async with ParmApp(path).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        text = shown(pilot.app, "#validation")
        assert "2 row(s) cannot be used" in text
        assert "(16, 17)" in text
        assert pilot.app.state.responses is None


@pytest.mark.slow
async def test_skipping_bad_rows_in_settings_revalidates_with_a_warning(tmp_path):
    path = write_csv(tmp_path / "bad-scores.csv", [0, 1, 2] * 5 + ["lots"])
    async with ParmApp(path).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        pilot.app.apply_settings(pilot.app.state.config.updated(on_bad_rows="skip"))
        await pilot.pause()
        assert len(pilot.app.state.responses) == 15
        assert "Skipped 1 row(s)" in shown(pilot.app, "#validation")


@pytest.mark.slow
async def test_choosing_another_score_column_revalidates():
    from engine.input.items import split_items
    from engine.input.responses import read_table

    async with ParmApp(SAMPLE_CSV).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        config = pilot.app.state.config.updated(score_column="id")
        with pytest.raises(DataError) as expected:
            # the check both front ends meet first (engine.input.score_check, in split_items)
            split_items(read_table(SAMPLE_CSV), config, source=str(SAMPLE_CSV.resolve()))
        pilot.app.screen.query_one("#col-score", Select).value = "id"
        await pilot.pause()
        assert pilot.app.state.responses is None
        assert shown(pilot.app, "#validation") == str(expected.value)


@pytest.mark.slow
async def test_recent_files_record_the_opened_file(tmp_path):
    path = write_csv(tmp_path / "recent.csv", [0, 1, 2] * 4)
    async with ParmApp(path).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert recent_files()[0] == path.resolve()
        recent = pilot.app.screen.query_one("#recent")
        assert recent.get_option_at_index(0).id == str(path.resolve())


@pytest.mark.slow
async def test_columns_named_in_a_config_file_win_over_guesses(tmp_path):
    config = tmp_path / "columns.json"
    config.write_text('{"score_column": "score2", "second_score_column": "score"}')
    async with ParmApp(SAMPLE_CSV, config_path=config).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert pilot.app.screen.query_one("#col-score", Select).value == "score2"
        assert pilot.app.screen.query_one("#col-second", Select).value == "score"


@pytest.mark.slow
async def test_c_copies_the_full_answer_of_the_preview_row():
    async with ParmApp(SAMPLE_CSV).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        pilot.app.screen.query_one("#preview").focus()
        await pilot.press("j", "c")
        assert pilot.app.clipboard == pilot.app.state.responses.texts[1]


def test_preview_columns_take_their_width_or_share_what_there_is():
    from parm_tui.screens.load import fit_widths

    assert fit_widths([5, 40, 5], 60) == [5, 40, 5]
    assert fit_widths([5, 140, 6, 90], 100) == [5, 44, 6, 44]
    assert sum(fit_widths([5, 140, 6, 90], 100)) <= 100
    assert fit_widths([30, 30], 4) == [6, 6]  # never below the narrowest useful width


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_preview_fits_its_columns_to_the_terminal(size):
    async with ParmApp(SAMPLE_CSV).run_test(size=size) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        table = pilot.app.screen.query_one("#preview")
        widths = [column.width for column in table.ordered_columns]
        used = sum(widths) + 2 * len(widths)
        assert used <= table.size.width  # no column passes the right edge
        # The answers take the width the other columns leave (no longer cut at 50 characters).
        assert used == table.size.width - 2  # the vertical scrollbar's
        assert widths[1] > (50 if size[0] >= 120 else 30)


@pytest.mark.slow
async def test_the_time_column_is_chosen_beside_the_rater_column(tmp_path):
    frame = pd.DataFrame(
        {"answer": [f"answer {i}" for i in range(30)], "score": [str(i % 3) for i in range(30)],
         "marker": [f"m{i % 3}" for i in range(30)], "marked_at": [str(i) for i in range(30)]}
    )  # fmt: skip
    path = tmp_path / "marks.csv"
    frame.to_csv(path, index=False)
    async with ParmApp(path).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen = pilot.app.screen
        assert screen.query_one("#col-time", Select).value == "marked_at"
        assert pilot.app.state.config.time_column == "marked_at"
        assert pilot.app.state.items.audited[0].times is not None
        screen.query_one("#col-time", Select).clear()
        await pilot.pause()
        assert pilot.app.state.config.time_column is None


@pytest.mark.slow
async def test_a_reviewed_file_is_audited_on_its_final_score_and_the_screen_says_so(tmp_path):
    path = write_csv(tmp_path / "scores_reviewed.csv", [0, 1, 2] * 8)
    frame = pd.read_csv(path, dtype=str)
    frame["final_score"] = frame["score"].where(frame.index != 3, "2")
    frame["decision"] = ["change" if i == 3 else "" for i in range(len(frame))]
    frame.to_csv(path, index=False)
    app = ParmApp()
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await open_typed_path(pilot, str(path))
        await pilot.pause()
        assert app.screen.query_one("#col-score", Select).value == "final_score"
        assert app.state.config.score_column == "final_score"
        messages = " ".join(n.message for n in app._notifications)
        assert "final_score, the reviewed scores of a scores_reviewed.csv" in messages


async def test_the_warnings_of_many_items_come_one_line_per_kind(tmp_path):
    from helpers import session_frame

    from engine.core.run_warnings import KINDS

    frame, _ = session_frame(items=tuple((f"q{k}", 30, 3) for k in range(6)))
    path = tmp_path / "items.csv"
    frame.to_csv(path, index=False)
    async with ParmApp(path).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert pilot.app.state.config.item_column == "item"  # guessed
        text = " ".join(shown(pilot.app, "#validation").split())
        assert text.count("⚠") == 1  # six items' "Only 30 usable responses": one line
        assert f"⚠ 6 x {KINDS['small_item'].summary}: items" in text and "and 3 more" in text


@pytest.mark.slow
async def test_a_workbook_with_two_sheets_of_answers_asks_which_and_reads_the_one_chosen(tmp_path):
    from workbooks import scored_rows, write_xlsx

    header = ["id", "answer", "score"]
    sheets = {"Term 1": [header, *scored_rows(20)], "Term 2": [header, *scored_rows(16, 100)]}
    path = write_xlsx(tmp_path / "terms.xlsx", sheets)
    async with ParmApp(path).run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        app = pilot.app
        assert app.screen.query_one("#choice-col-sheet").display
        assert "Which sheet holds the answers?" in shown(app, "#validation")
        assert "Choose it under Sheet" in shown(app, "#validation")
        assert app.state.file.sheet == "Term 1" and len(app.state.responses) == 20
        app.screen.query_one("#col-sheet", Select).value = "Term 2"
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.file.sheet == "Term 2" and app.state.columns["sheet"] == "Term 2"
        assert app.state.responses.ids[0] == "S100" and len(app.state.responses) == 16
        assert "Which sheet" not in shown(app, "#validation")
