"""The rules of the lead's lists, read once from the settings (engine.input.settings.declared, section
"actions"), and the one test every status rule makes: a share is clearly below a target when
the upper end of its exact (Clopper-Pearson) 95% interval is. The exact interval, not Wilson's:
with few reads Wilson's upper end falls below the truth in up to 5% of windows (a rater exactly
at 85% over 10 reads), the exact one in at most 2.5% whatever the window's size, so a rater at
the target is called below in at most one window in forty (tests/test_rater_status.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scipy.special import betaincinv

from engine.input.settings.config import AuditConfig

STATUSES = ("qualified", "watch", "retrain", "stop")
QUALIFIED, WATCH, RETRAIN, STOP = STATUSES
LEVEL = 0.95


@dataclass(frozen=True)
class ActionRules:
    """The settings of engine.actions, as a run reads them (their meanings and defaults are the
    settings table's: build one with `of`)."""

    backread_rate: float
    backread_minimum: int
    backread_watch_rate: float
    backread_random_share: float
    backread_supervisors: tuple[str, ...]
    third_read_gap: int
    third_read_unsure: bool
    third_read_cap: int
    exact_targets: tuple[float, ...]
    qualify_targets: tuple[float, ...]
    adjacent_target: float
    status_minimum: int
    status_window: int

    @classmethod
    def of(cls, config: AuditConfig | None = None, **changes: Any) -> ActionRules:
        """The rules of an AuditConfig (None: the default settings), with `changes` made."""
        config = AuditConfig() if config is None else config
        values = {name: getattr(config, name) for name in cls.__dataclass_fields__}
        values["backread_supervisors"] = tuple(values["backread_supervisors"] or ())
        return cls(**{**values, **changes})

    def exact_target(self, scores: int) -> float:
        """The exact-agreement target of an item with `scores` score values."""
        return by_size(self.exact_targets, scores)

    def qualify_target(self, scores: int) -> float:
        return by_size(self.qualify_targets, scores)


def by_size(shares: tuple[float, ...], scores: int) -> float:
    """The share for a scale of `scores` values: the first for 2, the last for larger ones."""
    return shares[min(max(scores - 2, 0), len(shares) - 1)]


def clearly_below(successes: float, n: float, target: float) -> bool:
    """Whether successes / n is below `target` with 95% confidence (the exact interval's upper
    end below it); never for n = 0."""
    return n > 0 and upper(successes, n) < target


def upper(successes: float, n: float) -> float:
    """The upper end of the share's exact (Clopper-Pearson) 95% interval: the p at which
    seeing at most `successes` of n has probability 2.5% (1 at successes = n; NaN for n = 0).
    Successes may be fractional (shares of agreeing co-reads): the beta quantile takes them."""
    if not n > 0:
        return float("nan")
    if successes >= n:
        return 1.0
    return float(betaincinv(successes + 1, n - successes, 1 - (1 - LEVEL) / 2))  # Beta quantile
