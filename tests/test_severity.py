"""The review queue's severity: the out-of-fold classifier against scikit-learn, the severity
against scikit-learn's recipe (the stack on a large item, the mean of both classifiers and the
neighbours' vote on a small one), flipped scores first, and severity in run_audit (range, queue
order, seeds, small files, cancel, the dense graph)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import (
    FLIPS,
    answers_for,
    as_split,
    clustered_embeddings,
    small_config,
    synthetic_responses,
)
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from engine.audit.queue import severity as audit
from engine.audit.queue.answer_groups import group_folds, similar_groups
from engine.audit.queue.calibration import calibrated
from engine.audit.queue.severity import severity
from engine.core.errors import Cancelled
from engine.core.progress import CancelToken, Reporter
from engine.embedding.vectors import Embedded
from engine.model.classifier import narrow, out_of_fold_proba, stratified_folds
from engine.model.lexical import gram_features, lexical_features
from engine.pipeline import run_audit
from engine.results.queue import review_view
from engine.results.review import review_set


def fixture(n=240, classes=3, seed=0, noise=1.0):
    """Float64 vectors in overlapping clusters (the classifier is not perfect) and scores."""
    vectors, scores = clustered_embeddings(n, classes, dim=12, noise=noise, seed=seed)
    return vectors.astype(np.float64), scores


def test_folds_cover_every_response_once_and_are_stratified_and_seeded():
    scores = np.repeat([0, 1, 2], [103, 61, 17])
    parts = stratified_folds(scores, 5, seed=3)
    held = np.concatenate(parts)
    np.testing.assert_array_equal(np.sort(held), np.arange(scores.size))
    sizes = [part.size for part in parts]
    assert max(sizes) - min(sizes) <= 1
    for score, count in zip([0, 1, 2], [103, 61, 17]):
        per_fold = [int(np.sum(scores[part] == score)) for part in parts]
        assert max(per_fold) - min(per_fold) <= 1 and sum(per_fold) == count
    again = stratified_folds(scores, 5, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again))
    other = stratified_folds(scores, 5, seed=4)
    assert not all(np.array_equal(a, b) for a, b in zip(parts, other))


@pytest.mark.parametrize("classes", [2, 4])
def test_out_of_fold_classifier_matches_scikit_learn_cross_val_predict(classes):
    vectors, scores = fixture(classes=classes, seed=classes)
    parts = stratified_folds(scores, 5, seed=0)
    ours = out_of_fold_proba(vectors, scores, classes, parts)
    reference = cross_val_predict(
        LogisticRegression(),
        vectors,
        scores,
        cv=as_split(parts, scores.size),
        method="predict_proba",
    )
    np.testing.assert_allclose(ours, reference, atol=1e-6)


def test_with_fewer_responses_than_dimensions_the_gram_rows_give_the_same_optimum():
    vectors, scores = clustered_embeddings(40, 3, dim=64, noise=0.8, seed=2)
    wide = vectors.astype(np.float64)
    z = narrow(wide)
    assert z.shape == (40, 40) and narrow(wide[:, :30]) is not None
    assert narrow(wide[:, :30]).shape == (40, 30)  # more responses than columns: unchanged
    np.testing.assert_allclose(z @ z.T, wide @ wide.T, atol=1e-8)
    split = as_split(stratified_folds(scores, 5, seed=0), 40)
    model = LogisticRegression(C=10.0, tol=1e-10, max_iter=10_000)
    on_z = cross_val_predict(model, z, scores, cv=split, method="predict_proba")
    on_x = cross_val_predict(model, wide, scores, cv=split, method="predict_proba")
    np.testing.assert_allclose(on_z, on_x, atol=1e-6)


def test_standardised_out_of_fold_fit_matches_a_scaler_pipeline():
    vectors, scores = fixture(seed=5)
    features = 3.0 * vectors[:, :6] + np.arange(6)  # off-centre, unequal spreads
    parts = stratified_folds(scores, 4, seed=1)
    ours = out_of_fold_proba(features, scores, 3, parts, 1.0, standardise=True, max_iter=1000)
    pipeline = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    reference = cross_val_predict(
        pipeline, features, scores, cv=as_split(parts, scores.size), method="predict_proba"
    )
    np.testing.assert_allclose(ours, reference, atol=1e-6)


@pytest.mark.parametrize("standardise", [False, True])
def test_scores_sharing_rows_give_exactly_the_repeated_rows_numbers(standardise):
    # An answer read two or three times: its vector once and `rows` saying whose read is whose.
    vectors, _ = fixture(n=120, seed=7)
    vectors = (3.0 * vectors + np.arange(vectors.shape[1])).astype(np.float32)
    rng = np.random.default_rng(7)
    rows = np.repeat(np.arange(120), rng.integers(1, 4, 120))
    scores = np.clip(np.argmax(vectors[rows, :3], axis=1) + rng.integers(-1, 2, rows.size), 0, 2)
    parts = stratified_folds(scores, 5, seed=1)
    repeated = out_of_fold_proba(vectors[rows], scores, 3, parts, 10.0, standardise)
    shared = out_of_fold_proba(vectors, scores, 3, parts, 10.0, standardise, rows=rows)
    np.testing.assert_array_equal(shared, repeated)


def scikit_learn_classifiers(vectors, texts, scores, split):
    """The two classifiers as scikit-learn computes them: LogisticRegression(C=10) out of fold
    on the embeddings, and on the lexical features' Gram representation (equal to TF-IDF at the
    optimum and to TfidfVectorizer's features: tests/test_lexical.py)."""
    embedded = cross_val_predict(
        LogisticRegression(C=10.0), vectors, scores, cv=split, method="predict_proba"
    )
    lexical = gram_features(lexical_features(texts), audit.LEXICAL_EXACT_UP_TO, 0)
    lexical = lexical.astype(audit.LEXICAL_DTYPE)
    words = cross_val_predict(
        LogisticRegression(C=10.0), lexical, scores, cv=split, method="predict_proba"
    )
    return embedded, words


