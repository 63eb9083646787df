"""The lead's three lists of one run: the raters' status first (the other two read it), then the
backreads and the routed third reads. A run gives the same lists every time: every draw is
seeded by the run's seed.

Reads typed in the review count in the status and the third reads (a resolution typed takes its
answer off the list), but not in the backreads: those are drawn from the run's own reads, so
the list a supervisor works through stays the same while their backreads are typed in."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from engine.actions.backreads import Backread, backreads
from engine.actions.history import History
from engine.actions.ledger import Ledger, ledger_of
from engine.actions.rater_status import RaterStatus, rater_status
from engine.actions.rules import ActionRules
from engine.actions.third_reads import ThirdRead, third_reads


@dataclass(frozen=True)
class Actions:
    """A run's lists: the statuses (rater_status.csv), the backreads (backreads.csv) and the
    third reads (third_reads.csv); run_id: the run they come from."""

    statuses: tuple[RaterStatus, ...]
    backreads: tuple[Backread, ...]
    third_reads: tuple[ThirdRead, ...]
    run_id: str = ""


def has_reads(session) -> bool:
    """Whether a run has the lead's lists: answers read twice or more, or named raters."""
    return session.reads is not None or session.raters is not None


def actions_of(ledger: Ledger, rules: ActionRules, history: History | None = None,
               period=None, run_id: str = "", drawn: Ledger | None = None) -> Actions:  # fmt: skip
    """The three lists of a ledger (engine.actions.ledger) under `rules`; period: (R,) bool,
    the reads of the day backreads are drawn from (None: every read) in `drawn` (the ledger
    they are drawn from; None: `ledger`)."""
    statuses = rater_status(ledger, rules, history)
    return Actions(
        tuple(statuses),
        tuple(backreads(drawn or ledger, rules, statuses, period)),
        tuple(third_reads(ledger, rules, statuses, history)),
        run_id,
    )


def plan_actions(session, added: Sequence = (), history: History | None = None,
                 period=None) -> Actions:  # fmt: skip
    """The lists of a SessionResult whose consensus counts `added`, the reads typed in its
    review (engine.results.added_reads.session_with_added), under the run's own settings; empty
    lists for a run without reads (has_reads)."""
    if not has_reads(session):
        return Actions((), (), (), session.run_id)
    rules = ActionRules.of(session.config)
    ledger = ledger_of(session, added)
    drawn = ledger_of(run_only(session)) if added else ledger
    return actions_of(ledger, rules, history, period, session.run_id, drawn)


def run_only(session):
    """The session as the run made it, without the reads typed in its review."""
    if session.reads is None or session.reads.run is None:
        return session
    run = session.reads.run
    raters = session.raters
    if raters is not None:
        raters = dataclasses.replace(raters, reliability=run.reliability())
    return dataclasses.replace(session, reads=run, raters=raters)
