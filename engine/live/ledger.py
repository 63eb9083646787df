"""A live session's reads as the lead's lists read them (engine.actions.ledger.Ledger), built from
the reads alone: the monitor runs no audit, so there is no text model and no severity.

What the run knows of each read comes from the consensus of the reads (engine.audit.reads.consensus
with no text evidence: a Dawid-Skene model whose raters' error model is shared by every item of
the session). A read of an answer read twice or more is wrong with the probability the consensus
gives its score against (1 - p); a read of an answer read once is wrong with the probability the
same model gives its score against when that read is the only evidence (the item's base rates
and the rater's error model: a rare score from an unreliable rater is the riskier). The two are
ranked apart, as the audit's consensus and severity are. The raters' reliability is the
consensus's accuracy; parm's verdicts are the co-raters' (engine.live.alerts.verdicts).

Kinds: first, second and validity reads are the raters' work (the ledger's file reads);
backreads and resolutions stay what they are; a read of an answer by the rater a third read of it
was assigned to on an earlier morning is that third read: its resolution.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from engine.actions.ledger import (
    BACKREAD,
    CONSENSUS,
    FILE_READ,
    READ_ONCE,
    RESOLUTION,
    ItemFacts,
    Ledger,
    risk_percentiles,
)
from engine.audit.reads.consensus import consensus
from engine.audit.reads.consensus_fit import fit_posterior, read_terms
from engine.audit.reads.consensus_layout import layout
from engine.audit.reads.item_reads import ItemReads
from engine.live.intake import reading
from engine.live.intake.session_reads import SessionReads


def live_ledger(reads: SessionReads, verdicts: Mapping, assigned: Mapping, seed: int,
                drift: Mapping | None = None) -> Ledger:  # fmt: skip
    """The ledger of the session's reads on their scales (off-scale reads left out). verdicts:
    {rater: parm's verdicts (engine.audit.raters.verdicts)}; assigned: {(item, answer id): the
    rater an earlier morning assigned its third read to}; seed: the run's; drift: {rater: +1 or
    -1}, the sign of a drift alerted this morning."""
    keep = np.flatnonzero(reads.score >= 0)
    offsets = np.searchsorted(reads.answer_item, np.arange(len(reads.items) + 1))
    item, unit = reads.item[keep], reads.answer[keep]
    answer = unit - offsets[item]
    kind = _kinds(reads, keep, assigned)
    n_answers = int(offsets[-1])
    found = _consensus(reads, keep, offsets)
    wrong, evidence, direction, by_answer = _risk(reads, keep, offsets, found, n_answers)
    return Ledger(
        items=tuple(_facts(reads, k, offsets) for k in range(len(reads.items))),
        raters=tuple(reads.raters),
        item=item.astype(np.int64),
        answer=answer.astype(np.int64),
        rater=reads.rater[keep].astype(np.int64),
        score=reads.score[keep].astype(np.int64),
        order=_order(reads, keep),
        kind=kind,
        expert=reads.expert[unit].astype(np.int64),
        wrong=wrong,
        evidence=evidence,
        risk=risk_percentiles(wrong, evidence),
        direction=direction,
        offsets=offsets.astype(np.int64),
        **by_answer,
        reliability=found.raters.accuracy if found is not None else _nan(len(reads.raters)),
        reliability_high=found.raters.high if found is not None else _nan(len(reads.raters)),
        verdicts=dict(verdicts),
        drift=dict(drift or {}),
        seed=int(seed),
    )  # fmt: skip


def _nan(size: int) -> np.ndarray:
    return np.full(size, np.nan)


def _facts(reads: SessionReads, k: int, offsets: np.ndarray) -> ItemFacts:
    scale = reads.scales[k]
    ids = reads.answer_id[offsets[k] : offsets[k + 1]]
    return ItemFacts(reads.items[k], tuple(scale.labels), bool(scale.ordered), tuple(ids),
                     np.arange(len(ids), dtype=np.int64))  # fmt: skip


def _kinds(reads: SessionReads, keep: np.ndarray, assigned: Mapping) -> np.ndarray:
    """Each kept read's kind in the ledger's words (module docstring)."""
    kind = np.full(keep.size, FILE_READ, dtype=object)
    kind[reads.kind[keep] == reading.BACKREAD] = BACKREAD
    kind[reads.kind[keep] == reading.RESOLUTION] = RESOLUTION
    if assigned:
        for j, i in enumerate(keep.tolist()):
            key = (reads.items[reads.item[i]], reads.answer_id[reads.answer[i]])
            if assigned.get(key) == reads.raters[reads.rater[i]] and kind[j] == FILE_READ:
                kind[j] = RESOLUTION
    return kind


def _order(reads: SessionReads, keep: np.ndarray) -> np.ndarray:
    """When each read was given, as a rank: by day, time of day (none first), then as kept."""
    time = np.nan_to_num(reads.time[keep], nan=-np.inf)
    days = np.unique(reads.day[keep].astype(str), return_inverse=True)[1]
    ranked = np.lexsort((np.arange(keep.size), time, days))
    order = np.empty(keep.size)
    order[ranked] = np.arange(keep.size, dtype=float)
    return order


def _item_reads(reads: SessionReads, keep: np.ndarray, offsets: np.ndarray) -> list[ItemReads]:
    """Each item's reads for the consensus: a rater's latest read of an answer (a live session
    may hold a rater's earlier read of it too; the consensus counts one read per rater)."""
    latest = _latest(reads, keep)
    found = []
    for k, scale in enumerate(reads.scales):
        mine = latest[reads.item[latest] == k]
        found.append(ItemReads(reads.answer[mine] - offsets[k], reads.rater[mine],
                               reads.score[mine], int(offsets[k + 1] - offsets[k]),
                               len(scale.labels), bool(scale.ordered),
                               np.asarray(scale.points, dtype=float), reads.items[k]))  # fmt: skip
    return found


def _latest(reads: SessionReads, keep: np.ndarray) -> np.ndarray:
    """The kept reads that are their rater's latest of their answer (reads are sorted by
    answer, then time)."""
    key = reads.answer[keep] * max(len(reads.raters), 1) + reads.rater[keep]
    last = np.unique(key[::-1], return_index=True)[1]
    return np.sort(keep[keep.size - 1 - last])


def _consensus(reads: SessionReads, keep: np.ndarray, offsets: np.ndarray):
    """The session's consensus from its reads alone; None without a read."""
    if keep.size == 0 or not reads.raters:
        return None
    return consensus(_item_reads(reads, keep, offsets), None, len(reads.raters))


def _risk(reads: SessionReads, keep, offsets, found, n_answers: int):
    """(wrong, evidence, direction) of each kept read and the per-answer consensus_p and unsure."""
    size = keep.size
    wrong, direction = np.full(size, np.nan), np.zeros(size, dtype=np.int64)
    evidence = np.full(size, READ_ONCE, dtype=object)
    if found is None:
        return wrong, evidence, direction, {"consensus_p": _nan(n_answers),
                                            "unsure": np.zeros(n_answers, dtype=bool)}  # fmt: skip
    items = _item_reads(reads, keep, offsets)
    plan = layout(items, [None] * len(items))
    alone = fit_posterior(plan, found.model, read_terms(plan, found.model.rater))
    proba = np.zeros((n_answers, plan.width))
    best = np.full(n_answers, -1)
    for k, item in enumerate(found.items):
        proba[offsets[k] : offsets[k + 1], : item.proba.shape[1]] = item.proba
        best[offsets[k] : offsets[k + 1]] = item.consensus
    unit, score = reads.answer[keep], reads.score[keep]
    count = np.bincount(unit, minlength=n_answers)
    many = count[unit] >= 2
    wrong = np.where(many, 1.0 - proba[unit, score], 1.0 - alone[unit, score])
    evidence[many] = CONSENSUS
    ordered = np.array([s.ordered for s in reads.scales], dtype=bool)[reads.item[keep]]
    direction = np.where(many & ordered, np.sign(score - best[unit]), 0).astype(np.int64)
    return (
        wrong,
        evidence,
        direction,
        {
            "consensus_p": np.concatenate([i.consensus_p for i in found.items]),
            "unsure": np.concatenate([i.third_read_rank > 0 for i in found.items]),
        },
    )
