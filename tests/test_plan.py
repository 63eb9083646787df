"""engine.actions.plan: a run's three lists, the same every time; reads typed in the review
count in the status and take a resolved answer off the third reads, but leave the backreads as
drawn, and a run without reads has no lists."""

from __future__ import annotations

import numpy as np
from helpers import (
    FAST_SETTINGS,
    MULTI_READ_SETTINGS,
    run_frame,
    session_config,
    session_frame,
)

from engine.actions.plan import has_reads, plan_actions
from engine.results.added_reads import BACKREAD, AddedRead, session_with_added


def test_a_run_gives_the_same_lists_every_time(planted_lists):
    session, frame, vectors = planted_lists
    again = run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS))
    first, other = plan_actions(session), plan_actions(again)
    assert first == plan_actions(session)
    assert (first.statuses, first.backreads, first.third_reads) == (
        other.statuses, other.backreads, other.third_reads)  # fmt: skip
    assert first.statuses and first.backreads and first.third_reads
    assert first.run_id == session.run_id != other.run_id


def typed(session, t, rater, kind):
    k = next(k for k, r in enumerate(session.results) if (r.responses.item or "") == t.item)
    responses = session.results[k].responses
    j = responses.ids.index(t.id)
    return AddedRead(int(responses.rows[j]), t.id, rater, responses.labels[0],
                     "2026-01-02T00:00:00+00:00", "lead", kind)  # fmt: skip


def test_a_resolution_typed_takes_its_answer_off_and_a_backread_leaves_the_backreads(planted_lists):
    session, _, _ = planted_lists
    lists = plan_actions(session)
    first = lists.third_reads[0]
    rater = first.assigned_rater or "Zoe"
    for kind in ("resolution", BACKREAD):
        added = [typed(session, first, rater, kind)]
        after = plan_actions(session_with_added(session, added), added)
        assert (first.item, first.id) not in {(t.item, t.id) for t in after.third_reads}
        assert after.backreads == lists.backreads


def test_a_file_read_once_without_raters_has_no_lists():
    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config(**FAST_SETTINGS))
    assert not has_reads(session)
    lists = plan_actions(session)
    assert (lists.statuses, lists.backreads, lists.third_reads) == ((), (), ())


def test_a_file_with_raters_read_once_has_statuses_and_backreads_but_no_third_reads():
    frame, vectors = session_frame()
    frame["rater"] = np.where(np.arange(len(frame)) % 2, "Ann", "Bo")
    session = run_frame(frame, vectors, session_config(rater_column="rater"))
    lists = plan_actions(session)
    assert {s.rater for s in lists.statuses} == {"Ann", "Bo"}
    assert {b.rater for b in lists.backreads} == {"Ann", "Bo"} and not lists.third_reads
