"""Severity, evidence, second-rater agreement and near-duplicates (engine/audit/)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import clustered_embeddings, small_config, synthetic_responses
from sklearn.metrics import accuracy_score, cohen_kappa_score, roc_auc_score

from engine.audit.duplicates import near_duplicates
from engine.audit.evidence import EVIDENCE_COUNT
from engine.audit.second_rater import second_rater
from engine.audit.severity import severity
from engine.pipeline import run_audit

N, CLASSES, FLIPS = 300, 3, 15


@pytest.fixture(scope="module")
def flipped_run():
    """Clustered answers whose score is their cluster, with FLIPS scores deliberately changed."""
    vectors, scores = clustered_embeddings(N, CLASSES, noise=0.5, seed=3)
    rng = np.random.default_rng(7)
    flipped = rng.choice(N, size=FLIPS, replace=False)
    noisy = scores.copy()
    noisy[flipped] = (scores[flipped] + rng.integers(1, CLASSES, size=FLIPS)) % CLASSES
    result = run_audit(synthetic_responses(noisy), small_config(), embeddings=vectors)
    is_flipped = np.zeros(N, dtype=bool)
    is_flipped[flipped] = True
    return result, is_flipped, vectors


def test_severity_is_higher_for_deliberately_flipped_scores(flipped_run):
    result, is_flipped, _ = flipped_run
    assert result.severity[is_flipped].mean() > result.severity[~is_flipped].mean() + 0.5
    assert roc_auc_score(is_flipped, result.severity) > 0.95


def test_flipped_scores_come_first_in_the_review_order(flipped_run):
    result, is_flipped, _ = flipped_run
    first = result.review_order()[:FLIPS]
    assert is_flipped[first].mean() >= 0.8


def test_one_minus_p_is_the_probability_of_any_other_score():
    proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]])
    np.testing.assert_allclose(severity(proba, np.array([0, 0, 2])), [0.3, 0.9, 0.7])


def test_evidence_is_the_strongest_edges_of_the_fitted_graph(flipped_run):
    result, _, vectors = flipped_run
    best = result.selected
    weights = result.graph.weights(best.top_k, best.power, True).toarray()
    for i in (0, 17, 123):
        evidence = result.evidence[i]
        assert len(evidence) == EVIDENCE_COUNT
        row_weights = [nb.weight for nb in evidence]
        assert row_weights == sorted(row_weights, reverse=True)
        assert row_weights[0] == pytest.approx(weights[i].max())
        for nb in evidence:
            assert nb.index != i
            assert nb.weight == pytest.approx(weights[i, nb.index])
            assert nb.similarity == pytest.approx(float(vectors[i] @ vectors[nb.index]), abs=1e-5)


def test_evidence_text_lists_row_score_and_weight(flipped_run):
    from engine.outputs.tables import evidence_text

    result, _, _ = flipped_run
    parts = evidence_text(result, 5).split(";")
    assert len(parts) == EVIDENCE_COUNT
    for part, nb in zip(parts, result.evidence[5]):
        row, score, weight = part.split(":")
        assert int(row) == result.responses.rows[nb.index]
        assert score == result.responses.labels[result.responses.scores[nb.index]]
        assert float(weight) == pytest.approx(nb.weight, abs=5e-4)


def test_second_rater_agreement_matches_scikit_learn():
    rng = np.random.default_rng(11)
    first = rng.integers(0, 4, size=400)
    second = np.where(rng.random(400) < 0.7, first, rng.integers(0, 4, size=400))
    second[rng.choice(400, size=40, replace=False)] = -1
    predicted = np.where(rng.random(400) < 0.6, first, rng.integers(0, 4, size=400))
    summary = second_rater(first, second, predicted, 4)
    both = second >= 0
    a, b = first[both], second[both]
    labels = [0, 1, 2, 3]
    human = summary.human_human
    assert summary.rows_with_both == 360
    assert human["exact"] == pytest.approx(accuracy_score(a, b))
    assert human["adjacent"] == pytest.approx(np.mean(np.abs(a - b) <= 1))
    assert human["kappa"] == pytest.approx(cohen_kappa_score(a, b, labels=labels))
    assert human["qwk"] == pytest.approx(
        cohen_kappa_score(a, b, labels=labels, weights="quadratic")
    )
    assert summary.model_vs_first["kappa"] == pytest.approx(
        cohen_kappa_score(first, predicted, labels=labels)
    )
    assert summary.model_vs_second["qwk"] == pytest.approx(
        cohen_kappa_score(b, predicted[both], labels=labels, weights="quadratic")
    )
    np.testing.assert_array_equal(summary.disagree, both & (first != second))


def test_second_rater_is_none_without_a_second_column():
    assert second_rater(np.array([0, 1]), None, np.array([0, 1]), 2) is None


def test_second_rater_reaches_the_audit_result(flipped_run):
    result, _, vectors = flipped_run
    scores = result.responses.scores
    second = scores.copy()
    second[:10] = (second[:10] + 1) % CLASSES
    second[10:20] = -1
    responses = dataclasses.replace(result.responses, second_scores=second)
    rerun = run_audit(responses, small_config(bootstrap_samples=0), embeddings=vectors)
    assert rerun.second_rater.rows_with_both == N - 10
    np.testing.assert_array_equal(np.flatnonzero(rerun.raters_disagree), np.arange(10))


def test_near_duplicates_with_different_scores_are_found():
    vectors, scores = clustered_embeddings(120, 2, noise=0.8, seed=5)
    vectors[1] = vectors[0] + 0.001  # near-duplicate of 0, scored differently
    vectors[3] = vectors[2] + 0.001  # near-duplicate of 2, scored the same
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scores[0], scores[1], scores[2], scores[3] = 0, 1, 1, 1
    result = run_audit(synthetic_responses(scores), small_config(), embeddings=vectors)
    pairs = [(p.first, p.second) for p in result.near_duplicates]
    assert (0, 1) in pairs
    assert (2, 3) not in pairs
    for pair in result.near_duplicates:
        assert pair.similarity > 0.95
        assert scores[pair.first] != scores[pair.second]


def test_near_duplicates_lists_each_pair_once_most_similar_first():
    indices = np.array([[1, 2], [0, 2], [1, 0]])
    similarities = np.array([[0.99, 0.97], [0.99, 0.96], [0.96, 0.97]], dtype=np.float32)
    scores = np.array([0, 1, 0])
    found = near_duplicates(indices, similarities, scores, 0.95)
    assert [(p.first, p.second) for p in found] == [(0, 1), (1, 2)]
    assert found[0].similarity == pytest.approx(0.99)


def test_run_audit_refuses_embeddings_that_do_not_match_the_responses(
    sample_responses, sample_embeddings, sample_config
):
    import pytest

    from engine.core.errors import EmbeddingError
    from engine.pipeline import run_audit

    with pytest.raises(EmbeddingError, match="one per response"):
        run_audit(sample_responses, sample_config, embeddings=sample_embeddings[:-3])
