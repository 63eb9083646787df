"""Why a place in the review queue may mislead, said beside the answer (issue 38, point 5).

Three cases, each measured on Mohler's 80 questions (docs/explanation/queue-notes.md):

- a lone score: the answer's score is the only one of its value in its item. No fold that
  predicts it has seen that score, so its severity is near 1 by construction, not by evidence.
  Such answers are kept high in the queue (the second grader gave another score on 84% of them;
  moving them to their item's median severity lowered the queue's AUROC for real disagreement
  from .818 to .797), but the review says why they are there.
- a suggestion against its evidence: the fit's suggested score is not the score the nearest
  answers mostly have (weighted by their edges). The fit weighs all K neighbours and the item's
  base rates; on a small item that can overrule the closest answers.
- agreeing reads: every read of the answer gave the audited score; the second look was taken.
- flagged though the evidence agrees (issue 44): the answer is in the flagged list while the
  nearest answers mostly carry its own score. The severity also asks models that never saw
  any answer like it (engine.audit.queue.answer_groups), which is how a wording scored the same wrong
  way throughout shows; the review says so rather than leave the flag unexplained.
"""

from __future__ import annotations

import numpy as np

from engine.audit.queue.evidence import Neighbour

LONE = "lone score"
AGAINST_EVIDENCE = "suggestion against evidence"
READS_AGREE = "reads agree"
FLAGGED_WITH_EVIDENCE = "flagged though the evidence agrees"


def lone_scores(scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """(N,) whether each response's score is the only one of its value in its item.
    scores: (N,) codes; starts: (K + 1,) where each item's positions start."""
    lone = np.zeros(scores.shape[0], dtype=bool)
    for begin, end in zip(starts[:-1], starts[1:]):
        item = scores[begin:end]
        counts = np.bincount(item, minlength=int(item.max(initial=0)) + 1)
        lone[begin:end] = counts[item] == 1
    return lone


def evidence_score(neighbours: list[Neighbour], scores: np.ndarray) -> int | None:
    """The score the evidence neighbours mostly have, by summed edge weight (ties: the lower
    code); None without neighbours."""
    if not neighbours:
        return None
    codes = np.array([scores[nb.index] for nb in neighbours])
    weights = np.array([nb.weight for nb in neighbours], dtype=float)
    totals = np.bincount(codes, weights=weights)
    return int(np.argmax(totals))


def queue_notes(
    score: int,
    predicted: int,
    lone: bool,
    evidence: int | None,
    reads: np.ndarray | None,
    labels: tuple[str, ...],
    flagged: bool = False,
) -> list[tuple[str, str]]:
    """(kind, sentence) for one response: score, predicted and evidence are codes on `labels`;
    reads: the codes of every read of the answer (None or one read: not read again); flagged:
    whether it is in the flagged list."""
    notes = []
    if flagged and evidence is not None and evidence == score:
        notes.append(
            (
                FLAGGED_WITH_EVIDENCE,
                f"Flagged though the nearest answers mostly have {labels[score]} too: models "
                "that never saw an answer like it give it another score. A wording scored the "
                "same way throughout looks like this; check whether it deserves "
                f"{labels[score]}.",
            )
        )
    if lone:
        notes.append(
            (
                LONE,
                f"{labels[score]} is the only score of its value in this item: the models never "
                "saw it, so its severity is high by construction. Rare scores are often slips; "
                "check it.",
            )
        )
    if predicted != score and evidence is not None and evidence != predicted:
        notes.append(
            (
                AGAINST_EVIDENCE,
                f"The nearest answers mostly have {labels[evidence]}, not the suggested "
                f"{labels[predicted]}: the fit weighs all its neighbours and the item's base "
                "rates, which on a small item can overrule the closest answers.",
            )
        )
    if reads is not None and reads.size > 1 and bool(np.all(reads == score)):
        notes.append((READS_AGREE, f"All {reads.size} reads gave {labels[score]}."))
    return notes
