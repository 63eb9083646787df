"""engine.model.metrics against scikit-learn: every figure parm reports, computed the same way."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    log_loss,
)

from engine.model.metrics import NLL_CLIP, agreement, better, confusion, evaluate, metric_names


def random_case(n, n_classes, seed, never_predicted=None, never_scored=None, absent=None):
    """Human scores and probabilities; optionally one label the model never predicts (its
    probability is never the largest), one label no human used, or one label that occurs in
    neither (a scale point of the file that this comparison never sees)."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, n_classes, size=n)
    for label in (never_scored, absent):
        if label is not None:
            human[human == label] = (label + 1) % n_classes
    logits = rng.normal(size=(n, n_classes)) + 2.0 * np.eye(n_classes)[human]
    for label in (never_predicted, absent):
        if label is not None:
            logits[:, label] -= 100.0
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    return human, proba


def sklearn_metrics(human, proba):
    """The reference: scikit-learn's defaults, except QWK's distances over the whole scale."""
    scale = list(range(proba.shape[1]))
    predicted = proba.argmax(axis=1)
    return {
        "accuracy": accuracy_score(human, predicted),
        "kappa": cohen_kappa_score(human, predicted),
        "qwk": cohen_kappa_score(human, predicted, labels=scale, weights="quadratic"),
        "near": float(np.mean(np.abs(human - predicted) <= 1)),
        "f1": f1_score(human, predicted, average="macro"),
        "nll": log_loss(human, np.clip(proba, NLL_CLIP, 1.0), labels=scale),
    }


