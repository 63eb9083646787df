"""The alert rules, one function each, every threshold a setting of the monitor section
(engine.input.settings.declared): each judges every day its figure allows, on what was known by that
day's end, and returns its alerts and the latest day it judged each unit (engine.live.alerts.alert
keeps the open ones).

Every rule has a test, and an alert is raised only when the figure is past its threshold and
the test's one-sided p is below `monitor_alert_p`: an exact binomial test of the day's exact
agreement (or accuracy) against the target; a two-proportion z test of the day against the
pooled past days, and of the afternoon against the morning; Welch's t (HC3, engine.audit.raters.drift)
of a rater's leniency on the day against their earlier days. Nothing is judged on fewer than
`monitor_min_reads` double reads (validity reads) in the period, nor against a history of fewer
than `monitor_history_periods` days that each had as many. The sentences come from
engine.results.compare, from the figures as they are shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from engine.audit.raters.drift import rater_drift
from engine.core.numbers import signed
from engine.input.settings.config import AuditConfig
from engine.live.alerts.alert import Alert
from engine.live.alerts.explained import ItemDays, explained
from engine.live.alerts.figures import Cell, Pairs
from engine.live.intake.session_reads import SessionReads
from engine.results.compare import SHORTFALL, Limit, compare

Judged = dict[tuple[str, str, str], str]


@dataclass(frozen=True)
class Found:
    """A rule's alerts, and the latest day it judged each (family, item, rater)."""

    alerts: list[Alert]
    judged: Judged


def target(targets: tuple[float, ...], size: int, first: int = 2) -> float | None:
    """The target for an item of `size` score points from targets for first, first + 1, ...
    points (the last one for every size above); None for a scale of one point."""
    if size < first:
        return None
    return targets[min(size - first, len(targets) - 1)]


def below(k: int, n: int, rate: float) -> float:
    """One-sided p of k or fewer successes in n at `rate` (exact binomial)."""
    return float(special.bdtr(k, n, rate))  # the binomial CDF


def sentence(figure: str, value: float, name: str, threshold: float, sure: str) -> str:
    """'Item 'q1''s exact agreement on 2026-05-04 is 61.0%, 19.0 points below the target for a
    3-point item of 80.0% (p = 0.002, 41 double reads).'"""
    limit = Limit(0.0, SHORTFALL, name, "")
    said = compare(figure, value, name, threshold, limit, digits=1, percent=True).sentence
    return f"{said} ({sure})."


def sure(p: float, n: int, what: str = "double reads") -> str:
    return f"p = {p:.2g}, {n:,} {what}"


def is_day(period: str) -> bool:
    return " " not in period


def day_cells(
    cells: list[Cell], item: str | None, rater: str | None
) -> dict[tuple[str, str], list[Cell]]:
    """The day cells of each unit: {(item, rater): [cells by day]}; None: any."""
    out: dict[tuple[str, str], list[Cell]] = {}
    for cell in sorted(cells, key=lambda c: c.period):
        if (
            is_day(cell.period)
            and (item is None or cell.item == item)
            and (rater is None or cell.rater == rater)
        ):
            out.setdefault((cell.item, cell.rater), []).append(cell)
    return out


def _who(item: str, rater: str) -> str:
    if item and rater:
        return f"Rater '{rater}' on item '{item}'"
    if rater:
        return f"Rater '{rater}'"
    return f"Item '{item}'" if item else "The session"


# -- items -------------------------------------------------------------------------------------
def item_targets(cells: list[Cell], reads: SessionReads, config: AuditConfig,
                 explain: ItemDays | None = None) -> Found:  # fmt: skip
    """Each item's day below the exact target for its scale (else below the adjacent one);
    explain: the item days for asking whether one rater explains it (engine.live.alerts.explained)."""
    sizes = {name: scale.size for name, scale in zip(reads.items, reads.scales)}
    alerts, judged = [], {}
    for (item, _), days in day_cells([c for c in cells if c.item], None, "").items():
        exact = target(config.exact_targets, sizes[item])
        adjacent = target(config.monitor_adjacent_targets, sizes[item])
        for cell in days:
            if cell.pairs < config.monitor_min_reads or exact is None:
                continue
            judged[("item_target", item, "")] = cell.period
            _judged_raters(judged, explain, cell)

            def rule(
                c: Cell, goals: tuple[float, float | None, int] = (exact, adjacent, sizes[item])
            ) -> Alert | None:
                return _against_target(c, *goals, config)

            found = rule(cell)
            if found is not None:
                alerts.append(explained(found, cell, explain, config.monitor_min_reads, rule))
    return Found(alerts, judged)


