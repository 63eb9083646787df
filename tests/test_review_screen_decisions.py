"""The review screen: a decision acts only on the response on screen, which opens at its start;
`n` moves on without recording; a note before deciding waits for the decision; after a re-run
the screen counts the decided responses that lost their flag and the new undecided flags, and
lists either; the answer column stays readable at 80x24 and takes the width there is."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial

import numpy as np
import pytest
from helpers import Host, one_item_session, shown_rows, synthetic_result, text_of
from textual.widgets import Label, Select

from engine.results.decision import RunContext
from parm_tui.screens.review import ReviewScreen
from parm_tui.widgets.neighbours import NeighbourList
from parm_tui.widgets.review_detail import ReviewDetail
from parm_tui.widgets.review_dialogs import NoteModal
from parm_tui.widgets.review_list import ReviewTable
from parm_tui.widgets.toggles import MarkedCheckbox

LONG = " ".join(f"Sentence {n} of a long answer about roots, light and water." for n in range(40))


@pytest.fixture(scope="module")
def review():
    """Every answer long enough that the detail pane scrolls at 80x24."""
    base = synthetic_result(200)
    texts = [f"{t}. {LONG}" for t in base.responses.texts]
    return one_item_session(replace(base, responses=replace(base.responses, texts=texts))).review


def row_of(review, i) -> int:
    return int(review.responses.rows[i])


@asynccontextmanager
async def reviewing(result, store, size=(80, 24), screen=ReviewScreen):
    """The review screen of `result` deciding into `store`, in an app of `size`: yields the
    pilot and the screen."""
    async with Host(result, store, screen).run_test(size=size) as pilot:
        yield pilot, pilot.app.screen


async def press(pilot, *keys: str) -> None:
    """Press the keys and let the screen handle them."""
    await pilot.press(*keys)
    await pilot.pause()


async def test_n_moves_on_without_recording_anything(review, store):
    async with reviewing(review, store) as (pilot, screen):
        first = screen.current()
        await press(pilot, "n")
        assert screen.current() == int(screen.view[1])
        assert screen.shown() == int(screen.view[1])
        assert store.all() == {}
        assert store.get(row_of(review, first)) is None


async def test_a_new_response_opens_at_the_start_of_its_answer(review, store):
    async with reviewing(review, store) as (pilot, screen):
        detail = screen.query_one(ReviewDetail)
        await press(pilot, "right_square_bracket", "right_square_bracket")
        assert detail.scroll_y > 0
        await press(pilot, "down")
        assert detail.scroll_y == 0
        # The answer starts within the first lines of the pane, and says it goes on.
        answer = screen.query_one("#detail-text")
        assert answer.virtual_region.y < detail.scrollable_content_region.height // 2
        assert "continues below" in text_of(screen, "#detail-answer-title")


async def test_a_decision_key_acts_on_the_response_on_screen(review, store):
    """A key pressed after the cursor moved but before the pane was redrawn decides on the
    response the pane still shows, then moves to the one after it."""
    async with reviewing(review, store) as (pilot, screen):
        on_screen = screen.shown()
        table = screen.query_one(ReviewTable)
        table.move_cursor(row=3)  # its highlight message has not been handled yet
        assert screen.current() != on_screen and screen.shown() == on_screen
        screen.action_decide("keep")
        await pilot.pause()
        assert list(store.all()) == [row_of(review, on_screen)]
        assert screen.current() == screen.shown() == int(screen.view[1])


async def test_a_note_before_deciding_waits_for_the_decision(review, store):
    async with reviewing(review, store) as (pilot, screen):
        i = screen.shown()
        await press(pilot, "e")
        assert isinstance(pilot.app.screen, NoteModal) and pilot.app.screen.waiting
        # The hint names the keys that decide, and no key that only moves.
        hint = " ".join(str(label.render()) for label in pilot.app.screen.query(Label))
        deciding = [b.key_display or b.key for b in screen.BINDINGS if "decide" in b.action]
        assert f"({', '.join(deciding)})" in hint
        await press(pilot, *"ask Sam", "enter")
        assert store.all() == {}
        assert "saved with your decision): ask Sam" in text_of(screen, "#detail-header")
        await press(pilot, "o")
        decision = store.get(row_of(review, i))
        assert (decision.action, decision.note) == ("keep", "ask Sam")


async def test_a_decision_records_the_run_it_was_made_on(review, store):
    async with reviewing(review, store) as (pilot, screen):
        i = screen.shown()
        await press(pilot, "question_mark")
        assert store.get(row_of(review, i)).context == review.run_context(i)


async def test_the_answer_column_stays_readable_at_80x24(review, store):
    async with reviewing(review, store) as (_, screen):
        table = screen.query_one(ReviewTable)
        keys = [column.key.value for column in table.ordered_columns]
        assert keys == ["row", "scores", "decision", "answer"]
        assert table.answer_width >= 20
        assert table.region.right <= 80 - 32


@pytest.mark.parametrize("size", [(100, 30), (120, 40), (200, 50)])
async def test_the_answer_column_takes_the_remaining_width(review, store, size):
    async with reviewing(review, store, size) as (_, screen):
        table = screen.query_one(ReviewTable)
        used = sum(c.width + 2 for c in table.ordered_columns)
        assert table.size.width - 4 <= used <= table.size.width
        full = [column.key.value for column in table.ordered_columns]
        # Severity and the second rater from 120 columns (issue 25: the width is used).
        assert ("severity" in full) == ("second" in full) == (size[0] >= 120)


def decide_on_an_earlier_run(store, review, i, action="keep"):
    """Record a decision as it was made on another run, which predicted `predicted` for it."""
    responses = review.responses
    earlier = RunContext("earlier-run", "settings0", responses.labels[review.predicted[i]], 0.5)
    store.record(row_of(review, i), responses.ids[i], responses.texts[i], action, context=earlier)


async def test_a_rerun_that_changed_nothing_shows_no_rerun_line(review, store):
    flagged = np.flatnonzero(review.flagged)
    decide_on_an_earlier_run(store, review, int(flagged[0]))  # still flagged: nothing changed
    previous = [row_of(review, i) for i in flagged]
    rerun = partial(ReviewScreen, previous_flagged_rows=previous)
    async with reviewing(review, store, screen=rerun) as (pilot, screen):
        await pilot.pause()
        assert screen.model.changes is not None
        assert not screen.query_one("#review-rerun").display


async def test_a_rerun_counts_and_lists_what_changed_under_the_decisions(review, store):
    flagged = np.flatnonzero(review.flagged)
    unflagged = np.flatnonzero(~review.flagged)
    # Decided earlier when flagged: one still flagged, one the model now agrees with.
    decide_on_an_earlier_run(store, review, int(flagged[0]))
    lost = int(unflagged[0])
    responses = review.responses
    other = next(
        label for label in responses.labels if label != responses.labels[responses.scores[lost]]
    )
    store.record(
        row_of(review, lost),
        responses.ids[lost],
        responses.texts[lost],
        "unsure",
        context=RunContext("earlier-run", "settings0", other, 0.4),
    )
    # The previous run flagged all but the last three of this run's flags.
    previous = [row_of(review, i) for i in flagged[:-3]]
    rerun = partial(ReviewScreen, previous_flagged_rows=previous)
    async with reviewing(review, store, screen=rerun) as (pilot, screen):
        line = text_of(screen, "#review-rerun")
        assert "1 decided no longer flagged" in line and "3 newly flagged undecided" in line
        screen.query_one("#filter-view", Select).value = "unflagged"
        await pilot.pause()
        assert screen.view.tolist() == [lost]
        screen.query_one("#filter-view", Select).value = "new"
        await pilot.pause()
        assert sorted(screen.view.tolist()) == sorted(flagged[-3:].tolist())
        # Deciding a new flag counts down; the list keeps it, with its decision.
        await press(pilot, "o")
        assert "2 newly flagged undecided" in text_of(screen, "#review-rerun")
        assert len(screen.view) == 3


async def test_a_first_run_shows_no_rerun_line(review, store):
    async with reviewing(review, store) as (pilot, screen):
        assert not screen.query_one("#review-rerun").display
        options = [value for _, value in screen.query_one("#filter-view", Select)._options]
        assert "new" not in options


async def test_the_review_opens_where_it_stopped(review, store):
    flagged = np.flatnonzero(review.flagged)
    resumed = partial(ReviewScreen, start_row=row_of(review, int(flagged[5])))
    async with reviewing(review, store, screen=resumed) as (pilot, screen):
        assert screen.shown_row() == row_of(review, int(flagged[5]))


async def test_without_a_place_to_continue_the_review_opens_at_the_first_undecided(review, store):
    first, second = (int(i) for i in review.review_order()[:2])
    decide_on_an_earlier_run(store, review, first)
    async with reviewing(review, store) as (pilot, screen):
        assert shown_rows(screen)[0] == row_of(review, first)
        assert screen.shown() == second


async def test_a_checkbox_shows_its_state_without_colour(review, store):
    async with reviewing(review, store) as (pilot, screen):
        box = screen.query_one("#filter-off2", MarkedCheckbox)
        assert "X" not in str(box.render())
        box.value = True
        await pilot.pause()
        assert "X" in str(box.render())


async def test_an_imported_conflict_shows_under_the_decision_and_the_next_decision_settles_it(
    review, store
):
    from engine.results.decision import Decision
    from parm_tui.widgets.review_filters import ReviewFilters

    i = int(np.flatnonzero(review.flagged)[0])
    row = row_of(review, i)
    store.record(row, review.responses.ids[i], review.responses.texts[i], "keep")
    theirs = Decision(row, review.responses.ids[i], "unsure", None, "ask the lead",
                      "2026-11-20T10:00:00+00:00", None, "ben")  # fmt: skip
    store.add_conflict(theirs, review.responses.texts[i], "ben/decisions.csv")
    async with reviewing(review, store, (120, 40)) as (pilot, screen):
        screen.query_one(ReviewFilters).set_view("conflicts")
        await pilot.pause()
        assert screen.view.tolist() == [i]
        header = text_of(screen, "#detail-header")
        assert "conflict: ben unsure · ask the lead" in header and "settles it" in header
        await press(pilot, "o")
        assert store.conflicts(row) == [] and store.get(row).reviewer == store.reviewer


@pytest.fixture(scope="module")
def read_thrice():
    """A session whose answers were read three times, with each item's question and reference
    answer in the file."""
    from helpers import run_frame, session_config, session_frame

    frame, vectors = session_frame()
    rng = np.random.default_rng(4)
    frame["G2"] = [str((int(s) + rng.integers(0, 2)) % 3) for s in frame["score"]]
    frame["G3"] = [str(int(s)) if k % 2 else "" for k, s in enumerate(frame["score"])]
    # As long as a typical Mohler question and reference answer.
    frame["question"] = (
        "Why do " + frame["item"] + " plants bend towards a window when grown indoors?"
    )
    frame["reference_answer"] = "They grow towards the light, which drives photosynthesis."
    config = session_config(
        score_columns=["score", "G2", "G3"], question_column="question",
        reference_column="reference_answer",
    )  # fmt: skip
    return run_frame(frame, vectors, config).review


async def test_the_detail_shows_every_read_the_question_and_the_reference(read_thrice, tmp_path):
    from engine.saved.decisions import open_store

    with open_store(tmp_path / "s.csv", read_thrice.responses, tmp_path / "d.db",
                    read_thrice.on_scale) as store:  # fmt: skip
        async with reviewing(read_thrice, store) as (pilot, screen):
            await press(pilot, "a")  # the whole queue, flagged or not
            i = screen.current()
            result, j = read_thrice.locate(i)
            reads = result.responses.reads
            header = " ".join(text_of(screen, "#detail-header").split())
            expected = " · ".join(
                f"{reads.rater[k]} {result.responses.labels[reads.score[k]]}"
                for k in np.flatnonzero(reads.answer == j)
            )
            assert f"reads: {expected}" in header
            assert f"question: Why do {read_thrice.items[i]} plants bend towards a window" in header
            assert "reference: They grow towards the light, which drives" in header
            # ... and the evidence under the answer is in view without scrolling, at 80x24.
            detail = screen.query_one(ReviewDetail)
            first_neighbour = detail.query_one(NeighbourList).virtual_region.y + 1
            assert first_neighbour < detail.scroll_y + detail.scrollable_content_region.height


async def test_undo_then_deciding_again_keeps_the_note_typed_with_the_decision(review, store):
    async with reviewing(review, store, (100, 30)) as (pilot, screen):
        i = screen.shown()
        row = row_of(review, i)
        screen.model.pending_notes[row] = "the rubric's third point"
        screen.action_decide("keep")
        await pilot.pause()
        assert store.get(row).note == "the rubric's third point"
        screen.action_undo()
        await pilot.pause()
        assert store.get(row) is None
        screen.action_decide("unsure")
        await pilot.pause()
        assert store.get(row).note == "the rubric's third point"


async def test_each_filter_has_a_key(read_thrice, tmp_path):
    from textual.widgets import Select

    async with reviewing(read_thrice, None, (120, 40)) as (pilot, screen):
        for key, which in (("I", "item"), ("H", "human"), ("M", "model")):
            await press(pilot, "escape", key)
            select = screen.query_one(f"#filter-{which}", Select)
            assert select.expanded and select in screen.focused.ancestors_with_self, which


def test_long_text_labels_are_shortened_to_prefixes_no_two_share():
    from parm_tui.widgets.review_list import short_labels

    nominal = ["contradictory", "correct", "irrelevant", "non_domain", "partially_correct"]
    assert short_labels(nominal) == ["con", "cor", "irr", "non", "par"]
    close = ["partially_correct_incomplete", "partially_correct_complete"]
    assert short_labels(close) == ["pci", "pcc"]
    for labels in (["0", "0.5", "4.75"], ["low", "high"]):  # short labels stay as they are
        assert short_labels(labels) == labels


async def test_long_text_labels_leave_the_answer_and_decision_in_view_at_80x24():
    """SciEntsBank's labels (up to 28 letters) once took the whole list at 80 columns: the
    list shows them shortened, f1 spells them out, the pane gives them whole."""
    from helpers import run_frame, session_config, session_frame

    frame, vectors = session_frame(seed=3)
    names = ["contradictory", "correct", "partially_correct_incomplete", "irrelevant"]
    levels = frame["score"].astype(int) + (np.arange(len(frame)) % 7 == 0)  # some scores off
    frame["score"] = [names[min(int(v), 3)] for v in levels]
    review = run_frame(frame, vectors, session_config()).review
    assert review.flagged.any()
    async with reviewing(review, None) as (pilot, screen):
        await pilot.pause()
        table = screen.query_one(ReviewTable)
        keys = [column.key.value for column in table.ordered_columns]
        assert keys == ["row", "scores", "decision", "answer"] and table.answer_width >= 20
        i = screen.current()
        shown = str(table.get_cell(str(i), "scores")).rstrip("≠")
        human, model = (review.responses.labels[c] for c in (review.responses.scores[i],
                                                              review.predicted[i]))  # fmt: skip
        assert shown == f"{human[:3]}→{model[:3]}"
        assert f"human {human}" in text_of(screen, "#detail-header")
        await press(pilot, "f1")
        extra = " ".join(text_of(pilot.app.screen, "#keys-extra").split())
        assert "par = partially_correct_incomplete" in extra
