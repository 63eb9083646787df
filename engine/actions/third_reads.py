"""Third reads routed: the answers whose reads need a resolution, each assigned to a named rater
(third_reads.csv).

An answer needs another read when its reads (the raters' work: the file's, and resolutions typed
in the review) are `third_read_gap` or more steps of an ordered scale apart, or disagree on
unordered labels, or (with `third_read_unsure`) when its consensus is unsure (ranked for a third
read by engine.audit.reads.consensus). One that has had its resolution (a resolution or a backread
typed in the review) is not asked again; one assigned on an earlier day and still open keeps its
rater (the live session's history) while that rater stays qualified on the item, and is routed
again when they do not.

The least sure consensus goes first. Each is assigned to the most reliable eligible rater (the
consensus's accuracy of the rater, engine.audit.reads.consensus) who holds fewer than
`third_read_cap` third reads today (those still open from earlier days count): eligible are the
raters qualified on the item (engine.actions.rater_status) who have not read the answer. The backup is the next eligible rater with room. An answer with no
eligible rater (every qualified rater of the item read it: Powergrading's three graders read
every answer) or none with room is listed with the reason and no rater.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.actions.history import History
from engine.actions.ledger import BACKREAD, RESOLUTION, Ledger
from engine.actions.rules import QUALIFIED, ActionRules

NO_ELIGIBLE = "no eligible rater"
# An answer assigned on an earlier day and not yet read: kept by its rater while they stay
# qualified on the item, else routed again.
STILL_OPEN, REASSIGNED = "assigned before, still open", "assigned again"


@dataclass(frozen=True)
class ThirdRead:
    """One answer to read again: its item, id and data row, its reads ("rater: score; ..."),
    the rater assigned and the backup ("" when none), why it needs the read and why no one was
    assigned; unit: the answer's number over the session (engine.actions.ledger)."""

    item: str
    id: str
    row: int
    reads: str
    assigned_rater: str
    backup_rater: str
    why: str
    unit: int


def needing(ledger: Ledger, rules: ActionRules, history: History | None = None):
    """(units, why): the answers that need another read, least sure consensus first (then
    session order), and the words for each (module docstring)."""
    history = history or History()
    unit, score = ledger.unit, ledger.score
    work = ledger.kind != BACKREAD
    size = ledger.n_answers
    count = np.bincount(unit[work], minlength=size)
    settled = np.zeros(size, dtype=bool)
    settled[unit[np.isin(ledger.kind, (RESOLUTION, BACKREAD))]] = True
    low, high = np.full(size, np.iinfo(np.int64).max), np.full(size, -1)
    np.minimum.at(low, unit[work], score[work])
    np.maximum.at(high, unit[work], score[work])
    ordered = np.array([item.ordered for item in ledger.items])[_item_of(ledger)]
    apart = np.where(ordered, high - low >= rules.third_read_gap, high > low) & (count >= 2)
    unsure = ledger.unsure & (count >= 2) if rules.third_read_unsure else np.zeros(size, bool)
    units = np.flatnonzero((apart | unsure) & ~settled)
    p = np.nan_to_num(ledger.consensus_p[units], nan=2.0)
    units = units[np.lexsort((units, p))]
    why = {}
    for u in units.tolist():
        words = []
        if apart[u]:
            words.append(f"reads {high[u] - low[u]} scores apart" if ordered[u] else
                         "reads disagree")  # fmt: skip
        if unsure[u]:
            words.append(f"consensus unsure (p {ledger.consensus_p[u]:.2f})")
        why[u] = "; ".join(words)
    return units, why


def _item_of(ledger: Ledger) -> np.ndarray:
    """(A,) the item of every answer of the session."""
    return np.repeat(np.arange(len(ledger.items)), np.diff(ledger.offsets))


