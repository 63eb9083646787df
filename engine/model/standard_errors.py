"""Standard errors of the PARM parameters: a sandwich whose middle counts neighbours' scores.

The estimate theta^ solves sum_i g_i(theta) = 0, with g_i the gradient of response i's term
w_i log p_{i,x_i} (`score_contributions`): for c = 1..C its beta_c, gamma_c, mu_c entries are
w_i (1{x_i = c} - p_ic) times T_i(c), S_i and 1. Linearising around the estimand theta*,

    theta^ - theta* ~ -H^-1 sum_i g_i,   so   Var(theta^) ~ H^-1 B H^-1,   B = Var(sum_i g_i),

with H the Hessian of L (`hessian`, the paper's second derivatives with the weights). The
responses are not independent, so B is not sum_i g_i g_i^T:

* g_i is conditionally centred: E[g_i | x_j, j != i] = 0 at theta*, because p_ic is the
  conditional probability P(X_i = c | x_j, j != i) and T_i(c), S_i are functions of the other
  scores only. Hence E[g_i g_j^T] = 0 whenever g_j does not depend on x_i.
* g_j depends on x_i only through T_j(c) = sum_k s_jk 1{x_k = c}, i.e. when s_ji != 0: when i is
  one of j's neighbours in the fitted graph.

So B = sum_i sum_{j = i or j ~ i} E[g_i g_j^T], estimated by

    B^ = sum_i g_i g_i^T + sum_i sum_{j ~ i} g_i g_j^T = G^T (I + A) G,

G the (N, 3C) matrix of g_i at theta^ and A the 0/1 adjacency of the fitted graph (s_ij != 0 or
s_ji != 0). The cross terms are what the independence sandwich leaves out; on simulated Potts
data it understated the spread of beta^ by 15-25% (tests/benchmarks/bench_coverage.py).

Balanced class weights. With fixed weights w_c per category, the weighted score is conditionally
centred at the multinomial logit whose intercepts are shifted by log w_c: the weighted
conditional w_c p_ic / sum_a w_a p_ia is again a PARM conditional, with the same beta and gamma
and mu_c + log(w_c / w_0). So the argument above holds unchanged, and the balanced fit estimates
the model's beta and gamma; its mu_c estimate mu_c + log(pi_0 / pi_c), pi_c the share of
category c (as outcome-based sampling shifts only a logit's intercepts). The weights
w_c = N / (G n_c) are themselves estimated from the category counts n_c; their sampling adds
-(1/n_c) sum_{j: x_j = c} g_j per response of category c to its score (the derivative of
sum_j g_j with respect to the category share, times the share's own influence). That is, each
g_i is replaced by g_i minus the mean of g over its category before B^ is formed.

The standard errors are conditional on the graph and on the K and p tuning selected; they need
neighbourhoods, so the dense graph (every pair a neighbour, where B^ = (sum_i g_i)(sum_i g_i)^T
is 0 at theta^) has none.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from engine.model.pseudo_likelihood import (
    FittedPARM,
    class_weights,
    hessian,
    score_contributions,
)

# The method as report.json's `standard_errors` names it.
NEIGHBOUR_SANDWICH = "neighbour sandwich"
NO_STANDARD_ERRORS = "none (dense graph)"


def adjacency(graph_weights: sp.spmatrix) -> sp.csr_matrix:
    """A (N, N) 0/1: 1 where s_ij != 0 or s_ji != 0 for i != j (the responses whose scores enter
    each other's features)."""
    pattern = (abs(graph_weights) + abs(graph_weights.T)).tocsr()
    pattern.setdiag(0)
    pattern.eliminate_zeros()
    pattern.data[:] = 1.0
    return pattern


def score_covariance(
    g: np.ndarray, scores: np.ndarray, neighbours: sp.spmatrix, weights_estimated: bool
) -> np.ndarray:
    """B^ = G~^T (I + A) G~ (3C, 3C), G~ = G with each row's category mean removed when the
    weights were estimated from the category counts (balanced), else G."""
    if weights_estimated:
        sums = np.zeros((scores.max() + 1, g.shape[1]))
        np.add.at(sums, scores, g)
        counts = np.bincount(scores)[:, None]
        g = g - (sums / np.maximum(counts, 1))[scores]
    return g.T @ g + g.T @ np.asarray(neighbours @ g)


def sandwich_se(
    theta: np.ndarray,
    t: np.ndarray,
    s: np.ndarray,
    scores: np.ndarray,
    class_weight: str | None,
    neighbours: sp.spmatrix,
) -> np.ndarray:
    """Standard errors (3C,) of theta from H^-1 B^ H^-1 (see the module docstring).

    neighbours: (N, N) `adjacency` of the fitted graph; an empty matrix for independent
    responses. NaN where the Hessian is singular or a variance comes out negative (B^ is not
    guaranteed positive semi-definite).
    """
    weights = class_weights(scores, t.shape[1], class_weight)
    g = score_contributions(theta, t, s, scores, weights)
    b = score_covariance(g, scores, neighbours, class_weight is not None)
    try:
        h_inv = np.linalg.inv(hessian(theta, t, s, weights))
    except np.linalg.LinAlgError:
        return np.full(theta.shape, np.nan)
    variance = np.diag(h_inv @ b @ h_inv)
    return np.where(variance >= 0, np.sqrt(np.abs(variance)), np.nan)


def with_standard_errors(
    fitted: FittedPARM,
    t: np.ndarray,
    s: np.ndarray,
    scores: np.ndarray,
    class_weight: str | None,
    graph_weights: sp.spmatrix | None,
) -> FittedPARM:
    """`fitted` with its standard errors; graph_weights is the fitted graph's (N, N) weight
    matrix, None for the dense graph (no standard errors, NaN)."""
    if graph_weights is None:
        return replace(fitted, se=np.full(fitted.theta.shape, np.nan), se_method=NO_STANDARD_ERRORS)
    se = sandwich_se(fitted.theta, t, s, scores, class_weight, adjacency(graph_weights))
    return replace(fitted, se=se, se_method=NEIGHBOUR_SANDWICH)
