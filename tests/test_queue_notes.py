"""engine.results.queue_notes: why a place in the review queue may mislead (issue 38, point 5):
lone scores, suggestions against their own evidence, reads that agree; and the review shows them."""

from __future__ import annotations

import numpy as np
from helpers import SAMPLE_CSV

from engine.audit.queue.evidence import Neighbour
from engine.embedding.vectors import Embedded
from engine.input.responses import load_responses
from engine.pipeline import run_audit
from engine.results.queue_notes import (
    AGAINST_EVIDENCE,
    FLAGGED_WITH_EVIDENCE,
    LONE,
    READS_AGREE,
    evidence_score,
    lone_scores,
    queue_notes,
)
from engine.results.review import review_set

LABELS = ("0", "1", "2", "3")


def test_a_lone_score_is_one_used_once_in_its_own_item():
    scores = np.array([0, 0, 1, 2, 2, 0, 1, 3, 3, 3])
    starts = np.array([0, 5, 10])
    # item 1: 0,0,1,2,2 (the 1 is alone); item 2: 0,1,3,3,3 (0 and 1 are alone there)
    assert lone_scores(scores, starts).tolist() == [
        False, False, True, False, False, True, True, False, False, False
    ]  # fmt: skip


def test_the_evidence_score_sums_the_edges_and_breaks_ties_low():
    scores = np.array([3, 1, 1, 3, 2])
    heavy = [Neighbour(0, 0.9), Neighbour(1, 0.4), Neighbour(2, 0.4)]
    assert evidence_score(heavy, scores) == 3  # one close 3 outweighs two far 1s
    tie = [Neighbour(1, 0.5), Neighbour(3, 0.5)]
    assert evidence_score(tie, scores) == 1
    assert evidence_score([], scores) is None


def kinds(notes):
    return [kind for kind, _ in notes]


def test_each_note_is_given_when_and_only_when_its_case_holds():
    assert kinds(queue_notes(2, 2, False, 2, None, LABELS)) == []
    assert kinds(queue_notes(2, 2, True, 2, None, LABELS)) == [LONE]
    # flagged: the model suggests 0 while the closest answers mostly have 3
    notes = queue_notes(2, 0, False, 3, None, LABELS)
    assert kinds(notes) == [AGAINST_EVIDENCE]
    assert "mostly have 3, not the suggested 0" in notes[0][1]
    assert kinds(queue_notes(2, 0, False, 0, None, LABELS)) == []  # the evidence agrees
    assert kinds(queue_notes(2, 0, False, None, None, LABELS)) == []  # no evidence shown
    assert kinds(queue_notes(1, 1, False, 1, np.array([1, 1, 1]), LABELS)) == [READS_AGREE]
    assert kinds(queue_notes(1, 1, False, 1, np.array([1, 2]), LABELS)) == []
    assert kinds(queue_notes(1, 1, False, 1, np.array([1]), LABELS)) == []
    # in the flagged list while the closest answers mostly carry its own score: said why
    notes = queue_notes(2, 2, False, 2, None, LABELS, flagged=True)
    assert kinds(notes) == [FLAGGED_WITH_EVIDENCE] and "mostly have 2 too" in notes[0][1]
    assert kinds(queue_notes(2, 2, False, 3, None, LABELS, flagged=True)) == []


def test_the_sample_runs_notes_match_their_cases(sample_config, sample_embeddings):
    responses = load_responses(SAMPLE_CSV, sample_config)
    embedded = Embedded.precomputed(sample_embeddings)
    sample_run = run_audit(
        responses, sample_config.updated(bootstrap_samples=50), embedded=embedded
    )
    review = review_set([sample_run])
    scores = np.asarray(sample_run.responses.scores)
    lone = lone_scores(scores, np.array([0, scores.size]))
    for i in range(scores.size):
        found = kinds(review.notes(i))
        assert (LONE in found) == bool(lone[i])
        if AGAINST_EVIDENCE in found:
            assert sample_run.predicted[i] != scores[i]
        said = FLAGGED_WITH_EVIDENCE in found
        agrees = evidence_score(sample_run.evidence[i], scores) == scores[i]
        assert said == bool(sample_run.flagged[i] and agrees)


def test_answers_whose_reads_all_agree_go_last_in_the_queue_in_their_own_order():
    from engine.audit.queue.severity import queue_order

    severity = np.array([0.9, 0.8, 0.95, 0.1, 0.7])
    confirmed = np.array([True, False, True, False, False])
    assert queue_order(severity).tolist() == [2, 0, 1, 4, 3]
    assert queue_order(severity, confirmed).tolist() == [1, 4, 3, 2, 0]
    assert queue_order(severity, np.zeros(5, bool)).tolist() == [2, 0, 1, 4, 3]


def test_an_answer_is_confirmed_when_read_twice_or_more_and_every_read_agrees():
    from engine.input.several_reads import Reads

    # answer 0: 1, 1 (confirmed); 1: read once; 2: 2, 2, 1 (a third read differs); 3: 0, 0, 0
    answer = np.array([0, 0, 1, 2, 2, 2, 3, 3, 3])
    score = np.array([1, 1, 2, 2, 2, 1, 0, 0, 0])
    first = np.r_[True, answer[1:] != answer[:-1]]
    reads = Reads(answer, ("",) * 9, score, np.full(9, np.nan), np.arange(1, 10), first)
    assert reads.confirmed(4).tolist() == [True, False, False, True]


def test_the_review_lists_agreeing_reads_after_the_others(sample_config, sample_embeddings):
    config = sample_config.updated(second_score_column="score2", bootstrap_samples=50)
    responses = load_responses(SAMPLE_CSV, config)
    result = run_audit(responses, config, embedded=Embedded.precomputed(sample_embeddings))
    confirmed = responses.reads.confirmed(len(responses))
    assert 0 < confirmed.sum() < len(responses)
    order = review_set([result]).review_order()
    assert (order == result.review_order()).all()
    placed = confirmed[order]
    assert not placed[: (~confirmed).sum()].any() and placed[(~confirmed).sum() :].all()