def _judged_raters(judged: Judged, explain: ItemDays | None, cell: Cell) -> None:
    """Each rater of the item's day is judged for `rater_item` that day (their alert, if any,
    is open until a later day of the item passes)."""
    if explain is not None:
        for rater in explain.raters(cell.item, cell.period):
            judged[("rater_item", cell.item, rater)] = cell.period


def _against_target(cell: Cell, exact: float, adjacent: float | None, size: int, config):
    checks = [("exact agreement", cell.exact, cell.pairs, exact)]
    if adjacent is not None and cell.adjacent_pairs:
        checks.append(("exact-or-adjacent agreement", cell.adjacent, cell.adjacent_pairs, adjacent))
    for what, k, n, goal in checks:
        p = below(k, n, goal)
        if k / n < goal and p < config.monitor_alert_p:
            figure = f"{_who(cell.item, '')}: {what} on {cell.period}"
            name = f"the target for a {size}-point item"
            message = sentence(figure, k / n, name, goal, sure(p, n))
            return Alert("item_target", cell.item, "", cell.period, k / n, goal, message, p, n,
                         "item_target")  # fmt: skip
    return None


def session_target(cells: list[Cell], reads: SessionReads, config: AuditConfig) -> Found:
    """Each day of every item's double reads together against the targets of the items read
    (each item's target weighted by its double reads that day)."""
    sizes = {name: scale.size for name, scale in zip(reads.items, reads.scales)}
    alerts, judged = [], {}
    by_day: dict[str, list[Cell]] = {}
    for cell in cells:
        if cell.item and not cell.rater and is_day(cell.period):
            by_day.setdefault(cell.period, []).append(cell)
    for day in sorted(by_day):
        # Each item's cell with its target (an item of one score point has none).
        parts = [(c, t) for c in by_day[day]
                 if (t := target(config.exact_targets, sizes[c.item])) is not None]  # fmt: skip
        n = sum(c.pairs for c, _ in parts)
        if n < config.monitor_min_reads or len(reads.items) < 2:
            continue
        goal = sum(c.pairs * t for c, t in parts) / n
        k = sum(c.exact for c, _ in parts)
        judged[("session_target", "", "")] = day
        p = below(k, n, goal)
        if k / n < goal and p < config.monitor_alert_p:
            message = sentence(f"The session: exact agreement on {day}", k / n,
                               "the targets of the items read", goal, sure(p, n))  # fmt: skip
            alerts.append(Alert("session_target", "", "", day, k / n, goal, message, p, n,
                                "session_target"))  # fmt: skip
    return Found(alerts, judged)


def item_history(cells: list[Cell], config: AuditConfig, explain: ItemDays | None = None) -> Found:
    """Each item's day below the yellow (red) percentile of its own past days with enough
    double reads, once it has `monitor_history_periods` of them, and below their pooled rate;
    explain: as item_targets'."""
    yellow, red = config.monitor_history_percentiles
    alerts, judged = [], {}
    for (item, _), days in day_cells([c for c in cells if c.item], None, "").items():
        past: list[Cell] = []
        for cell in days:
            if cell.pairs < config.monitor_min_reads:
                continue
            if len(past) >= config.monitor_history_periods:
                judged[("item_history", item, "")] = cell.period
                _judged_raters(judged, explain, cell)

                def rule(c: Cell, past=tuple(past)) -> Alert | None:
                    return _against_history(c, list(past), yellow, red, config)

                found = rule(cell)
                if found is not None:
                    alerts.append(explained(found, cell, explain, config.monitor_min_reads, rule))
            past.append(cell)
    return Found(alerts, judged)


