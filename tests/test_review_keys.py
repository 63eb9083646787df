"""The review's keys (parm_tui/screens/review_keys.py): movement keys only move (vim j/k, g/G,
ctrl+d/ctrl+u, arrows and page keys, also on a list of one page); decisions sit on keys of their
own and move on to the next undecided response of the view; `u` undoes the last decision; after
a choice in a dropdown the list keys work at once, and esc on the list stays in the review."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import Host, one_item_session, synthetic_result, text_of, wait_for
from textual.widgets import Select
from textual.widgets._footer import FooterKey

from parm_tui.screens.review import ReviewScreen
from parm_tui.widgets.review_list import PAGE_SIZE, ReviewTable

# Every key that moves through the list; none of them may ever record a decision.
MOVES = ("j", "k", "down", "up", "g", "G", "ctrl+d", "ctrl+u", "pagedown", "pageup", "home",
         "end", "n")  # fmt: skip


@pytest.fixture(scope="module")
def review():
    """One page of flagged responses (fewer than PAGE_SIZE)."""
    review = one_item_session(synthetic_result(300)).review
    assert 40 < int(review.flagged.sum()) < PAGE_SIZE
    return review


def position(screen: ReviewScreen) -> int:
    return int(np.flatnonzero(screen.view == screen.current())[0])


async def final_height(pilot, widget) -> int:
    """The widget's height once the footer's second row is laid out (it recomposes after the
    first refresh, later on a loaded machine): the same height over three pauses."""
    heights = []
    for _ in range(50):
        await pilot.pause()
        heights.append(widget.size.height)
        if len(heights) >= 3 and len(set(heights[-3:])) == 1:
            break
    return heights[-1]


def row_of(review, i) -> int:
    return int(review.responses.rows[i])


async def test_page_keys_move_on_a_list_of_one_page(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        visible = await final_height(pilot, screen.query_one(ReviewTable)) - 1
        await pilot.press("pagedown")
        assert position(screen) == visible - 1
        await pilot.press("pagedown")
        assert position(screen) == 2 * (visible - 1)
        await pilot.press("pageup")
        assert position(screen) == visible - 1
        await pilot.press("ctrl+u")
        assert position(screen) == visible - 1 - (visible - 1) // 2
        await pilot.press("ctrl+d")
        assert position(screen) == visible - 1
        await pilot.press("end")
        assert position(screen) == len(screen.view) - 1
        await pilot.press("home")
        assert position(screen) == 0


async def test_movement_keys_never_record_a_decision(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        await pilot.press("j", "j", "k")
        assert position(screen) == 1
        for key in MOVES:
            await pilot.press(key)
        await pilot.pause()
        assert store.all() == {}


async def test_decisions_have_keys_of_their_own_shown_in_the_footer(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        first, second, third = (int(i) for i in screen.view[:3])
        await pilot.press("o")
        await pilot.press("question_mark")
        await pilot.pause()
        assert store.get(row_of(review, first)).action == "keep"
        assert store.get(row_of(review, second)).action == "unsure"
        assert screen.current() == third
        shown = {key.key for key in screen.query(FooterKey)}
        assert {"o", "c", "question_mark", "u"} <= shown


async def test_a_decision_moves_to_the_next_undecided_response_of_the_view(review, store):
    responses = review.responses
    view = [int(i) for i in np.flatnonzero(review.flagged)]
    order = [i for i in review.review_order() if i in set(view)]
    # The second and third of the list are decided already.
    for i in order[1:3]:
        store.record(row_of(review, i), responses.ids[i], responses.texts[i], "keep")
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        assert screen.current() == order[0]
        await pilot.press("o")
        await pilot.pause()
        assert screen.current() == order[3]
        # n moves on to the next undecided one without recording anything.
        await pilot.press("n")
        await pilot.pause()
        assert screen.current() == order[4]
        assert store.get(row_of(review, order[3])) is None


async def test_u_undoes_the_last_decision_and_goes_back_to_it(review, store):
    responses = review.responses
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        first, second = (int(i) for i in screen.view[:2])
        store.record(row_of(review, first), responses.ids[first], responses.texts[first], "unsure")
        earlier = store.get(row_of(review, first))
        await pilot.press("o", "o")
        await pilot.pause()
        await pilot.press("u")
        await pilot.pause()
        assert store.get(row_of(review, second)) is None
        assert screen.current() == second
        await pilot.press("u")
        await pilot.pause()
        assert store.get(row_of(review, first)) == earlier  # as it was, not merely cleared
        assert screen.current() == first
        messages = " ".join(n.message for n in pilot.app._notifications)
        assert f"row {row_of(review, first)}" in messages


async def test_after_a_dropdown_choice_the_list_keys_work_at_once(review, store):
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        screen.query_one("#filter-human", Select).focus()
        await pilot.press("enter", "down", "enter")  # open, pick "human 0"
        await pilot.pause()
        assert screen.query_one("#filter-human", Select).value == 0
        assert screen.focused is screen.query_one(ReviewTable)
        await pilot.press("j")
        assert position(screen) == 1
        # esc on the list does not leave the review.
        await pilot.press("escape")
        await pilot.pause()
        assert pilot.app.screen is screen


@pytest.mark.parametrize(
    ("view", "decided"),
    [("undecided", None), ("unsure", "unsure"), ("changed", "change"), ("kept", "keep")],
)
async def test_the_views_by_decision(review, store, view, decided):
    responses = review.responses
    flagged = [int(i) for i in review.review_order() if review.flagged[i]]
    actions = ["keep", "unsure", "change", "keep"]
    for i, action in zip(flagged, actions):
        human = responses.labels[responses.scores[i]]
        new = next(label for label in responses.labels if label != human)
        store.record(row_of(review, i), responses.ids[i], responses.texts[i], action,
                     new if action == "change" else None, "ask Sam" if action == "unsure" else "")  # fmt: skip
    async with Host(review, store).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        screen.query_one("#filter-view", Select).value = view
        await pilot.pause()
        listed = [int(i) for i in screen.view]
        if decided is None:
            assert listed == flagged[4:]
        else:
            assert listed == [i for i, a in zip(flagged, actions) if a == decided]
        assert f"listed {len(listed)}" in text_of(screen, "#review-status")
        screen.query_one("#filter-view", Select).value = "noted"
        await pilot.pause()
        assert [int(i) for i in screen.view] == [flagged[1]]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_key_of_the_review_is_named_in_the_footer_or_on_f1(review, store, size):
    """The footer names the deciding keys, `r` (add a read) and `T` (third reads) whole at 80
    and 120 columns (a second row where one is not enough); f1 lists every key with what it
    does, and what the pane's figures mean."""
    from textual.widgets import Footer

    from parm_tui.screens.keys import KeysModal
    from parm_tui.widgets.review_detail import LEGEND

    async with Host(review, store).run_test(size=size) as pilot:
        screen = pilot.app.screen

        def laid_out() -> bool:  # the footer recomposes once its bindings and size are known
            bottom = screen.query_one(Footer).region
            keys = list(screen.query(FooterKey))
            whole = all(bottom.contains_region(key.region) for key in keys)
            return whole and {"o", "f1"} <= {key.key for key in keys}

        await wait_for(pilot, laid_out, "the footer")
        footer = list(screen.query(FooterKey))
        named = {key.key for key in footer}
        assert {"o", "c", "question_mark", "x", "u", "e", "r", "T", "n", "v", "slash"} <= named
        assert "f1" in named
        assert all(key.region.right <= size[0] and key.region.width >= len(key.description)
                   for key in footer)  # fmt: skip
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(pilot.app.screen, KeysModal)
        listed = " ".join(text_of(pilot.app.screen, "#keys-list").split())
        for binding in ReviewScreen.BINDINGS:
            assert binding.description in listed
        for move in ("Cursor down", "Page down", "Half page down"):  # the list's keys too
            assert move in listed
        extra = " ".join(text_of(pilot.app.screen, "#keys-extra").split())
        assert " ".join(LEGEND.plain.split()) == extra
        await pilot.press("escape")
        await pilot.pause()
        assert pilot.app.screen is screen and store.all() == {}
