"""The MaxSim late-interaction score between responses, from their token embeddings.

For responses i and j with unit token embeddings e_t (t in T_i) and e_u (u in T_j), the paper's
MaxSim is

    MaxSim(i -> j) = sum_{t in T_i} max_{u in T_j} cos(e_t, e_u).

It is not symmetric, and the Potts model needs s_ij = s_ji (its joint distribution sums
s_ij over unordered pairs), so parm always averages the two directions. `colbert_maxsim` says
whether each direction is first divided by its query's token count:

    "normalised" (default): s_ij = ( MaxSim(i -> j) / |T_i| + MaxSim(j -> i) / |T_j| ) / 2,
    "raw" (the paper's sum):  s_ij = ( MaxSim(i -> j) + MaxSim(j -> i) ) / 2.

The normalised score lies in [-1, 1] like a cosine, equals 1 for two identical responses, and does
not change when a response's text is repeated (every token finds the same maxima again); the raw
score grows with the answers' lengths, so long answers get heavier edges. Either is then min-max
normalised over the scored pairs like any similarity.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from engine.core.progress import MAXSIM, Reporter
from engine.embedding.vectors import TokenEmbeddings
from engine.graph.similarity import on_grid


def maxsim(query: np.ndarray, document: np.ndarray) -> float:
    """The paper's MaxSim(query -> document) for unit token vectors (|T_q|, d) and (|T_d|, d)."""
    return float((on_grid(query) @ on_grid(document).T).max(axis=1).sum())


def symmetric_score(tokens: TokenEmbeddings, i: int, j: int, raw: bool = False) -> float:
    """s_ij for one pair (reference version): the mean of MaxSim(i->j) and MaxSim(j->i), each
    divided by its query's token count unless `raw`."""
    a, b = tokens.of(i), tokens.of(j)
    if raw:
        return 0.5 * (maxsim(a, b) + maxsim(b, a))
    return 0.5 * (maxsim(a, b) / len(a) + maxsim(b, a) / len(b))


def pair_scores(
    tokens: TokenEmbeddings,
    left: np.ndarray,
    right: np.ndarray,
    batch_size: int = 256,
    reporter: Reporter | None = None,
    raw: bool = False,
) -> np.ndarray:
    """Symmetrised MaxSim scores s_ij for the pairs (left[k], right[k]); (P,) float32: the mean
    of the two directions, each length-normalised unless `raw` (see the module docstring).

    Pairs are grouped by their left response i: one matrix product of i's tokens against the
    stacked tokens of all its partners j gives, per partner's column block, the row maxima
    (MaxSim(i->j)) and the column maxima (MaxSim(j->i)) without any padding. Groups are taken
    until a batch holds about `batch_size` pairs; after each batch, progress (stage "colbert",
    pairs done) and a cancel check.
    """
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    total = len(left)
    scores = np.empty(total, dtype=np.float32)
    order = np.argsort(left, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(left[order]) != 0])
    bounds = np.r_[starts, total]
    done = 0
    # The products are small (tokens x a few thousand); BLAS threads cost more than they gain.
    with threadpool_limits(1):
        for g in range(len(starts)):
            members = order[bounds[g] : bounds[g + 1]]
            scores[members] = _one_against_many(tokens, int(left[members[0]]), right[members], raw)
            if bounds[g + 1] - done >= batch_size or g == len(starts) - 1:
                done = int(bounds[g + 1])
                if reporter is not None:
                    reporter(MAXSIM, done, total, f"MaxSim {done:,} of {total:,} pairs")
    return scores


def _one_against_many(
    tokens: TokenEmbeddings, i: int, partners: np.ndarray, raw: bool = False
) -> np.ndarray:
    """s_ij for one response i and each j in partners; (len(partners),) float32."""
    sizes = tokens.lengths[partners]
    segment = np.r_[0, np.cumsum(sizes)[:-1]]
    # Row index of every token of every partner, partners one after another.
    rows = np.repeat(tokens.offsets[partners] - segment, sizes) + np.arange(sizes.sum())
    # (sum_j |T_j|, |T_i|) cosines, exact (engine.graph.similarity), as are the sums of their
    # maxima (multiples of 2^-42 below 2^11): the same scores on every machine.
    sims = on_grid(tokens.matrix[rows]) @ on_grid(tokens.of(i)).T
    forward = np.maximum.reduceat(sims, segment, axis=0).sum(axis=1)  # MaxSim(i->j)
    backward = np.add.reduceat(sims.max(axis=1), segment)  # MaxSim(j->i)
    if not raw:
        forward, backward = forward / sims.shape[1], backward / sizes
    return (0.5 * (forward + backward)).astype(np.float32)
