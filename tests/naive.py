"""A deliberately naive, dense implementation of the paper's equations, used as the reference.

Everything here follows the paper's text literally and shares no code with `engine.model.pseudo_likelihood` or
`engine.graph.neighbour_graph`: a full N x N float64 cosine matrix, min-max normalisation over the off-diagonal
entries, zero diagonal, the power, per-row top-K by "the K largest off-diagonal entries in row
i", symmetrisation by the union of the directed neighbourhoods, features T_i(c) and S_i by
loops, and its own pseudo-likelihood objective fitted with scipy. It is slow on purpose
(O(N^2) memory, Python loops) and only meant for a few hundred responses.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize


def cosine_matrix(embeddings: np.ndarray) -> np.ndarray:
    """Full (N, N) float64 cosine similarities, diagonal included."""
    x = np.asarray(embeddings, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    return x @ x.T


def off_diagonal_range(sim: np.ndarray) -> tuple[float, float]:
    """m = min_{i != j} s_ij and M = max_{i != j} s_ij."""
    mask = ~np.eye(sim.shape[0], dtype=bool)
    return float(sim[mask].min()), float(sim[mask].max())


def top_k_sets(sim: np.ndarray, top_k: int) -> list[set[int]]:
    """N_K(i): the indices of the K largest off-diagonal entries of row i."""
    n = sim.shape[0]
    sets = []
    for i in range(n):
        others = [j for j in range(n) if j != i]
        ranked = sorted(others, key=lambda j: -sim[i, j])
        sets.append(set(ranked[:top_k]))
    return sets


def similarity_graph(
    embeddings: np.ndarray,
    top_k: int | None,
    power: float = 1.0,
    symmetric: bool = True,
    normalize: bool = True,
) -> np.ndarray:
    """The (N, N) graph the model sees: normalised, powered, diagonal 0, optionally pruned.

    Without normalisation (not part of the paper) negative similarities are set to 0 before a
    power other than 1, as the configuration documents.
    """
    raw = cosine_matrix(embeddings)
    n = raw.shape[0]
    if normalize:
        low, high = off_diagonal_range(raw)
        sim = (raw - low) / (high - low)
    else:
        sim = raw.copy()
        if power != 1.0:
            sim = np.maximum(sim, 0.0)
    np.fill_diagonal(sim, 0.0)
    sim = sim**power
    np.fill_diagonal(sim, 0.0)
    if top_k is None:
        return sim
    keep = np.zeros((n, n), dtype=bool)
    for i, neighbours in enumerate(top_k_sets(raw, top_k)):
        for j in neighbours:
            keep[i, j] = True
    if symmetric:
        keep = keep | keep.T
    return np.where(keep, sim, 0.0)


def features(graph: np.ndarray, scores: np.ndarray, n_classes: int):
    """T (N, C+1) with T_i(c) = sum_{j != i} s_ij 1{x_j = c}; S (N,) with S_i = sum_{j != i} s_ij."""
    n = graph.shape[0]
    t = np.zeros((n, n_classes))
    s = np.zeros(n)
    for i in range(n):
        for j in range(n):
            if j == i:
                continue
            t[i, scores[j]] += graph[i, j]
            s[i] += graph[i, j]
    return t, s


def balanced_weights(scores: np.ndarray, n_classes: int) -> np.ndarray:
    """w_i = N / (number of categories present * n_{x_i})."""
    counts = [int(np.sum(scores == c)) for c in range(n_classes)]
    present = sum(1 for c in counts if c > 0)
    return np.array([len(scores) / (present * counts[x]) for x in scores], dtype=np.float64)


def split(theta: np.ndarray, n_classes: int):
    """theta = (beta_1..C, gamma_1..C, mu_1..C) -> beta, gamma, mu with entry 0 fixed at 0."""
    c = n_classes - 1
    beta = np.r_[0.0, theta[:c]]
    gamma = np.r_[0.0, theta[c : 2 * c]]
    mu = np.r_[0.0, theta[2 * c :]]
    return beta, gamma, mu


def probabilities(theta: np.ndarray, t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """p_ic = exp(beta_c T_i(c) + gamma_c S_i + mu_c - Q_i), Q_i = log sum_a exp(...)."""
    beta, gamma, mu = split(theta, t.shape[1])
    eta = t * beta[None, :] + s[:, None] * gamma[None, :] + mu[None, :]
    top = eta.max(axis=1, keepdims=True)
    q = top + np.log(np.exp(eta - top).sum(axis=1, keepdims=True))
    return np.exp(eta - q)


def objective(theta, t, s, scores, weights):
    """-L / sum(w) with L = sum_i w_i log p_{i, x_i}, and its gradient by the paper's formulas."""
    k = t.shape[1]
    p = probabilities(theta, t, s)
    chosen = np.maximum(p[np.arange(len(scores)), scores], 1e-15)
    value = -np.sum(weights * np.log(chosen)) / weights.sum()
    grad_beta, grad_gamma, grad_mu = [], [], []
    for c in range(1, k):
        resid = weights * ((scores == c).astype(float) - p[:, c])
        grad_beta.append(np.sum(resid * t[:, c]))
        grad_gamma.append(np.sum(resid * s))
        grad_mu.append(np.sum(resid))
    grad = -np.array(grad_beta + grad_gamma + grad_mu) / weights.sum()
    return value, grad


def fit(t, s, scores, class_weight: str | None = "balanced"):
    """Maximise the weighted pseudo-likelihood with tight tolerances; returns (theta, proba)."""
    k = t.shape[1]
    weights = balanced_weights(scores, k) if class_weight == "balanced" else np.ones(len(scores))
    result = minimize(
        objective,
        np.zeros(3 * (k - 1)),
        args=(t, s, scores, weights),
        jac=True,
        method="L-BFGS-B",
        bounds=[(-1000.0, 1000.0)] * (3 * (k - 1)),
        options={"maxiter": 10_000, "ftol": 1e-15, "gtol": 1e-10},
    )
    return result.x, probabilities(result.x, t, s)
