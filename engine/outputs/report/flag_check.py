"""Whether parm's flags pick out the scores raters dispute: on the answers read twice or more,
the share of flagged scores that another read disputes against the share of the other scores,
judged against the one-sided 95% margin of their difference (engine.results.compare, MARGIN).
It answers "how sure is parm" on the file itself, where a lead can see it.

The flags checked are those the severity alone sets (each item's top of the severity order, as
many as the item's estimated wrong scores): the review queue puts answers whose reads all agree
last, so its own flags on a file read twice are the disputed answers by construction, and a
check of them against the same reads would be circular. The severity never saw an answer's own
reads (engine.audit.queue.read_severity leaves them out), so this check is out of sample.
"""

from __future__ import annotations

import math

import numpy as np

from engine.audit.queue.flagging import flagged
from engine.audit.queue.severity import queue_order
from engine.results.compare import MARGIN, Comparison, Limit, compare
from engine.results.session import SessionResult

# Fewer answers than this on either side and the check is not made (the same floor as a pair of
# raters' agreement, engine.audit.reads.agreement.TOO_FEW).
CHECKED = 20


def disputed(session: SessionResult) -> tuple[np.ndarray, np.ndarray] | None:
    """(flagged, disputed) over the answers read twice or more, in the session's order of
    items and answers: whether parm flagged the audited score, and whether another read of
    the answer gave another score. None where no answer is read twice."""
    if session.reads is None:
        return None
    flags, disputes = [], []
    for result, reads in zip(session.results, session.reads.items):
        scores = np.asarray(result.responses.scores)
        count = np.bincount(reads.answer, minlength=reads.n_answers)
        other = np.zeros(reads.n_answers, dtype=bool)
        np.logical_or.at(other, reads.answer, reads.score != scores[reads.answer])
        twice = count >= 2
        flags.append(severity_flags(result)[twice])
        disputes.append(other[twice])
    return np.concatenate(flags), np.concatenate(disputes)


def severity_flags(result) -> np.ndarray:
    """(N,) the item's flags as its severity alone would set them: the top of the severity
    order (not the queue's, which puts agreeing reads last), as many as the item's flags."""
    order = queue_order(result.severity)
    return flagged(order, result.severity, result.wrong_estimate, result.config.flag_precision)


def flags_check(session: SessionResult) -> Comparison | None:
    """The share of flagged scores another read disputes against the share of the others,
    under the 95% margin of their difference (`share_margin`); None where either side has
    fewer than CHECKED answers read twice."""
    found = disputed(session)
    if found is None:
        return None
    flags, disputes = found
    n1, n2 = int(flags.sum()), int((~flags).sum())
    if min(n1, n2) < CHECKED:
        return None
    p1, p2, margin = share_margin(flags, disputes)
    limit = Limit(
        round(100 * margin, 1), MARGIN, "its 95% margin",
        beyond="on this file the flags do not pick out the scores raters dispute",
        inside="the flags pick out the scores raters dispute",
    )  # fmt: skip
    return compare(
        f"the share another read disputes among the {n1:,} scores read twice that parm's "
        "severity alone flags (their own reads unseen)", p1,
        f"that among the {n2:,} others,", p2, limit, digits=1, percent=True,
    )  # fmt: skip


def share_margin(flags: np.ndarray, disputes: np.ndarray) -> tuple[float, float, float]:
    """(p1, p2, margin): the share of `disputes` among the flagged and among the others, and
    the one-sided 95% margin of p1 - p2 (1.645 Wald standard errors: p1 exceeds p2 by more
    than it with probability 5% where the two shares are the same)."""
    first, rest = disputes[flags], disputes[~flags]
    p1, p2 = float(first.mean()), float(rest.mean())
    margin = 1.645 * math.sqrt(p1 * (1 - p1) / first.size + p2 * (1 - p2) / rest.size)
    return p1, p2, margin