def scikit_learn_stack(vectors, texts, t, s, scores, split):
    """The random folds' severity as scikit-learn computes it: both classifiers (C = 10) out of
    fold, then a standardised logistic model on their log probabilities and PARM's features,
    out of fold on the same folds; 1 - p(human)."""
    embedded, words = scikit_learn_classifiers(vectors, texts, scores, split)
    features = np.hstack([np.log(embedded), t / s[:, None], np.log1p(s)[:, None], np.log(words)])
    pipeline = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    stacked = cross_val_predict(pipeline, features, scores, cv=split, method="predict_proba")
    return 1.0 - stacked[np.arange(scores.size), scores], (embedded + words) / 2


def scikit_learn_groups(vectors, texts, scores, seed, fallback):
    """The group folds' severity with scikit-learn's classifiers: folds of whole groups of
    similar answers, an answer whose score its fold's training rows lack keeping `fallback`."""
    parts = group_folds(similar_groups(vectors, audit.GROUPS, seed), audit.SEVERITY_FOLDS, seed)
    embedded, words = scikit_learn_classifiers(vectors, texts, scores, as_split(parts, scores.size))
    proba = (embedded + words) / 2
    for held in parts:
        train = np.setdiff1d(np.arange(scores.size), held)
        unseen = held[~np.isin(scores[held], scores[train])]
        proba[unseen] = fallback[unseen]
    return 1.0 - proba[np.arange(scores.size), scores]


def logit(p):
    p = np.clip(p, audit.LOG_FLOOR, 1 - audit.LOG_FLOOR)
    return np.log(p / (1 - p))