def third_reads(ledger: Ledger, rules: ActionRules, statuses, history: History | None = None):
    """Every answer needing another read, with its rater (module docstring), in the order the
    reads are wanted."""
    history = history or History()
    units, why = needing(ledger, rules, history)
    qualified = _qualified(ledger, statuses)
    order = _by_reliability(ledger)
    index = {name: r for r, name in enumerate(ledger.raters)}
    item_of = _item_of(ledger)
    load = {name: int(history.assigned_today.get(name, 0)) for name in ledger.raters}
    for rater in _kept(ledger, units, history, qualified, item_of, index):
        load[rater] += 1  # still open from an earlier day: counts against the cap
    readers = _readers(ledger)
    work = np.flatnonzero(ledger.kind != BACKREAD)
    work = work[np.lexsort((ledger.order[work], ledger.unit[work]))]
    starts = np.searchsorted(ledger.unit[work], np.arange(ledger.n_answers + 1))

    def listed(u: int, assigned: str, backup: str, words: str) -> ThirdRead:
        return _listed(ledger, u, int(item_of[u]), work[starts[u] : starts[u + 1]], assigned,
                       backup, words)  # fmt: skip

    found = []
    for u in units.tolist():
        k = int(item_of[u])
        facts = ledger.items[k]
        answer = u - int(ledger.offsets[k])
        before = history.assigned.get((facts.name, facts.ids[answer]))
        if before is not None and index.get(before) in qualified[k]:
            found.append(listed(u, before, "", why[u] + f"; {STILL_OPEN}"))
            continue
        if before is not None:  # its rater is no longer qualified on the item: routed again
            why[u] += f"; {REASSIGNED} ({before} is no longer qualified on the item)"
        eligible = [r for r in order if r in qualified[k] and r not in readers.get(u, ())]
        room = [r for r in eligible if load[ledger.raters[r]] < rules.third_read_cap]
        assigned = ledger.raters[room[0]] if room else ""
        backup = ledger.raters[room[1]] if len(room) > 1 else ""
        if assigned:
            load[assigned] += 1
        found.append(
            listed(u, assigned, backup, why[u] + _none(eligible, room, rules, qualified[k]))
        )
    return found


def _kept(ledger: Ledger, units, history: History, qualified, item_of, index) -> list[str]:
    """The raters of the answers assigned on an earlier day that keep their rater (one name
    per answer)."""
    kept = []
    for u in units.tolist():
        k = int(item_of[u])
        facts = ledger.items[k]
        before = history.assigned.get((facts.name, facts.ids[u - int(ledger.offsets[k])]))
        if before is not None and index.get(before) in qualified[k]:
            kept.append(before)
    return kept


def _none(eligible, room, rules: ActionRules, qualified) -> str:
    """Why no rater was assigned ("" when one was)."""
    if room:
        return ""
    if not qualified:
        return f"; {NO_ELIGIBLE}: no rater is qualified on the item"
    if not eligible:
        return f"; {NO_ELIGIBLE}: every qualified rater of the item has read it"
    return f"; every eligible rater has {rules.third_read_cap} third reads today (the cap, those still open counted)"


def _qualified(ledger: Ledger, statuses) -> list[set[int]]:
    """Per item, the raters (indices) qualified on it."""
    index = {name: r for r, name in enumerate(ledger.raters)}
    item = {facts.name: k for k, facts in enumerate(ledger.items)}
    found: list[set[int]] = [set() for _ in ledger.items]
    for s in statuses:
        if s.status == QUALIFIED and s.rater in index and s.item in item:
            found[item[s.item]].add(index[s.rater])
    return found


def _by_reliability(ledger: Ledger) -> list[int]:
    """The raters, most reliable first (unknown reliability last, then by name)."""
    reliability = np.nan_to_num(ledger.reliability, nan=-1.0)
    return sorted(range(len(ledger.raters)), key=lambda r: (-reliability[r], ledger.raters[r]))


def _readers(ledger: Ledger) -> dict[int, set[int]]:
    """{answer: the raters who read it}, any kind of read."""
    found: dict[int, set[int]] = {}
    for u, r in zip(ledger.unit.tolist(), ledger.rater.tolist()):
        if r >= 0:
            found.setdefault(u, set()).add(r)
    return found


def _listed(ledger: Ledger, u: int, k: int, mine, assigned: str, backup: str, why: str):
    """The ThirdRead of answer u of item k; mine: its reads (backreads left out), in order."""
    facts, answer = ledger.items[k], u - int(ledger.offsets[k])
    reads = "; ".join(
        f"{ledger.raters[ledger.rater[i]] if ledger.rater[i] >= 0 else 'unnamed'}: "
        f"{facts.labels[ledger.score[i]]}"
        for i in mine
    )
    return ThirdRead(facts.name, facts.ids[answer], int(facts.rows[answer]), reads, assigned,
                     backup, why, u)  # fmt: skip