CASES = [
    dict(n=200, n_classes=3, seed=0),
    dict(n=57, n_classes=5, seed=1),
    dict(n=300, n_classes=2, seed=2),
    dict(n=120, n_classes=4, seed=3, never_predicted=3),
    dict(n=120, n_classes=4, seed=4, never_predicted=0),
    dict(n=90, n_classes=3, seed=5, never_scored=1),
    dict(n=150, n_classes=5, seed=6, absent=2),
    dict(n=150, n_classes=4, seed=7, absent=0, never_predicted=3),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_all_six_metrics_match_scikit_learn(case):
    human, proba = random_case(**case)
    predicted = proba.argmax(axis=1)
    if case.get("never_predicted") is not None:
        assert case["never_predicted"] not in predicted
    if case.get("absent") is not None:
        assert case["absent"] not in np.concatenate([human, predicted])
    ours = evaluate(human, proba)
    expected = sklearn_metrics(human, proba)
    assert set(ours) == set(expected)
    for name, value in expected.items():
        assert ours[name] == pytest.approx(value, rel=1e-10, abs=1e-12), name
    np.testing.assert_array_equal(
        confusion(human, predicted, proba.shape[1]),
        confusion_matrix(human, predicted, labels=list(range(proba.shape[1]))),
    )


def test_macro_f1_averages_over_labels_in_truth_or_prediction():
    human = np.array([0, 0, 1, 1, 2, 2])
    predicted = np.array([0, 0, 1, 1, 1, 1])  # 2 never predicted, 3 in neither
    result = agreement(human, predicted, 4)
    # per-category F1: 1, 2/3 and 0 for the never-predicted 2; label 3 is not averaged
    assert result["f1"] == pytest.approx(5 / 9)
    assert result["f1"] == pytest.approx(f1_score(human, predicted, average="macro"))
    assert result["accuracy"] == pytest.approx(4 / 6)
    assert result["near"] == 1.0


def test_qwk_distances_are_over_the_whole_scale():
    """With the middle score absent, scikit-learn's default labels would call 0 and 2 adjacent;
    parm keeps them two points apart, as labels=range(C+1) does."""
    human = np.array([0, 0, 2, 2, 3, 3, 0, 2])
    predicted = np.array([0, 2, 2, 3, 3, 0, 0, 2])
    ours = agreement(human, predicted, 4)["qwk"]
    assert ours == pytest.approx(
        cohen_kappa_score(human, predicted, labels=[0, 1, 2, 3], weights="quadratic")
    )
    assert ours != pytest.approx(cohen_kappa_score(human, predicted, weights="quadratic"))


def test_nominal_scores_leave_out_the_metrics_that_need_an_order():
    human, proba = random_case(100, 3, seed=8)
    ordered, nominal = evaluate(human, proba), evaluate(human, proba, ordered=False)
    assert tuple(nominal) == metric_names(ordered=False) == ("accuracy", "kappa", "f1", "nll")
    assert tuple(ordered) == metric_names()
    for name in nominal:
        assert nominal[name] == ordered[name]


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


def test_second_rater_table_matches_scikit_learn():
    """Rater against rater on the rows both scored, the model against each; score 3 of the
    five is used by nobody, so the figures must not depend on it."""
    from engine.audit.queue.second_rater import second_rater

    rng = np.random.default_rng(9)
    first = rng.choice([0, 1, 2, 4], size=160)
    second = np.where(rng.random(160) < 0.7, first, rng.choice([0, 1, 2, 4], size=160))
    second[rng.random(160) < 0.3] = -1  # not scored twice
    predicted = np.where(rng.random(160) < 0.6, first, rng.choice([0, 1, 2, 4], size=160))
    table = second_rater(first, second, predicted, 5)
    both = second >= 0
    pairs = {
        "human_human": (first[both], second[both]),
        "model_vs_first": (first, predicted),
        "model_vs_second": (second[both], predicted[both]),
    }
    for name, (a, b) in pairs.items():
        figures = getattr(table, name)
        assert figures["exact"] == pytest.approx(accuracy_score(a, b)), name
        assert figures["adjacent"] == pytest.approx(np.mean(np.abs(a - b) <= 1)), name
        assert figures["kappa"] == pytest.approx(cohen_kappa_score(a, b)), name
        qwk = cohen_kappa_score(a, b, labels=list(range(5)), weights="quadratic")
        assert figures["qwk"] == pytest.approx(qwk), name


def test_bootstrap_point_estimates_match_scikit_learn():
    from engine.audit.intervals import bootstrap_agreement

    human, proba = random_case(150, 4, seed=10, never_predicted=2)
    predicted = proba.argmax(axis=1)
    intervals = bootstrap_agreement(human, predicted, 4, samples=20, seed=0)
    assert intervals["accuracy"].estimate == pytest.approx(accuracy_score(human, predicted))
    assert intervals["kappa"].estimate == pytest.approx(cohen_kappa_score(human, predicted))
    assert intervals["qwk"].estimate == pytest.approx(
        cohen_kappa_score(human, predicted, labels=[0, 1, 2, 3], weights="quadratic")
    )


def test_the_metrics_computed_are_the_metrics_named_once():
    """engine.core.metric_names lists every metric once, in the order evaluate gives them; the
    ones needing an order are the ones left out for nominal scores."""
    from engine.core.metric_names import METRIC_NAMES, METRICS
    from engine.model.metrics import evaluate

    human, proba = random_case(60, 4, seed=3)
    assert tuple(evaluate(human, proba)) == METRIC_NAMES
    nominal = tuple(m.name for m in METRICS if not m.needs_order)
    assert tuple(evaluate(human, proba, ordered=False)) == nominal


@pytest.mark.parametrize("ordered", [True, False])
def test_headline_agreement_is_agreements_headline_figures_exactly(ordered):
    """The bootstrap's shortcut gives the very figures `agreement` gives (same arithmetic)."""
    from engine.model.metrics import headline_agreement, headline_metrics

    rng = np.random.default_rng(3)
    for n_classes, n in ((2, 7), (3, 30), (5, 200), (4, 1)):
        human = rng.integers(0, n_classes, n)
        predicted = np.where(rng.random(n) < 0.6, human, rng.integers(0, n_classes, n))
        full = agreement(human, predicted, n_classes, ordered)
        got = headline_agreement(human, predicted, n_classes, ordered)
        assert got == tuple(full[m] for m in headline_metrics(ordered))