def test_review_severity_on_a_large_item_is_the_documented_scikit_learn_recipe():
    """The random folds' stack and the group folds' mean, their logits averaged."""
    n = audit.ROWS_PER_PARAMETER * audit.stacker_parameters(3)  # the smallest stacked item
    assert audit.stacks(n, 3) and not audit.stacks(n - 1, 3)
    vectors, scores = fixture(n=n, seed=7)
    texts = answers_for(scores, seed=7)
    t = np.random.default_rng(0).random((n, 3)) * 5
    s = t.sum(axis=1)
    split = as_split(stratified_folds(scores, 5, seed=2), scores.size)
    stacked, mean = scikit_learn_stack(vectors, texts, t, s, scores, split)
    grouped = scikit_learn_groups(vectors, texts, scores, 2, mean)
    expected = 1 / (1 + np.exp(-(logit(stacked) + logit(grouped)) / 2))
    ours = audit.review_severity(vectors, texts, (t, s), scores, 3, seed=2)
    # The lexical model runs in float32 and, like scikit-learn's, stops after 100 iterations
    # before converging, so the two paths part by rounding: they agree to about 1e-2, not 1e-6
    # (a missing input or another C moves severities by tenths).
    np.testing.assert_allclose(ours, expected, atol=1e-2)
    assert spearmanr(ours, expected)[0] > 0.999
    assert np.corrcoef(ours, expected)[0, 1] > 0.9999


def test_the_stacker_needs_ten_responses_per_parameter():
    assert audit.stacker_parameters(2) == 8 and audit.stacker_parameters(3) == 33
    assert audit.stacker_parameters(6) == 6 * 20
    assert not audit.stacks(79, 2) and audit.stacks(80, 2)
    assert not audit.stacks(1199, 6) and audit.stacks(1200, 6)


def test_review_severity_on_a_small_item_is_the_mean_of_both_classifiers_logits():
    """Over both kinds of folds (random and groups of similar answers), the logits averaged."""
    vectors, scores = fixture(n=60, seed=3)
    texts = answers_for(scores, seed=3)
    split = as_split(stratified_folds(scores, 5, seed=0), scores.size)
    embedded, words = scikit_learn_classifiers(vectors, texts, scores, split)
    mean = (embedded + words) / 2
    plain = 1.0 - mean[np.arange(scores.size), scores]
    grouped = scikit_learn_groups(vectors, texts, scores, 0, mean)
    expected = 1 / (1 + np.exp(-(logit(plain) + logit(grouped)) / 2))
    t = np.ones((60, 3))
    ours = audit.review_severity(vectors, texts, (t, t.sum(axis=1)), scores, 3, 0)
    np.testing.assert_allclose(ours, expected, atol=1e-5)


