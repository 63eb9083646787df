"""`ReviewSet`: one review queue over every audited item of a session. The items' responses
side by side, their scores on one pooled scale, so the review lists them all by severity (which
is a probability, comparable across items) and can filter by item or rater.

Positions run over all items; `locate` gives back the item's own result and position. A file
of one item is a set of one item, built the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.audit.queue.evidence import Neighbour
from engine.audit.queue.severity import queue_order
from engine.audit.raters.every_read import every_read
from engine.input.responses import Responses
from engine.input.scale import pool_responses
from engine.input.settings.config import settings_digest
from engine.results.decision import RunContext
from engine.results.item import AuditResult
from engine.results.queue_notes import evidence_score, lone_scores, queue_notes

if TYPE_CHECKING:
    from engine.audit.reads.reads_audit import ReadsAudit


@dataclass
class ReviewSet:
    """Every item's responses for review. Arrays are (N,) over all items, in item order.

    results: the items' AuditResults; responses: theirs pooled on one scale (scores and
    `predicted` are codes of its labels); items: the item of every response (None entries for
    a file without items); proba: (N, C) PARM's probabilities on the pooled scale (0 for a label
    that is not on the response's item's scale); on_scale: (N, C) whether each pooled label is
    on the response's item's scale; starts: (K + 1,) where each item's positions start.
    """

    results: list[AuditResult]
    responses: Responses
    items: list[str | None]
    predicted: np.ndarray
    severity: np.ndarray
    proba: np.ndarray
    evidence: list[list[Neighbour]]
    raters_disagree: np.ndarray | None
    on_scale: np.ndarray
    starts: np.ndarray
    run_id: str
    # Answers read twice or more (engine.audit.reads.reads_audit): the consensus on the pooled scale
    # (-1: read once), its probability (NaN there) and the third-read rank (1 = read first, 0:
    # none needed); None where no answer is read twice.
    consensus: np.ndarray | None = None
    consensus_p: np.ndarray | None = None
    third_read_rank: np.ndarray | None = None
    # The session's reads (engine.audit.reads.reads_audit.ReadsAudit; None: every answer read once),
    # with any read typed in the review (engine.results.added_reads), and each item's codes on
    # the pooled scale.
    reads: ReadsAudit | None = None
    codes: tuple[np.ndarray, ...] = ()

    @property
    def flagged(self) -> np.ndarray:
        """(N,) each item's likely wrong scores (engine.results.item.AuditResult.flagged)."""
        return np.concatenate([result.flagged for result in self.results])

    @property
    def by_item(self) -> bool:
        return self.items[0] is not None if self.items else False

    def review_order(self) -> np.ndarray:
        """The queue over all items by severity (1 - p(human score), comparable across items),
        answers whose reads all agree last (engine.audit.queue.severity.queue_order)."""
        confirmed = np.concatenate([result.confirmed for result in self.results])
        return queue_order(self.severity, confirmed)

    def locate(self, i: int) -> tuple[AuditResult, int]:
        """The item's AuditResult holding position i, and i's position in it."""
        k = int(np.searchsorted(self.starts, i, side="right") - 1)
        return self.results[k], int(i - self.starts[k])

    def notes(self, i: int) -> list[tuple[str, str]]:
        """(kind, sentence): why response i's place in the queue may mislead
        (engine.results.queue_notes), in its item's own codes and labels."""
        result, j = self.locate(i)
        responses = result.responses
        scores = np.asarray(responses.scores)
        lone = lone_scores(scores, np.array([0, scores.shape[0]]))[j]
        reads = responses.reads
        mine = None if reads is None else reads.score[reads.answer == j]
        return queue_notes(
            int(scores[j]),
            int(result.predicted[j]),
            bool(lone),
            evidence_score(result.evidence[j], scores),
            mine,
            tuple(responses.labels),
            bool(result.flagged[j]),
        )

    def read_by(self, rater: str) -> np.ndarray:
        """(N,) the code on the pooled scale of the rater's read of each answer (the audited one
        or another: every read is its rater's score, as raters.csv counts them), -1 where the
        rater did not read it."""
        found = np.full(len(self.responses), -1, dtype=np.int64)
        for k, result in enumerate(self.results):
            reads = every_read(result.responses)
            mine = reads.rater == rater
            found[self.starts[k] + reads.answer[mine]] = self.codes[k][reads.code[mine]]
        return found

    def rater_names(self) -> list[str]:
        """Everyone who gave a read in the file, sorted (the rater filter's choices)."""
        names = {name for result in self.results for name in every_read(result.responses).rater}
        return sorted(names - {""})

    def raters_of(self, i: int) -> tuple[str, ...]:
        """Who read response i's answer (the file's reads, then those typed in the review)."""
        if self.reads is None:
            return ()
        k = int(np.searchsorted(self.starts, i, side="right") - 1)
        item = self.reads.items[k]
        mine = item.rater[item.answer == i - self.starts[k]]
        return tuple(self.reads.raters[r] for r in mine)

    def added_reads(self, i: int) -> list[tuple[str, str]]:
        """(rater, label) of each read of response i's answer typed in the review."""
        if self.reads is None or not self.reads.added:
            return []
        k = int(np.searchsorted(self.starts, i, side="right") - 1)
        item, added = self.reads.items[k], self.reads.added[k]
        labels = self.results[k].responses.labels
        mine = np.flatnonzero(added & (item.answer == i - self.starts[k]))
        return [(self.reads.raters[item.rater[r]], labels[item.score[r]]) for r in mine]

    def labels_of(self, i: int) -> tuple[str, ...]:
        """The labels on the scale of response i's item, in order."""
        return tuple(np.asarray(self.responses.labels)[self.on_scale[i]])

    def run_context(self, i: int) -> RunContext:
        """What a decision on response i is made on: the run, the settings its item ran with
        (K values too large for a small item left out, as the saved session records them), and
        the model's predicted score and severity for it."""
        item, _ = self.locate(i)
        return RunContext(
            self.run_id,
            settings_digest(item.config),
            self.responses.labels[int(self.predicted[i])],
            float(self.severity[i]),
        )


