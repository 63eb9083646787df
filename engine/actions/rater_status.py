"""Qualification and status: per rater and item, qualified, watch, retrain or stop, with the rule
that fired and its figure (rater_status.csv).

The rules, most severe first; the first that fires gives the status (engine.actions.rules has
the thresholds, from the settings; "clearly below" is the upper end of the 95% Wilson interval
below the threshold, so a rater exactly at a threshold is called below in at most 2.5% of
windows):

  stop     validity adjacent: on an ordered scale of 3 scores or more, the rater's
           exact-or-adjacent agreement with the expert's score over their last `status_window`
           validity reads (at least `status_minimum`) is clearly below `adjacent_target`;
  stop     still below after retraining: retrained before (history) and the validity exact
           agreement is still clearly below the item's target;
  retrain  validity exact: exact agreement with the expert clearly below the item's target
           (`exact_targets` by scale size, NAEP's);
  retrain  reliability: where answers are read twice or more, the consensus's estimate of the
           rater's accuracy (engine.audit.reads.consensus: their reads against the estimated true
           scores, over all their items) with the upper end of its 95% interval below the
           target of their reads (the mean of their items' targets): validity against the
           consensus where the lead has scored too few answers;
  retrain/stop  not requalified: retrained or stopped before, and the window's exact agreement
           has not reached the qualification target (`qualify_targets`) on enough reads;
  watch    agreement: the rater's exact agreement with the other reads of the answers they read
           (their last `status_window` reads shared with another rater, each read counting its
           share of agreeing co-reads) is clearly below both the item's target and the other
           raters' agreement on the item over the same time (pairs without the rater, from the
           window's first read on: an item whose agreement fell lately is not one rater's);
  watch    verdict: parm's verdict on the rater (lenient, harsh, noisy, central tendency,
           drifting: engine.audit.raters.verdicts), on each of their items;
  qualified  no rule fired.

A listed rater x item bias cell is not a rule: on the benchmark's sessions (a bad and a
consistently wrong rater among neutral ones) cells of neutral raters were listed often enough to
put 1 in 6 of them on watch (the essays); the backreads still look at the cell's scores first.

Validity is the expert's (the lead's own scores: the expert column), so falling below it retrains
a rater; agreement with co-raters also measures the co-raters, so it only puts a rater on watch.

A rater with fewer than `status_minimum` validity (or shared) reads on an item is judged on
their reads of all their items instead (a session of many small items: Mohler's 81 questions of
30 answers), each read against its own item's target (the target is the mean of the reads'),
and the rule says so. The adjacent rule counts only reads of ordered items of 3 scores or more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.actions.history import History
from engine.actions.ledger import BACKREAD, Ledger
from engine.actions.rules import (
    QUALIFIED,
    RETRAIN,
    STATUSES,
    STOP,
    WATCH,
    ActionRules,
    clearly_below,
)


@dataclass(frozen=True)
class RaterStatus:
    """One rater on one item: the status, the rule that gave it (words with its figures and
    threshold) and the rule's figure (a share; None where the rule has none)."""

    rater: str
    item: str
    status: str
    rule: str
    figure: float | None = None

    @property
    def severity(self) -> int:
        return STATUSES.index(self.status)


@dataclass(frozen=True)
class Evidence:
    """A rater's reads of an item as the rules read them. Validity reads in the window: n,
    exact (agreeing with the expert), their target and qualification target (the mean of the
    reads' items'), and on ordered items of 3 scores or more: adjacent_n, adjacent. Shared reads
    in the window: n, agreeing (the sum of each read's share of agreeing co-reads), their
    target, and the other raters' agreement on those items. pooled_*: the figure is over all
    the rater's items (too few reads on this one)."""

    validity: int = 0
    exact: int = 0
    target: float = 1.0
    qualify: float = 1.0
    adjacent_n: int = 0
    adjacent: int = 0
    shared: int = 0
    agreeing: float = 0.0
    shared_target: float = 1.0
    others: float = float("nan")
    pooled_validity: bool = False
    pooled_shared: bool = False
    accuracy: float = float("nan")
    accuracy_high: float = float("nan")
    rater_target: float = 1.0

    def scope(self, validity: bool) -> str:
        pooled = self.pooled_validity if validity else self.pooled_shared
        return " (all their items)" if pooled else ""