@pytest.mark.parametrize("n", [40, 400])
def test_flipped_scores_are_ranked_first_on_small_and_large_items(n):
    vectors, scores = clustered_embeddings(n, 3, dim=12, noise=0.4, seed=n)
    texts = answers_for(scores, seed=n)
    flipped = np.random.default_rng(n).choice(n, size=max(2, n // 20), replace=False)
    noisy = scores.copy()
    noisy[flipped] = (scores[flipped] + 1) % 3
    t = np.ones((n, 3))
    ranked = audit.review_severity(vectors, texts, (t, t.sum(axis=1)), noisy, 3, 0)
    assert audit.stacks(n, 3) == (n == 400)
    assert np.all((ranked >= 0) & (ranked <= 1))
    top = audit.queue_order(ranked)[: flipped.size]
    assert set(top) == set(flipped)


def test_a_score_no_training_response_has_gets_probability_zero():
    vectors, scores = fixture(n=60, seed=2)
    scores[7] = 3  # the only response with score 3
    parts = stratified_folds(scores, 5, seed=0)
    proba = out_of_fold_proba(vectors, scores, 4, parts)
    assert proba[7, 3] == 0.0
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_folds_shrink_for_small_files_and_vanish_when_no_two_are_possible():
    assert len(stratified_folds(np.array([0, 0, 0, 1, 1, 2]), 5, 0)) == 3
    assert stratified_folds(np.arange(8), 5, 0) == []


def test_classifier_reports_progress_and_stops_when_cancelled():
    vectors, scores = fixture(n=100)
    parts = stratified_folds(scores, 5, seed=0)
    events = []
    out_of_fold_proba(vectors, scores, 3, parts, reporter=Reporter(events.append))
    assert events and {e.stage for e in events} == {"audit"}
    # The bar ends full: the last event says every fold is done.
    assert (events[-1].done, events[-1].total) == (5, 5)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        audit.review_severity(
            vectors,
            answers_for(scores),
            (vectors[:, :3] ** 2, np.ones(100)),
            scores,
            3,
            0,
            Reporter(None, token),
        )


@pytest.fixture(scope="module")
def noisy_run():
    vectors, scores = clustered_embeddings(300, 3, noise=0.9, seed=11)
    flip = np.random.default_rng(1).random(300) < 0.15
    scores = np.where(flip, (scores + 1) % 3, scores)
    return run_audit(
        synthetic_responses(scores), small_config(), embedded=Embedded.precomputed(vectors)
    ), vectors


def test_severity_stays_in_zero_to_one_and_the_queue_is_sorted_by_it(noisy_run):
    result, _ = noisy_run
    assert np.all((result.severity >= 0) & (result.severity <= 1))
    order = result.review_order()
    np.testing.assert_array_equal(order, np.argsort(-result.severity, kind="stable"))
    review = review_set([result])
    np.testing.assert_array_equal(review_view(review, show_all=True), order)
    flagged_only = review_view(review)
    assert np.all(result.flagged[flagged_only]) and flagged_only.size == result.flagged.sum()
    assert np.all(np.diff(result.severity[flagged_only]) <= 0)


def test_run_audit_severity_is_the_review_severity_of_its_own_fit(noisy_run):
    result, vectors = noisy_run
    responses = result.responses
    raw = audit.review_severity(
        vectors, responses.texts, result.tuning.features, responses.scores, 3, 0
    )
    np.testing.assert_array_equal(result.severity, calibrated(raw, responses.scores, 3))


def test_the_same_input_and_seed_give_the_same_severity_and_another_seed_other_folds(noisy_run):
    result, vectors = noisy_run
    again = run_audit(result.responses, small_config(), embedded=Embedded.precomputed(vectors))
    np.testing.assert_array_equal(again.severity, result.severity)
    other = run_audit(
        result.responses, small_config(seed=1), embedded=Embedded.precomputed(vectors)
    )
    assert not np.array_equal(other.severity, result.severity)
    assert np.corrcoef(other.severity, result.severity)[0, 1] > 0.8


def test_severity_works_on_the_dense_graph(noisy_run):
    result, vectors = noisy_run
    dense = run_audit(
        result.responses,
        small_config(similarity_top_k=None),
        embedded=Embedded.precomputed(vectors),
    )
    assert np.all((dense.severity >= 0) & (dense.severity <= 1))
    assert np.corrcoef(dense.severity, result.severity)[0, 1] > 0.5


def test_small_files_with_a_single_response_in_a_score_get_a_severity():
    vectors, scores = clustered_embeddings(14, 3, noise=0.3, seed=4)
    scores[0] = 3  # one response alone in its score
    result = run_audit(
        synthetic_responses(scores),
        small_config(similarity_top_k=[3, 5]),
        embedded=Embedded.precomputed(vectors),
    )
    assert np.all((result.severity >= 0) & (result.severity <= 1))
    # No other response supports score 3: the most severe, and on its calibrated scale (the
    # classifiers give it 1 - 1e-6, their floor).
    raw = audit.review_severity(
        vectors, result.responses.texts, result.tuning.features, scores, 4, 0
    )
    assert raw[0] == pytest.approx(1.0, abs=1e-4) and raw[0] == raw.max()
    np.testing.assert_array_equal(result.severity, calibrated(raw, scores, 4))
    assert result.review_order()[0] == 0
    assert not any("Too few responses" in w for w in result.warnings)


def test_without_two_folds_severity_falls_back_to_the_parm_fit_and_says_so():
    vectors, _ = clustered_embeddings(12, 3, noise=0.3, seed=4)
    scores = np.arange(12)  # twelve scores, one response each
    result = run_audit(
        synthetic_responses(scores),
        small_config(similarity_top_k=[3]),
        embedded=Embedded.precomputed(vectors),
    )
    raw = audit.severity(result.fitted.proba, scores)
    np.testing.assert_allclose(result.severity, calibrated(raw, scores, 12))
    assert any("Too few responses per score" in w for w in result.warnings)


def test_severity_is_higher_for_deliberately_flipped_scores(flipped_run):
    result, is_flipped, _ = flipped_run
    # The synthetic texts ("answer 17") give the lexical model nothing to go on, so its
    # probabilities pull every severity towards the middle, and the severity is calibrated to
    # the chance another read differs (engine.audit.queue.calibration), which is rarely near 0 or 1:
    # the order is what must hold, with a clear gap.
    assert result.severity[is_flipped].mean() > result.severity[~is_flipped].mean() + 0.2
    assert roc_auc_score(is_flipped, result.severity) > 0.95


def test_flipped_scores_come_first_in_the_review_order(flipped_run):
    result, is_flipped, _ = flipped_run
    first = result.review_order()[:FLIPS]
    assert is_flipped[first].mean() >= 0.8


def test_one_minus_p_is_the_probability_of_any_other_score():
    proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]])
    np.testing.assert_allclose(severity(proba, np.array([0, 0, 2])), [0.3, 0.9, 0.7])