def _against_history(cell: Cell, past: list[Cell], yellow: float, red: float, config):
    shares = np.array([c.exact / c.pairs for c in past])
    hits, total = sum(c.exact for c in past), sum(c.pairs for c in past)
    pooled = hits / total
    share = cell.exact / cell.pairs
    cuts = {
        "red": float(np.percentile(shares, red)),
        "yellow": float(np.percentile(shares, yellow)),
    }
    level = "red" if share < cuts["red"] else "yellow" if share < cuts["yellow"] else None
    # The history's rate is itself estimated: the two-proportion test counts its uncertainty.
    p = _two_proportion(hits, total, cell.exact, cell.pairs)
    if level is None or p >= config.monitor_alert_p:
        return None
    percentile = red if level == "red" else yellow
    name = f"the {percentile:g}th percentile of its {len(past)} past days"
    how = f"{level}; against their pooled {pooled:.1%}: {sure(p, cell.pairs)}"
    message = sentence(f"{_who(cell.item, '')}: exact agreement on {cell.period}", share, name,
                       cuts[level], how)  # fmt: skip
    return Alert(f"item_history_{level}", cell.item, "", cell.period, share, cuts[level],
                 message, p, cell.pairs, "item_history")  # fmt: skip


def within_day(cells: list[Cell], config: AuditConfig) -> Found:
    """An item's afternoon below its morning by at least `monitor_within_day_drop`, by a one-sided
    two-proportion z test."""
    halves = {c.key: c for c in cells if c.item and not c.rater and not is_day(c.period)}
    alerts, judged = [], {}
    for (item, _, period), pm in sorted(halves.items()):
        day, _, half = period.partition(" ")
        am = halves.get((item, "", f"{day} am"))
        if half != "pm" or am is None:
            continue
        if min(am.pairs, pm.pairs) < config.monitor_min_reads:
            continue
        judged[("item_within_day", item, "")] = day
        morning, afternoon = am.exact / am.pairs, pm.exact / pm.pairs
        p = _two_proportion(am.exact, am.pairs, pm.exact, pm.pairs)
        if (
            morning - afternoon >= config.monitor_within_day_drop - 1e-12
            and p < config.monitor_alert_p
        ):
            limit = Limit(config.monitor_within_day_drop * 100, SHORTFALL, "the within-day drop",
                          "a fall within the day")  # fmt: skip
            said = compare(f"{_who(item, '')}: exact agreement on the afternoon of {day}",
                           afternoon, "the morning's", morning, limit, 1, True).sentence  # fmt: skip
            message = f"{said.removesuffix(')')}; {sure(p, pm.pairs + am.pairs)})."
            alerts.append(Alert("item_within_day", item, "", period, afternoon, morning, message,
                                p, pm.pairs, "item_within_day"))  # fmt: skip
    return Found(alerts, judged)


def _two_proportion(k1: int, n1: int, k2: int, n2: int) -> float:
    """One-sided p that the second share is below the first (pooled z test)."""
    pooled = (k1 + k2) / (n1 + n2)
    se = np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    return float(special.ndtr((k2 / n2 - k1 / n1) / se))  # the normal CDF


# -- raters ------------------------------------------------------------------------------------
def rater_agreement(cells: list[Cell], reads: SessionReads, config: AuditConfig) -> Found:
    """A rater's day over every item below the targets of the items they read that day."""
    sizes = {name: scale.size for name, scale in zip(reads.items, reads.scales)}
    parts: dict[tuple[str, str], list[Cell]] = {}
    for cell in cells:
        if cell.item and cell.rater and is_day(cell.period):
            if target(config.exact_targets, sizes[cell.item]) is not None:
                parts.setdefault((cell.rater, cell.period), []).append(cell)
    alerts, judged = [], {}
    for (rater, day), mine in sorted(parts.items(), key=lambda x: (x[0][1], x[0][0])):
        n = sum(c.pairs for c in mine)
        if n < config.monitor_min_reads:
            continue
        goal = sum(c.pairs * t for c in mine  # each has a target (`parts` above)
                   if (t := target(config.exact_targets, sizes[c.item])) is not None) / n  # fmt: skip
        k = sum(c.exact for c in mine)
        judged[("rater_agreement", "", rater)] = day
        p = below(k, n, goal)
        if k / n < goal and p < config.monitor_alert_p:
            message = sentence(f"{_who('', rater)}: exact agreement with co-raters on {day}",
                               k / n, "the targets of the items read", goal, sure(p, n))  # fmt: skip
            alerts.append(Alert("rater_agreement", "", rater, day, k / n, goal, message, p, n,
                                "rater_agreement"))  # fmt: skip
    return Found(alerts, judged)


