"""The lead's lists of a run (engine.actions) for the front ends: the app's Today tab, the
Raters tab's status column and the review's backread view read them from here, and reads typed
in the review as backreads are kept here. A run and its typed reads give the same lists every
time; the last one made is kept, so the screens that show them compute them once."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.actions.plan import Actions
    from engine.results.session import SessionResult

_LAST: dict = {}


def todays_lists(result: SessionResult, store=None) -> Actions:
    """The run's lists with the reads typed in its review (`store`: its decision store, or
    None) counted: statuses, backreads, routed third reads. Empty lists for a run without reads
    (no rater column and every answer read once)."""
    from engine.actions.plan import plan_actions
    from engine.results.added_reads import session_with_added

    added = tuple(() if store is None else store.added_reads())
    key = (id(result), result.run_id, added)
    if _LAST.get("key") != key:
        _LAST.clear()
        _LAST.update(key=key, lists=plan_actions(session_with_added(result, added), added))
    return _LAST["lists"]


def backread_rows(lists: Actions) -> dict[int, tuple[tuple[str, str], ...]]:
    """{data row: (rater, score) of each read of that answer to backread today} (the review's
    backread view)."""
    found: dict[int, tuple] = {}
    for b in lists.backreads:
        found[b.row] = (*found.get(b.row, ()), (b.rater, b.score))
    return found


def backread_words(targets, row: int, score: str) -> str:
    """What a backread typed for data row `row` did: 'accepts R03's 2' (the same score) or
    'fixes R03's 2' (another); targets: the row's (rater, score) from backread_rows."""
    if not targets:
        return f"Row {row}: a backread of an answer not on today's list."
    words = [f"{'accepts' if given == score else 'fixes'} {rater}'s {given}"
             for rater, given in targets]  # fmt: skip
    return f"Row {row}: the backread {score} " + " and ".join(words) + "."


def status_by_rater(lists: Actions) -> dict[str, tuple[str, str, str]]:
    """{rater: (their most severe status, its item, its rule)} for the Raters tab."""
    found: dict = {}
    for s in lists.statuses:
        if s.rater not in found or s.severity > found[s.rater][0]:
            found[s.rater] = (s.severity, s)
    return {rater: (s.status, s.item, s.rule) for rater, (_, s) in found.items()}
