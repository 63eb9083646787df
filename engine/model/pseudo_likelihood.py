"""The PARM pseudo-likelihood: features, objective, analytic gradient and Hessian, and `fit()`.

For response i with human score x_i in {0..C}, the conditional probability of score c is the
multinomial logit
    p_ic = exp(eta_ic - Q_i),  eta_ic = beta_c T_i(c) + gamma_c S_i + mu_c,  Q_i = log sum_a exp(eta_ia)
with beta_0 = gamma_0 = mu_0 = 0, so theta = (beta_1..C, gamma_1..C, mu_1..C) has 3C entries.
The weighted log pseudo-likelihood is L = sum_i w_i log p_{i, x_i} (balanced weights
w_i = N / (G n_{x_i}) with G the number of categories present, or 1). We minimise -L / sum_i w_i with L-BFGS-B on [-1000, 1000].
log p_ic comes from the log-sum-exp, so no probability floor is needed (the paper clips p at
1e-15, whose derivative the analytic gradient would lack). Standard errors are added by
engine.model.standard_errors, which needs the fitted graph.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.machine.threads import one_blas_thread
from engine.model.lbfgsb import minimize_bounded

BOUND = 1000.0
# From this many responses on the objective works in buffers kept between calls (_Objective).
IN_PLACE_FROM = 1000


@dataclass(frozen=True)
class FittedPARM:
    """A fitted model. Arrays over categories have length C+1 with entry 0 fixed at 0.

    beta, gamma, mu: (C+1,); proba: (N, C+1) conditional probabilities p_ic; se: (3C,)
    standard errors of theta by `se_method`, NaN until engine.model.standard_errors adds them
    (they need the fitted graph, which `fit` does not see).
    """

    beta: np.ndarray
    gamma: np.ndarray
    mu: np.ndarray
    se: np.ndarray
    proba: np.ndarray
    objective: float
    converged: bool
    message: str
    iterations: int
    at_bounds: bool
    se_method: str = "none"

    @property
    def theta(self) -> np.ndarray:
        return pack(self.beta, self.gamma, self.mu)

    @property
    def predicted(self) -> np.ndarray:
        return np.argmax(self.proba, axis=1)


def pack(beta: np.ndarray, gamma: np.ndarray, mu: np.ndarray) -> np.ndarray:
    return np.concatenate([beta[1:], gamma[1:], mu[1:]])


def unpack(theta: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """theta (3C,) -> beta, gamma, mu, each (C+1,) with a leading 0 for the baseline."""
    c = n_classes - 1
    zero = np.zeros(1)
    return (
        np.concatenate([zero, theta[:c]]),
        np.concatenate([zero, theta[c : 2 * c]]),
        np.concatenate([zero, theta[2 * c :]]),
    )


def class_weights(scores: np.ndarray, n_classes: int, mode: str | None) -> np.ndarray:
    """Per-response weights: balanced (inverse category frequency, as scikit-learn) or all 1."""
    if mode is None:
        return np.ones(scores.shape[0])
    counts = np.bincount(scores, minlength=n_classes).astype(np.float64)
    present = np.count_nonzero(counts)
    per_class = np.divide(
        scores.shape[0], present * counts, out=np.zeros_like(counts), where=counts > 0
    )
    return per_class[scores]


def design(t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The per-category regressors X (N, C, 3): (T_i(c), S_i, 1) for c = 1..C."""
    n, k = t.shape
    x = np.empty((n, k - 1, 3))
    x[:, :, 0] = t[:, 1:]
    x[:, :, 1] = s[:, None]
    x[:, :, 2] = 1.0
    return x