def co_reads(ledger: Ledger) -> tuple:
    """(others, agree, since): per read, how many other reads its answer has and how many of
    them gave the same score (backreads left out: they are the supervisors', not the raters'
    work); and `since(items, start)`, the sums of both over the reads of `items` given at or
    after `start` (their order), so that a rater's window is compared with the other raters
    over the same time."""
    work = ledger.kind != BACKREAD
    unit, width = ledger.unit, max(item.scores for item in ledger.items)
    counts = np.zeros((ledger.n_answers, width), dtype=np.int64)
    np.add.at(counts, (unit[work], ledger.score[work]), 1)
    others = np.where(work, counts.sum(axis=1)[unit] - 1, 0)
    agree = np.where(work, counts[unit, ledger.score] - 1, 0)
    # Per item, its reads by time and the sums of others and agree from each one to the last.
    tails = []
    for k in range(len(ledger.items)):
        mine = np.flatnonzero(ledger.item == k)
        mine = mine[np.argsort(ledger.order[mine], kind="stable")]
        tails.append((ledger.order[mine], np.r_[np.cumsum(others[mine][::-1])[::-1], 0],
                      np.r_[np.cumsum(agree[mine][::-1])[::-1], 0]))  # fmt: skip

    def since(items, start: float) -> tuple[float, float]:
        pairs = agreeing = 0.0
        for k in items:
            order, pair_tail, agree_tail = tails[k]
            at = int(np.searchsorted(order, start, side="left"))
            pairs, agreeing = pairs + pair_tail[at], agreeing + agree_tail[at]
        return pairs, agreeing

    return others, agree, since


def groups(ledger: Ledger, by_item: bool = True) -> list[tuple[int, int, np.ndarray]]:
    """(rater, item, their reads of it in time order) for every named rater's work on each item;
    by_item False: (rater, -1, their reads of every item in time order)."""
    mine = np.flatnonzero((ledger.rater >= 0) & (ledger.kind != BACKREAD))
    if not mine.size:
        return []
    item = ledger.item[mine] if by_item else np.full(mine.size, -1)
    order = np.lexsort((ledger.order[mine], item, ledger.rater[mine]))
    mine, item = mine[order], item[order]
    key = ledger.rater[mine] * (len(ledger.items) + 1) + item + 1
    bounds = np.flatnonzero(np.r_[True, np.diff(key) != 0, True])
    return [(int(ledger.rater[mine[s]]), int(item[s]), mine[s:e])
            for s, e in zip(bounds[:-1], bounds[1:])]  # fmt: skip


@dataclass(frozen=True)
class Targets:
    """Per item: the exact target, the qualification target and whether the adjacent rule
    applies (an ordered scale of 3 scores or more)."""

    exact: np.ndarray
    qualify: np.ndarray
    adjacent: np.ndarray

    @classmethod
    def of(cls, ledger: Ledger, rules: ActionRules) -> Targets:
        items = ledger.items
        return cls(np.array([rules.exact_target(i.scores) for i in items]),
                   np.array([rules.qualify_target(i.scores) for i in items]),
                   np.array([i.ordered and i.scores >= 3 for i in items]))  # fmt: skip


def _chosen(own: np.ndarray, pool: np.ndarray, wanted: np.ndarray, least: int, window: int):
    """(the reads to judge, pooled): the last `window` of `own` that are `wanted` (a mask over
    the ledger), or of `pool` when own has fewer than `least` and the pool more."""
    mine = own[wanted[own]]
    if mine.size < least:
        pooled = pool[wanted[pool]]
        if pooled.size > mine.size:
            return pooled[-window:], True
    return mine[-window:], False


