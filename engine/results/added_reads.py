"""Reads typed in the review: one more read of an answer (a third read, say), added by the
rater-lead while reviewing, and the consensus recomputed with it.

The run's reads stay as the file gave them; an added read joins its answer's reads (by a rater of
the session, or a new one, named after the file's raters), and the consensus is the same
engine.audit.reads.consensus.consensus call over the run's reads plus the added ones, with the text
evidence the run computed (each item's `read_evidence`: no classifier is fitted again) and under
the run's fitted model (its raters, base rates and text weights; a new rater is the session's
typical rater): so a read of score s never lowers its answer's p(s), and answers without an added
read keep their consensus. A run on a file with the read in it fits the model again. The
agreement between raters and PRMSE stay the run's: they describe the file's scoring. The added
reads themselves are kept with the review's decisions (engine.saved.added_reads).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.audit.reads.consensus import consensus
from engine.audit.reads.reads_audit import ReadsAudit
from engine.core.errors import ReviewError
from engine.core.text import safe_text
from engine.results.review import ReviewSet, consensus_arrays
from engine.results.session import SessionResult

# What a typed read is: a resolution of the answer's reads (a third read, the review's first use),
# or a supervisor's backread of a rater's read (engine.actions.backreads). Both count in the
# consensus; a backread is not the raters' work (engine.actions).
RESOLUTION, BACKREAD = "resolution", "backread"
KINDS = (RESOLUTION, BACKREAD)

NO_READS = (
    "No answer of this run is read twice, so there is no consensus for a read to update; "
    "add the reads to the file and run it again."
)


@dataclass(frozen=True)
class AddedRead:
    """One read typed in the review. row: the 1-based data row of the answer (its audited
    read's, as decisions name it); response_id: its id; rater: who gave the read; score: the
    label given, on the item's scale; added_at: UTC ISO 8601; reviewer: who typed it in; kind:
    RESOLUTION or BACKREAD (KINDS)."""

    row: int
    response_id: str
    rater: str
    score: str
    added_at: str
    reviewer: str = ""
    kind: str = RESOLUTION


def check_added(review: ReviewSet, i: int, rater: str, score: str, kind: str = RESOLUTION) -> str:
    """The rater's name as it will be kept (made inert and trimmed); ReviewError when a read of
    response i by `rater` cannot be added: no consensus in this run, no rater, a score off the
    item's scale, a rater who already read the answer (the rules the file's reads follow,
    engine.input.several_reads), or a kind not in KINDS."""
    row = int(review.responses.rows[i])
    if kind not in KINDS:
        raise ReviewError(f"Row {row}: a typed read is one of {', '.join(KINDS)}, not {kind!r}.")
    if review.reads is None:
        raise ReviewError(NO_READS)
    name = safe_text(str(rater)).strip()
    check_read(row, name, str(score), review.labels_of(i), name in review.raters_of(i))
    return name


def check_read(row: int, rater: str, score: str, labels, read_before: bool) -> None:
    """ReviewError when a read of data row `row` cannot be kept: no rater named, a score not
    among the item's `labels`, or a rater who has read the answer before (`read_before`). The
    review (check_added, on the file's reads) and the store (engine.saved.added_reads, on the
    reads typed before) ask the same."""
    if not rater.strip():
        raise ReviewError(f"Row {row}: name the rater who gave the read.")
    if score not in labels:
        raise ReviewError(
            f"Row {row}: the score {score!r} is not on the item's scale ({', '.join(labels)})."
        )
    if read_before:
        raise ReviewError(
            f"Row {row}: rater '{rater}' already read this answer; a rater reads an answer once."
        )


def added_audit(results, reads: ReadsAudit | None, added: Sequence[AddedRead]):
    """The run's ReadsAudit `reads` (of `results`, the session's items in order) with the added
    reads joined and the consensus recomputed under the run's model (module docstring); `reads` itself when nothing
    is added. An added read whose rater already reads that answer in the run (the file has it
    now) is the file's read: it counts once. Reads added before are replaced, not added to."""
    if reads is not None and reads.run is not None:
        reads = reads.run
    if not added:
        return reads
    if reads is None:
        raise ReviewError(NO_READS)
    place = {int(row): (k, j) for k, r in enumerate(results) for j, row in enumerate(r.responses.rows)}  # fmt: skip
    raters = list(reads.raters)
    index = {name: r for r, name in enumerate(raters)}
    extra: list[dict[str, list[int]]] = [{"answer": [], "rater": [], "score": []} for _ in results]
    for read in added:
        if int(read.row) not in place:
            raise ReviewError(f"Row {read.row}: no answer of this run is there for its added read.")
        k, j = place[int(read.row)]
        labels = list(results[k].responses.labels)
        if read.score not in labels:
            raise ReviewError(f"Row {read.row}: the added read's score {read.score!r} is not on "
                              f"the item's scale ({', '.join(labels)}).")  # fmt: skip
        item = reads.items[k]
        if read.rater in index and np.any((item.answer == j) & (item.rater == index[read.rater])):
            continue
        if read.rater not in index:
            index[read.rater] = len(raters)
            raters.append(read.rater)
        extra[k]["answer"].append(j)
        extra[k]["rater"].append(index[read.rater])
        extra[k]["score"].append(labels.index(read.score))
    items = [item.with_reads(**more) if more["answer"] else item
             for item, more in zip(reads.items, extra)]  # fmt: skip
    masks = tuple(np.arange(new.answer.size) >= old.answer.size
                  for old, new in zip(reads.items, items))  # fmt: skip
    evidence = [result.read_evidence for result in results]
    found = consensus(items, evidence, len(raters), model=reads.consensus.model)
    return dataclasses.replace(
        reads, raters=tuple(raters), items=tuple(items), consensus=found, added=masks, run=reads
    )


def session_with_added(session: SessionResult, added: Sequence[AddedRead]) -> SessionResult:
    """The session with the added reads counted: its consensus, third-read ranks and the raters'
    reliability recomputed (those added before replaced; the session itself is not changed)."""
    if session.reads is None and not added:
        return session
    reads = added_audit(session.results, session.reads, added)
    raters = session.raters
    if raters is not None:
        raters = dataclasses.replace(raters, reliability=reads.reliability())
    return dataclasses.replace(session, reads=reads, raters=raters)


def review_with_added(review: ReviewSet, added: Sequence[AddedRead]) -> ReviewSet:
    """The review set with the added reads counted (those added before replaced): its consensus,
    probabilities and third-read ranks recomputed."""
    if review.reads is None and not added:
        return review
    reads = added_audit(review.results, review.reads, added)
    return dataclasses.replace(review, reads=reads, **consensus_arrays(reads, review.codes))
