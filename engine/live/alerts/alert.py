"""An alert: what a lead acts on, with its kind, item, rater, period, figure, threshold and one
plain sentence that says how sure it is. The kinds, declared once (alerts.csv's reference, the
Monitor screen's legend and docs/explanation/monitor-alerts.md name them from here).

`item` and `rater` are as the files name them, "" when the alert is about every item (or every
rater). An alert is judged on a period's figure with at least `monitor_min_reads` reads behind
it and only raised when its test is sure (p below `monitor_alert_p`). A rule is judged every
day the figure allows, each day on what was known by its end; an alert is open while it is on
its unit's latest day the rule could judge (a later day that passes clears it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

RED, YELLOW = "red", "yellow"

# kind -> (what it says, the unit it is about, its level)
ALERT_KINDS = {
    "item_history_red": (
        "an item's exact agreement on a day below the red percentile (the 5th) of its own past "
        "days, and below their pooled rate by the test", "item", RED),
    "item_history_yellow": (
        "an item's exact agreement on a day below the yellow percentile (the 20th) of its own "
        "past days, and below their pooled rate by the test", "item", YELLOW),
    "item_target": (
        "an item's exact (else exact-or-adjacent) agreement on a day below the target for its "
        "number of score points", "item", RED),
    "item_within_day": (
        "an item's exact agreement fell from the morning to the afternoon by at least the "
        "within-day drop", "item", YELLOW),
    "rater_item": (
        "an item's day past an item rule (its target or its history) that keeps to the rule "
        "without one rater's double reads: that rater's reads explain it, and the alert is "
        "about them on that item", "rater", RED),
    "session_target": (
        "every item's double reads of a day together below the targets of the items read",
        "session", RED),
    "rater_validity": (
        "a rater's exact accuracy on an item's validity papers, over their latest ones, below "
        "the validity target for its number of score points", "rater", RED),
    "rater_agreement": (
        "a rater's exact agreement with their co-raters on a day, over every item, below the "
        "targets of the items they read", "rater", RED),
    "rater_drift": (
        "a rater's leniency against their co-raters on a day moved from their own earlier days "
        "by at least the drift points", "rater", YELLOW),
    "rater_verdict": (
        "a rater's verdict from their co-raters' reads (lenient, harsh, noisy, fine) changed "
        "since the run before", "rater", YELLOW),
    "rater_status": (
        "a rater's status on an item (the lead's actions: qualified, watch, retrain, stop) "
        "changed since the run before", "rater", YELLOW),
}  # fmt: skip


# Alerts about a change between two runs rather than a day's figure: raised by the run that
# sees the change, never "still open" or "cleared" in what changed since.
EVENT_KINDS = ("rater_verdict", "rater_status")


@dataclass(frozen=True)
class Alert:
    """One alert. figure and threshold are in the figure's own unit (a share for agreement and
    accuracy, points for drift, standard errors for a verdict); p: the test's; n: the reads
    (or double reads) it was judged on; family: the rule that raised it (red and yellow are one
    rule's)."""

    kind: str
    item: str
    rater: str
    period: str
    figure: float
    threshold: float
    message: str
    p: float = float("nan")
    n: int = 0
    family: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        """What an alert is about, whatever its day: raised, cleared or still open by this."""
        return self.kind, self.item, self.rater

    @property
    def level(self) -> str:
        return ALERT_KINDS[self.kind][2]

    @property
    def day(self) -> str:
        return self.period.partition(" ")[0]

    def as_dict(self) -> dict:
        out = asdict(self)
        out["p"] = None if self.p != self.p else self.p
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Alert:
        data = dict(data)
        data["p"] = float("nan") if data.get("p") is None else data["p"]
        return cls(**data)


def open_alerts(alerts: list[Alert], judged: dict[tuple[str, str, str], str]) -> list[Alert]:
    """The alerts on their unit's latest judged day. judged: (family, item, rater) -> the
    latest day the rule judged that unit."""
    return sorted(
        (a for a in alerts if judged.get((a.family, a.item, a.rater)) == a.day),
        key=order_key,
    )


def order_key(alert: Alert):
    """Red first, then the surest, then by item and rater."""
    p = alert.p if alert.p == alert.p else 1.0
    return (alert.level != RED, p, alert.item, alert.rater, alert.kind)
