"""What a session whose answers are read more than once adds to a run: the agreement of every
rater pair and Krippendorff's alpha (per item and over the session), PRMSE of the model's
cross-fitted scores where some answers have two reads, the consensus of every answer read twice or more with the
third-read ranks, and each rater's reliability.

Computed once per run from the items' reads, the model's predicted scores and each item's text
evidence (kept with the item's result, so a restored session recomputes the same figures: every
step is seeded). None for a session where no answer is read twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.audit.reads.agreement import Agreement, agreement
from engine.audit.reads.consensus import SessionConsensus, consensus
from engine.audit.reads.consensus_layout import TextEvidence
from engine.audit.reads.item_reads import ItemReads
from engine.audit.reads.prmse import TrueScoreFit, session_true_score
from engine.audit.reads.session_reads import item_reads, session_raters, several_reads
from engine.input.responses import Responses

# Bootstrap draws behind the agreement's and PRMSE's intervals (engine.audit.reads.agreement).
SAMPLES = 200


@dataclass(frozen=True)
class ReadsAudit:
    """raters: the session's rater names (ItemReads.rater indexes them); items: every audited
    item's reads, in the session's item order; agreement: the pairs and alpha per item, then
    the session's (item "all"); prmse: each item's fit of the model's cross-fitted scores and
    the session's, each with the reason where it is not estimable; consensus: the consensus, third-read ranks and the raters' reliability; added: per
    item, (R,) bool, the reads typed in the review (engine.results.added_reads), () when none
    were added (raters then names their new raters after the file's); run: the run's own figures
    the added reads were joined to (None: these are the run's)."""

    raters: tuple[str, ...]
    items: tuple[ItemReads, ...]
    agreement: Agreement
    prmse: tuple[TrueScoreFit, ...]
    session_prmse: TrueScoreFit
    consensus: SessionConsensus
    added: tuple[np.ndarray, ...] = ()
    run: ReadsAudit | None = None

    @property
    def reads(self) -> int:
        return sum(int(item.answer.size) for item in self.items)

    @property
    def answers_read_twice(self) -> int:
        """Answers with two reads or more (those with a consensus)."""
        return sum(int(np.sum(item.reads_per_answer() >= 2)) for item in self.items)

    @property
    def third_reads(self) -> int:
        """Answers whose consensus is unsure: ranked for a third read."""
        return sum(int(np.sum(item.third_read_rank > 0)) for item in self.consensus.items)

    def reliability(self) -> dict[str, tuple[float, float, float]]:
        """{rater: (accuracy, low, high)} for the raters with reads."""
        found = self.consensus.raters
        return {
            name: (float(found.accuracy[r]), float(found.low[r]), float(found.high[r]))
            for r, name in enumerate(self.raters)
            if found.reads[r] > 0
        }


def audit_reads(
    items: Sequence[Responses],
    proba: Sequence[np.ndarray | None],
    evidence: Sequence[TextEvidence | None],
    seed: int = 0,
) -> ReadsAudit | None:
    """The session's figures (module docstring) over its audited items' responses, the model's
    cross-fitted probabilities (N, C+1) of each (None where the item was not cross-fitted:
    in-sample ones were fitted to the reads, so they give no PRMSE) and each item's text
    evidence (None: the reads alone). None when no answer of any item has two reads.

    PRMSE's system score is each answer's expected score in points under its held-out
    probabilities: the point prediction with the least expected squared error, which PRMSE (a
    mean square) judges; the most probable score, the system before 2026-11-29, is the one for
    exact agreement and ran far from the true scores where probabilities are spread (ASAP
    essays set 1: PRMSE -3.98 with it, -0.46 with the expected score)."""
    if not any(several_reads(responses) for responses in items):
        return None
    raters = session_raters(items)
    reads = [item_reads(responses, raters) for responses in items]
    systems = [None if p is None else np.asarray(p, dtype=np.float64) @ item.points
               for item, p in zip(reads, proba)]  # fmt: skip
    fits, pooled = session_true_score(reads, systems, SAMPLES, seed)
    return ReadsAudit(
        raters=raters,
        items=tuple(reads),
        agreement=agreement(reads, SAMPLES, seed, labels=[r.labels for r in items]),
        prmse=tuple(fits),
        session_prmse=pooled,
        consensus=consensus(reads, list(evidence), len(raters)),
    )
