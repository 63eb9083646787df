"""The lead's actions of each monitor run (issue 46): today's backreads, third reads routed to
named raters, each rater's status on each item, as engine.actions makes them for an audit, over
the session's reads (engine.live.ledger: the consensus of the reads, no text model).

Each run calls `actions_for_run(reads, result)` once, after its figures and alerts and before its
outputs are written. What it returns joins the run: its files join the output set
(backreads.csv, third_reads.csv, rater_status.csv, each with the run's id in its run_id column),
and a status that differs from the run before's is a `rater_status` alert.

The session remembers (in each run's record) the statuses and the third reads assigned and not
yet read. The next run reads them back (`History`): a status carries over into the rules
(retrained before, still below: stop) where the rater has read the item since, and stays as it
was where they have not; each open third read is followed up. A read of the
answer by the rater it was assigned to is its resolution and closes it (`answered`); one whose
answer no longer needs a read (another resolution or a backread came in, or the reads now agree)
is closed as `no longer needed`; the rest stay with their rater and are listed again,
"assigned before, still open". Backreads are drawn from the latest day's reads only; reads that
come back from them (kind backread) count in the next morning's figures as their kind says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from engine.actions.history import History
from engine.actions.ledger import RESOLUTION, Ledger
from engine.actions.plan import Actions, actions_of
from engine.actions.rules import ActionRules
from engine.actions.third_reads import REASSIGNED, STILL_OPEN
from engine.audit.raters.verdicts import Verdict
from engine.core.numbers import signed
from engine.live.alerts.verdicts import verdicts_of
from engine.live.ledger import live_ledger
from engine.outputs.declared_actions import ACTION_TABLES
from engine.outputs.report.action_outputs import sentences, summary
from engine.outputs.write import run_csv

if TYPE_CHECKING:
    from engine.live.intake.session_reads import SessionReads
    from engine.live.monitor import MonitorResult


@dataclass(frozen=True)
class FollowUp:
    """The third reads assigned by the run before, followed up: read by their rater
    (answered), no longer needed, still open with their rater, or assigned to another rater
    (their rater is no longer qualified on the item); and the answers this run assigned that
    no run had (new)."""

    answered: int = 0
    no_longer_needed: int = 0
    still_open: int = 0
    reassigned: int = 0
    new: int = 0

    def sentence(self) -> str:
        before = self.answered + self.no_longer_needed + self.still_open + self.reassigned
        if not before and not self.new:
            return ""
        again = (f", {self.reassigned:,} routed again (their rater no longer qualified)"
                 if self.reassigned else "")  # fmt: skip
        said = (f"{before:,} assigned by the run before: {self.answered:,} read by their rater, "
                f"{self.no_longer_needed:,} no longer needed, {self.still_open:,} still open"
                f"{again}; " if before else "")  # fmt: skip
        return f"Third reads: {said}{self.new:,} newly assigned."


@dataclass(frozen=True)
class ActionsResult:
    """What the actions add to a run. files: (name, text) of the output set (each name one of
    engine.outputs.names); statuses: (rater, item) -> (status, the rule that fired, its
    figure, the rater's reads of the item it was judged on); lists: the three lists (None for a session without reads); assigned: the open
    third reads to remember ({item, id, rater, day, run_id} each); follow_up: those of the run
    before, followed up."""

    files: tuple[tuple[str, str], ...] = ()
    statuses: dict[tuple[str, str], tuple[str, str, float | None, int]] = field(
        default_factory=dict
    )
    lists: Actions | None = None
    assigned: tuple[dict, ...] = ()
    follow_up: FollowUp = field(default_factory=FollowUp)

    def lines(self) -> list[str]:
        """The lists in plain sentences (the CLI prints them; report.html words them alike):
        the statuses, the backreads, the third reads."""
        if self.lists is None:
            return []
        return sentences(summary(self.lists))


def history_of(previous: dict | None, counts: dict) -> tuple[History, list[dict]]:
    """What the run before left (its record): the statuses, and the open third reads (each
    {item, id, rater, day, run_id}), as a History (the open third reads that keep their rater
    count against its cap: engine.actions.third_reads). counts: {(rater, item): reads now}; a
    status whose rater has no read of the item since is kept as it was."""
    if not previous:
        return History(), []
    statuses, unchanged = {}, {}
    for key, value in previous.get("statuses", {}).items():
        pair = tuple(key.split("\x1f", 1))
        statuses[pair] = value[0]
        if len(value) > 3 and counts.get(pair) == value[3]:
            unchanged[pair] = tuple(value[:3])
    open_ = list(previous.get("assigned", []))
    assigned = {(found["item"], found["id"]): found["rater"] for found in open_}
    return History(statuses, assigned, unchanged=unchanged), open_


def read_counts(reads: SessionReads) -> dict[tuple[str, str], int]:
    """{(rater, item): their reads of it on its scale}."""
    keep = reads.score >= 0
    pairs, n = np.unique(np.c_[reads.rater[keep], reads.item[keep]], axis=0, return_counts=True)
    return {(reads.raters[r], reads.items[k]): int(c) for (r, k), c in zip(pairs, n)}


def actions_for_run(reads: SessionReads, result: MonitorResult) -> ActionsResult:
    """The lead's actions for this run (the module docstring)."""
    if len(reads) == 0 or not reads.raters:
        return ActionsResult()
    day = result.latest_day
    counts = read_counts(reads)
    history, open_before = history_of(result.previous, counts)
    verdicts = {rater: verdicts_of(figures) for rater, figures in result.verdicts.items()}
    verdicts, drift = with_drift(verdicts, result.alerts)
    ledger = live_ledger(reads, verdicts, history.assigned, result.config.seed, drift)
    days = np.asarray(reads.day[reads.score >= 0], dtype=object)
    lists = actions_of(ledger, ActionRules.of(result.config), history, days == day,
                       result.run_id)  # fmt: skip
    assigned, follow_up = _follow_up(lists, open_before, ledger, day, result.run_id)
    rows = (lists.backreads, lists.third_reads, lists.statuses)  # ACTION_TABLES' order
    files = tuple((table.file, run_csv(table.csv(found), result.run_id))
                  for table, found in zip(ACTION_TABLES, rows))  # fmt: skip
    statuses = {(s.rater, s.item): (s.status, s.rule, s.figure, counts.get((s.rater, s.item), 0))
                for s in lists.statuses}  # fmt: skip
    return ActionsResult(files, statuses, lists, assigned, follow_up)


def with_drift(verdicts: dict, alerts) -> tuple[dict, dict]:
    """The co-raters' verdicts with "drifting" added for each rater with an open `rater_drift`
    alert, and {rater: the drift's sign}: the lists read the morning's drift as the audit's
    lists read parm's drift verdict (a watch status; backreads aimed at late scores in its
    direction)."""
    out, drift = dict(verdicts), {}
    for alert in alerts:
        if alert.kind != "rater_drift" or alert.rater in drift:
            continue
        change = float(alert.figure)
        drift[alert.rater] = 1 if change > 0 else -1
        said = Verdict("drifting", f"score minus co-rater's moved {signed(change)} points on "
                       f"{alert.period} (p = {alert.p:.2g})",
                       abs(change) / max(float(alert.threshold), 1e-9))  # fmt: skip
        out[alert.rater] = tuple(sorted((*out.get(alert.rater, ()), said),
                                        key=lambda v: -v.strength))  # fmt: skip
    return out, drift


def _follow_up(lists: Actions, open_before: list[dict], ledger: Ledger, day: str, run_id: str):
    """(the open third reads to remember, the follow-up of the run before's)."""
    earlier = {(found["item"], found["id"]): found for found in open_before}
    answered = _answered(ledger, earlier)
    keep, new, still, again = [], 0, 0, 0
    for third in lists.third_reads:
        found = earlier.get((third.item, third.id))
        again += found is not None and REASSIGNED in third.why
        if not third.assigned_rater:
            continue
        if found is not None and third.why.endswith(STILL_OPEN):
            still += 1
            keep.append(dict(found))
        else:
            new += found is None
            keep.append({"item": third.item, "id": third.id, "rater": third.assigned_rater,
                         "day": day, "run_id": run_id})  # fmt: skip
    dropped = len(earlier) - answered - still - again
    return tuple(keep), FollowUp(answered, dropped, still, again, new)


def _answered(ledger: Ledger, earlier: dict) -> int:
    """How many of the run before's open third reads their rater has now read."""
    done = set()
    for i in np.flatnonzero(ledger.kind == RESOLUTION).tolist():
        facts = ledger.items[int(ledger.item[i])]
        key = (facts.name, facts.ids[int(ledger.answer[i])])
        found = earlier.get(key)
        if found is not None and ledger.raters[int(ledger.rater[i])] == found["rater"]:
            done.add(key)
    return len(done)
