"""Each rater's verdict from their co-raters' reads, as each run sees it, so a verdict that
changed between two runs is an alert.

The monitor runs no audit (no embedding, no model): its verdicts come from the double reads,
with the rules and thresholds of parm's rater table (engine.audit.raters.verdicts). Leniency is
the paired leniency of engine.audit.raters.pairs (least squares over every double read, points,
clustered standard errors) against the reference raters that function's `robust_members`
chooses, its size over one read's spread (the paired differences' standard deviation over
sqrt 2); noise is the rater's share of double reads that disagree against the reference raters'
pooled share (the rule parm's table applies to unordered labels), its z on the log scale from
the binomial standard error. A rater with fewer than `monitor_min_reads` double reads gets no
verdict.
"""

from __future__ import annotations

import numpy as np

from engine.audit.raters.pairs import CoReads, paired_leniency, robust_members, usable
from engine.audit.raters.verdicts import FINE, Verdict, verdict_words, verdicts
from engine.live.alerts.figures import Pairs
from engine.live.intake.session_reads import SessionReads


def rater_verdicts(reads: SessionReads, pairs: Pairs, least: int) -> dict[str, dict]:
    """{rater: {verdict, because, leniency, leniency_z, noise, noise_z, pairs, said}} for every rater
    with at least `least` double reads."""
    names = np.array(reads.raters, dtype=object)
    if len(pairs) == 0:
        return {}
    a, b = pairs.first, pairs.second
    co = CoReads(names[reads.rater[a]], names[reads.rater[b]], reads.points[a] - reads.points[b],
                 reads.answer[a].astype(np.int64))  # fmt: skip
    c, se, n = paired_leniency(co, names)
    found = np.flatnonzero(usable(se) & np.isfinite(c))
    if found.size < 2:
        return {}
    reference = robust_members(c, se, found)
    leniency = c - float(np.mean(c[reference]))
    # The unit of a leniency's size: one read's share of the paired differences' spread.
    sd = float(np.std(reads.points[a] - reads.points[b]) / np.sqrt(2))
    differ = reads.score[a] != reads.score[b]
    miss = np.array([np.sum(differ[(reads.rater[a] == r) | (reads.rater[b] == r)])
                     for r in range(names.size)], dtype=float)  # fmt: skip
    base = float(miss[reference].sum() / max(n[reference].sum(), 1))
    out = {}
    for r in found:
        if n[r] < least:
            continue
        relative = _relative(leniency[r], se[r], miss[r], n[r], base, sd)
        said = verdicts(relative)
        out[str(names[r])] = {
            "verdict": verdict_words(said),
            "because": "; ".join(v.because for v in said),
            "leniency": float(leniency[r]),
            "leniency_z": relative["leniency_z"],
            "noise": relative["noise"],
            "noise_z": relative["noise_z"],
            "pairs": int(n[r]),
            "said": [[v.name, v.because, float(v.strength)] for v in said],
        }
    return out


def verdicts_of(figures: dict) -> tuple[Verdict, ...]:
    """The verdicts of one rater's figures (rater_verdicts), strongest first: what the lead's
    lists read (engine.live.ledger)."""
    return tuple(Verdict(name, because, strength) for name, because, strength in
                 figures.get("said", ()))  # fmt: skip


def _relative(leniency: float, se: float, miss: float, n: int, base: float, sd: float) -> dict:
    share = miss / n if n else np.nan
    ratio = share / base if base > 0 else np.nan
    spread = np.sqrt((1 - share) / miss) if 0 < miss < n else np.nan
    z = np.log(ratio) / spread if np.isfinite(ratio) and ratio > 0 and np.isfinite(spread) else None
    return {
        "leniency": float(leniency),
        "leniency_z": float(leniency / se),
        "leniency_size": float(leniency / sd) if sd > 0 else None,
        "noise": None if z is None else float(ratio),
        "noise_z": None if z is None else float(z),
        "noise_own": share,
        "noise_reference": base,
        "ordered": False,
    }


def verdict_changes(now: dict, before: dict) -> list[tuple[str, str, str, dict]]:
    """(rater, verdict before, now, figures) of each rater judged in both runs whose verdict
    changed."""
    out = []
    for rater, figures in sorted(now.items()):
        earlier = before.get(rater, {}).get("verdict")
        if earlier is not None and earlier != figures["verdict"]:
            out.append((rater, earlier, figures["verdict"], figures))
    return out


__all__ = ["FINE", "rater_verdicts", "verdict_changes", "verdicts_of"]
