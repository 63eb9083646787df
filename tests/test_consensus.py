"""The consensus (engine/audit/reads/consensus.py, rater_model.py, consensus_layout.py) on sessions
simulated with known true scores and rater accuracies."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import simulated_reads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from engine.audit.reads.consensus import (
    SURE,
    ConsensusModel,
    TextEvidence,
    consensus,
    third_read_ranks,
)
from engine.audit.reads.consensus_fit import MAX_WEIGHT
from engine.audit.reads.error_model import (
    RaterCounts,
    RaterParameters,
    decreasing,
    read_given_truth,
    tied_raters,
)
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
    shares = np.array([[0.05, 0.1, 0.35, 0.3, 0.15, 0.05]] * 2)  # d = -3..-1, 1..3
    rater = RaterParameters(np.array([0.7, 0.9]), shares)
    for size, ordered in ((2, True), (4, True), (3, True), (5, False)):
        table = read_given_truth(size, ordered, rater)
        assert np.allclose(table.sum(axis=2), 1.0)
        assert np.allclose(np.diagonal(table, axis1=1, axis2=2), [[0.7], [0.9]])
    ordered = read_given_truth(4, True, rater)[0]
    # At the top score an error can only go down: one step down takes the -1 share's part of
    # the shares of -3, -2, -1.
    assert ordered[3, 2] == pytest.approx(0.3 * 0.35 / (0.05 + 0.1 + 0.35))
    # At 1 of 0-3: d = -1, +1, +2 can happen.
    assert ordered[1, 2] == pytest.approx(0.3 * 0.3 / (0.35 + 0.3 + 0.15))


def test_isotonic_fit_is_sklearns():
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(0)
    for size in (1, 2, 5, 12):
        values, weights = rng.random(size), rng.random(size) + 0.1
        wanted = IsotonicRegression(increasing=False).fit_transform(
            np.arange(size), values, sample_weight=weights
        )
        assert np.allclose(decreasing(values, weights), wanted)


def counts_of(rng, raters: int, steps: int) -> RaterCounts:
    """Random expected counts, as an E-step could give (errors anywhere, at any distance)."""
    total = rng.integers(1, 200, raters).astype(float)
    right = total * rng.uniform(0.0, 1.0, raters)
    kinds = rng.gamma(0.5, 5.0, (raters, 2 * steps))
    exposure = kinds + rng.gamma(1.0, 5.0, (raters, 2 * steps))
    return RaterCounts(right, total, kinds, exposure, right * 0.1)


def test_errors_are_near_misses_and_no_read_counts_against_its_score():
    """The M-step's shares never grow with the distance on either side of the truth, and every
    rater (the typical one too) reads a score at least as often under it as under any other
    truth, on every scale of the session (the accuracy floor), whatever the counts."""
    rng = np.random.default_rng(1)
    scales = [(2, True), (4, True), (11, True), (5, False)]
    for _ in range(30):
        found = counts_of(rng, 4, 10).parameters(scales)
        for params in (found, found.pooled):
            below, above = params.shares[:, :10][:, ::-1], params.shares[:, 10:]
            assert np.all(np.diff(below, axis=1) <= 1e-12)
            assert np.all(np.diff(above, axis=1) <= 1e-12)
            for size, ordered in scales:
                table = read_given_truth(size, ordered, params)
                diagonal = np.diagonal(table, axis1=1, axis2=2)
                assert np.all(diagonal[:, None, :] >= table - 1e-12)


def test_raters_the_design_cannot_tell_apart_share_one_estimate():
    # Two raters who read every answer together: one edge, no odd cycle.
    assert tied_raters(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), 2).tolist() == [0, 0]
    # A chain A-B, B-C is bipartite too; a triangle pins each rater; a rater with no shared
    # answer stays alone.
    chain = tied_raters(np.array([0, 0, 1, 1, 2]), np.array([0, 1, 1, 2, 3]), 4)
    assert chain.tolist() == [0, 0, 0, 3]
    triangle = tied_raters(np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 1, 2, 2, 0]), 3)
    assert triangle.tolist() == [0, 1, 2]
    # Two raters on every answer: one accuracy, whatever the error model's shape would pick.
    rng = np.random.default_rng(3)
    reads, _ = simulated_reads(rng, 300, np.array([0.9, 0.6]), PRIOR, (2,))
    found = consensus([reads], None, 2).raters.accuracy
    assert found[0] == pytest.approx(found[1])


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
    # The prior weighs at most half a 2-1 majority between the reads' scores: the text breaks
    # ties and near ties of the reads (0.884 -> 0.895 here), it does not overrule them.
    assert accuracy_of(helped, truths) > plain + 0.005
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
    # An answer listed as its own neighbour is dropped: its reads do not vote twice (the two
    # fits differ by the EM's stopping rule: one more step of at most TOLERANCE).
    assert np.allclose(with_self.items[0].proba, alone.items[0].proba, atol=5e-4)
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


# -- properties on random designs (no embedding: the consensus functions called directly) -----
PROPERTIES = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def designs(draw):
    """A small session: 1-2 items (ordered on half points 0..(K-1)/2 with K <= 11, or nominal
    with K <= 5), 3-5 raters, 3-12 answers each read 0-4 times (distinct raters), scores
    near a truth, and random text evidence (a peaked classifier, random neighbours) or none."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    raters = draw(st.integers(3, 5))
    items, evidence = [], []
    for j in range(draw(st.integers(1, 2))):
        ordered = draw(st.booleans())
        size = draw(st.integers(2, 11 if ordered else 5))
        n = draw(st.integers(3, 12))
        truth = rng.integers(0, size, n)
        count = rng.integers(0, min(4, raters) + 1, n)
        answer = np.repeat(np.arange(n), count)
        rater = np.concatenate([rng.permutation(raters)[:c] for c in count]).astype(np.int64)
        off = rng.choice([-1, 0, 0, 1], answer.size) if ordered else rng.integers(0, 2, answer.size)
        score = np.clip(truth[answer] + off, 0, size - 1)
        values = np.arange(size) * 0.5 if ordered else None
        items.append(ItemReads(answer, rater, score, n, size, ordered, values, str(j)))
        if draw(st.booleans()):
            proba = rng.dirichlet(np.full(size, 0.3), n)
            near = np.array([rng.permutation(n)[: min(3, n)] for _ in range(n)])
            evidence.append(TextEvidence((proba,), near, rng.random(near.shape)))
        else:
            evidence.append(None)
    return items, evidence, raters, rng


