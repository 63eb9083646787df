"""The review's dialogs: the score picker lists every score of the item's scale (the human score
marked, picking it changes nothing), a key only chooses and enter confirms, every score is in
view at 80x24 (a longer scale scrolls with the highlight in view); the read dialog gives its
first keys to the rater field."""

from __future__ import annotations

import pytest
from helpers import PARM_CSS
from textual.app import App
from textual.widgets import Input, Label

from parm_tui.widgets.review_dialogs import ReadModal, ScaleList, ScoreModal

# A Mohler-like scale: 0-5 in half points, with the quarter points two graders' means give.
QUARTERS = ["0", "0.5", "1", "1.25", "1.5", "2", "2.5", "3", "3.25", "3.5", "3.75", "4", "4.25",
            "4.5", "4.75", "5"]  # fmt: skip


class Dialog(App):
    """Shows one dialog and keeps what it was dismissed with."""

    CSS_PATH = PARM_CSS

    def __init__(self, dialog) -> None:
        super().__init__()
        self.dialog = dialog
        self.answers: list = []

    def on_mount(self) -> None:
        self.push_screen(self.dialog, self.answers.append)


def option_texts(options: ScaleList) -> list[str]:
    return [str(options.get_option_at_index(n).prompt) for n in range(options.option_count)]


def in_view(options: ScaleList, index: int) -> bool:
    """Whether option `index` (one line each) is inside the list's visible window."""
    return options.scroll_y <= index < options.scroll_y + options.scrollable_content_region.height


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_picker_shows_every_score_with_the_human_one_marked(size):
    app = Dialog(ScoreModal(468, QUARTERS, "4", "1"))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        options = app.screen.query_one(ScaleList)
        texts = option_texts(options)
        assert [t.split()[0] for t in texts] == QUARTERS
        assert "human score" in texts[QUARTERS.index("4")]
        assert "model's score" in texts[QUARTERS.index("1")]
        # Every score in view: nothing to scroll, the list inside the screen.
        assert options.max_scroll_y == 0
        assert options.region.bottom <= size[1] and options.region.height == len(QUARTERS)
        assert options.highlighted == QUARTERS.index("1")  # the model's score first


async def test_a_key_only_chooses_and_enter_confirms():
    app = Dialog(ScoreModal(468, QUARTERS, "4", "1"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        assert isinstance(app.screen, ScoreModal) and app.answers == []
        assert app.screen.query_one(ScaleList).highlighted == QUARTERS.index("5")
        await pilot.press("enter")
        await pilot.pause()
        assert app.answers == ["5"]


@pytest.mark.parametrize(("keys", "label"), [("4.5", "4.5"), ("1.25", "1.25"), ("3.7", "3.75")])
async def test_typed_characters_spell_a_score(keys, label, monkeypatch):
    # a loaded machine may take more than the type-ahead second between two keys
    monkeypatch.setattr(ScaleList, "TYPE_AHEAD_SECONDS", 60.0)
    app = Dialog(ScoreModal(1, QUARTERS, "0", None))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*keys)
        await pilot.pause()
        assert app.screen.query_one(ScaleList).highlighted == QUARTERS.index(label)
        assert app.answers == []


async def test_picking_the_human_score_says_it_changes_nothing():
    app = Dialog(ScoreModal(468, QUARTERS, "4", "1"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ScoreModal) and app.answers == []
        assert "4 is the human score" in str(app.screen.query_one("#score-hint", Label).render())
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.answers == ["4.25"]


async def test_a_text_scale_is_typed_by_its_first_letters():
    labels = ["contradictory", "correct", "irrelevant", "non_domain", "partially_correct"]
    app = Dialog(ScoreModal(3, labels, "correct", "irrelevant"))
    async with app.run_test(size=(80, 24)) as pilot:
        options = app.screen.query_one(ScaleList)
        await pilot.press("p")
        assert options.highlighted == labels.index("partially_correct")
        await pilot.press("escape")
        await pilot.pause()
        assert app.answers == [None]


async def test_a_long_scale_scrolls_and_keeps_the_highlight_in_view():
    labels = [str(n) for n in range(31)]  # an essay scale of 0-30
    app = Dialog(ScoreModal(9, labels, "3", "27"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        options = app.screen.query_one(ScaleList)
        assert options.max_scroll_y > 0
        assert options.highlighted == labels.index("27") and in_view(options, 27)
        await pilot.press("5")
        await pilot.pause()
        assert options.highlighted == 5 and in_view(options, 5)
        await pilot.press("end")
        await pilot.pause()
        assert in_view(options, 30)


async def test_the_read_dialog_gives_its_first_keys_to_the_rater():
    """The name offered is selected, so typing replaces it; enter goes on to the score, where a
    key only chooses and enter adds the read. No shift+tab."""
    dialog = ReadModal(12, ["0", "1", "2"], "root", ["G1", "G2", "G3"], marks={"1": "G1, G2"})
    app = Dialog(dialog)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.focused is app.screen.query_one("#read-rater", Input)
        await pilot.press("l", "e", "a", "d", "enter")
        await pilot.pause()
        assert isinstance(app.focused, ScaleList) and app.answers == []
        assert "G1, G2" in option_texts(app.focused)[1]
        await pilot.press("2")
        await pilot.pause()
        assert app.answers == []
        await pilot.press("enter")
        await pilot.pause()
        assert app.answers == [("lead", "2")]


async def test_the_read_dialog_keeps_the_name_offered_on_enter():
    app = Dialog(ReadModal(12, ["0", "1"], "Ana", ["Ana", "Ben"]))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter", "0", "enter")
        await pilot.pause()
        assert app.answers == [("Ana", "0")]


async def test_the_read_dialog_asks_for_a_rater_before_the_score():
    app = Dialog(ReadModal(12, ["0", "1"], "", []))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.focused, Input)  # no rater: the field keeps the keys
        await pilot.press("tab", "1", "enter")
        await pilot.pause()
        assert app.answers == [] and isinstance(app.focused, Input)
