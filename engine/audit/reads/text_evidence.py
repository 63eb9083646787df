"""The consensus's text evidence: out-of-fold classifiers of an answer's score from its
embedding, fitted on other answers' reads only (cross-fitted: an answer's own reads never reach
the model that predicts it).

The severity's embedding classifier (engine.audit.queue.severity.classifier_proba) is one such model,
fitted on one score per answer; `reads_classifier` fits the same logistic regression on every
read (one row per read, so an answer read by two raters who disagree teaches both scores).
"""

from __future__ import annotations

import numpy as np

from engine.audit.reads.item_reads import ItemReads
from engine.model.classifier import narrow, out_of_fold_proba, stratified_folds

FOLDS = 5
# The severity's C for the embedding classifier (engine.audit.queue.severity.EMBEDDING_C).
INVERSE_PENALTY = 10.0


def first_reads(reads: ItemReads) -> np.ndarray:
    """(N,) each answer's first read in file order (-1 for an answer not read)."""
    first = np.full(reads.n_answers, -1)
    order = np.arange(reads.answer.size)[::-1]  # the last assignment wins: the first read
    first[reads.answer[order]] = reads.score[order]
    return first


def answer_folds(reads: ItemReads, folds: int, seed: int) -> list[np.ndarray]:
    """Held-out answers of each fold, stratified by the answers' first reads (answers without a
    read are in no fold); [] when there are too few answers for two folds."""
    first = first_reads(reads)
    read = np.flatnonzero(first >= 0)
    return [read[part] for part in stratified_folds(first[read], folds, seed)]


def reads_classifier(
    vectors: np.ndarray,
    reads: ItemReads,
    seed: int,
    folds: int = FOLDS,
    inverse_penalty: float = INVERSE_PENALTY,
    every_read: bool = True,
) -> np.ndarray:
    """(N, K) out-of-fold probabilities of each answer's score from a logistic regression on
    the embeddings, fitted on every read of the other folds' answers (every_read False: on each
    answer's first read, as the severity's embedding classifier is); NaN rows for answers in no
    fold (not read, or too few answers)."""
    out = np.full((reads.n_answers, reads.n_classes), np.nan)
    parts = answer_folds(reads, folds, seed)
    if not parts:
        return out
    fold_of = np.full(reads.n_answers, -1)
    for number, part in enumerate(parts):
        fold_of[part] = number
    if every_read:
        rows = np.argsort(reads.answer, kind="stable")
        rows = rows[fold_of[reads.answer[rows]] >= 0]
        answers, scores = reads.answer[rows], reads.score[rows]
    else:
        first = first_reads(reads)
        answers = np.flatnonzero(fold_of >= 0)
        scores = first[answers]
    held = [np.flatnonzero(fold_of[answers] == k) for k in range(len(parts))]
    proba = out_of_fold_proba(
        narrow(vectors), scores, reads.n_classes, held, inverse_penalty, rows=answers
    )
    out[answers] = proba
    return out


def first_read_classifier(
    vectors: np.ndarray, reads: ItemReads, seed: int, folds: int = FOLDS
) -> np.ndarray:
    """(N, K) the severity's embedding classifier: out-of-fold logistic regression fitted on
    each answer's first read; NaN rows for answers in no fold."""
    return reads_classifier(vectors, reads, seed, folds, every_read=False)