def evidence(ledger: Ledger, own, pool, co, rules: ActionRules, targets: Targets,
             accuracy=(float("nan"), float("nan"))) -> Evidence:  # fmt: skip
    """The Evidence of one rater on one item from their reads of it (`own`) and of all their
    items (`pool`), both in time order, and the consensus's (accuracy, its upper end) of the
    rater (module docstring)."""
    others, agree, since = co
    least, window = rules.status_minimum, rules.status_window
    valid, pooled_valid = _chosen(own, pool, ledger.expert >= 0, least, window)
    gap = np.abs(ledger.score[valid] - ledger.expert[valid])
    close = targets.adjacent[ledger.item[valid]]
    shared, pooled_shared = _chosen(own, pool, others > 0, least, window)
    on = np.unique(ledger.item[pool if pooled_shared else own])
    mine = pool if pooled_shared else own
    # The other raters' ordered pairs over the window's time (from its first read on; all of
    # it when the window is empty): an item that fell lately lowers both sides alike. Each of
    # this rater's pairs is counted from both ends.
    start = float(ledger.order[shared].min()) if shared.size else -np.inf
    mine = mine[ledger.order[mine] >= start]
    item_pairs, item_agreeing = since(on.tolist(), start)
    pairs = item_pairs - 2 * others[mine].sum()
    agreeing_pairs = item_agreeing - 2 * agree[mine].sum()
    return Evidence(
        validity=int(valid.size),
        exact=int(np.sum(gap == 0)),
        target=_mean(targets.exact[ledger.item[valid]]),
        qualify=_mean(targets.qualify[ledger.item[valid]]),
        adjacent_n=int(close.sum()),
        adjacent=int(np.sum(close & (gap <= 1))),
        shared=int(shared.size),
        agreeing=float(np.sum(agree[shared] / others[shared])) if shared.size else 0.0,
        shared_target=_mean(targets.exact[ledger.item[shared]]),
        others=float(agreeing_pairs / pairs) if pairs > 0 else float("nan"),
        pooled_validity=pooled_valid,
        pooled_shared=pooled_shared,
        accuracy=float(accuracy[0]),
        accuracy_high=float(accuracy[1]),
        rater_target=_mean(targets.exact[ledger.item[pool]]),
    )


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else 1.0


def rater_status(ledger: Ledger, rules: ActionRules, history: History | None = None):
    """Every named rater's status on every item they read (module docstring), by rater, then
    item order."""
    history = history or History()
    co, targets = co_reads(ledger), Targets.of(ledger, rules)
    pools = {r: reads for r, _, reads in groups(ledger, by_item=False)}
    high = ledger.reliability_high
    high = np.full(len(ledger.raters), np.nan) if high is None else high
    found = []
    for r, k, reads in groups(ledger):
        rater, item = ledger.raters[r], ledger.items[k].name
        kept = history.unchanged.get((rater, item))
        if kept is not None:
            found.append(RaterStatus(rater, item, *kept))
            continue
        accuracy = (ledger.reliability[r], high[r])
        seen = evidence(ledger, reads, pools[r], co, rules, targets, accuracy)
        before = history.statuses.get((rater, item))
        status, rule, figure = judge(seen, rules, before, ledger.verdicts.get(rater))
        found.append(RaterStatus(rater, item, status, rule, figure))
    return found


def judge(seen: Evidence, rules: ActionRules, before=None, verdicts=None):
    """(status, rule, figure) of one rater on one item: the first rule that fires."""
    for rule in (_validity, _reliability, _requalified, _agreement):
        fired = rule(seen, rules, before)
        if fired is not None:
            return fired
    if verdicts:
        first = verdicts[0]
        words = ", ".join(v.name for v in verdicts)
        return WATCH, f"parm's verdict: {words} ({first.because})", float(first.strength)
    return QUALIFIED, _nothing_fired(seen, rules), _share(seen)


