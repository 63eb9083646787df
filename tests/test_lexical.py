"""The lexical features of the review queue's severity: TF-IDF equal to scikit-learn's
TfidfVectorizer, the blank column, and the Gram-matrix features on which logistic regression
gives scikit-learn's held-out probabilities on the TF-IDF features themselves."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import answers_for, as_split
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict

from engine.model import lexical
from engine.model.classifier import out_of_fold_proba, stratified_folds
from engine.model.lexical import char_ngrams, gram_features, lexical_features, word_ngrams

AWKWARD = [
    "Plants need LIGHT, water & air.",
    "a",
    "I",
    "ab  cd\n\tef",
    "Ünïcödé   ÇAFÉ Straße İstanbul naïve",
    "x-y_z 123 4 5 don't won't",
    "!!! ??? ...",
    "the the the the",
    "Water; water! WATER? water.",
    "tab\tseparated\twords and   spaces",
]


def scikit_learn_tfidf(texts: list[str]) -> np.ndarray:
    parts = [
        TfidfVectorizer(ngram_range=(1, 2)).fit_transform(texts),
        TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5)).fit_transform(texts),
    ]
    return sparse.hstack(parts).toarray()


def test_ngrams_are_scikit_learns_analyzers():
    word = TfidfVectorizer(ngram_range=(1, 2)).build_analyzer()
    char = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5)).build_analyzer()
    for text in AWKWARD:
        assert word_ngrams(text) == word(text)
        assert char_ngrams(text) == char(text)
    known: dict = {}  # the words' n-grams kept from one answer to the next, as an item's are
    for text in AWKWARD + AWKWARD:
        assert char_ngrams(text, known) == char(text)


@pytest.mark.parametrize("texts", [AWKWARD, answers_for(np.arange(90) % 3, seed=4)])
def test_tfidf_features_equal_scikit_learns_beside_a_blank_column(texts):
    ours = lexical_features(texts)
    blank = np.array([not t.strip() for t in texts])
    reference = scikit_learn_tfidf(texts)  # a blank answer is a document without n-grams
    assert ours.shape == (len(texts), reference.shape[1] + 1)
    dense = ours.toarray()
    np.testing.assert_allclose(dense[:, :-1], reference, atol=1e-12)
    np.testing.assert_array_equal(dense[:, -1], blank)
    assert not dense[blank, :-1].any()


def test_all_blank_answers_share_one_lexical_row():
    features = lexical_features(["", "  ", "\n", "light"]).toarray()
    np.testing.assert_array_equal(features[0], features[1])
    np.testing.assert_array_equal(features[1], features[2])
    assert features[0] @ features[3] == 0.0


def test_gram_features_reproduce_the_inner_products_exactly_up_to_the_landmarks():
    texts = answers_for(np.arange(120) % 3, seed=1)
    x = lexical_features(texts)
    z = gram_features(x, landmarks=500, seed=0)
    assert z.shape == (120, 120)
    np.testing.assert_allclose(z @ z.T, (x @ x.T).toarray(), atol=1e-8)
    assert gram_features(x, landmarks=500, seed=0, dtype=np.float32).dtype == np.float32


def test_gram_features_above_the_landmarks_project_onto_the_landmark_answers(monkeypatch):
    texts = answers_for(np.arange(150) % 3, seed=2)
    x = lexical_features(texts).toarray()
    z = gram_features(sparse.csr_matrix(x), landmarks=60, seed=3)
    assert z.shape == (150, 60)
    monkeypatch.setattr(lexical, "BLOCK_ROWS", 7)  # blocks of rows give the same rows
    np.testing.assert_allclose(gram_features(sparse.csr_matrix(x), 60, 3), z, atol=1e-10)
    chosen = np.sort(np.random.default_rng(3).choice(150, size=60, replace=False))
    # Nystrom: each row's features projected onto the span of the landmark rows.
    basis = np.linalg.pinv(x[chosen].T) @ x.T
    projected = (x[chosen].T @ basis).T
    np.testing.assert_allclose(z @ z.T, projected @ projected.T, atol=1e-6)
    np.testing.assert_allclose(z[chosen] @ z[chosen].T, x[chosen] @ x[chosen].T, atol=1e-8)


@pytest.mark.parametrize("inverse_penalty", [1.0, 10.0])
def test_logistic_regression_on_gram_features_has_the_optimum_of_tfidf(inverse_penalty):
    """Converged fits on Z and on the TF-IDF features give the same held-out probabilities (the
    penalised optimum depends on the features only through their inner products)."""
    scores = np.random.default_rng(5).integers(0, 3, size=150)
    texts = answers_for(scores, seed=5)
    split = as_split(stratified_folds(scores, 5, seed=0), scores.size)
    model = LogisticRegression(C=inverse_penalty, tol=1e-10, max_iter=10_000)
    x = lexical_features(texts)
    on_z = cross_val_predict(
        model, gram_features(x, 500, 0), scores, cv=split, method="predict_proba"
    )
    on_x = cross_val_predict(model, x, scores, cv=split, method="predict_proba")
    np.testing.assert_allclose(on_z, on_x, atol=1e-6)


def test_out_of_fold_classifier_on_gram_features_is_scikit_learns():
    scores = np.random.default_rng(6).integers(0, 3, size=150)
    z = gram_features(lexical_features(answers_for(scores, seed=6)), 500, 0)
    parts = stratified_folds(scores, 5, seed=0)
    ours = out_of_fold_proba(z, scores, 3, parts, 10.0)
    reference = cross_val_predict(
        LogisticRegression(C=10.0), z, scores, cv=as_split(parts, 150), method="predict_proba"
    )
    np.testing.assert_allclose(ours, reference, atol=1e-6)
