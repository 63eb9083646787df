"""An item's day without one rater's double reads: whether one rater explains an item's fall.

A rater who drifts, or scores one item badly, lowers the agreement of every item they read: the
item rules would alert each of those items, though nothing is wrong with them. So before an item
rule raises an alert it asks the same question of the item's day without each rater's double
reads in turn (`ItemDays.without`); where the day keeps to the rule without one rater's (with at
least `monitor_min_reads` double reads left), that rater's reads explain the fall and the alert
is about them on that item (kind `rater_item`), not about the item. A fall shared by the raters
(a hard batch, an unclear rubric) still falls without any one of them and stays the item's. Where
too few double reads are left without a rater (an item read by two raters) the item's alert
stands as it is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.live.alerts.alert import Alert
from engine.live.alerts.figures import Cell, Pairs, pair_cell
from engine.live.intake.session_reads import SessionReads


class ItemDays:
    """The double reads of each item and day (a pair's day is its later read's), for taking one
    rater's out."""

    def __init__(self, reads: SessionReads, pairs: Pairs):
        self.reads, self.pairs = reads, pairs
        self.groups: dict[tuple[str, str], np.ndarray] = {}
        later = pairs.second
        if later.size == 0:
            return
        days, day_code = np.unique(reads.day[later].astype(str), return_inverse=True)
        key = reads.item[later] * max(len(days), 1) + day_code
        order = np.argsort(key, kind="stable")
        bounds = np.flatnonzero(np.r_[True, np.diff(key[order]) != 0, True])
        for s, e in zip(bounds[:-1], bounds[1:]):
            first = order[s]
            name = reads.items[int(reads.item[later[first]])]
            self.groups[(name, str(days[day_code[first]]))] = order[s:e]

    def raters(self, item: str, day: str) -> list[str]:
        """The raters with double reads of the item that day, by name."""
        index = self.groups.get((item, day), np.zeros(0, np.int64))
        found = np.unique(np.r_[self.reads.rater[self.pairs.first[index]],
                                self.reads.rater[self.pairs.second[index]]])  # fmt: skip
        return [self.reads.raters[r] for r in found]

    def without(self, item: str, day: str, rater: str) -> Cell:
        """The item's day cell from its double reads that `rater` is not part of."""
        index = self.groups.get((item, day), np.zeros(0, np.int64))
        r = self.reads.raters.index(rater)
        a, b = self.pairs.first[index], self.pairs.second[index]
        keep = (self.reads.rater[a] != r) & (self.reads.rater[b] != r)
        k = self.reads.items.index(item)
        scale = self.reads.scales[k]
        cell = Cell(item, "", day)
        pair_cell(cell, self.reads.score[a[keep]], self.reads.score[b[keep]], len(scale.labels),
                  scale.ordered)  # fmt: skip
        return cell


def explained(alert: Alert, cell: Cell, days: ItemDays | None, least: int,
              rule: Callable[[Cell], Alert | None]) -> Alert:  # fmt: skip
    """The item alert as it stands, or an `rater_item` alert about the rater whose double reads
    explain it: of the raters without whom the day keeps to `rule` (at least `least` double
    reads left), the one whose removal raises the exact share most."""
    if days is None:
        return alert
    best = None
    for rater in days.raters(cell.item, cell.period):
        rest = days.without(cell.item, cell.period, rater)
        if rest.pairs < least or rule(rest) is not None:
            continue
        # Back within the threshold itself, not only too few reads left for the test to be sure.
        if _figure(alert, cell, rest) < alert.threshold:
            continue
        share = rest.exact / rest.pairs
        if best is None or share > best[1]:
            best = (rater, share, rest)
    if best is None:
        return alert
    rater, share, rest = best
    theirs = cell.pairs - rest.pairs
    message = (f"Rater '{rater}' on item '{cell.item}': the item's exact agreement on "
               f"{cell.period} is {cell.exact / cell.pairs:.1%}, past its rule ({alert.kind}); "
               f"without {rater}'s {theirs:,} double reads of it that day it is {share:.1%} and "
               f"keeps to the rule: their reads explain the fall.")  # fmt: skip
    return Alert("rater_item", cell.item, rater, cell.period, cell.exact / cell.pairs, share,
                 message, alert.p, cell.pairs, "rater_item")  # fmt: skip


def _figure(alert: Alert, cell: Cell, rest: Cell) -> float:
    """The alert's figure on the day without the rater: exact agreement, or exact-or-adjacent
    where that is what the alert judged."""
    exact = cell.exact / cell.pairs
    if alert.figure == exact or not rest.adjacent_pairs:
        return rest.exact / rest.pairs if rest.pairs else float("nan")
    return rest.adjacent / rest.adjacent_pairs
