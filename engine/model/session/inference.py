"""Standard errors of the session model: a sandwich over answers, and intervals for the variances.

The mode solves g(w) - P w = 0, g the gradient of the pseudo-likelihood and P the prior
precision of the random effects (the weak ridge on the fixed parameters aside). Linearising at
the truth w* (its random part drawn from the prior),

    w^ - w* ~ (H + P)^-1 (g(w*) - P w*),   Var(w^ - w*) ~ (H + P)^-1 (B + P) (H + P)^-1,

because the read scores are conditionally centred given the random effects (Var g = B) and
Var(P u) = P. With a true likelihood B = H and this is the Bayesian (H + P)^-1; a
pseudo-likelihood's B is not H: reads depend on each other through their answers' neighbours
and through the answer's other reads. As for one item (engine.model.standard_errors), g_r's
conditional centring leaves only the pairs of reads that enter each other's features:

    B^ = G_a^T (I + A) G_a,

G_a (answers, parameters) the summed score contributions of each answer's reads (so the reads
of one answer are one cluster) and A the answers' adjacency in their items' fitted graphs.
With balanced weights each read's contribution is first centred within its category (the
weights are estimated from the category counts). These are the variances of w^ - w*: for the
fixed theta_0 and lambda the usual standard errors, for a rater's rho_m the error of its
prediction. Computed by blocks: only the core's (n_core, n_core) covariance is formed.

The variance components get Wald intervals on log tau^2 from the Fisher information of the
restricted Laplace marginal (engine.model.session.fit), whose curvature is the model's own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from engine.model.session.design import contribution_matrix
from engine.model.session.fit import SessionFit, precisions

ANSWER_SANDWICH = "sandwich over answers and their graph neighbours"
Z95 = 1.959963984540054


@dataclass(frozen=True)
class SessionErrors:
    """core_covariance: (n_core, n_core) sandwich covariance of theta_0, rho, lambda, delta;
    model_covariance: the same block of (H + P)^-1; theta0_se (3C,), rater_se (M, C),
    own_se, same_rater_se (NaN without lambda, delta); variance_intervals: component -> (low, high), 95%."""

    core_covariance: np.ndarray
    model_covariance: np.ndarray
    theta0_se: np.ndarray
    rater_se: np.ndarray
    own_se: float
    same_rater_se: float
    variance_intervals: dict[str, tuple[float, float]]
    method: str = ANSWER_SANDWICH


def _answer_sums(fit: SessionFit) -> tuple[sp.csr_matrix, sp.csr_matrix | None]:
    """G_a (answers, size) and, with balanced weights, the reads' category counts per answer
    (answers, C+1) with the category means of the read contributions ((C+1), size)."""
    d = fit.design
    reads = contribution_matrix(fit.w, d, fit.weights)
    n_answers = int(fit.features.answers_of_item[-1])
    r = d.score.size
    to_answer = sp.csr_matrix((np.ones(r), (d.answer, np.arange(r))), shape=(n_answers, r))
    if fit.class_weight is None:
        return to_answer @ reads, None
    onehot = sp.csr_matrix((np.ones(r), (np.arange(r), d.score)), shape=(r, fit.layout.n_classes))
    counts = np.asarray(onehot.sum(axis=0)).ravel()
    means = sp.diags(1.0 / np.maximum(counts, 1.0)) @ (onehot.T @ reads)
    return to_answer @ reads, (to_answer @ onehot, means)


def core_covariance(fit: SessionFit) -> np.ndarray:
    """The sandwich's (n_core, n_core) block (module docstring), by blocks: with W = G_a's core
    columns minus its item columns times F, Var = S^-1 (W^T (I + A) W + prior) S^-1."""
    lay, factor = fit.layout, fit.mode.factor
    split_at = lay.n_item_params
    f_stack = factor.f.reshape(split_at, lay.n_core)
    answers, balanced = _answer_sums(fit)

    def core_part(matrix):
        matrix = sp.csr_matrix(matrix)
        return np.asarray(matrix[:, split_at:].todense()) - matrix[:, :split_at] @ f_stack

    w = core_part(answers)
    if balanced is not None:
        counts, means = balanced
        w = w - counts @ core_part(means)
    meat = w.T @ w + w.T @ np.asarray(fit.features.neighbours @ w)
    item_prec, rater_prec = precisions(lay, fit.log_var)
    if lay.item_effects:
        meat += np.tensordot(factor.f * item_prec[None, :, None], factor.f, axes=([0, 1], [0, 1]))
    if lay.rater_effects:
        rho = lay.rater_start + np.arange(lay.n_rater_params)
        meat[rho, rho] += rater_prec
    return factor.schur_inv @ meat @ factor.schur_inv


def variance_intervals(fit: SessionFit) -> dict[str, tuple[float, float]]:
    """95% Wald intervals for each tau_k^2 on the log scale; (0, upper) at the floor."""
    out: dict[str, tuple[float, float]] = {}
    if not fit.layout.components:
        return out
    try:
        cov = np.linalg.inv(fit.information)
    except np.linalg.LinAlgError:
        cov = np.full(fit.information.shape, np.nan)
    for k, name in enumerate(fit.layout.components):
        half = Z95 * np.sqrt(max(cov[k, k], 0.0)) if np.isfinite(cov[k, k]) else np.inf
        with np.errstate(over="ignore"):  # no information: (0, inf)
            out[name] = (float(np.exp(fit.log_var[k] - half)), float(np.exp(fit.log_var[k] + half)))
    return out


def standard_errors(fit: SessionFit) -> SessionErrors:
    """Sandwich standard errors of the fixed parameters and the rater intercepts, model-based
    covariance beside them, and intervals for the variances."""
    lay = fit.layout
    cov = core_covariance(fit)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    rater_se = np.full((lay.n_raters, lay.c), np.nan)
    if lay.rater_effects:
        rater_se = se[lay.rater_start : lay.rater_start + lay.n_rater_params].reshape(
            lay.n_raters, lay.c
        )
    return SessionErrors(
        core_covariance=cov,
        model_covariance=fit.mode.factor.schur_inv,
        theta0_se=se[: lay.fixed],
        rater_se=rater_se,
        own_se=float("nan") if lay.own_index is None else float(se[lay.own_index]),
        same_rater_se=float("nan") if lay.same_index is None else float(se[lay.same_index]),
        variance_intervals=variance_intervals(fit),
    )
