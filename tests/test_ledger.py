"""engine.actions.ledger: every read of a run (the file's and those typed in its review, with
their kinds) with what the run knows of it: the probability it is wrong is the consensus's
1 - p(score) where the answer is read twice or more and the severity where it is read once, its
risk is that probability's percentile among the reads of the same evidence, and its direction
is the score against the run's best score for the answer."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import MULTI_READ_SETTINGS, multi_read_frame, run_frame, session_config
from scipy.stats import rankdata

from engine.actions.ledger import (
    BACKREAD,
    CONSENSUS,
    SEVERITY,
    average_ranks,
    ledger_of,
    risk_percentiles,
)
from engine.results.added_reads import AddedRead, session_with_added


@pytest.fixture(scope="module")
def planted():
    frame, vectors, _ = multi_read_frame(n=(60, 50), seed=4)
    return run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS))


def test_every_read_of_the_file_with_its_rater_score_and_place(planted):
    ledger = ledger_of(planted)
    assert len(ledger) == sum(len(r.responses.reads) for r in planted.results)
    assert ledger.raters == tuple(
        sorted({n for r in planted.results for n in r.responses.reads.rater})
    )
    for k, result in enumerate(planted.results):
        reads = result.responses.reads
        mine = ledger.item == k
        assert np.array_equal(ledger.answer[mine], reads.answer)
        assert [ledger.raters[r] for r in ledger.rater[mine]] == list(reads.rater)
        assert np.array_equal(ledger.score[mine], reads.score)
        assert np.array_equal(ledger.order[mine], reads.row)  # no time column: the data row
    assert set(ledger.kind) == {""} and np.all(ledger.expert == -1)
    assert ledger.n_answers == sum(len(r.responses) for r in planted.results)


def test_a_read_is_wrong_with_the_consensus_probability_or_the_severity(planted):
    ledger = ledger_of(planted)
    for k, result in enumerate(planted.results):
        found = planted.reads.consensus.items[k]
        mine = np.flatnonzero(ledger.item == k)
        answer, score = ledger.answer[mine], ledger.score[mine]
        many = found.reads[answer] >= 2
        np.testing.assert_allclose(ledger.wrong[mine[many]],
                                   1 - found.proba[answer[many], score[many]])  # fmt: skip
        np.testing.assert_allclose(ledger.wrong[mine[~many]], result.severity[answer[~many]])
        assert set(ledger.evidence[mine[many]]) <= {CONSENSUS}
        assert set(ledger.evidence[mine[~many]]) <= {SEVERITY}
        best = np.where(many, found.consensus[answer], result.predicted[answer])
        assert np.array_equal(ledger.direction[mine], np.sign(score - best))
    assert np.all((ledger.risk > 0) & (ledger.risk <= 1))


def test_risk_is_a_percentile_within_each_evidence_alone():
    wrong = np.array([0.9, 0.1, 0.5, 0.3, 0.2, 0.2])
    evidence = np.array([CONSENSUS, CONSENSUS, CONSENSUS, SEVERITY, SEVERITY, SEVERITY], object)
    risk = risk_percentiles(wrong, evidence)
    np.testing.assert_allclose(risk[:3], rankdata(wrong[:3]) / 3)
    np.testing.assert_allclose(risk[3:], rankdata(wrong[3:]) / 3)
    moved = risk_percentiles(np.r_[wrong[:3] * 100, wrong[3:]], evidence)
    np.testing.assert_allclose(moved, risk)  # no threshold on either's raw value


def test_reads_typed_in_the_review_join_with_their_kind_after_the_files(planted):
    responses = planted.results[0].responses
    j = int(np.flatnonzero(responses.reads.per_answer(len(responses)) == 2)[0])
    readers = {n for a, n in zip(responses.reads.answer, responses.reads.rater) if a == j}
    added = [AddedRead(int(responses.rows[j]), responses.ids[j], "Zoe", responses.labels[0],
                       "2026-01-02T00:00:00+00:00", "lead", BACKREAD)]  # fmt: skip
    assert "Zoe" not in readers
    ledger = ledger_of(session_with_added(planted, added), added)
    typed = np.flatnonzero(ledger.kind == BACKREAD)
    assert typed.size == 1 and ledger.raters[ledger.rater[typed[0]]] == "Zoe"
    assert ledger.answer[typed[0]] == j and ledger.item[typed[0]] == 0
    assert ledger.order[typed[0]] > ledger.order[ledger.kind == ""].max()


def test_average_ranks_are_scipys_rankdata():
    """engine.actions.ledger.average_ranks against scipy.stats.rankdata(method="average") on
    random values with ties and the -1 that stands for an unknown risk."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        values = rng.integers(0, 20, rng.integers(1, 300)).astype(float)
        values[rng.random(values.size) < 0.2] = -1.0
        np.testing.assert_array_equal(average_ranks(values), rankdata(values, method="average"))
