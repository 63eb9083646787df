"""The hook where the lead's actions plug into each monitor run (issue 46: today's backreads,
third reads routed to named raters, each rater's status on each item).

Each run calls `actions_for_run(reads, result)` once, after its figures and alerts and before its
outputs are written: `reads` is every read of the session (engine.live.reads.SessionReads: each
with its item, answer, rater, score, period and kind: first, second, validity, backread or
resolution), `result` the run so far (engine.live.monitor.MonitorResult: its figures, alerts,
verdicts and the runs before). What it returns joins the run: its files join the output set
(backreads.csv, third_reads.csv, rater_status.csv), and a status that differs from the run
before's is a `rater_status` alert. Reads that come back from the actions (a backread typed in
the review, a third read) come in as any reads do, a file added with their kind in the kind
column, and count in the next morning's figures as their kind says.

Until the actions are built this returns nothing: a monitor run writes its own files only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.live.monitor import MonitorResult
    from engine.live.reads import SessionReads


@dataclass(frozen=True)
class ActionsResult:
    """What the actions add to a run. files: (name, text) of the output set (each name one of
    engine.outputs.names); statuses: (rater, item) -> (status, the rule that fired, its
    figure)."""

    files: tuple[tuple[str, str], ...] = ()
    statuses: dict[tuple[str, str], tuple[str, str, float]] = field(default_factory=dict)


def actions_for_run(reads: SessionReads, result: MonitorResult) -> ActionsResult:
    """The lead's actions for this run (the module docstring): none yet."""
    del reads, result
    return ActionsResult()
