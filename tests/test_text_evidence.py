"""The consensus's classifiers (engine/audit/reads/text_evidence.py): out-of-fold, so an answer's own
reads never reach the model that predicts it."""

from __future__ import annotations

import numpy as np
from helpers import clustered_embeddings

from engine.audit.reads.item_reads import ItemReads
from engine.audit.reads.text_evidence import (
    answer_folds,
    first_read_classifier,
    first_reads,
    reads_classifier,
)
from engine.model.classifier import out_of_fold_proba


def item(seed: int = 0, n: int = 120):
    vectors, truth = clustered_embeddings(n, 3, seed=seed)
    rng = np.random.default_rng(seed)
    answer = np.repeat(np.arange(n), 2)
    rater = np.tile([0, 1], n)
    score = np.where(rng.random(2 * n) < 0.8, truth[answer], rng.integers(0, 3, 2 * n))
    return vectors, ItemReads(answer, rater, score, n, 3, True)


def test_an_answers_own_reads_never_reach_its_prediction():
    vectors, reads = item()
    before = reads_classifier(vectors, reads, seed=1)
    changed = reads.score.copy()
    second = np.flatnonzero(reads.answer == 7)[1]  # the first read sets the folds' strata
    changed[second] = (changed[second] + 1) % 3
    after = reads_classifier(
        vectors, ItemReads(reads.answer, reads.rater, changed, 120, 3, True), 1
    )
    assert np.array_equal(before[7], after[7])
    assert not np.allclose(before, after)  # other folds' models did see the change


def test_first_read_classifier_is_the_severity_classifier_on_first_reads():
    vectors, reads = item(2)
    first = first_reads(reads)
    assert np.array_equal(first, reads.score[::2])
    parts = answer_folds(reads, 5, 3)
    expected = out_of_fold_proba(vectors, first, 3, parts, 10.0)
    assert np.allclose(first_read_classifier(vectors, reads, 3), expected)


def test_answers_without_reads_get_no_evidence():
    vectors, reads = item(4)
    keep = reads.answer != 5
    fewer = ItemReads(reads.answer[keep], reads.rater[keep], reads.score[keep], 120, 3, True)
    proba = reads_classifier(vectors, fewer, 0)
    assert np.all(np.isnan(proba[5])) and not np.any(np.isnan(np.delete(proba, 5, axis=0)))
    assert np.allclose(np.delete(proba, 5, axis=0).sum(axis=1), 1.0)
