"""Blank answers (empty or whitespace only) in the embedding space: one shared representation.

A blank answer is an answer, usually scored 0, and a blank scored 2 is exactly the error a lead
wants found. Whatever a model makes of an empty string (or a precomputed file holds in a blank's
row: often zeros), every blank gets the same vector, along one extra coordinate that no real
answer has: 1 for a blank, 0 for every answer (whose own unit vector is kept). So blanks are each
other's nearest neighbours (cosine 1) and no real answer's (cosine 0), and a classifier on the
vectors sees "blank" as one feature. In late-interaction mode a blank is a single token vector
along that coordinate: MaxSim gives 1 between two blanks and 0 between a blank and an answer,
and its mean-pooled vector is the same blank vector.

Without blanks nothing changes: the vectors keep their dimension, so results are exactly as
before on such files.
"""

from __future__ import annotations

import numpy as np

from engine.embedding.vectors import TokenEmbeddings


def blank_vector(dim: int) -> np.ndarray:
    """(dim + 1,) float32: the shared vector of every blank answer."""
    vector = np.zeros(dim + 1, dtype=np.float32)
    vector[dim] = 1.0
    return vector


def with_blank_vectors(vectors: np.ndarray, blank: np.ndarray) -> np.ndarray:
    """(N, d + 1) when any answer is blank: answers' unit vectors with a 0 appended, every
    blank's row the shared blank vector; `vectors` itself when none is."""
    if not blank.any():
        return vectors
    out = np.zeros((vectors.shape[0], vectors.shape[1] + 1), dtype=np.float32)
    out[:, :-1] = vectors
    out[blank] = blank_vector(vectors.shape[1])
    return out


def with_blank_tokens(tokens: TokenEmbeddings, blank: np.ndarray) -> TokenEmbeddings:
    """Token embeddings with one coordinate more when any answer is blank: answers' token
    vectors with a 0 appended, each blank's tokens replaced by the single blank vector."""
    if not blank.any():
        return tokens
    lengths = np.where(blank, 1, tokens.lengths)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    dim = tokens.matrix.shape[1]
    matrix = np.zeros((int(offsets[-1]), dim + 1), dtype=np.float32)
    keep = np.repeat(~blank, tokens.lengths)
    matrix[np.repeat(~blank, lengths)] = np.hstack(
        [tokens.matrix[keep], np.zeros((int(keep.sum()), 1), dtype=np.float32)]
    )
    matrix[offsets[:-1][blank]] = blank_vector(dim)
    return TokenEmbeddings(matrix, offsets)


def with_blanks(embedded, blank: np.ndarray):
    """The embedding stage's output (vectors or token embeddings) with blanks represented."""
    if isinstance(embedded, TokenEmbeddings):
        return with_blank_tokens(embedded, blank)
    return with_blank_vectors(embedded, blank)