def test_the_lexical_model_is_exact_up_to_its_limit_and_uses_landmarks_above(monkeypatch):
    seen = []

    def recording(features, landmarks, seed, dtype):
        seen.append((features.shape[0], landmarks))
        return gram_features(features, landmarks, seed, dtype)

    monkeypatch.setattr(audit, "gram_features", recording)
    monkeypatch.setattr(audit, "LEXICAL_EXACT_UP_TO", 60)
    monkeypatch.setattr(audit, "LEXICAL_LANDMARKS", 25)
    for n in (60, 90):
        scores = np.arange(n) % 3
        vectors, _ = clustered_embeddings(n, 3, seed=n)
        texts = answers_for(scores, seed=n)
        audit.classifier_proba(
            vectors, texts, scores, 3, stratified_folds(scores, 5, 0), 0, Reporter()
        )
    assert seen == [(60, 60), (90, 25)]  # exact (m = N) at the limit, Nystrom above it


def test_the_rater_expectation_joins_with_a_third_of_the_logit():
    raw = np.array([0.1, 0.5, 0.9, 0.3])
    proba = np.array([[0.2, 0.8], [0.5, 0.5], [0.9, 0.1], [0.7, 0.3]])
    scores = np.array([1, 0, 1, 0])
    left = 1 - proba[np.arange(4), scores]  # 0.2, 0.5, 0.9, 0.3: the rater model agrees
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    expected = 1 / (1 + np.exp(-(2 / 3 * logit(raw) + 1 / 3 * logit(left))))
    joined = audit.with_rater_expectation(raw, proba, scores)
    np.testing.assert_allclose(joined, expected, rtol=1e-12)
    np.testing.assert_allclose(joined[1:3], raw[1:3], rtol=1e-12)  # the same where they agree
    assert joined[0] > raw[0] and joined[3] == pytest.approx(raw[3])


def test_the_expectation_weighs_more_where_its_rater_read_more_than_the_others():
    own = np.array([60, 70, 50, 120, 168, 12, 5])
    others = np.array([180, 70, 150, 80, 72, 228, 0])
    share = audit.expectation_share(own, others)
    np.testing.assert_allclose(share[[0, 1, 2, 5]], 1 / 3, rtol=1e-15)
    assert share[3] == pytest.approx(1 / 3 * 120 / 80, rel=1e-15)  # 0.5
    assert share[4] == share[6] == 2 / 3  # capped: 168 / 72 / 3 = 0.78; no other rater
    raw, proba, scores = np.array([0.2, 0.2]), np.array([[0.9, 0.1], [0.9, 0.1]]), np.array([1, 1])
    heavier = audit.with_rater_expectation(raw, proba, scores, np.array([1 / 3, 2 / 3]))
    assert raw[0] < heavier[0] < heavier[1]  # the expectation doubts the score, more at 2/3
    assert heavier[0] == audit.with_rater_expectation(raw, proba, scores)[0]


