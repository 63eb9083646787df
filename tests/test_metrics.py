"""engine.model.metrics against scikit-learn, always over the full label set."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score, log_loss

from engine.model.metrics import agreement, better, confusion, evaluate


def random_case(n, n_classes, seed, never_predicted=None, never_scored=None):
    """Human scores and probabilities; optionally one label the model never predicts (its
    probability is never the largest) or one label no human used."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, n_classes, size=n)
    if never_scored is not None:
        human[human == never_scored] = (never_scored + 1) % n_classes
    logits = rng.normal(size=(n, n_classes)) + 2.0 * np.eye(n_classes)[human]
    if never_predicted is not None:
        logits[:, never_predicted] -= 100.0
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    return human, proba


def sklearn_metrics(human, proba):
    labels = list(range(proba.shape[1]))
    predicted = proba.argmax(axis=1)
    return {
        "accuracy": accuracy_score(human, predicted),
        "kappa": cohen_kappa_score(human, predicted, labels=labels),
        "qwk": cohen_kappa_score(human, predicted, labels=labels, weights="quadratic"),
        "near": float(np.mean(np.abs(human - predicted) <= 1)),
        "f1": f1_score(human, predicted, labels=labels, average="macro", zero_division=0),
        "nll": log_loss(human, np.clip(proba, 1e-15, 1.0), labels=labels, normalize=True),
    }


CASES = [
    dict(n=200, n_classes=3, seed=0),
    dict(n=57, n_classes=5, seed=1),
    dict(n=300, n_classes=2, seed=2),
    dict(n=120, n_classes=4, seed=3, never_predicted=3),
    dict(n=120, n_classes=4, seed=4, never_predicted=0),
    dict(n=90, n_classes=3, seed=5, never_scored=1),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_all_six_metrics_match_scikit_learn(case):
    human, proba = random_case(**case)
    if case.get("never_predicted") is not None:
        assert case["never_predicted"] not in proba.argmax(axis=1)
    ours = evaluate(human, proba)
    expected = sklearn_metrics(human, proba)
    assert set(ours) == set(expected)
    for name, value in expected.items():
        assert ours[name] == pytest.approx(value, rel=1e-10, abs=1e-12), name


def test_a_label_never_predicted_counts_as_zero_f1_in_the_macro_mean():
    human = np.array([0, 0, 1, 1, 2, 2])
    predicted = np.array([0, 0, 1, 1, 1, 1])  # 2 never predicted
    result = agreement(human, predicted, 3)
    # per-category F1: 1, 2/3 and 0 for the never-predicted 2 -> macro 5/9
    assert result["f1"] == pytest.approx(5 / 9)
    assert result["accuracy"] == pytest.approx(4 / 6)
    assert result["near"] == 1.0


def test_a_category_absent_from_both_still_counts_in_macro_f1():
    human = np.array([0, 0, 1, 1])
    predicted = np.array([0, 0, 1, 1])
    with_all = agreement(human, predicted, 3)["f1"]
    assert with_all == pytest.approx(
        f1_score(human, predicted, labels=[0, 1, 2], average="macro", zero_division=0)
    )
    assert with_all == pytest.approx(2 / 3)


def test_nll_clips_zero_probabilities_at_1e_15():
    human = np.array([0, 1])
    proba = np.array([[1.0, 0.0], [1.0, 0.0]])
    assert evaluate(human, proba)["nll"] == pytest.approx(-np.log(1e-15) / 2)


def test_confusion_rows_are_human_columns_predicted():
    matrix = confusion(np.array([0, 0, 2]), np.array([1, 0, 2]), 3)
    np.testing.assert_array_equal(matrix, [[1, 1, 0], [0, 0, 0], [0, 0, 1]])


def test_qwk_penalises_distant_disagreement_more_than_near():
    human = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2])
    near_miss = np.array([1, 1, 2, 0, 2, 2, 0, 1, 1])
    far_miss = np.array([2, 1, 2, 0, 1, 0, 0, 1, 0])
    assert agreement(human, near_miss, 3)["accuracy"] == agreement(human, far_miss, 3)["accuracy"]
    assert agreement(human, near_miss, 3)["qwk"] > agreement(human, far_miss, 3)["qwk"]


@pytest.mark.parametrize(
    "metric, a, b, expected",
    [
        ("kappa", 0.5, 0.4, True),
        ("kappa", 0.4, 0.5, False),
        ("kappa", 0.5, 0.5, False),  # ties are not better: the first configuration stays
        ("nll", 0.4, 0.5, True),
        ("nll", 0.5, 0.4, False),
        ("accuracy", float("nan"), 0.1, False),
        ("f1", 0.1, float("nan"), True),
    ],
)
def test_better_is_strict_and_lowest_wins_for_nll(metric, a, b, expected):
    assert better(metric, a, b) is expected
