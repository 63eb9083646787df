"""Simulating scores from the PARM joint distribution on a fixed graph, for tests and benchmarks
that check estimates against known parameters.

P(x) ~ exp( sum_{i<j} sum_c beta_c s_ij 1{x_i = x_j = c} + sum_i (mu_{x_i} + gamma_{x_i} S_i) )
for a symmetric weight matrix s; its full conditionals are the paper's multinomial logits
P(x_i = c | rest) ~ exp(beta_c T_i(c) + gamma_c S_i + mu_c), which a Gibbs sampler draws from.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# The parameters of the coverage simulation (tests/benchmarks/bench_coverage.py and its small
# version in tests/test_standard_errors.py): four categories, weak neighbour effects.
TRUE_BETA = np.array([0.0, 0.25, 0.30, 0.35])
TRUE_GAMMA = np.array([0.0, -0.10, -0.10, -0.10])
TRUE_MU = np.array([0.0, 0.6, 0.5, 0.0])


def colour_classes(a: sp.csr_matrix) -> list[np.ndarray]:
    """Greedy graph colouring: nodes of one colour share no edge, so they may be updated together
    in a Gibbs sweep without changing the sampler (each is drawn from its exact conditional)."""
    colour = np.full(a.shape[0], -1)
    for i in range(a.shape[0]):
        used = set(colour[a.indices[a.indptr[i] : a.indptr[i + 1]]].tolist())
        c = 0
        while c in used:
            c += 1
        colour[i] = c
    return [np.flatnonzero(colour == c) for c in range(colour.max() + 1)]


def gibbs_sample(a, beta, gamma, mu, chains: int, sweeps: int, seed: int) -> np.ndarray:
    """Final states (chains, N) of independent Gibbs chains (random start, `sweeps` full sweeps)
    for the PARM joint distribution on the symmetric sparse weight matrix `a`.

    All chains move together: for each colour class, the T_i(c) of its nodes in every chain come
    from one bincount over the class's edges.
    """
    rng = np.random.default_rng(seed)
    a = sp.csr_matrix(a)
    k = beta.size
    n = a.shape[0]
    total = np.asarray(a.sum(axis=1)).ravel()
    x = rng.integers(0, k, size=(chains, n))
    chain = np.arange(chains)[:, None]
    groups = []
    for g in colour_classes(a):
        rows = a[g].tocoo()
        groups.append((g, rows.row, rows.col, rows.data))
    for _ in range(sweeps):
        for g, local, neighbour, weight in groups:
            # T[chain, i, c] = sum over i's edges of s_ij 1{x_j = c}, all chains at once.
            codes = chain * (g.size * k) + local * k + x[:, neighbour]
            t = np.bincount(
                codes.ravel(), np.tile(weight, chains), minlength=chains * g.size * k
            ).reshape(chains, g.size, k)
            eta = beta * t + total[g][None, :, None] * gamma + mu
            p = np.exp(eta - eta.max(axis=-1, keepdims=True))
            cumulative = np.cumsum(p / p.sum(axis=-1, keepdims=True), axis=-1)
            u = rng.random((chains, g.size, 1))
            x[:, g] = np.minimum((u > cumulative).sum(axis=-1), k - 1)
    return x


def features(a: sp.spmatrix, scores: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """T (N, C+1) = a @ onehot(scores) and S (N,) = row sums of a."""
    onehot = np.eye(n_classes)[scores]
    t = np.asarray(a @ onehot)
    return t, np.asarray(a.sum(axis=1)).ravel()
