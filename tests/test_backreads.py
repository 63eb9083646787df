"""engine.actions.backreads: each rater's sample has the size the rules give (the rate, raised
when not qualified, at least the minimum, at most their reads), its random share is a simple
random sample (every read as likely; the estimate unbiased over seeds), the rest is the riskiest
with the rater's own figures first, validity reads and answers backread before are never drawn,
supervisors take turns and never backread their own reads, and a run gives the same sample
every time (another rater's reads do not change it)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import action_ledger
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.actions.backreads import (
    RANDOM,
    RISK,
    agreement_estimate,
    backreads,
    candidates,
    sample_sizes,
)
from engine.actions.ledger import BACKREAD
from engine.actions.rater_status import RaterStatus
from engine.actions.rules import ActionRules
from engine.audit.raters.verdicts import Verdict
from engine.audit.resample import wilson_interval

RULES = ActionRules.of()


def reads_of(counts: list[int], **fields):
    """A ledger where rater m has counts[m] reads, each of its own answer of item A."""
    rater = np.repeat(np.arange(len(counts)), counts)
    n = rater.size
    return action_ledger(np.zeros(n), np.arange(n), rater, np.zeros(n), **fields)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2000), st.floats(0.01, 1.0), st.floats(0.01, 1.0), st.integers(0, 20))
def test_sample_sizes_follow_the_rate_the_minimum_and_the_random_share(n, rate, share, least):
    rules = ActionRules.of(backread_random_share=share, backread_minimum=least)
    total, drawn = sample_sizes(n, rate, rules)
    assert total == min(n, max(least, math.ceil(rate * n - 1e-9)))
    assert drawn == min(total, math.ceil(share * total - 1e-9))
    assert 0 <= drawn <= total <= n and (drawn >= 1 or total == 0)


def test_each_rater_gets_their_sample_and_a_rater_not_qualified_the_raised_rate():
    ledger = reads_of([400, 400, 30])
    watch = [RaterStatus("R02", "A", "watch", "a rule")]
    found = backreads(ledger, RULES, watch)
    counts = {name: sum(b.rater == name for b in found) for name in ledger.raters}
    assert counts == {"R01": 20, "R02": 40, "R03": 5}  # 5% of 400, 10% of 400, the minimum
    for name in ledger.raters:
        mine = [b for b in found if b.rater == name]
        total, drawn = sample_sizes(len([r for r in ledger.rater if ledger.raters[r] == name]),
                                    0.10 if name == "R02" else 0.05, RULES)  # fmt: skip
        assert sum(b.sample == RANDOM for b in mine) == drawn
        assert [b.sample for b in mine] == [RISK] * (total - drawn) + [RANDOM] * drawn


def test_the_random_share_is_a_simple_random_sample():
    """Over seeds every read of a rater is drawn equally often, so the random picks' mean of any
    property of the reads is the rater's (the agreement estimate is unbiased)."""
    ledger = reads_of([60], wrong=np.linspace(0, 1, 60))
    drawn = np.zeros(60)
    means = []
    for seed in range(600):
        picks = [b.read for b in backreads(_seeded(ledger, seed), RULES, []) if b.sample == RANDOM]
        drawn[picks] += 1
        means.append(np.mean(ledger.wrong[picks]))
    per_read = drawn.sum() / 60
    assert np.all(np.abs(drawn - per_read) < 5 * math.sqrt(per_read))
    assert abs(np.mean(means) - ledger.wrong.mean()) < 4 * np.std(means) / math.sqrt(600)


def _seeded(ledger, seed):
    import dataclasses

    return dataclasses.replace(ledger, seed=seed)


def test_the_rest_is_the_riskiest_and_reads_that_fit_the_raters_figures_come_first():
    n = 100
    wrong = np.linspace(0, 1, n)
    direction = np.where(np.arange(n) < 10, 1, -1)  # the ten least risky are above the best score
    ledger = reads_of([n], wrong=wrong, direction=direction)
    risky = [b.read for b in backreads(ledger, RULES, []) if b.sample == RISK]
    chosen = set(b.read for b in backreads(ledger, RULES, []) if b.sample == RANDOM)
    rest = [i for i in np.argsort(-wrong) if i not in chosen]
    assert risky == rest[: len(risky)]
    lenient = (Verdict("lenient", "leniency +0.5", 2.0),)
    ledger = reads_of([n], wrong=wrong, direction=direction, verdicts={"R01": lenient})
    found = [b for b in backreads(ledger, RULES, []) if b.sample == RISK]
    assert all(ledger.direction[b.read] == 1 for b in found)
    assert all("lenient: scored above the best score" in b.why for b in found)


def test_validity_reads_answers_backread_before_and_backreads_are_never_drawn():
    n = 60
    expert = np.where(np.arange(n) % 3 == 0, 1, -1)
    kind = np.array([""] * n, dtype=object)
    kind[1] = BACKREAD
    ledger = reads_of([n], expert=expert, kind=kind)
    pool = candidates(ledger)
    assert not pool[expert >= 0].any() and not pool[1]
    for seed in range(20):
        assert all(pool[b.read] for b in backreads(_seeded(ledger, seed), RULES, []))
    period = np.arange(n) >= 30
    assert all(b.read >= 30 for b in backreads(ledger, RULES, [], period))


def test_supervisors_take_turns_and_never_backread_their_own_reads():
    ledger = reads_of([100, 100], raters=("Ann", "Bo"))
    rules = ActionRules.of(backread_supervisors=("Ann", "Cy"))
    found = backreads(ledger, rules, [])
    assert all(b.reviewer != b.rater for b in found)
    assert {b.reviewer for b in found if b.rater == "Ann"} == {"Cy"}
    bo = [b.reviewer for b in found if b.rater == "Bo"]
    assert set(bo) == {"Ann", "Cy"} and abs(bo.count("Ann") - bo.count("Cy")) <= 1
    assert {b.reviewer for b in backreads(ledger, RULES, [])} == {""}


def test_the_sample_is_the_same_every_time_and_another_raters_reads_do_not_change_it():
    one = backreads(reads_of([200, 200]), RULES, [])
    assert one == backreads(reads_of([200, 200]), RULES, [])
    more = backreads(reads_of([200, 200, 300]), RULES, [])
    mine = lambda found: [(b.read, b.sample) for b in found if b.rater == "R01"]  # noqa: E731
    assert mine(one) == mine(more)
    assert one != backreads(_seeded(reads_of([200, 200]), 1), RULES, [])


@pytest.mark.parametrize("agreed", [[], [True] * 5, [True, False, True, True], [False] * 3])
def test_the_agreement_estimate_is_the_share_with_its_wilson_interval(agreed):
    share, low, high = agreement_estimate(agreed)
    expected = wilson_interval(sum(agreed), len(agreed))
    if not agreed:
        assert math.isnan(share)
        return
    assert (share, low, high) == (expected.estimate, expected.low, expected.high)
    assert low <= share <= high
