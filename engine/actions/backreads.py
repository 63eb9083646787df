"""Backreads for today: for each rater active in the period, a sample of their reads for a
supervisor to read again (backreads.csv).

A rater's reads in the period are their own work (a file read or a resolution typed in the
review) of answers without an expert score (validity reads are already checked) and not
backread before. Of n such reads they get k = min(n, max(backread_minimum, ceil(rate x n))),
the rate `backread_rate`, or `backread_watch_rate` when their status on some item is not
qualified (engine.actions.rater_status). Of the k, ceil(backread_random_share x k) are a simple random
sample of all n (seeded by the run's seed and the rater's name, so a run gives the same sample
and another rater's reads do not change it): the supervisor's agreement with those reads is an
unbiased estimate of the rater's agreement over the period (`agreement_estimate`). The rest are
the riskiest of the remaining reads: first those that fit the rater's own figures (a lenient
rater's scores above the run's best score for the answer, a harsh rater's below, a drifting
rater's late scores in the drift's direction, scores of a listed bias cell in its direction),
then by risk (engine.actions.ledger: the read's percentile of the probability it is wrong).
Supervisors (`backread_supervisors`) are given the backreads in turn, never their own reads.

A plain `parm audit` has no "today": its period is the whole file (the time column may be an
order or a time of day, not a date); the live session passes the day's reads as `period`.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from engine.actions.ledger import BACKREAD, FILE_READ, RESOLUTION, Ledger
from engine.actions.rater_status import worst
from engine.actions.rules import QUALIFIED, ActionRules
from engine.audit.resample import wilson_interval

RANDOM, RISK = "random", "risk"


@dataclass(frozen=True)
class Backread:
    """One read to read again: who backreads it ("" when no supervisors are named), the rater,
    the answer (item, id, data row), the rater's score (label), why it was chosen, and the
    sample it belongs to (RANDOM or RISK); read: its index in the ledger."""

    reviewer: str
    rater: str
    item: str
    id: str
    row: int
    score: str
    why: str
    sample: str
    read: int


def candidates(ledger: Ledger, period: np.ndarray | None = None) -> np.ndarray:
    """(R,) bool: the reads a backread may be drawn from (module docstring)."""
    done = np.zeros(ledger.n_answers, dtype=bool)
    done[ledger.unit[ledger.kind == BACKREAD]] = True
    own = np.isin(ledger.kind, (FILE_READ, RESOLUTION)) & (ledger.rater >= 0)
    keep = own & (ledger.expert < 0) & ~done[ledger.unit]
    return keep if period is None else keep & np.asarray(period, dtype=bool)


def sample_sizes(n: int, rate: float, rules: ActionRules) -> tuple[int, int]:
    """(backreads, of them random) of a rater with n reads at `rate`."""
    total = min(n, max(rules.backread_minimum, math.ceil(rate * n - 1e-9)))
    return total, min(total, math.ceil(rules.backread_random_share * total - 1e-9))


def rater_stream(seed: int, rater: str) -> np.random.Generator:
    """The random stream of one rater's sample: the run's seed and the rater's name."""
    return np.random.default_rng([seed, zlib.crc32(rater.encode("utf-8"))])


