"""An item's reads as the input keeps them (engine.input.several_reads.Reads: rater names) turned into
the arrays the agreement and consensus figures take (engine.audit.reads.item_reads.ItemReads: rater
indices shared across the session), and each item's text evidence for the consensus.

The one place the conversion happens. Raters are named by engine.input.several_reads.rater_name, as
every output and screen names them: the file's name (a rater column's value, or a wide file's
score column), or for a read whose rater cell is blank its place ("read 2"), so two unnamed
reads of one answer stay two raters.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.audit.reads.consensus_layout import TextEvidence
from engine.audit.reads.item_reads import ItemReads
from engine.audit.reads.text_evidence import reads_classifier
from engine.input.responses import Responses
from engine.input.several_reads import rater_name

# The shipped evidence (tests/benchmarks/consensus_report.py SHIPPED, "lr-reads+nb10"): a
# classifier fitted on every read of the other folds' answers and the vote of 10 neighbours.
NEIGHBOURS = 10


def read_raters(responses: Responses) -> tuple[str, ...]:
    """Each read's rater, named by rater_name."""
    reads = responses.reads
    if reads is None:
        return ()
    places = reads.rank()
    return tuple(rater_name(name, place) for name, place in zip(reads.rater, places))


def several_reads(responses: Responses) -> bool:
    """Whether some answer of the item has two reads or more."""
    reads = responses.reads
    return reads is not None and reads.most(len(responses)) >= 2


def session_raters(items: Sequence[Responses]) -> tuple[str, ...]:
    """Every rater of the session's reads, sorted: index r in ItemReads is the r-th name."""
    return tuple(sorted({name for responses in items for name in read_raters(responses)}))


def label_points(labels: Sequence[str]) -> np.ndarray | None:
    """(C+1,) the labels' values in points when every label is a number, else None."""
    try:
        return np.array([float(label) for label in labels], dtype=np.float64)
    except ValueError:
        return None


def item_reads(responses: Responses, raters: Sequence[str] = ()) -> ItemReads:
    """The item's reads as ItemReads; raters: the session's rater names (session_raters), or
    () for this item's own."""
    names = read_raters(responses)
    index = {name: r for r, name in enumerate(raters or sorted(set(names)))}
    reads = responses.reads
    if reads is None:  # called for items read more than once only
        raise ValueError("item_reads: an item without reads")
    return ItemReads(
        answer=reads.answer,
        rater=np.array([index[name] for name in names], dtype=np.int64),
        score=reads.score,
        n_answers=len(responses),
        n_classes=responses.n_classes,
        ordered=responses.ordered,
        values=label_points(responses.labels) if responses.ordered else None,
        name=responses.item if responses.item is not None else "",
    )


def read_evidence(
    vectors: np.ndarray, indices: np.ndarray, similarities: np.ndarray, responses: Responses,
    seed: int,
) -> TextEvidence | None:  # fmt: skip
    """The item's text evidence for the consensus, None when no answer is read twice: the
    out-of-fold classifier on every read (engine.audit.reads.text_evidence.reads_classifier) and the
    item's NEIGHBOURS nearest answers from its neighbour graph (similarities below 0 count 0)."""
    if not several_reads(responses):
        return None
    proba = reads_classifier(vectors, item_reads(responses), seed)
    near = np.asarray(indices[:, :NEIGHBOURS], dtype=np.int64)
    weight = np.clip(np.asarray(similarities[:, :NEIGHBOURS], dtype=np.float64), 0.0, None)
    return TextEvidence((proba,), near, weight)
