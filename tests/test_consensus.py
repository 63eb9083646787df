"""The consensus (engine/audit/reads/consensus.py, error_model.py, consensus_layout.py) on sessions
simulated with known true scores and rater accuracies."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import simulated_reads
from scipy import stats

from engine.audit.reads.consensus import SURE, TextEvidence, consensus, third_read_ranks
from engine.audit.reads.error_model import RaterParameters, read_given_truth
from engine.audit.reads.item_reads import ItemReads

PRIOR = np.array([0.2, 0.3, 0.3, 0.2])
ACCURACY = np.array([0.95, 0.85, 0.75, 0.65, 0.55, 0.9])


def session(seed: int, n: int = 600, items: int = 3, reads=(2,), ordered=True):
    rng = np.random.default_rng(seed)
    found = [simulated_reads(rng, n, ACCURACY, PRIOR, reads, ordered, name=str(j))
             for j in range(items)]  # fmt: skip
    return [r for r, _ in found], [t for _, t in found], rng


def accuracy_of(result, truths) -> float:
    best = np.concatenate([np.argmax(item.proba, axis=1) for item in result.items])
    return float(np.mean(best == np.concatenate(truths)))


def majority(reads: ItemReads) -> np.ndarray:
    counts = np.zeros((reads.n_answers, reads.n_classes))
    np.add.at(counts, (reads.answer, reads.score), 1)
    return np.argmax(counts, axis=1)


def test_error_model_rows_are_probabilities_and_respect_the_ends():
    rater = RaterParameters(np.array([0.7, 0.9]), np.array([[0.1, 0.5, 0.2, 0.1, 0.1]] * 2))
    for size, ordered in ((2, True), (4, True), (9, True), (5, False)):
        table = read_given_truth(size, ordered, rater)
        assert np.allclose(table.sum(axis=2), 1.0)
        assert np.allclose(np.diagonal(table, axis1=1, axis2=2), [[0.7], [0.9]])
    ordered = read_given_truth(4, True, rater)[0]
    # At the top score an error can only go down: one step down takes the -1 share's part of
    # the feasible shares -2, -1, far.
    assert ordered[3, 2] == pytest.approx(0.3 * 0.5 / (0.1 + 0.5 + 0.1))


def test_consensus_beats_majority_and_ranks_raters_as_their_accuracy():
    items, truths, _ = session(1)
    result = consensus(items, None, ACCURACY.size)
    votes = np.mean(np.concatenate([majority(r) == t for r, t in zip(items, truths)]))
    assert result.converged
    assert accuracy_of(result, truths) > votes + 0.05
    assert stats.spearmanr(result.raters.accuracy, ACCURACY).statistic >= 0.9
    raters = result.raters
    assert np.all((raters.low <= raters.accuracy) & (raters.accuracy <= raters.high))
    assert raters.reads.sum() == sum(r.answer.size for r in items)


def test_answers_read_once_have_no_consensus_and_no_third_read():
    rng = np.random.default_rng(2)
    reads, _ = simulated_reads(rng, 300, ACCURACY, PRIOR, (2, 3), missing=0.3)
    item = consensus([reads], None, ACCURACY.size).items[0]
    once = reads.reads_per_answer() < 2
    assert once.any()
    assert np.all(item.consensus[once] == -1) and np.all(np.isnan(item.consensus_p[once]))
    assert np.all(item.third_read_rank[once] == 0)
    assert np.all(item.consensus[~once] == np.argmax(item.proba[~once], axis=1))


def test_third_read_ranks_least_sure_first_and_none_when_sure():
    reads = np.array([2, 2, 1, 3, 2, 2])
    p = np.array([0.6, 0.99, 0.3, 0.6, 0.5, SURE])
    assert third_read_ranks(reads, p).tolist() == [2, 0, 0, 3, 1, 0]


def test_a_third_read_updates_the_consensus():
    items, _, _ = session(3, n=400, items=1)
    reads = items[0]
    first = consensus([reads], None, ACCURACY.size)
    item = first.items[0]
    unsure = int(np.argmax(item.third_read_rank == 1))
    pair = reads.score[reads.answer == unsure]
    readers = reads.rater[reads.answer == unsure]
    best = int(np.argmax(ACCURACY * ~np.isin(np.arange(ACCURACY.size), readers)))
    other = int(pair[pair != item.consensus[unsure]][0]) if np.any(pair != item.consensus[unsure]) \
        else (item.consensus[unsure] + 1) % reads.n_classes  # fmt: skip
    more = reads.with_reads([unsure], [best], [other])
    after = consensus([more], None, ACCURACY.size).items[0]
    assert after.reads[unsure] == 3
    assert after.consensus[unsure] == other
    assert (
        after.consensus_p[unsure] > item.consensus_p[unsure]
        or after.consensus[unsure] != (item.consensus[unsure])
    )


def informative(truth: np.ndarray, classes: int, strength: float, rng) -> np.ndarray:
    """Classifier-like probabilities: `strength` on a code that is the truth 70% of the time."""
    guess = np.where(rng.random(truth.size) < 0.7, truth, rng.integers(0, classes, truth.size))
    p = np.full((truth.size, classes), (1 - strength) / (classes - 1))
    p[np.arange(truth.size), guess] = strength
    return p


def test_text_evidence_helps_when_informative_and_is_ignored_when_not():
    items, truths, rng = session(4)
    plain = accuracy_of(consensus(items, None, ACCURACY.size), truths)
    useful = [TextEvidence((informative(t, 4, 0.7, rng),)) for t in truths]
    helped = consensus(items, useful, ACCURACY.size)
    assert accuracy_of(helped, truths) > plain + 0.02
    assert helped.weights[0] > 0.3
    noise = [TextEvidence((rng.dirichlet(np.ones(4), t.size),)) for t in truths]
    ignored = consensus(items, noise, ACCURACY.size)
    assert ignored.weights[0] < 0.15
    assert accuracy_of(ignored, truths) > plain - 0.01


def test_neighbours_vote_with_their_own_reads_only():
    items, truths, rng = session(5, n=300, items=1)
    n = items[0].n_answers
    itself = TextEvidence((), np.arange(n)[:, None], np.ones((n, 1)))
    alone = consensus(items, None, ACCURACY.size)
    with_self = consensus(items, [itself], ACCURACY.size)
    # An answer listed as its own neighbour is dropped: its reads do not vote twice.
    assert np.allclose(with_self.items[0].proba, alone.items[0].proba, atol=1e-4)
    # Neighbours of the same true score help.
    same = np.array([rng.choice(np.flatnonzero(truths[0] == t), 5) for t in truths[0]])
    near = TextEvidence((), same, np.ones(same.shape))
    assert accuracy_of(consensus(items, [near], ACCURACY.size), truths) > accuracy_of(alone, truths)


def test_nominal_and_ordered_items_share_raters():
    ordered, truths, rng = session(6, n=500, items=2)
    nominal = [simulated_reads(rng, 500, ACCURACY, PRIOR, (2,), False, name="n")]
    items = ordered + [r for r, _ in nominal]
    result = consensus(items, None, ACCURACY.size)
    assert len(result.items) == 3
    assert accuracy_of(result, truths + [t for _, t in nominal]) > 0.8
    assert stats.spearmanr(result.raters.accuracy, ACCURACY).statistic >= 0.9


def test_the_same_reads_give_the_same_consensus():
    items, truths, rng = session(7, n=300)
    evidence = [TextEvidence((informative(t, 4, 0.6, rng),)) for t in truths]
    one, two = (consensus(items, evidence, ACCURACY.size) for _ in range(2))
    for a, b in zip(one.items, two.items):
        assert np.array_equal(a.proba, b.proba)
        assert np.array_equal(a.third_read_rank, b.third_read_rank)