def _central_rater(seed: int):
    """An item of 240 answers dealt to four raters; rater 0 never gives the top score (each of
    their top scores one step lower, as bench_severity_raters.py plants it). Responses with the
    raters named, and the moved mask."""
    vectors, scores = clustered_embeddings(240, 3, dim=12, noise=1.5, seed=seed)
    rater = np.random.default_rng(seed).integers(4, size=240)
    moved = (rater == 0) & (scores == 2)
    responses = synthetic_responses(np.where(moved, 1, scores))
    named = dataclasses.replace(responses, raters=tuple(f"r{k}" for k in rater))
    return vectors.astype(np.float64), responses, named, moved


@pytest.mark.parametrize("seed", [0, 2])
def test_a_file_naming_its_raters_puts_a_central_raters_scores_higher_in_the_queue(seed):
    """The rater expectation is fitted without rater 0's scores, so it expects their top
    answers at the top: their lowered scores move up the queue. Without a rater column the
    severity is the cross-fitted one alone, as before."""
    vectors, plain, named, moved = _central_rater(seed)
    embedded = Embedded.precomputed(vectors)
    without = run_audit(plain, small_config(), embedded=embedded)
    with_raters = run_audit(named, small_config(rater_column="rater"), embedded=embedded)
    # Raters that are a wide file's score columns (no column of who scored): not joined.
    columns = run_audit(named, small_config(), embedded=embedded)
    np.testing.assert_array_equal(columns.severity, without.severity)
    assert with_raters.rater_proba is not None and without.rater_proba is None
    assert (
        roc_auc_score(moved, with_raters.severity) > roc_auc_score(moved, without.severity) + 0.08
    )
    raw = audit.review_severity(vectors, plain.texts, without.tuning.features, plain.scores, 3, 0)
    np.testing.assert_array_equal(without.severity, calibrated(raw, plain.scores, 3))
    joined = audit.with_rater_expectation(raw, with_raters.rater_proba, plain.scores)
    np.testing.assert_array_equal(with_raters.severity, calibrated(joined, plain.scores, 3))


def test_a_rater_who_read_most_of_the_item_is_joined_with_more_of_the_expectation():
    """Rater 0 read about 60% of 240 answers: the classifiers learned their scores most, so
    their answers join the expectation at (1/3) x own / others; the other raters' at 1/3."""
    vectors, scores = clustered_embeddings(240, 3, dim=12, noise=1.5, seed=4)
    rater = np.random.default_rng(2).choice(4, size=240, p=[0.6, 0.4 / 3, 0.4 / 3, 0.4 / 3])
    plain = synthetic_responses(scores)
    named = dataclasses.replace(plain, raters=tuple(f"r{k}" for k in rater))
    embedded = Embedded.precomputed(vectors.astype(np.float64))
    without = run_audit(plain, small_config(), embedded=embedded)
    with_raters = run_audit(named, small_config(rater_column="rater"), embedded=embedded)
    raw = audit.review_severity(
        vectors.astype(np.float64), plain.texts, without.tuning.features, plain.scores, 3, 0
    )
    own = np.bincount(rater)[rater]
    share = np.where(rater == 0, own / (240 - own) / 3, 1 / 3)
    assert 0.4 < share[rater == 0][0] < 0.6  # below the cap
    joined = audit.with_rater_expectation(raw, with_raters.rater_proba, plain.scores, share)
    # rtol: the share computed here in another order of operations (one ulp apart)
    np.testing.assert_allclose(
        with_raters.severity, calibrated(joined, plain.scores, 3), rtol=1e-12
    )
    evenly = audit.with_rater_expectation(raw, with_raters.rater_proba, plain.scores)
    assert not np.allclose(with_raters.severity, calibrated(evenly, plain.scores, 3))
