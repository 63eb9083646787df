"""One review queue over every audited item of a session: the items' responses side by side,
their scores on one pooled scale, so the review lists them all by severity (which is a
probability, comparable across items) and can filter by item or rater.

A `ReviewSet` offers what the review reads from an `AuditResult` (responses, predicted,
severity, flagged, probabilities, evidence, second rater, run id, review order), with positions
running over all items; `locate` gives back the item's own result and position. A file of one
item gives a set equal to its result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.audit.evidence import Neighbour
from engine.audit.scale import pooled_labels, recode
from engine.audit.severity import flags, queue_order
from engine.input.responses import Responses


@dataclass(frozen=True)
class PooledFit:
    """The probabilities of every response on the pooled scale (0 for a score that is not on
    its item's scale): (N, C) where C is the number of pooled labels."""

    proba: np.ndarray


@dataclass
class ReviewSet:
    """Every item's responses for review. Arrays are (N,) over all items, in item order.

    results: the items' AuditResults; starts: (K + 1,) where each item's positions start;
    items: the item of every response (None entries for a file without items);
    on_scale: (N, C) whether each pooled label is on the response's item's scale.
    """

    results: list
    config: object
    responses: Responses
    items: list
    predicted: np.ndarray
    severity: np.ndarray
    fitted: PooledFit
    evidence: list[list[Neighbour]]
    raters_disagree: np.ndarray | None
    on_scale: np.ndarray
    starts: np.ndarray
    run_id: str

    @property
    def flagged(self) -> np.ndarray:
        return flags(self.predicted, self.responses.scores)

    def review_order(self) -> np.ndarray:
        """The queue over all items by severity (1 - p(human score), comparable across items)."""
        return queue_order(self.severity)

    def locate(self, i: int) -> tuple[object, int]:
        """The item's AuditResult holding position i, and i's position in it."""
        k = int(np.searchsorted(self.starts, i, side="right") - 1)
        return self.results[k], int(i - self.starts[k])

    def labels_of(self, i: int) -> tuple[str, ...]:
        """The labels on the scale of response i's item, in order."""
        return tuple(np.asarray(self.responses.labels)[self.on_scale[i]])

    @property
    def by_item(self) -> bool:
        return self.items[0] is not None if self.items else False


def pool_responses(
    parts: list[Responses], order: tuple[str, ...] | None = None
) -> tuple[Responses, list[np.ndarray], np.ndarray]:
    """Several items' responses as one: scores on the pooled scale; also each item's codes on
    it and (N, C) which pooled labels are on each response's item's scale."""
    pooled = pooled_labels([p.labels for p in parts], order)
    codes = [recode(p.labels, pooled) for p in parts]
    on_scale = np.zeros((sum(len(p) for p in parts), len(pooled)), dtype=bool)
    start = 0
    for p, code in zip(parts, codes):
        on_scale[start : start + len(p), code] = True
        start += len(p)
    first = parts[0]
    second = None
    if first.second_scores is not None:
        second = np.concatenate(
            [np.where(p.second_scores >= 0, c[np.maximum(p.second_scores, 0)], -1)
             for p, c in zip(parts, codes)]
        )  # fmt: skip
    responses = Responses(
        texts=[text for p in parts for text in p.texts],
        scores=np.concatenate([c[p.scores] for p, c in zip(parts, codes)]),
        labels=pooled,
        ids=[i for p in parts for i in p.ids],
        rows=np.concatenate([p.rows for p in parts]),
        second_scores=second,
        source=first.source,
        file_rows=first.file_rows,
        item=first.item if len(parts) == 1 else None,
        ordered=all(p.ordered for p in parts),
        raters=None if first.raters is None else tuple(r for p in parts for r in p.raters),
        second_raters=(
            None
            if first.second_raters is None
            else tuple(r for p in parts for r in p.second_raters)
        ),  # fmt: skip
    )
    return responses, codes, on_scale


def review_set(results: list, config) -> ReviewSet:
    """The review queue over the items' results (in their order)."""
    responses, codes, on_scale = pool_responses(
        [result.responses for result in results], config.score_order
    )
    starts = np.concatenate([[0], np.cumsum([len(r.responses) for r in results])]).astype(int)
    proba = np.zeros(on_scale.shape)
    for k, (result, code) in enumerate(zip(results, codes)):
        proba[starts[k] : starts[k + 1], code] = result.fitted.proba
    evidence = [
        [Neighbour(nb.index + int(starts[k]), nb.weight, nb.similarity) for nb in neighbours]
        for k, result in enumerate(results)
        for neighbours in result.evidence
    ]
    disagree = [result.raters_disagree for result in results]
    return ReviewSet(
        results=results,
        config=config,
        responses=responses,
        items=[result.responses.item for result in results for _ in range(len(result.responses))],
        predicted=np.concatenate([c[r.predicted] for r, c in zip(results, codes)]),
        severity=np.concatenate([np.asarray(r.severity, dtype=float) for r in results]),
        fitted=PooledFit(proba),
        evidence=evidence,
        raters_disagree=None if any(d is None for d in disagree) else np.concatenate(disagree),
        on_scale=on_scale,
        starts=starts,
        run_id=results[0].run_id,
    )
