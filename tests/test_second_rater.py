"""Agreement with a second rater (engine/audit/queue/second_rater.py), as scikit-learn computes it, and
how it reaches the audit result."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import FLIPPED_CLASSES, FLIPPED_N, small_config
from sklearn.metrics import accuracy_score, cohen_kappa_score

from engine.audit.queue.second_rater import second_rater
from engine.embedding.vectors import Embedded
from engine.pipeline import run_audit


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
    second[:10] = (second[:10] + 1) % FLIPPED_CLASSES
    second[10:20] = -1
    responses = dataclasses.replace(result.responses, second_scores=second)
    rerun = run_audit(
        responses, small_config(bootstrap_samples=0), embedded=Embedded.precomputed(vectors)
    )
    assert rerun.second_rater.rows_with_both == FLIPPED_N - 10
    np.testing.assert_array_equal(np.flatnonzero(rerun.raters_disagree), np.arange(10))