def rater_validity(reads: SessionReads, config: AuditConfig) -> Found:
    """A rater's latest `monitor_validity_window` validity reads of an item, at the end of each
    day they read some, below the validity target for its scale."""
    valid = np.flatnonzero(reads.validity())
    least = min(config.monitor_min_reads, config.monitor_validity_window)
    alerts, judged = [], {}
    for k, r in sorted(set(zip(reads.item[valid].tolist(), reads.rater[valid].tolist()))):
        goal = target(config.qualify_targets, reads.scales[k].size)
        if goal is None:
            continue
        mine = valid[(reads.item[valid] == k) & (reads.rater[valid] == r)]
        mine = mine[np.lexsort((np.nan_to_num(reads.time[mine], nan=-np.inf),
                                reads.day[mine].astype(str)))]  # fmt: skip
        right = reads.score[mine] == reads.expert[reads.answer[mine]]
        days = reads.day[mine]
        for day in sorted(set(days.tolist())):
            upto = np.flatnonzero(days <= day)[-config.monitor_validity_window :]
            n, hits = int(upto.size), int(right[upto].sum())
            if n < least:
                continue
            item, rater = reads.items[k], reads.raters[r]
            judged[("rater_validity", item, rater)] = day
            p = below(hits, n, goal)
            if hits / n < goal and p < config.monitor_alert_p:
                figure = f"{_who(item, rater)}: exact accuracy on the latest {n} validity papers by {day}"
                name = f"the validity target for a {reads.scales[k].size}-point item"
                message = sentence(figure, hits / n, name, goal, sure(p, n, "validity reads"))
                alerts.append(Alert("rater_validity", item, rater, day, hits / n, goal, message,
                                    p, n, "rater_validity"))  # fmt: skip
    return Found(alerts, judged)


def rater_drifts(reads: SessionReads, pairs: Pairs, config: AuditConfig) -> Found:
    """A rater's leniency against co-raters (their score minus the co-rater's, in points, over
    every item) on a day against their own earlier days: the difference of the means, its HC3
    standard error and t test (engine.audit.raters.drift.rater_drift on a day indicator)."""
    a, b = pairs.first, pairs.second
    diff = reads.points[a] - reads.points[b]
    day = reads.day[b]
    alerts, judged = [], {}
    for r, rater in enumerate(reads.raters):
        u = np.r_[diff[reads.rater[a] == r], -diff[reads.rater[b] == r]]
        when = np.r_[day[reads.rater[a] == r], day[reads.rater[b] == r]]
        found = _drift_days(rater, u, when, config)
        alerts += found.alerts
        judged.update(found.judged)
    return Found(alerts, judged)


def _drift_days(rater: str, u: np.ndarray, when: np.ndarray, config: AuditConfig) -> Found:
    alerts, judged = [], {}
    # Days as integer codes: comparing strings of every read for every day costs seconds.
    days, code, counts = np.unique(when.astype(str), return_inverse=True, return_counts=True)
    enough = counts >= config.monitor_min_reads
    for k, day in enumerate(days):
        earlier = enough[:k]
        if not enough[k] or earlier.sum() < config.monitor_history_periods:
            continue
        use = (code == k) | ((code < k) & enough[code])
        drift = rater_drift(u[use], (code[use] == k).astype(float))
        if drift is None:
            continue
        judged[("rater_drift", "", rater)] = day
        if abs(drift.change) >= config.monitor_drift_points and drift.p < config.monitor_alert_p:
            way = "more lenient" if drift.change > 0 else "harsher"
            n = int(counts[k])
            today = float(np.mean(u[code == k]))
            said = compare(f"{_who('', rater)}: score minus co-rater's on {day}", today,
                           "their earlier days'", today - drift.change, None, 2).sentence  # fmt: skip
            message = (
                f"{said} points: {way} (t = {signed(drift.t, 1)}, {sure(drift.p, n)} that day)."
            )
            alerts.append(Alert("rater_drift", "", rater, day, drift.change,
                                config.monitor_drift_points, message, drift.p, n, "rater_drift"))  # fmt: skip
    return Found(alerts, judged)
