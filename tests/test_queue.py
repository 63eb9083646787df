"""The review queue (engine/results/queue.py): filters by item and rater; the views by decision
(undecided, unsure, changed, kept, noted); after a re-run, which decided responses lost their
flag, which flags are new and undecided, and the list restricted to either."""

from __future__ import annotations

import numpy as np
from helpers import run_frame, session_config, session_frame

from engine.input.responses import Responses
from engine.results.decision import Decision, RunContext
from engine.results.queue import DECISION_VIEWS, decision_view, rerun_changes, review_view

LABELS = ("0", "1", "2")


class Run:
    """The parts of a ReviewSet the queue reads: six responses, rows 11..16."""

    def __init__(self, predicted):
        self.responses = Responses(
            texts=[f"answer {i}" for i in range(6)],
            scores=np.array([0, 1, 2, 0, 1, 2]),
            labels=LABELS,
            ids=[f"S{i}" for i in range(6)],
            rows=np.arange(11, 17),
        )
        self.predicted = np.array(predicted)
        self.severity = np.linspace(0.6, 0.1, 6)

    @property
    def flagged(self):
        return self.predicted != self.responses.scores

    def review_order(self):
        return np.argsort(-self.severity, kind="stable")


def decision(row: int, predicted: str | None) -> Decision:
    context = None if predicted is None else RunContext("run-1", "digest", predicted, 0.5)
    return Decision(row, f"S{row - 11}", "keep", None, "", "2026-01-01T00:00:00+00:00", context)


def test_decided_responses_that_lost_their_flag_are_counted():
    # Now flagged: positions 2 and 4. Decided when flagged: 0 (row 11) and 2 (row 13).
    run = Run([0, 1, 0, 0, 0, 2])
    decisions = {11: decision(11, "2"), 13: decision(13, "0"), 12: decision(12, "1")}
    changes = rerun_changes(run, decisions, previous_flagged_rows=[11, 13])
    # Row 11 is no longer flagged; row 13 still is; row 12 was not flagged when decided.
    assert np.flatnonzero(changes.no_longer_flagged).tolist() == [0]


def test_new_flags_are_the_undecided_ones_the_previous_run_did_not_have():
    run = Run([1, 1, 0, 1, 0, 2])  # flagged: 0, 2, 3, 4
    decisions = {14: decision(14, "1")}
    changes = rerun_changes(run, decisions, previous_flagged_rows=[11])
    # 0 was flagged before; 3 (row 14) is decided; 2 and 4 are new and undecided.
    assert np.flatnonzero(changes.newly_flagged).tolist() == [2, 4]


def test_without_a_previous_run_nothing_is_new():
    run = Run([1, 1, 0, 1, 0, 2])
    changes = rerun_changes(run, {}, previous_flagged_rows=None)
    assert not changes.newly_flagged.any() and not changes.no_longer_flagged.any()


def test_a_decision_saved_before_runs_were_recorded_asks_the_previous_run():
    run = Run([0, 1, 2, 0, 1, 2])  # nothing flagged now
    decisions = {11: decision(11, None), 12: decision(12, None)}
    changes = rerun_changes(run, decisions, previous_flagged_rows=[11])
    assert np.flatnonzero(changes.no_longer_flagged).tolist() == [0]
    # With no previous run to ask, it counts as made on a flagged response.
    changes = rerun_changes(run, decisions, previous_flagged_rows=None)
    assert np.flatnonzero(changes.no_longer_flagged).tolist() == [0, 1]


def test_a_subset_replaces_the_flagged_list_and_keeps_the_review_order():
    run = Run([1, 1, 0, 1, 0, 2])
    subset = np.array([False, True, True, False, True, False])
    view = review_view(run, subset=subset)
    # The subset in the queue's order (severity alone), flagged or not.
    assert view.tolist() == [1, 2, 4]
    assert review_view(run, subset=subset, human=1).tolist() == [1, 4]


def test_the_review_queue_filters_by_item_and_by_rater():
    frame, vectors = session_frame()
    review = run_frame(frame, vectors, session_config(rater_column="rater")).review
    only_b = review_view(review, show_all=True, item="B")
    assert len(only_b) == (frame["item"] == "B").sum()
    assert {review.items[i] for i in only_b} == {"B"}
    only_r1 = review_view(review, show_all=True, rater="r1")
    assert {review.responses.raters[i] for i in only_r1} == {"r1"}
    assert len(only_r1) == (frame["rater"] == "r1").sum()


def decided(row: int, action: str, note: str = "") -> Decision:
    new = "0" if action == "change" else None
    return Decision(row, f"S{row - 11}", action, new, note, "2026-01-01T00:00:00+00:00")


def test_the_decision_views_list_the_responses_with_that_decision():
    run = Run([1, 1, 0, 1, 0, 2])  # rows 11, 13, 14, 15 flagged
    decisions = {
        11: decided(11, "keep"),
        12: decided(12, "change", "two marks"),
        13: decided(13, "unsure"),
        15: decided(15, "keep", "ask Sam"),
    }
    conflicted = {12, 16}  # another reviewer's differing decisions, not settled
    views = {
        view: decision_view(run, decisions, view, conflicted).tolist() for view in DECISION_VIEWS
    }
    # Undecided: the flagged ones nobody has decided (row 14); the others: every decision of
    # that kind, flagged or not; conflicts: the rows with unsettled conflicts.
    assert views == {
        "undecided": [False, False, False, True, False, False],
        "unsure": [False, False, True, False, False, False],
        "changed": [False, True, False, False, False, False],
        "kept": [True, False, False, False, True, False],
        "noted": [False, True, False, False, True, False],
        "conflicts": [False, True, False, False, False, True],
    }
    assert review_view(run, subset=decision_view(run, decisions, "kept")).tolist() == [0, 4]


def test_the_third_read_view_lists_the_unsure_answers_least_sure_first():
    run = Run([0, 1, 2, 0, 1, 2])
    run.third_read_rank = np.array([0, 3, 1, 0, 2, 0])
    view = review_view(run, show_all=True, third_read=True)
    assert view.tolist() == [2, 4, 1]
    run.third_read_rank = None  # no answer read twice: nothing to list
    assert review_view(run, show_all=True, third_read=True).size == 0


def test_a_raters_view_lists_every_answer_they_read_flagged_on_their_own_score():
    """score2's reads are never the audited ones: the rater filter lists the answers score2
    read, and its flagged view those where the model prefers another score than score2's,
    as many as raters.csv counts."""
    frame, vectors = session_frame()
    frame["score2"] = frame["score"].sample(frac=1, random_state=3).to_numpy()
    session = run_frame(frame, vectors, session_config(rater_column="rater",
                                                       second_score_column="score2"))  # fmt: skip
    review = session.review
    assert "score2" in review.rater_names() and "r1" in review.rater_names()
    assert len(review_view(review, show_all=True, rater="score2")) == len(frame)
    flagged = review_view(review, rater="score2")
    rows = {r.rater: r for r in session.raters.rows}
    assert len(flagged) == rows["score2"].model_differs
    given = review.read_by("score2")
    assert np.all(review.predicted[flagged] != given[flagged])
