"""What a live session knows from earlier mornings, for the lead's lists: each rater's status on
each item the last time, and the third reads assigned and not yet read. A plain `parm audit` has
no history (`History()`); the live session (`parm monitor`) keeps one and passes it each morning."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class History:
    """statuses: {(rater, item): the status they had}; assigned: {(item, answer id): the rater
    an open third read of it was assigned to}; assigned_today: {rater: third reads already
    assigned to them today}, counted against the cap; unchanged: {(rater, item): (status, rule,
    figure)} kept as they were, the rater having no read of the item since (a status judged
    again on the same reads would otherwise move on: retrain to stop, "still below after
    retraining", with no retraining in between)."""

    statuses: Mapping[tuple[str, str], str] = field(default_factory=dict)
    assigned: Mapping[tuple[str, str], str] = field(default_factory=dict)
    assigned_today: Mapping[str, int] = field(default_factory=dict)
    unchanged: Mapping[tuple[str, str], tuple] = field(default_factory=dict)