def review_set(
    results: list[AuditResult],
    order: tuple[str, ...] | None = None,
    reads: ReadsAudit | None = None,
) -> ReviewSet:
    """The review queue over the items' results (in their order); `order` is the stated
    score_order, so items that use only some of its labels pool in its order; reads: the
    session's engine.audit.reads.reads_audit.ReadsAudit (None: every answer read once)."""
    responses, codes, on_scale = pool_responses([result.responses for result in results], order)
    starts = np.concatenate([[0], np.cumsum([len(r.responses) for r in results])]).astype(int)
    proba = np.zeros(on_scale.shape)
    for k, (result, code) in enumerate(zip(results, codes)):
        proba[starts[k] : starts[k + 1], code] = result.fitted.proba
    # Positions over the pooled responses: the first item's are its own (its lists are kept,
    # not copied: a Neighbour cannot change).
    evidence = [
        neighbours if not starts[k] else
        [Neighbour(nb.index + int(starts[k]), nb.weight, nb.similarity) for nb in neighbours]
        for k, result in enumerate(results)
        for neighbours in result.evidence
    ]  # fmt: skip
    disagree = [result.raters_disagree for result in results]
    known = [d for d in disagree if d is not None]
    return ReviewSet(
        results=results,
        responses=responses,
        items=[result.responses.item for result in results for _ in range(len(result.responses))],
        predicted=np.concatenate([c[r.predicted] for r, c in zip(results, codes)]),
        severity=np.concatenate([np.asarray(r.severity, dtype=float) for r in results]),
        proba=proba,
        evidence=evidence,
        raters_disagree=None if len(known) < len(disagree) else np.concatenate(known),
        on_scale=on_scale,
        starts=starts,
        run_id=results[0].run_id,
        reads=reads,
        codes=tuple(codes),
        **consensus_arrays(reads, codes),
    )


def consensus_arrays(reads, codes) -> dict:
    """The review's consensus arrays over every item, the consensus on the pooled scale."""
    if reads is None:
        return {}
    items = reads.consensus.items
    pooled = [np.where(item.consensus >= 0, code[np.maximum(item.consensus, 0)], -1)
              for item, code in zip(items, codes)]  # fmt: skip
    return {
        "consensus": np.concatenate(pooled),
        "consensus_p": np.concatenate([item.consensus_p for item in items]),
        "third_read_rank": np.concatenate([item.third_read_rank for item in items]),
    }
