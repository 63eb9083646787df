"""Every read of a run as the lead's lists read it: flat arrays over the session's R reads (the
file's reads and those typed in the review, with their kind), and what the run knows of each
read and answer: the probability the read is wrong, the consensus, the raters' reliability, the
verdicts and the listed bias cells.

The risk of a read is the probability that its score is wrong from the best evidence the run has
about its answer: the consensus's posterior where the answer is read twice or more (1 - p of the
read's score: its reads, their raters' reliability and the text), else the answer's severity (its
only read is the audited one). The two are not on one calibrated scale, so a read is ranked by
its percentile among the reads with the same evidence (`risk`): no threshold is put on either's
raw value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from engine.audit.raters.verdicts import Verdict

# A read's kind: a read of the file; typed in the review as a resolution (a third read) or as a
# supervisor's backread (engine.results.added_reads.KINDS).
FILE_READ, RESOLUTION, BACKREAD = "", "resolution", "backread"
CONSENSUS, SEVERITY = "consensus", "severity"
# A live session's read of an answer read once: no severity there (engine.live.ledger).
READ_ONCE = "read once"


@dataclass(frozen=True)
class ItemFacts:
    """One item: its name ("" for a file of one item), score labels, whether they are ordered,
    and each answer's id and data row (its audited read's)."""

    name: str
    labels: tuple[str, ...]
    ordered: bool
    ids: tuple[str, ...]
    rows: np.ndarray

    @property
    def scores(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class Ledger:
    """Every read, as (R,) arrays: item (index into items), answer (within its item), rater
    (index into raters; -1 where the file names none), score (code), order (when: the time
    column where given, else the data row; typed reads after the file's), kind (FILE_READ,
    RESOLUTION or BACKREAD), expert (the answer's expert code, -1 none), wrong (the probability
    the score is wrong), evidence (CONSENSUS or SEVERITY: where `wrong` comes from), risk (its
    percentile among the reads of the same evidence, in (0, 1]), direction (-1, 0, +1: the score
    against the run's best score for the answer, the consensus else the model's; 0 on unordered
    labels). Per answer of the session (items' answers one after another, `offsets`):
    consensus_p (NaN where read once) and unsure (ranked for a third read). Per rater:
    reliability (the consensus's accuracy, NaN unknown) and reliability_high (its 95%
    interval's upper end). verdicts: {rater: parm's verdicts};
    drift: {rater: +1 or -1, the sign of their drift}; bias: {(rater, item): the listed bias
    cell's bias in points}."""

    items: tuple[ItemFacts, ...]
    raters: tuple[str, ...]
    item: np.ndarray
    answer: np.ndarray
    rater: np.ndarray
    score: np.ndarray
    order: np.ndarray
    kind: np.ndarray
    expert: np.ndarray
    wrong: np.ndarray
    evidence: np.ndarray
    risk: np.ndarray
    direction: np.ndarray
    offsets: np.ndarray
    consensus_p: np.ndarray
    unsure: np.ndarray
    reliability: np.ndarray
    reliability_high: np.ndarray | None = None
    verdicts: dict = field(default_factory=dict)
    drift: dict = field(default_factory=dict)
    bias: dict = field(default_factory=dict)
    seed: int = 0

    def __len__(self) -> int:
        return int(self.item.size)

    @property
    def unit(self) -> np.ndarray:
        """(R,) each read's answer numbered over the session."""
        return self.offsets[self.item] + self.answer

    @property
    def n_answers(self) -> int:
        return int(self.offsets[-1])

    def reads_per_answer(self) -> np.ndarray:
        return np.bincount(self.unit, minlength=self.n_answers)


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given their average (scipy.stats.rankdata(method="average"), whose
    import alone costs about 0.9 s)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], values.size]
    ranks = np.empty(values.size)
    ranks[order] = np.repeat((starts + ends + 1) / 2, ends - starts)
    return ranks


def risk_percentiles(wrong: np.ndarray, evidence: np.ndarray) -> np.ndarray:
    """(R,) each read's percentile (average ranks, in (0, 1]) of `wrong` among the reads of the
    same evidence; NaN values rank lowest."""
    out = np.zeros(wrong.size)
    for source in np.unique(evidence):
        mine = np.flatnonzero(evidence == source)
        values = np.nan_to_num(wrong[mine], nan=-1.0)
        out[mine] = average_ranks(values) / mine.size
    return out