def _validity(seen: Evidence, rules: ActionRules, before):
    n, least = seen.validity, rules.status_minimum
    close, target = seen.adjacent_n, rules.adjacent_target
    if close >= least and clearly_below(seen.adjacent, close, target):
        return (STOP, f"validity exact-or-adjacent {seen.adjacent / close:.0%} of {close} reads"
                f"{seen.scope(True)}, clearly below {target:.0%}", seen.adjacent / close)  # fmt: skip
    if n >= least and clearly_below(seen.exact, n, seen.target):
        words = f"validity exact {seen.exact / n:.0%} of {n} reads{seen.scope(True)}, clearly "
        words += f"below the {seen.target:.0%} target"
        if before == RETRAIN:
            return STOP, "still below after retraining: " + words, seen.exact / n
        return RETRAIN, words, seen.exact / n
    return None


def _reliability(seen: Evidence, rules: ActionRules, before):
    if not seen.accuracy_high < seen.rater_target:  # NaN (no consensus) never fires
        return None
    words = (f"the rater's accuracy by the consensus: {seen.accuracy:.0%} (95% up to "
             f"{seen.accuracy_high:.0%}, all their items), clearly below the "
             f"{seen.rater_target:.0%} target")  # fmt: skip
    if before == RETRAIN:
        return STOP, "still below after retraining: " + words, seen.accuracy
    return RETRAIN, words, seen.accuracy


def _requalified(seen: Evidence, rules: ActionRules, before):
    """A rater retrained or stopped before stays so until the window's exact agreement reaches
    the qualification target on at least status_minimum validity reads."""
    if before not in (RETRAIN, STOP):
        return None
    n = seen.validity
    if n >= rules.status_minimum and seen.exact / n >= seen.qualify:
        return None
    figure = seen.exact / n if n else None
    got = f"{seen.exact / n:.0%} of {n}" if n else "no"
    return (before, f"not requalified: {got} validity reads exact{seen.scope(True)}, "
            f"{seen.qualify:.0%} needed", figure)  # fmt: skip


def _agreement(seen: Evidence, rules: ActionRules, before):
    """Watch: clearly below both the item's target and the other raters' agreement (agreement
    measures the co-raters too: on an item where everyone is below the target, only a rater
    clearly below the rest is watched)."""
    n = seen.shared
    if n < rules.status_minimum:
        return None
    share, target = seen.agreeing / n, seen.shared_target
    others = seen.others if np.isfinite(seen.others) else 1.0
    if clearly_below(seen.agreeing, n, min(target, others)):
        also = "" if not np.isfinite(seen.others) else f" and the other raters' {others:.0%}"
        return (WATCH, f"agreement with co-raters {share:.0%} over {n} reads{seen.scope(False)}, "
                f"clearly below the {target:.0%} target{also}", share)  # fmt: skip
    return None


def _share(seen: Evidence) -> float | None:
    if seen.validity:
        return seen.exact / seen.validity
    return seen.agreeing / seen.shared if seen.shared else None


def _nothing_fired(seen: Evidence, rules: ActionRules) -> str:
    parts = []
    if seen.validity:
        parts.append(f"validity exact {seen.exact / seen.validity:.0%} of {seen.validity}"
                     + seen.scope(True))  # fmt: skip
    if seen.shared:
        parts.append(f"agreement {seen.agreeing / seen.shared:.0%} over {seen.shared}"
                     + seen.scope(False))  # fmt: skip
    if max(seen.validity, seen.shared) < rules.status_minimum:
        parts.append(f"fewer than {rules.status_minimum} reads to judge")
    return "no rule fired" + (f" ({'; '.join(parts)})" if parts else "")


def worst(statuses, rater: str) -> RaterStatus | None:
    """The rater's most severe status over their items (the first item among equals)."""
    mine = [s for s in statuses if s.rater == rater]
    return max(mine, key=lambda s: s.severity) if mine else None