def backreads(ledger: Ledger, rules: ActionRules, statuses, period=None) -> list[Backread]:
    """Today's backreads (module docstring), by rater name; each rater's risk picks first
    (riskiest first), then the random ones in file order."""
    pool = candidates(ledger, period)
    chosen: list[tuple[int, str, str]] = []
    for r, rater in enumerate(ledger.raters):
        mine = np.flatnonzero(pool & (ledger.rater == r))
        if not mine.size:
            continue
        status = worst(statuses, rater)
        raised = status is not None and status.status != QUALIFIED
        rate = rules.backread_watch_rate if raised else rules.backread_rate
        total, drawn = sample_sizes(mine.size, rate, rules)
        mine = mine[np.lexsort((ledger.order[mine], ledger.answer[mine], ledger.item[mine]))]
        random = np.sort(rater_stream(ledger.seed, rater).choice(mine.size, drawn, replace=False))
        rest = np.delete(mine, random)
        fits, fit_words = pattern(ledger, r, rest)
        key = np.lexsort((ledger.answer[rest], ledger.item[rest], -ledger.risk[rest], ~fits))
        raised_words = (
            f"; {status.status} on item {status.item!r}: {rate:.0%}"
            if raised and status is not None
            else ""
        )
        for i in key[: total - drawn]:
            why = _risk_words(ledger, int(rest[i])) + (fit_words if fits[i] else "")
            chosen.append((int(rest[i]), RISK, why + raised_words))
        for i in mine[random]:
            chosen.append((int(i), RANDOM, "random: an unbiased sample of the rater's reads"))
    return _with_reviewers(ledger, chosen, rules.backread_supervisors)


def pattern(ledger: Ledger, r: int, reads: np.ndarray) -> tuple[np.ndarray, str]:
    """(which of `reads` fit the rater's own figures, the words for them): module docstring."""
    name = ledger.raters[r]
    verdicts = {v.name for v in ledger.verdicts.get(name, ())}
    direction = ledger.direction[reads]
    fits, words = np.zeros(reads.size, dtype=bool), []
    for verdict, way in (("lenient", 1), ("harsh", -1)):
        if verdict in verdicts:
            fits |= direction == way
            words.append(f"{verdict}: scored {'above' if way > 0 else 'below'} the best score")
    if "drifting" in verdicts and name in ledger.drift:
        late = ledger.order[reads] >= np.median(ledger.order[ledger.rater == r])
        fits |= late & (direction == ledger.drift[name])
        words.append("drifting: a late score in the drift's direction")
    for (rater, item), bias in ledger.bias.items():
        k = [f.name for f in ledger.items].index(item) if rater == name else -1
        if k >= 0:
            fits |= (ledger.item[reads] == k) & (direction == np.sign(bias))
            words.append(f"bias cell on item {item!r}")
    return fits, ("; " + "; ".join(words)) if words else ""


# What a read's risk is ranked among (engine.actions.ledger: CONSENSUS, SEVERITY, READ_ONCE).
_AMONG = {
    "consensus": "the reads of answers read twice or more (the consensus's p of a wrong score)",
    "severity": "the answers read once (their severity)",
    "read once": "the answers read once (the rater's error model and the item's base rates)",
}


def _risk_words(ledger: Ledger, i: int) -> str:
    return f"risk: riskier than {ledger.risk[i]:.0%} of {_AMONG[ledger.evidence[i]]}"


def _with_reviewers(ledger: Ledger, chosen, supervisors: tuple[str, ...]) -> list[Backread]:
    """The chosen reads as Backreads, the supervisors given them in turn (never their own)."""
    found, turn = [], 0
    for i, sample, why in chosen:
        rater = ledger.raters[int(ledger.rater[i])]
        reviewer = ""
        for step in range(len(supervisors)):
            if supervisors[(turn + step) % len(supervisors)] != rater:
                reviewer = supervisors[(turn + step) % len(supervisors)]
                turn += step + 1
                break
        facts = ledger.items[int(ledger.item[i])]
        answer = int(ledger.answer[i])
        found.append(Backread(reviewer, rater, facts.name, facts.ids[answer],
                              int(facts.rows[answer]), facts.labels[int(ledger.score[i])], why,
                              sample, i))  # fmt: skip
    return found


def agreement_estimate(agreed) -> tuple[float, float, float]:
    """(share, low, high): the rater's agreement with the supervisor over the random backreads
    read (agreed: one bool each), with its 95% Wilson interval; NaN for none."""
    agreed = np.asarray(agreed, dtype=bool)
    interval = wilson_interval(float(agreed.sum()), float(agreed.size))
    return interval.estimate, interval.low, interval.high
