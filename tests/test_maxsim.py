"""MaxSim and its symmetrised, length-normalised form (engine/graph/maxsim.py), against brute force
over token pairs."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_tokens

from engine.embedding.vectors import TokenEmbeddings
from engine.graph.maxsim import maxsim, pair_scores, symmetric_score


def brute_force_maxsim(query: np.ndarray, document: np.ndarray) -> float:
    total = 0.0
    for t in query:
        total += max(float(t @ u / (np.linalg.norm(t) * np.linalg.norm(u))) for u in document)
    return total


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    left, right = np.triu_indices(n, k=1)
    return left, right


# -- MaxSim and its symmetrised form ---------------------------------------------------------------
def test_maxsim_matches_brute_force_over_token_pairs():
    tokens = random_tokens(6)
    for i in range(6):
        for j in range(6):
            expected = brute_force_maxsim(tokens.of(i), tokens.of(j))
            assert maxsim(tokens.of(i), tokens.of(j)) == pytest.approx(expected, abs=1e-5)


def test_batched_pair_scores_equal_the_mean_of_both_length_normalised_directions():
    tokens = random_tokens(12, seed=1)
    left, right = all_pairs(12)
    scores = pair_scores(tokens, left, right, batch_size=7)
    for k, (i, j) in enumerate(zip(left, right)):
        a, b = tokens.of(i), tokens.of(j)
        expected = 0.5 * (brute_force_maxsim(a, b) / len(a) + brute_force_maxsim(b, a) / len(b))
        assert scores[k] == pytest.approx(expected, abs=1e-5)


def test_pair_score_is_symmetric_and_bounded_like_a_cosine():
    tokens = random_tokens(15, seed=2)
    left, right = all_pairs(15)
    forward = pair_scores(tokens, left, right)
    backward = pair_scores(tokens, right, left)
    np.testing.assert_allclose(forward, backward, atol=1e-6)
    assert forward.min() >= -1.0 and forward.max() <= 1.0
    # Raw MaxSim is not symmetric on the same data, which is why it is symmetrised.
    assert any(
        abs(maxsim(tokens.of(i), tokens.of(j)) - maxsim(tokens.of(j), tokens.of(i))) > 1e-3
        for i, j in zip(left, right)
    )


def test_identical_responses_score_one():
    tokens = random_tokens(3, seed=3)
    twin = TokenEmbeddings.from_list([tokens.of(0), tokens.of(0), tokens.of(1)])
    assert pair_scores(twin, [0], [1])[0] == pytest.approx(1.0, abs=1e-6)


def test_raw_pair_scores_are_the_mean_of_the_papers_two_sums():
    tokens = random_tokens(10, seed=11)
    left, right = all_pairs(10)
    scores = pair_scores(tokens, left, right, batch_size=4, raw=True)
    for k, (i, j) in enumerate(zip(left, right)):
        a, b = tokens.of(i), tokens.of(j)
        expected = 0.5 * (brute_force_maxsim(a, b) + brute_force_maxsim(b, a))
        assert scores[k] == pytest.approx(expected, abs=1e-5)
        assert scores[k] == pytest.approx(symmetric_score(tokens, i, j, raw=True), abs=1e-5)
    np.testing.assert_allclose(
        scores, pair_scores(tokens, right, left, raw=True), atol=1e-5
    )  # symmetric, as the Potts model needs


def test_repeating_a_response_twice_keeps_its_normalised_score_but_doubles_raw_maxsim():
    tokens = random_tokens(2, seed=4)
    once, other = tokens.of(0), tokens.of(1)
    twice = np.concatenate([once, once])
    both = TokenEmbeddings.from_list([once, twice, other])
    scores = pair_scores(both, [0, 1], [2, 2])
    assert scores[0] == pytest.approx(scores[1], abs=1e-6)
    assert maxsim(twice, other) == pytest.approx(2 * maxsim(once, other), rel=1e-5)
    raw = pair_scores(both, [0, 1], [2, 2], raw=True)
    # Raw: MaxSim(twice -> other) doubles, MaxSim(other -> twice) does not change.
    assert raw[1] - raw[0] == pytest.approx(0.5 * maxsim(once, other), rel=1e-5)
