"""A stacker with few parameters for small items: a log-linear pool of experts.

Each expert k gives a per-score feature f_k(i, c) (log-probabilities of an out-of-fold model,
or PARM's neighbour share T_i(c) / S_i); the pool is
    P(c | i) = softmax_c( sum_k w_k f_k(i, c) + mu_c ),
one weight per expert shared by every score, plus a per-score intercept: K + C parameters
instead of the (C+1)(2C+3) of a multinomial stacker, so it can be cross-fitted on 30 answers.
Fitted by L-BFGS-B on the mean log loss + 1 / (2 C N) |w|^2 (C = 1; intercepts unpenalised),
cross-fitted over the given folds; scores a fold's training rows lack get probability 0 there.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

PENALTY_C = 1.0


def _fit(features: np.ndarray, codes: np.ndarray, categories: int) -> np.ndarray:
    """features (n, K, categories); codes 0..categories-1. Returns (K + categories,) params."""
    n, k, _ = features.shape
    target = np.zeros((n, categories))
    target[np.arange(n), codes] = 1.0
    penalty = 1.0 / (PENALTY_C * n)

    def value_and_gradient(x):
        w, mu = x[:k], x[k:]
        logits = np.einsum("nkc,k->nc", features, w) + mu
        logits -= logits.max(axis=1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        value = -(target * log_p).sum() / n + 0.5 * penalty * w @ w
        resid = (np.exp(log_p) - target) / n
        grad_w = np.einsum("nkc,nc->k", features, resid) + penalty * w
        return float(value), np.concatenate([grad_w, resid.sum(axis=0)])

    start = np.concatenate([np.ones(k) / k, np.zeros(categories)])
    found = minimize(value_and_gradient, start, jac=True, method="L-BFGS-B",
                     options={"maxiter": 1000, "gtol": 1e-6})  # fmt: skip
    return found.x


def _predict(x: np.ndarray, features: np.ndarray) -> np.ndarray:
    k = features.shape[1]
    logits = np.einsum("nkc,k->nc", features, x[:k]) + x[k:]
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def pooled_proba(features: np.ndarray, scores: np.ndarray, parts: list[np.ndarray]) -> np.ndarray:
    """(N, C+1) out-of-fold probabilities of the pool; features (N, K, C+1)."""
    n, _, n_classes = features.shape
    out = np.zeros((n, n_classes))
    for held in parts:
        train = np.ones(n, dtype=bool)
        train[held] = False
        seen, codes = np.unique(scores[train], return_inverse=True)
        if seen.size == 1:
            out[held, seen[0]] = 1.0
            continue
        x = _fit(features[train][:, :, seen], codes, seen.size)
        out[np.ix_(held, seen)] = _predict(x, features[held][:, :, seen])
    return out
