"""engine.actions.third_reads: which answers need another read (reads too far apart on an ordered
scale, disagreeing labels, an unsure consensus; never one already resolved), in the order wanted,
and that every assignment goes to a qualified rater who has not read the answer, the most
reliable with room, never past the cap (today's earlier assignments and those still open
counted), an open one kept by its rater while they stay qualified."""

from __future__ import annotations

import numpy as np
from helpers import action_ledger
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.actions.history import History
from engine.actions.ledger import BACKREAD, RESOLUTION
from engine.actions.rater_status import RaterStatus
from engine.actions.rules import ActionRules
from engine.actions.third_reads import NO_ELIGIBLE, REASSIGNED, STILL_OPEN, needing, third_reads

RULES = ActionRules.of()


def qualified(raters, items=("A",)):
    return [RaterStatus(r, i, "qualified", "no rule fired") for r in raters for i in items]


def pairs(scores, items=(("A", 4, True),), **fields):
    """Answer j of item A read by R01 and R02 with scores[j] = (first, second)."""
    n = len(scores)
    score = np.asarray(scores).ravel()
    return action_ledger(np.zeros(2 * n), np.repeat(np.arange(n), 2), np.tile([0, 1], n), score,
                         items=items, raters=("R01", "R02", "R03", "R04"), **fields)  # fmt: skip


def test_reads_two_scores_apart_or_disagreeing_labels_or_an_unsure_consensus_need_a_read():
    ledger = pairs([(0, 2), (1, 2), (3, 3), (0, 3)])
    units, why = needing(ledger, RULES)
    assert sorted(units.tolist()) == [0, 3] and why[3] == "reads 3 scores apart"
    nominal = pairs([(0, 2), (1, 2), (3, 3)], items=(("A", 4, False),))
    assert sorted(needing(nominal, RULES)[0].tolist()) == [0, 1]
    unsure = pairs([(1, 2), (3, 3)], unsure=np.array([True, False]),
                   consensus_p=np.array([0.6, 0.99]))  # fmt: skip
    units, why = needing(unsure, RULES)
    assert units.tolist() == [0] and why[0] == "consensus unsure (p 0.60)"
    assert needing(unsure, ActionRules.of(third_read_unsure=False))[0].size == 0
    assert needing(pairs([(1, 2)]), ActionRules.of(third_read_gap=1))[0].tolist() == [0]


def test_the_least_sure_consensus_comes_first():
    ledger = pairs([(0, 2), (0, 3), (1, 3)], consensus_p=np.array([0.9, 0.5, 0.7]))
    assert needing(ledger, RULES)[0].tolist() == [1, 2, 0]


def test_an_answer_with_its_resolution_or_a_backread_is_not_asked_again():
    base = pairs([(0, 3), (0, 3), (0, 3)])
    for kind in (RESOLUTION, BACKREAD):
        item = np.r_[base.item, 0]
        answer, rater, score = np.r_[base.answer, 1], np.r_[base.rater, 2], np.r_[base.score, 1]
        kinds = np.r_[base.kind, [kind]].astype(object)
        ledger = action_ledger(item, answer, rater, score, raters=base.raters, kind=kinds)
        assert needing(ledger, RULES)[0].tolist() == [0, 2]


def test_the_most_reliable_qualified_rater_who_has_not_read_it_is_assigned_within_the_cap():
    ledger = pairs([(0, 3)] * 5, reliability=np.array([0.9, 0.8, 0.7, 0.95]))
    rules = ActionRules.of(third_read_cap=2)
    found = third_reads(ledger, rules, qualified(["R01", "R02", "R03", "R04"]))
    assert [t.assigned_rater for t in found] == ["R04", "R04", "R03", "R03", ""]
    assert [t.backup_rater for t in found] == ["R03", "R03", "", "", ""]
    assert "the cap" in found[-1].why
    assert found[0].reads == "R01: 0; R02: 3" and found[0].id == "A0"
    earlier = third_reads(ledger, rules, qualified(["R01", "R02", "R03", "R04"]),
                          History(assigned_today={"R04": 2}))  # fmt: skip
    assert [t.assigned_rater for t in earlier][:2] == ["R03", "R03"]


