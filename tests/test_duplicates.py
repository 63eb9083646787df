"""Near-duplicates scored differently (engine/audit/queue/duplicates.py): each pair once, most similar first."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import clustered_embeddings, small_config, synthetic_responses

from engine.audit.queue.duplicates import near_duplicates
from engine.embedding.vectors import Embedded
from engine.pipeline import run_audit


def test_near_duplicates_with_different_scores_are_found():
    vectors, scores = clustered_embeddings(120, 2, noise=0.8, seed=5)
    vectors[1] = vectors[0] + 0.001  # near-duplicate of 0, scored differently
    vectors[3] = vectors[2] + 0.001  # near-duplicate of 2, scored the same
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scores[0], scores[1], scores[2], scores[3] = 0, 1, 1, 1
    result = run_audit(
        synthetic_responses(scores), small_config(), embedded=Embedded.precomputed(vectors)
    )
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