def log_proba(theta: np.ndarray, t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """log p_ic (N, C+1) by log-sum-exp."""
    beta, gamma, mu = unpack(theta, t.shape[1])
    eta = beta * t + np.outer(s, gamma) + mu
    # log-sum-exp by hand: scipy's logsumexp is 2-3x slower on (N, C+1) and this runs per fit.
    top = eta.max(axis=1, keepdims=True)
    return eta - (top + np.log(np.exp(eta - top).sum(axis=1, keepdims=True)))


def proba(theta: np.ndarray, t: np.ndarray, s: np.ndarray) -> np.ndarray:
    return np.exp(log_proba(theta, t, s))


def _theta_layout(grad_ic: np.ndarray) -> np.ndarray:
    """Rearrange per-(i, c, feature) terms into theta order: all beta, then gamma, then mu."""
    return np.concatenate([grad_ic[..., 0], grad_ic[..., 1], grad_ic[..., 2]], axis=-1)


def score_contributions(theta, t, s, scores, weights) -> np.ndarray:
    """Per-response gradients of w_i log p_{i,x_i}: (N, 3C). Row i is w_i (1{x_i=c} - p_ic) x_ic."""
    x = design(t, s)
    p = proba(theta, t, s)[:, 1:]
    resid = -p
    hit = scores > 0
    resid[np.flatnonzero(hit), scores[hit] - 1] += 1.0
    return _theta_layout(weights[:, None, None] * resid[:, :, None] * x)


def neg_log_pl(theta, t, s, scores, weights) -> tuple[float, np.ndarray]:
    """-L / sum(w) and its gradient (3C,), L the weighted log pseudo-likelihood.

    log p_{i,x_i} comes from the log-sum-exp, never from a clipped probability, so the value is
    finite for any theta and the gradient is exactly that of the value (no floor whose
    derivative would be missing near separation).
    """
    logp = log_proba(theta, t, s)
    chosen = logp[np.arange(scores.shape[0]), scores]
    total = weights.sum()
    value = -(weights * chosen).sum() / total
    grad = -score_contributions(theta, t, s, scores, weights).sum(axis=0) / total
    return float(value), grad


def hessian(theta, t, s, weights) -> np.ndarray:
    """Hessian of L (not of -L/sum w): (3C, 3C), the paper's second derivatives with weights.

    d2L / d theta_(c,f) d theta_(d,g) = -sum_i w_i x_icf x_idg (p_ic 1{c=d} - p_ic p_id).
    """
    x = design(t, s)
    p = proba(theta, t, s)[:, 1:]
    n, c, f = x.shape
    cov = -p[:, :, None] * p[:, None, :]
    cov[:, np.arange(c), np.arange(c)] += p
    # H[c,f,d,g] = -sum_i w_i cov[i,c,d] x[i,c,f] x[i,d,g]
    h = -np.einsum("i,icd,icf,idg->cfdg", weights, cov, x, x)
    # theta order is feature-major (all beta, all gamma, all mu): reorder (c,f) -> (f,c).
    return h.transpose(1, 0, 3, 2).reshape(f * c, f * c)


class _Objective:
    """`neg_log_pl` for the optimiser, with the data laid out once per fit as (C, N) arrays.

    Same value and gradient as `neg_log_pl` (to rounding), about 20x faster at N = 15,000: no
    design matrix per call, and every reduction over categories is a sum of N-vectors (numpy
    reduces a short last axis slowly). From IN_PLACE_FROM responses on, the same operations
    write into buffers kept between calls (bit for bit the same numbers, nearly twice as fast
    at N = 15,000); below it, numpy's handling of `out=` costs more than the allocations.
    """

    def __init__(self, t, s, scores, weights):
        n, k = t.shape
        self.c = k - 1
        self.t = np.ascontiguousarray(t[:, 1:].T, dtype=np.float64)  # (C, N)
        self.s = np.ascontiguousarray(s, dtype=np.float64)
        self.weights = weights
        self.total = weights.sum()
        self.chosen = scores * n + np.arange(n)  # flat positions of eta[x_i, i]
        target = np.zeros((k, n))
        target[scores, np.arange(n)] = 1.0
        self.weighted_target = weights * target[1:]
        self.eta = np.zeros((k, n))  # row 0 is the baseline category, always 0
        self.in_place = n >= IN_PLACE_FROM
        if self.in_place:
            self.e, self.top, self.z = np.empty((k, n)), np.empty(n), np.empty(n)
            self.row, self.work, self.resid = (
                np.empty(n),
                np.empty((k - 1, n)),
                np.empty((k - 1, n)),
            )

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        if self.in_place:
            return self._in_place(theta)
        c, eta = self.c, self.eta
        add = np.add.reduce  # what ndarray.sum calls, without its wrapper (small N: it counts)
        np.multiply(self.t, theta[:c, None], out=eta[1:])
        eta[1:] += self.s * theta[c : 2 * c, None]
        eta[1:] += theta[2 * c :, None]
        top = np.maximum.reduce(eta, axis=0)
        e = np.exp(eta - top)
        z = add(e, axis=0)
        chosen = eta.ravel()[self.chosen] - np.log(z) - top  # log p_{i,x_i}, log-sum-exp
        value = -add(self.weights * chosen) / self.total
        resid = self.weighted_target - e[1:] * (self.weights / z)  # w_i (1{x_i=c} - p_ic)
        grad = np.concatenate([add(resid * self.t, axis=1), resid @ self.s, add(resid, axis=1)])
        return float(value), -grad / self.total

    def _in_place(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """`__call__`'s operations, in the same order, into the buffers."""
        c, eta, work, row = self.c, self.eta, self.work, self.row
        np.multiply(self.t, theta[:c, None], out=eta[1:])
        np.multiply(self.s, theta[c : 2 * c, None], out=work)
        eta[1:] += work
        eta[1:] += theta[2 * c :, None]
        top = np.max(eta, axis=0, out=self.top)
        e = np.exp(np.subtract(eta, top, out=self.e), out=self.e)
        z = np.sum(e, axis=0, out=self.z)
        chosen = eta.ravel()[self.chosen]
        chosen -= np.log(z, out=row)
        chosen -= top
        value = -np.multiply(self.weights, chosen, out=chosen).sum() / self.total
        resid = np.multiply(e[1:], np.divide(self.weights, z, out=row), out=self.resid)
        np.subtract(self.weighted_target, resid, out=resid)
        grad = np.empty(3 * c)
        np.sum(np.multiply(resid, self.t, out=work), axis=1, out=grad[:c])
        grad[c : 2 * c] = resid @ self.s
        np.sum(resid, axis=1, out=grad[2 * c :])
        return float(value), -grad / self.total


def fit(
    t: np.ndarray,
    s: np.ndarray,
    scores: np.ndarray,
    class_weight: str | None = "balanced",
    start: np.ndarray | None = None,
) -> FittedPARM:
    """Maximise the weighted pseudo-likelihood for features T (N, C+1), S (N,), scores (N,)."""
    n_classes = t.shape[1]
    c = n_classes - 1
    weights = class_weights(scores, n_classes, class_weight)
    theta0 = np.zeros(3 * c) if start is None else np.asarray(start, float)
    # T and S grow with the number of neighbours (into the hundreds on a dense graph), which
    # leaves L-BFGS-B badly conditioned and stopping early. Optimising over beta*a, gamma*a with
    # features divided by a = mean|S| is the same problem with the same box (scaled), but O(1).
    scale = float(np.mean(np.abs(s))) or 1.0
    factor = np.concatenate([np.full(2 * c, scale), np.ones(c)])
    with one_blas_thread():
        # scipy's L-BFGS-B, driven without minimize's per-call overhead (same iterates).
        result = minimize_bounded(
            _Objective(t / scale, s / scale, scores, weights),
            theta0 * factor,
            -BOUND * factor,
            BOUND * factor,
            maxiter=5000,
            ftol=1e-12,
            gtol=1e-8,
        )
    return fitted_from(result, factor, t, s)


def fitted_from(result, factor: np.ndarray, t: np.ndarray, s: np.ndarray) -> FittedPARM:
    """The FittedPARM of an L-BFGS-B result over the scaled parameters (see `fit`)."""
    theta = result.x / factor
    beta, gamma, mu = unpack(theta, t.shape[1])
    return FittedPARM(
        beta=beta,
        gamma=gamma,
        mu=mu,
        se=np.full(theta.shape, np.nan),
        proba=proba(theta, t, s),
        objective=float(result.fun),
        converged=bool(result.success),
        message=str(result.message),
        iterations=int(result.nit),
        at_bounds=bool(np.any(np.abs(theta) >= BOUND * (1 - 1e-9))),
    )