def ledger_of(session, added: Sequence = ()) -> Ledger:
    """The ledger of a SessionResult whose consensus counts the reads typed in its review,
    `added` (engine.results.added_reads.session_with_added; each AddedRead with its kind)."""
    names = sorted({n for r in session.results for n in (r.responses.reads.rater or ()) if n}
                   | {read.rater for read in added if read.rater})  # fmt: skip
    index = {name: m for m, name in enumerate(names)}
    parts, facts, offsets = [], [], [0]
    timed = session.config.time_column is not None
    last = max(float(np.max(_file_order(r.responses.reads, timed), initial=0.0))
               for r in session.results)  # fmt: skip
    for k, result in enumerate(session.results):
        facts.append(_facts(result.responses))
        mine = [a for a in added if _row_in(a, result)]
        parts.append(_item_reads(k, result, index, timed, mine, last))
        offsets.append(offsets[-1] + len(result.responses))
    columns = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    by_answer = _consensus(session)
    wrong, evidence, direction = _risk(session, columns)
    reliability, high = np.full(len(names), np.nan), np.full(len(names), np.nan)
    if session.reads is not None:
        for name, (accuracy, _, top) in session.reads.reliability().items():
            if name in index:
                reliability[index[name]], high[index[name]] = accuracy, top
    verdicts, drift, bias = _rater_figures(session)
    return Ledger(
        items=tuple(facts), raters=tuple(names), **columns, wrong=wrong, evidence=evidence,
        risk=risk_percentiles(wrong, evidence), direction=direction,
        offsets=np.asarray(offsets, dtype=np.int64), **by_answer, reliability=reliability,
        reliability_high=high,
        verdicts=verdicts, drift=drift, bias=bias, seed=int(session.config.seed),
    )  # fmt: skip


def _facts(responses) -> ItemFacts:
    name = "" if responses.item is None else str(responses.item)
    return ItemFacts(name, tuple(responses.labels), bool(responses.ordered),
                     tuple(responses.ids), np.asarray(responses.rows, dtype=np.int64))  # fmt: skip


def _row_in(read, result) -> bool:
    return bool(np.any(result.responses.rows == int(read.row)))


def _file_order(reads, timed: bool) -> np.ndarray:
    """When each of the file's reads was given: its time (blank: first), else its data row."""
    order = np.where(np.isfinite(reads.time), reads.time, -np.inf) if timed else reads.row
    return np.asarray(order, dtype=np.float64)


def _item_reads(k: int, result, index: dict, timed: bool, added: list, last: float) -> dict:
    """One item's file reads then its typed ones (after every read of the file, `last`), as
    the ledger's columns."""
    responses = result.responses
    reads = responses.reads
    place = {int(row): j for j, row in enumerate(responses.rows)}
    order = _file_order(reads, timed)
    typed = sorted(added, key=lambda a: (a.added_at, a.row, a.rater))
    answer = np.r_[reads.answer, [place[int(a.row)] for a in typed]].astype(np.int64)
    labels = list(responses.labels)
    expert = responses.expert if responses.expert is not None else np.full(len(responses), -1)
    return {
        "item": np.full(answer.size, k, dtype=np.int64),
        "answer": answer,
        "rater": np.array(
            [index.get(n, -1) for n in (*reads.rater, *(a.rater for a in typed))], dtype=np.int64
        ),  # fmt: skip
        "score": np.r_[reads.score, [labels.index(a.score) for a in typed]].astype(np.int64),
        "order": np.r_[order, last + 1.0 + np.arange(len(typed))],
        "kind": np.array([FILE_READ] * len(reads) + [a.kind for a in typed], dtype=object),
        "expert": np.asarray(expert, dtype=np.int64)[answer],
    }


def _consensus(session) -> dict:
    """consensus_p and unsure over every answer of the session."""
    sizes = [len(r.responses) for r in session.results]
    if session.reads is None:
        total = sum(sizes)
        return {"consensus_p": np.full(total, np.nan), "unsure": np.zeros(total, dtype=bool)}
    found = session.reads.consensus.items
    return {
        "consensus_p": np.concatenate([item.consensus_p for item in found]),
        "unsure": np.concatenate([item.third_read_rank > 0 for item in found]),
    }


def _risk(session, columns: dict):
    """(wrong, evidence, direction) of every read (module docstring)."""
    size = columns["item"].size
    wrong, direction = np.zeros(size), np.zeros(size, dtype=np.int64)
    evidence = np.full(size, SEVERITY, dtype=object)
    for k, result in enumerate(session.results):
        mine = np.flatnonzero(columns["item"] == k)
        answer, score = columns["answer"][mine], columns["score"][mine]
        reference = np.asarray(result.predicted, dtype=np.int64)[answer]
        wrong[mine] = np.asarray(result.severity, dtype=np.float64)[answer]
        if session.reads is not None:
            found = session.reads.consensus.items[k]
            many = found.reads[answer] >= 2
            wrong[mine[many]] = 1.0 - found.proba[answer[many], score[many]]
            evidence[mine[many]] = CONSENSUS
            reference = np.where(many, found.consensus[answer], reference)
        if result.responses.ordered:
            direction[mine] = np.sign(score - reference)
    return wrong, evidence, direction


def _rater_figures(session):
    """({rater: verdicts}, {rater: drift sign}, {(rater, item): bias}) of the rater table."""
    verdicts: dict[str, tuple[Verdict, ...]] = {}
    drift: dict[str, int] = {}
    bias: dict[tuple[str, str], float] = {}
    if session.raters is None:
        return verdicts, drift, bias
    for row in session.raters.rows:
        effects = row.effects
        if effects is None or not effects.verdicts:
            continue
        verdicts[row.rater] = tuple(effects.verdicts)
        if effects.drift is not None and effects.drift.change:
            drift[row.rater] = int(np.sign(effects.drift.change))
    for cell in session.raters.listed_bias():
        bias[(cell.rater, str(cell.item))] = float(cell.bias)
    return verdicts, drift, bias