def fixed_model(rng, items, evidence, raters) -> ConsensusModel:
    """A model as a fit could give (random counts through the M-step), without the EM."""
    steps = max([r.n_classes - 1 for r in items if r.ordered] + [1])
    rater = counts_of(rng, raters, steps).parameters([(r.n_classes, r.ordered) for r in items])
    width = max(r.n_classes for r in items)
    base = np.zeros((len(items), width))
    for j, r in enumerate(items):
        base[j, : r.n_classes] = rng.dirichlet(np.ones(r.n_classes))
    sources = (1 if any(e is not None for e in evidence) else 0) * 2
    answers = sum(r.n_answers for r in items)
    vote = rng.dirichlet(np.ones(width), answers) if sources else None
    return ConsensusModel(rater, base, rng.uniform(0, 4, sources), vote, 0, True)


def check_respects_the_reads(items, result) -> None:
    for item, found in zip(items, result.items):
        assert np.all((found.proba >= 0) & (found.proba <= 1))
        assert np.allclose(found.proba.sum(axis=1), 1.0)
        for u in range(item.n_answers):
            given = item.score[item.answer == u]
            if given.size == 0:
                continue
            inside = np.zeros(item.n_classes, dtype=bool)
            if item.ordered:
                inside[given.min() : given.max() + 1] = True
            else:
                inside[given] = True
            assert np.all(found.proba[u, ~inside] == 0)
            if given.size >= 2:
                c, p = found.consensus[u], found.consensus_p[u]
                assert inside[c] and p == found.proba[u, c] and 0 <= p <= 1
                if np.all(given == given[0]):
                    assert c == given[0] and p == 1.0