def test_no_rater_is_eligible_when_every_qualified_one_read_it():
    """Powergrading: three graders read every answer."""
    n = 4
    ledger = action_ledger(np.zeros(3 * n), np.repeat(np.arange(n), 3), np.tile([0, 1, 2], n),
                           np.tile([0, 1, 1], n), items=(("A", 2, True),))  # fmt: skip
    found = third_reads(ledger, ActionRules.of(third_read_gap=1), qualified(["R01", "R02", "R03"]))
    assert len(found) == n and all(t.assigned_rater == "" for t in found)
    assert all(f"{NO_ELIGIBLE}: every qualified rater of the item has read it" in t.why
               for t in found)  # fmt: skip
    none = third_reads(ledger, ActionRules.of(third_read_gap=1), [])
    assert all("no rater is qualified on the item" in t.why for t in none)


def test_a_rater_not_qualified_on_the_item_is_not_assigned():
    ledger = pairs([(0, 3)], reliability=np.array([0.5, 0.5, 0.99, 0.6]))
    statuses = qualified(["R04"]) + [RaterStatus("R03", "A", "retrain", "a rule")]
    assert third_reads(ledger, RULES, statuses)[0].assigned_rater == "R04"


def test_an_open_assignment_of_an_earlier_day_keeps_its_rater_while_they_stay_qualified():
    ledger = pairs([(0, 3)], reliability=np.array([0.5, 0.5, 0.99, 0.6]))
    history = History(assigned={("A", "A0"): "R04"})
    found = third_reads(ledger, RULES, qualified(["R03", "R04"]), history)
    assert found[0].assigned_rater == "R04" and found[0].why.endswith(STILL_OPEN)
    again = third_reads(ledger, RULES, qualified(["R03"]), history)
    assert again[0].assigned_rater == "R03"
    assert f"{REASSIGNED} (R04 is no longer qualified on the item)" in again[0].why


def test_third_reads_still_open_count_against_their_raters_cap():
    """R04 holds two open third reads from an earlier day: with a cap of 2, the new answers go
    to the next rater."""
    ledger = pairs([(0, 3)] * 4, reliability=np.array([0.5, 0.5, 0.7, 0.9]))
    history = History(assigned={("A", "A0"): "R04", ("A", "A1"): "R04"})
    found = third_reads(
        ledger, ActionRules.of(third_read_cap=2), qualified(["R03", "R04"]), history
    )
    assert [t.assigned_rater for t in found] == ["R04", "R04", "R03", "R03"]


@st.composite
def sessions(draw):
    answers = draw(st.integers(1, 30))
    raters = draw(st.integers(2, 5))
    counts = draw(st.lists(st.integers(1, raters), min_size=answers, max_size=answers))
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    rater = np.concatenate([rng.permutation(raters)[:c] for c in counts])
    answer = np.repeat(np.arange(answers), counts)
    score = rng.integers(0, 4, answer.size)
    reliability = rng.random(raters)
    cap = draw(st.integers(1, 6))
    chosen = draw(st.lists(st.integers(0, raters - 1), unique=True))
    return answer, rater, score, reliability, cap, chosen, raters


@settings(max_examples=80, deadline=None)
@given(sessions())
def test_no_assignment_to_a_rater_who_read_the_answer_or_past_the_cap(case):
    answer, rater, score, reliability, cap, chosen, raters = case
    names = tuple(f"R{m + 1:02d}" for m in range(raters))
    ledger = action_ledger(np.zeros(answer.size), answer, rater, score, raters=names,
                           reliability=reliability)  # fmt: skip
    statuses = qualified([names[m] for m in chosen])
    found = third_reads(ledger, ActionRules.of(third_read_cap=cap, third_read_gap=1), statuses)
    load: dict[str, int] = {}
    for t in found:
        u = t.unit
        readers = {names[r] for r in rater[answer == u]}
        for who in (t.assigned_rater, t.backup_rater):
            assert not who or (who not in readers and who in {names[m] for m in chosen})
        if t.assigned_rater:
            load[t.assigned_rater] = load.get(t.assigned_rater, 0) + 1
            # most reliable first: every more reliable eligible rater was full
            better = [names[m] for m in chosen if reliability[m] > reliability[names.index(
                t.assigned_rater)] and names[m] not in readers]  # fmt: skip
            assert all(load.get(b, 0) >= cap for b in better)
        else:
            assert "eligible" in t.why or "cap" in t.why
    assert all(n <= cap for n in load.values())
