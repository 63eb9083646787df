"""The review's state on its own (parm_tui/review_model.py), no app: the list and its pages, the
start position, the next undecided response, decisions with undo and redo (a new change clears
the redo stack; a note typed with an undone decision waits for the next one), typed reads undone
and redone, decisions off or read-only, and the listeners told of every change."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import one_item_session, synthetic_result

from engine.results.queue import review_view
from parm_tui.review_model import DECIDED, LISTED, NO_STORE, PAGE_SIZE, READS, ReviewModel


@pytest.fixture(scope="module")
def review():
    return one_item_session(synthetic_result(300)).review


def criteria(review, **changes) -> dict:
    """The filters' criteria as ReviewFilters.criteria gives them: the flagged responses."""
    base = {"item": None, "rater": None, "show_all": False, "third_read": False, "human": None,
            "predicted": None, "off_by_two": False, "search": "", "subset": None}  # fmt: skip
    return {**base, **changes}


def listed(review, store=None, **kwargs) -> ReviewModel:
    model = ReviewModel(review, store, **kwargs)
    heard = []
    model.listen(lambda what, i: heard.append((what, i)))
    model.list_by(criteria(review))
    model.heard = heard  # type: ignore[attr-defined]
    return model


def test_the_list_is_the_engines_view_and_its_pages_and_places_follow(review):
    model = listed(review)
    expected = review_view(review, folded=None, **criteria(review))
    assert model.view.tolist() == expected.tolist() and len(model.view) == review.flagged.sum()
    assert model.heard == [(LISTED, None)]
    assert (
        model.pages == 1
        and model.place(0) == (0, 0)
        and model.place(-1) == (0, len(model.view) - 1)
    )
    assert model.place(PAGE_SIZE + 3) == (1, 3) and model.place(-10 * len(model.view)) == (0, 0)
    assert model.at(0, 0) == int(model.view[0]) and model.at(0, len(model.view)) is None
    assert model.position_of(int(model.view[2])) == 2 and model.position_of(None) is None
    unlisted = int(np.flatnonzero(~review.flagged)[0])
    assert model.position_of(unlisted) is None
    assert model.step(None, -3) == 0 and model.step(1, 2) == 3
    assert model.step(2, 10**6) == len(model.view) - 1
    search = listed(review)
    search.list_by(criteria(review, search="answer 1"))
    assert all("answer 1" in review.responses.texts[i].casefold() for i in search.view)


def test_an_empty_list_has_one_page_and_nowhere_to_go(review):
    model = listed(review)
    model.list_by(criteria(review, search="no answer says this"))
    assert len(model.view) == 0 and model.pages == 1
    assert model.step(None, 1) is None and model.at(0, 0) is None
    assert model.next_undecided(0) is None and model.start_position() == 0


def test_deciding_undo_and_redo(review, store):
    model = listed(review, store)
    first, second = (int(i) for i in model.view[:2])
    assert model.start_position() == 0 and model.next_undecided(0) == 1
    model.record(first, "keep")
    assert model.decision(first).action == "keep" and model.heard[-1] == (DECIDED, first)
    # The next undecided after the first is the second; from the last it wraps to the top.
    assert model.next_undecided(0) == 1 and model.start_position() == 1
    model.record(first, "change", "2")
    assert model.decision(first).new_score == "2"
    undone = model.undo()
    assert undone.before.action == "keep" and model.decision(first).action == "keep"
    assert model.undo().before is None and model.decision(first) is None
    assert model.undo() is None  # nothing left to undo
    assert model.redo().after.action == "keep" and model.decision(first).action == "keep"
    assert model.redo().after.new_score == "2" and model.redo() is None
    # A new change after an undo clears what could be redone.
    model.undo()
    model.record(second, "unsure")
    assert model.redo() is None and model.decision(first).action == "keep"
    assert model.clear(second) and model.decision(second) is None and not model.clear(second)
    assert model.undo().before.action == "unsure" and model.decision(second).action == "unsure"


def test_a_note_typed_with_an_undone_decision_waits_for_the_next(review, store):
    model = listed(review, store)
    i = int(model.view[0])
    row = model.row_of(i)
    model.pending_notes[row] = "the rubric's third point"
    model.record(i, "keep")
    assert model.decision(i).note == "the rubric's third point" and row not in model.pending_notes
    model.undo()
    assert model.pending_notes[row] == "the rubric's third point"
    model.redo()  # the decision takes its note back: none waits
    assert model.decision(i).note == "the rubric's third point" and row not in model.pending_notes


def test_typed_reads_undo_and_redo(review, store):
    from engine import workspace

    model = listed(review, store)
    i = int(model.view[0])
    if review.reads is None:
        pytest.skip("the synthetic review has no reads to add to")
    read = workspace.add_read(store, review, i, "Lead", review.labels_of(i)[0])
    model.typed(i, read)
    assert model.heard[-1] == (READS, i) and len(store.added_reads()) == 1
    model.undo()
    assert store.added_reads() == []
    model.redo()
    assert [(r.row, r.rater) for r in store.added_reads()] == [(read.row, "Lead")]


def test_where_no_decision_can_be_made_it_says_why(review, store):
    assert listed(review).why_not() == NO_STORE
    assert listed(review, store, read_only="an earlier run").why_not() == "an earlier run"
    assert listed(review, store).why_not() is None and listed(review).decision(0) is None


def test_the_review_opens_where_it_stopped_when_listed(review, store):
    view = listed(review).view
    row = int(review.responses.rows[view[5]])
    assert listed(review, store, start_row=row).start_position() == 5
    unlisted = int(review.responses.rows[np.flatnonzero(~review.flagged)[0]])
    assert listed(review, store, start_row=unlisted).start_position() == 0
    assert listed(review, previous_flagged_rows=(1, 2)).is_rerun()
    assert not listed(review, store).is_rerun()