@PROPERTIES
@given(designs())
def test_the_fitted_consensus_respects_the_reads(design):
    """Unanimous reads are the consensus with p 1; every consensus is within its reads' range
    (among the labels given, nominal); p is a probability, the rows sum to 1."""
    items, evidence, raters, _ = design
    check_respects_the_reads(items, consensus(items, evidence, raters))


@PROPERTIES
@given(designs(), st.data())
def test_a_read_of_s_never_lowers_p_of_s_under_a_fixed_model(design, data):
    """With the model held fixed (as for reads typed in the review), one more read of score s
    by a rater who has not read the answer (a session rater or a new one) never lowers its
    p(s), and no other answer moves."""
    items, evidence, raters, rng = design
    model = fixed_model(rng, items, evidence, raters)
    before = consensus(items, evidence, raters, model=model)
    check_respects_the_reads(items, before)
    k = data.draw(st.integers(0, len(items) - 1))
    item = items[k]
    u = data.draw(st.integers(0, item.n_answers - 1))
    s = data.draw(st.integers(0, item.n_classes - 1))
    free = [r for r in range(raters + 1) if r not in item.rater[item.answer == u]]
    r = data.draw(st.sampled_from(free))
    more = list(items)
    more[k] = item.with_reads([u], [r], [s])
    after = consensus(more, evidence, raters + 1, model=model)
    check_respects_the_reads(more, after)
    assert after.items[k].proba[u, s] >= before.items[k].proba[u, s] - 1e-12
    for j, (old, new) in enumerate(zip(before.items, after.items)):
        keep = np.arange(old.proba.shape[0]) != (u if j == k else -1)
        np.testing.assert_allclose(old.proba[keep], new.proba[keep], rtol=0, atol=1e-12)


def half_points(seed: int, accuracy, n: int = 400, reads=(2,)):
    """One item on half points 0-5 (11 codes) read by raters of `accuracy` (errors one step
    either way), with its truth."""
    rng = np.random.default_rng(seed)
    prior = np.full(11, 1 / 11)
    found, truth = simulated_reads(rng, n, np.asarray(accuracy), prior, reads,
                                   values=np.arange(11) * 0.5)  # fmt: skip
    return found, truth, rng


def test_a_third_read_of_4_on_4_and_4_5_makes_4_more_likely():
    """The issue's case: an answer read 4 and 4.5 by two raters, with text evidence for 4.5;
    a third read of 4 raises p(4), under the run's model (a read typed in the review) and
    after a full refit (the read in the file), and a half-point disagreement of equally
    reliable raters is never sure."""
    reads, truth, rng = half_points(8, [0.75] * 5)
    u = 0
    keep = reads.answer != u
    two = reads.with_reads([u, u], [0, 1], [8, 9])
    two = ItemReads(np.r_[reads.answer[keep], u, u], np.r_[reads.rater[keep], 0, 1],
                    np.r_[reads.score[keep], 8, 9], reads.n_answers, 11, True, reads.values)  # fmt: skip
    proba = informative(truth, 11, 0.6, rng)
    proba[u] = np.full(11, 0.001)
    proba[u, 9] = 0.99
    evidence = [TextEvidence((proba,))]
    before = consensus([two], evidence, 5)
    p = before.items[0].proba[u]
    assert before.items[0].consensus[u] == 9 and p[8] + p[9] == pytest.approx(1.0)
    assert p[9] < SURE
    three = two.with_reads([u], [2], [8])
    held = consensus([three], evidence, 5, model=before.model).items[0]
    refit = consensus([three], evidence, 5).items[0]
    for after in (held, refit):
        assert after.proba[u, 8] > p[8]
        assert after.consensus[u] == 8
    # No half-point disagreement of these equally reliable raters is sure.
    counts = two.reads_per_answer()
    pairs = [a for a in range(two.n_answers) if counts[a] == 2
             and np.ptp(two.score[two.answer == a]) == 1]  # fmt: skip
    assert len(pairs) > 20
    assert np.all(before.items[0].consensus_p[pairs] < SURE)


