"""Lexical features of the answers: TF-IDF of word 1-2-grams and character 2-5-grams within word
boundaries, the evidence the sentence embeddings miss (a key term present or absent, a
misspelling shared by copied answers).

The numbers are scikit-learn's `TfidfVectorizer(ngram_range=(1, 2))` and
`TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5))` fitted on the item's answers, side by
side (each part's rows L2-normalised): lower case, words as `(?u)\\b\\w\\w+\\b`, raw counts times
the smoothed idf ln((1 + n) / (1 + df)) + 1, columns in sorted order. They are computed here
(scikit-learn's text module imports Rich, which the engine must not). Blank answers have no
n-gram; they get one more column of their own, 1 for every blank, so all blanks share one
lexical representation as they share one vector (engine.embedding.blank).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import partial
from itertools import chain

import numpy as np
from scipy import sparse
from scipy.linalg import solve_triangular

from engine.input.responses import blank_answers
from engine.model.classifier import gram_rows
from engine.model.pseudo_likelihood import one_blas_thread

_WORD = re.compile(r"(?u)\b\w\w+\b")
_WHITE_SPACES = re.compile(r"\s\s+")
WORD_NGRAMS = (1, 2)
CHAR_NGRAMS = (2, 5)
COMMON_SHARE = 0.1
BLOCK_ROWS = 8192


def word_ngrams(text: str) -> list[str]:
    """Lower-cased words of two or more word characters, and each pair of neighbours."""
    words = _WORD.findall(text.lower())
    low, high = WORD_NGRAMS
    grams = list(words) if low == 1 else []
    for n in range(max(low, 2), min(high, len(words)) + 1):
        grams += [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
    return grams


def char_ngrams(text: str, known: dict[str, list[str]] | None = None) -> list[str]:
    """Character n-grams inside each space-padded word; a word shorter than n counts once (as
    scikit-learn's "char_wb" does). known: each word's n-grams met so far, filled as it goes
    (an item's answers repeat their words: on ASAP-SAS's 10,765 answers, 2.2 s -> 0.9 s)."""
    grams: list[str] = []
    for word in _WHITE_SPACES.sub(" ", text.lower()).split():
        if known is None:
            grams += word_char_ngrams(word)
        elif (own := known.get(word)) is not None:
            grams += own
        else:
            grams += known.setdefault(word, word_char_ngrams(word))
    return grams


def word_char_ngrams(word: str) -> list[str]:
    low, high = CHAR_NGRAMS
    padded = f" {word} "
    grams = []
    for n in range(low, high + 1):
        if n >= len(padded):
            grams.append(padded)
            break
        grams += [padded[i : i + n] for i in range(len(padded) - n + 1)]
    return grams


def tfidf(texts: list[str], analyse) -> sparse.csr_matrix:
    """(N, V) TF-IDF rows (L2-normalised; zero rows for texts without n-grams), columns the
    sorted n-grams of all texts."""
    counts = [Counter(analyse(text)) for text in texts]
    grams = list(chain.from_iterable(counts))  # every text's n-grams, text by text
    # n-gram -> column in order of first appearance (sorted below), made at C speed: the
    # per-n-gram Python of a dict.setdefault loop was most of the time (1.1 million at N =
    # 15,000).
    vocabulary = list(dict.fromkeys(grams))
    seen = dict(zip(vocabulary, range(len(vocabulary))))
    total = len(grams)
    indices = np.fromiter(map(seen.__getitem__, grams), np.int64, total)
    if not seen:
        return sparse.csr_matrix((len(texts), 0))
    rank = np.empty(len(vocabulary), dtype=np.int64)
    rank[sorted(range(len(vocabulary)), key=vocabulary.__getitem__)] = np.arange(len(vocabulary))
    indices = rank[indices]
    indptr = np.cumsum([0] + [len(c) for c in counts])
    data = np.fromiter(chain.from_iterable(c.values() for c in counts), np.float64, total)
    df = np.bincount(indices, minlength=len(vocabulary))
    data *= (np.log((1 + len(texts)) / (1 + df)) + 1.0)[indices]
    rows = np.repeat(np.arange(len(texts)), np.diff(indptr))
    norms = np.sqrt(np.bincount(rows, weights=data * data, minlength=len(texts)))
    data /= np.where(norms > 0, norms, 1.0)[rows]
    return sparse.csr_matrix((data, indices, indptr), shape=(len(texts), len(vocabulary)))


def lexical_features(texts: list[str]) -> sparse.csr_matrix:
    """(N, V_word + V_char + 1): word and character TF-IDF side by side, and the blank column
    (1 for an empty or whitespace-only answer)."""
    marker = sparse.csr_matrix(blank_answers(texts).astype(np.float64)[:, None])
    parts = [tfidf(texts, word_ngrams), tfidf(texts, partial(char_ngrams, known={})), marker]
    return sparse.hstack(parts, format="csr")


def gram_features(
    features: sparse.csr_matrix, landmarks: int, seed: int, dtype=np.float64
) -> np.ndarray:
    """(N, m) dense rows Z whose inner products are those of the features: Z Z^T = X X^T.

    An L2-penalised logistic regression depends on its features only through their inner
    products (its coefficients lie in the span of the training rows), so fitting it on Z gives
    the held-out probabilities of fitting it on X, with m columns instead of ~10^5 sparse ones.
    With N <= landmarks, m = N and Z is the Cholesky factor of the Gram matrix (engine.model.
    classifier.gram_rows): exact. Above, `landmarks` rows drawn by the seed span the features
    (Nystrom: Z = K_nm L^-T with L L^T = K_mm, computed in blocks of rows), so time and memory
    grow with N x landmarks, not N^2.
    """
    n = features.shape[0]
    common = np.diff(features.tocsc().indptr) >= COMMON_SHARE * n
    with one_blas_thread():
        if n <= landmarks:
            return gram_rows(inner_products(features, features, common)).astype(dtype)
        chosen = np.sort(np.random.default_rng(seed).choice(n, size=landmarks, replace=False))
        spanning = features[chosen]
        lower = gram_rows(inner_products(spanning, spanning, common))
        out = np.empty((n, landmarks), dtype=dtype)
        for start in range(0, n, BLOCK_ROWS):
            cross = inner_products(features[start : start + BLOCK_ROWS], spanning, common)
            out[start : start + BLOCK_ROWS] = solve_triangular(lower, cross.T, lower=True).T
        return out


def inner_products(left: sparse.csr_matrix, right: sparse.csr_matrix, common) -> np.ndarray:
    """Dense left right^T. The `common` columns (n-grams in at least 10% of the answers: a few
    hundred, but most of the nonzeros, " th", "the ") go through a dense matrix product, the
    rare rest through a sparse one, several times faster than one sparse product."""
    pairs = (left,) if right is left else (left, right)
    dense = [m[:, common].toarray() for m in pairs]
    rare = [m[:, ~common] for m in pairs]
    return dense[0] @ dense[-1].T + (rare[0] @ rare[-1].T).toarray()
