"""How many scores of an item are likely wrong, and which to flag (issue 44, point 4).

Flagged means "likely wrong", not "the model predicts another score": a model less accurate
than the raters disagrees with far more scores than are wrong (on ASAP-SAS it flagged a fifth of
the answers where the two raters disagree on a twentieth).

The estimate of wrong scores (another read would give another score) comes from the item's
answers read twice where there are any (the share whose reads differ, times the item's answers;
Wilson's 95% interval), else from the calibrated severities (engine.audit.queue.calibration): their
sum, with an interval that adds the Poisson-binomial spread to the calibration's own error
(CALIBRATION_SPREAD, the spread of the held-out count ratios in the benchmark). The item's
flagged list is that many answers from the top of its queue; with a precision asked for
(`flag_precision`), the longest top of the queue whose mean severity reaches it instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.audit.resample import wilson_interval

Z = 1.959963984540054
# How far the estimate from severities alone strays, on the log scale: the root mean square of
# log(estimate / truth) over held-out items, per kind, averaged over the kinds (bench_severity_
# errors.py: ASAP-SAS 1.12, essays 0.28, Mohler 0.51, Powergrading 2.11). Without second reads
# the number of wrong scores is known only to within about a factor 7 (e^1.96).
CALIBRATION_SPREAD = 1.007
SECOND_READS = "second reads"
SEVERITIES = "severities"


@dataclass(frozen=True)
class WrongEstimate:
    """An item's estimated number of wrong scores, its 95% interval, and what it rests on
    (SECOND_READS or SEVERITIES)."""

    count: float
    low: float
    high: float
    source: str
    # From the severities: the Poisson-binomial part of the interval (independent from item to
    # item) and the item's answers; the calibration's factor is the same map's error on every
    # item of a file, so a session's interval applies it to the sum (`combined`).
    spread: float = 0.0
    answers: float = 0.0

    def record(self) -> dict:
        return {
            "count": round(self.count, 2),
            "low": round(self.low, 2),
            "high": round(self.high, 2),
            "source": self.source,
        }


def wrong_estimate(
    severity: np.ndarray, read_twice: np.ndarray | None = None, differs: np.ndarray | None = None
) -> WrongEstimate:
    """The item's estimate. severity: (N,) calibrated; read_twice: (N,) answers with two or
    more reads; differs: (N,) those whose reads do not all give the audited score."""
    n = severity.shape[0]
    if read_twice is not None and differs is not None and read_twice.any():
        total = int(read_twice.sum())
        hits = int((differs & read_twice).sum())
        if total == n:  # every answer read twice: the count is seen, not estimated
            return WrongEstimate(float(hits), float(hits), float(hits), SECOND_READS)
        share = wilson_interval(hits, total)
        return WrongEstimate(n * share.estimate, n * share.low, n * share.high, SECOND_READS)
    count = float(severity.sum())
    spread = Z * float(np.sqrt(np.sum(severity * (1 - severity))))
    factor = float(np.exp(Z * CALIBRATION_SPREAD))
    low = max(0.0, count / factor - spread)
    high = min(float(n), count * factor + spread)
    return WrongEstimate(count, low, high, SEVERITIES, spread / Z, float(n))


def flag_count(ordered_severity: np.ndarray, estimate: WrongEstimate, precision) -> int:
    """How many answers from the top of the queue to flag. ordered_severity: the item's
    severities in queue order."""
    if precision is None:
        return int(min(ordered_severity.size, round(estimate.count)))
    running = np.cumsum(ordered_severity) / np.arange(1, ordered_severity.size + 1)
    reaching = np.flatnonzero(running >= precision)
    return int(reaching[-1] + 1) if reaching.size else 0


def flagged(order: np.ndarray, severity: np.ndarray, estimate: WrongEstimate, precision=None):
    """(N,) bool: the first flag_count answers of the item's queue `order`."""
    mask = np.zeros(severity.shape[0], dtype=bool)
    mask[order[: flag_count(severity[order], estimate, precision)]] = True
    return mask


def combined(estimates: list[WrongEstimate]) -> WrongEstimate:
    """A session's estimate over its items: the counts summed. Items counted from second reads
    are independent samples: each side of their interval adds in quadrature. Items estimated
    from the severities share one calibration map, whose error moves all of them the same way
    (ASAP-SAS's whole file 2.5 times its truth, held out): their sum gets the calibration's
    factor, as one item would, and their Poisson-binomial spreads add in quadrature."""
    count = sum(e.count for e in estimates)
    seen = [e for e in estimates if e.source != SEVERITIES]
    below = [e.count - e.low for e in seen]
    above = [e.high - e.count for e in seen]
    guessed = [e for e in estimates if e.source == SEVERITIES]
    if guessed:
        total = sum(e.count for e in guessed)
        spread = Z * float(np.sqrt(sum(e.spread**2 for e in guessed)))
        factor = float(np.exp(Z * CALIBRATION_SPREAD))
        answers = sum(e.answers for e in guessed)
        below.append(total - max(0.0, total / factor - spread))
        above.append(min(answers, total * factor + spread) - total)
    low = count - float(np.sqrt(sum(b * b for b in below)))
    high = count + float(np.sqrt(sum(a * a for a in above)))
    sources = {e.source for e in estimates}
    source = sources.pop() if len(sources) == 1 else f"{SECOND_READS} and {SEVERITIES}"
    return WrongEstimate(count, max(0.0, low), high, source)