def majority_of_two(reads: ItemReads) -> dict[int, tuple[int, int]]:
    """Answers read three times with two equal reads: answer -> (majority, minority)."""
    found = {}
    for a in np.flatnonzero(reads.reads_per_answer() == 3):
        values, counts = np.unique(reads.score[reads.answer == a], return_counts=True)
        if sorted(counts) == [1, 2]:
            found[int(a)] = (int(values[np.argmax(counts)]), int(values[np.argmin(counts)]))
    return found


def test_text_never_overturns_a_two_to_one_majority_of_equally_reliable_raters():
    """The text at its strongest (lambda at MAX_WEIGHT for the classifier and the neighbours)
    and the classifier all for the minority's score (p .999) on every 2-1 answer. With every
    rater the session's typical rater, the consensus is always the one the reads alone give
    under the same base rates: the prior moves the log-odds by at most half the smallest 2-1
    margin of such raters (consensus_fit.prior_bounds). With the raters as estimated (0.65-0.75,
    simulated equal), the text decides only where the reads alone nearly tie."""
    reads, truth, rng = half_points(9, [0.7] * 6, n=600, reads=(3,))
    split = majority_of_two(reads)
    assert len(split) > 100
    proba = informative(truth, 11, 0.6, rng)
    near = np.array([rng.choice(np.flatnonzero(truth == t), 5) for t in truth])
    fitted = consensus([reads], [TextEvidence((proba,), near, np.ones(near.shape))], 6).model
    for a, (_, minority) in split.items():
        proba[a] = np.full(11, 1e-4)
        proba[a, minority] = 0.999
    evidence = [TextEvidence((proba,), near, np.ones(near.shape))]
    typical = fitted.rater.pooled
    equal = RaterParameters(np.repeat(typical.accuracy, 6), np.repeat(typical.shares, 6, 0),
                            typical)  # fmt: skip
    for rater, slack in ((equal, 0.0), (fitted.rater, 0.1)):
        model = dataclasses.replace(fitted, rater=rater, weights=np.full(2, MAX_WEIGHT))
        with_text = consensus([reads], evidence, 6, model=model).items[0]
        alone = consensus([reads], None, 6, model=dataclasses.replace(model, vote=None)).items[0]
        assert np.any(np.abs(with_text.proba - alone.proba) > 0.1)  # the text counts
        for a in split:
            if with_text.consensus[a] != alone.consensus[a]:
                assert alone.consensus_p[a] < 0.5 + slack


def test_a_much_more_reliable_rater_can_outweigh_two():
    """Raters of very different reliability are weighed by it: where the minority read is the
    best rater's, the consensus follows it on most such answers (their reads say so)."""
    reads, truth, _ = half_points(10, [0.97, 0.55, 0.55, 0.55, 0.55], n=800, reads=(3,))
    result = consensus([reads], None, 5)
    best = [a for a, (_, minority) in majority_of_two(reads).items()
            if reads.score[(reads.answer == a) & (reads.rater == 0)].tolist() == [minority]]  # fmt: skip
    assert len(best) > 20
    followed = np.mean([result.items[0].consensus[a] == reads.score[(reads.answer == a)
                        & (reads.rater == 0)][0] for a in best])  # fmt: skip
    assert followed > 0.5
    assert np.mean(result.items[0].consensus[best] == truth[best]) > 0.5
