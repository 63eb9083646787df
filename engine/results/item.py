"""`AuditResult`: everything one item's audit produced (engine.pipeline.run_audit makes it,
engine.saved.archive keeps and restores it)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from engine.audit.intervals import Interval
from engine.audit.queue import severity
from engine.audit.queue.duplicates import NearDuplicate
from engine.audit.queue.evidence import Neighbour
from engine.audit.queue.flagging import WrongEstimate, wrong_estimate
from engine.audit.queue.flagging import flagged as flag_mask
from engine.audit.queue.second_rater import SecondRater
from engine.audit.reads.consensus_layout import TextEvidence
from engine.embedding.vectors import EmbeddingFacts
from engine.graph.late_interaction import LateInteractionFacts
from engine.graph.neighbour_graph import NeighbourGraph
from engine.input.responses import Responses
from engine.input.settings.config import AuditConfig
from engine.model.cross_fit import CrossFit
from engine.model.metrics import confusion
from engine.model.pseudo_likelihood import FittedPARM
from engine.model.tuning import TuningResult, TuningRow


def new_run_id() -> str:
    """A run's identifier: the UTC time to the second and 6 random hex digits (sortable)."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class AuditResult:
    """Everything a run produced for one item. Arrays are (N,) in the order of `responses`.

    config: the settings the item ran with (K values not below its N left out);
    graph is None for a result restored from a saved session (engine.saved), which keeps
    what the screens and outputs read, not the neighbour lists; run_id names the run in review
    decisions and sessions.
    """

    responses: Responses
    config: AuditConfig
    mode: str
    graph: NeighbourGraph | None
    tuning: TuningResult
    predicted: np.ndarray
    severity: np.ndarray
    evidence: list[list[Neighbour]]
    timings: dict[str, float]
    embedding: EmbeddingFacts
    # How the late-interaction graph was built (None in single-vector mode).
    late_interaction: LateInteractionFacts | None = None
    warnings: list[str] = field(default_factory=list)
    # Second rater (None without a second score column); near-duplicates scored differently.
    second_rater: SecondRater | None = None
    near_duplicates: list[NearDuplicate] = field(default_factory=list)
    # Bootstrap intervals {metric: Interval} (empty when bootstrap_samples = 0) and the
    # cross-fitted agreement (None when cross_fit_folds = 0).
    intervals: dict[str, Interval] = field(default_factory=dict)
    cross_fit: CrossFit | None = None
    run_id: str = field(default_factory=new_run_id)
    # (R, C+1) each read's probabilities from models fitted without its rater's reads, one row
    # per read (engine.audit.raters.every_read.every_read), for the rater table
    # (engine.audit.raters.expectation); None without raters.
    rater_proba: np.ndarray | None = None
    # The text evidence for the consensus of answers read twice or more (engine.audit.
    # session_reads.read_evidence); None when no answer is read twice.
    read_evidence: TextEvidence | None = None

    @property
    def embedding_record(self) -> dict:
        """The embedding stage's facts as report.json and saved sessions keep them: the model,
        cache, seconds and truncated responses (and device), then for late interaction the
        candidates, MaxSim pairs and tokens."""
        record = self.embedding.record()
        if self.late_interaction is not None:
            record.update(self.late_interaction.record())
        return record

    @property
    def fitted(self) -> FittedPARM:
        return self.tuning.fitted

    @property
    def selected(self) -> TuningRow:
        return self.tuning.best

    @property
    def metrics(self) -> dict[str, float]:
        return self.tuning.best.metrics

    @property
    def raters_disagree(self) -> np.ndarray | None:
        """(N,) bool where both raters scored a response differently, or None."""
        return None if self.second_rater is None else self.second_rater.disagree

    @property
    def confusion(self) -> np.ndarray:
        """(C+1, C+1) counts: human score (rows) against predicted score (columns)."""
        return confusion(self.responses.scores, self.predicted, self.responses.n_classes)

    @property
    def model_differs(self) -> np.ndarray:
        """(N,) where the PARM fit prefers another score (what "flagged" meant before issue 44;
        the rater table still counts it)."""
        return severity.flags(self.predicted, self.responses.scores)

    @property
    def wrong_estimate(self) -> WrongEstimate:
        """How many of the item's scores are likely wrong, with a 95% interval
        (engine.audit.queue.flagging): from its answers read twice where there are any, else from
        the calibrated severities."""
        reads, n = self.responses.reads, len(self.responses)
        if reads is None:
            return wrong_estimate(self.severity)
        twice = reads.per_answer(n) >= 2
        return wrong_estimate(self.severity, twice, twice & ~self.confirmed)

    @property
    def flagged(self) -> np.ndarray:
        """(N,) the likely wrong scores: as many answers from the top of the queue as the item
        has estimated wrong scores, or the top whose mean severity reaches `flag_precision`
        (engine.audit.queue.flagging). Kept until the severity is replaced."""
        memo = self.__dict__.get("_flagged")
        if memo is not None and memo[0] is self.severity:
            return memo[1]
        mask = flag_mask(
            self.review_order(), self.severity, self.wrong_estimate, self.config.flag_precision
        )
        self.__dict__["_flagged"] = (self.severity, mask)
        return mask

    def review_order(self) -> np.ndarray:
        """The review queue: most severe first (ties in input order), answers whose reads all
        agree last (engine.audit.queue.severity.queue_order). Flagged or not does not change the
        order: the flagged answers are the top of it."""
        return severity.queue_order(self.severity, self.confirmed)

    @property
    def confirmed(self) -> np.ndarray:
        """(N,) answers read twice or more whose every read gave the audited score."""
        reads, n = self.responses.reads, len(self.responses)
        return np.zeros(n, bool) if reads is None else reads.confirmed(n)
