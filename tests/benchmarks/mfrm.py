"""A many-facet Rasch baseline that does not read the text (bench_raters.py compares parm's rater
verdicts with it on the same sessions; not shipped).

The model (a rating scale per item, FACETS' "partial credit by item"): answer n of item i,
rated k in 0..m_i by rater r,

    P(X = k) = exp(sum_{j<=k} (theta_n - alpha_r - tau_ij)) / sum_h exp(sum_{j<=h} (...)),

theta_n the answer's ability (it holds the item's difficulty too), alpha_r the rater's
severity (logits; a lenient rater's is low), tau_ij the item's thresholds. Fitted by joint
maximum likelihood (L-BFGS on the full log-likelihood and its gradient) with a weak N(0, 3^2)
penalty on theta, so that answers whose reads are all at an end of the scale keep a finite
ability (JMLE's usual trouble), and a tiny ridge on the rest for identification. Only answers
read at least twice inform alpha (a single read's theta fits it exactly), so only they enter.
A rater's standard error is the model's, 1 / sqrt(sum of the variance of their scores).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

THETA_SD = 3.0
RIDGE = 1e-4


@dataclass(frozen=True)
class Rasch:
    """Fitted severities (rater order as given), their standard errors, and per item the
    thresholds."""

    raters: list[str]
    severity: np.ndarray
    se: np.ndarray
    thresholds: list[np.ndarray]


def fit_mfrm(answer: np.ndarray, item: np.ndarray, rater: np.ndarray, score: np.ndarray,
             categories: np.ndarray) -> Rasch:  # fmt: skip
    """JMLE of the model above. answer: (R,) a global answer index per read; item: (R,) item
    index; rater: (R,) names; score: (R,) codes 0..m_i; categories: (I,) m_i + 1 per item."""
    reads = np.bincount(answer)
    keep = reads[answer] >= 2
    answer, item, rater, score = answer[keep], item[keep], rater[keep], score[keep]
    _, a = np.unique(answer, return_inverse=True)
    names, r = np.unique(rater, return_inverse=True)
    n_a, n_r, width = a.max() + 1, names.size, int(categories.max())
    steps = categories - 1
    offsets = np.r_[0, np.cumsum(steps)]
    k = np.arange(width)
    valid = k[None, :] < categories[:, None]  # (I, width): category exists on the item

    def unpack(x):
        theta, alpha, tau = x[:n_a], x[n_a : n_a + n_r], x[n_a + n_r :]
        psi = np.zeros((categories.size, width))  # cumulative thresholds, psi_i0 = 0
        for i in range(categories.size):
            psi[i, 1 : categories[i]] = np.cumsum(tau[offsets[i] : offsets[i + 1]])
        return theta, alpha, tau, psi

    def objective(x):
        theta, alpha, tau, psi = unpack(x)
        eta = theta[a] - alpha[r]
        logits = np.where(valid[item], k[None, :] * eta[:, None] - psi[item], -np.inf)
        log_p = logits - logsumexp(logits, axis=1, keepdims=True)
        p = np.exp(log_p)
        loss = -np.sum(log_p[np.arange(score.size), score])
        loss += np.sum(theta**2) / (2 * THETA_SD**2) + RIDGE * (np.sum(alpha**2) + np.sum(tau**2))
        residual = score - p @ k  # d loglik / d eta
        g_theta = -np.bincount(a, residual, n_a) + theta / THETA_SD**2
        g_alpha = np.bincount(r, residual, n_r) + 2 * RIDGE * alpha
        # d loglik / d tau_ij = P(X >= j) - [score >= j]
        above = np.cumsum(p[:, ::-1], axis=1)[:, ::-1]
        g_tau = np.zeros(tau.size)
        for i in range(categories.size):
            mine = item == i
            for j in range(1, categories[i]):
                g_tau[offsets[i] + j - 1] = np.sum(above[mine, j]) - np.sum(score[mine] >= j)
        g_tau = -g_tau + 2 * RIDGE * tau
        return loss, np.r_[g_theta, g_alpha, g_tau]

    x0 = np.zeros(n_a + n_r + offsets[-1])
    done = minimize(objective, x0, jac=True, method="L-BFGS-B", options={"maxiter": 2000})
    theta, alpha, _, psi = unpack(done.x)
    eta = theta[a] - alpha[r]
    logits = np.where(valid[item], k[None, :] * eta[:, None] - psi[item], -np.inf)
    p = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
    variance = p @ k**2 - (p @ k) ** 2
    se = 1 / np.sqrt(np.maximum(np.bincount(r, variance, n_r), 1e-12))
    thresholds = [done.x[n_a + n_r + offsets[i] : n_a + n_r + offsets[i + 1]]
                  for i in range(categories.size)]  # fmt: skip
    return Rasch(list(names), alpha - np.mean(alpha), se, thresholds)


def session_reads(results) -> tuple:
    """Every read of a session's audited items as fit_mfrm takes them (Responses.reads)."""
    answers, items, raters, scores, categories = [], [], [], [], []
    base = 0
    for i, result in enumerate(results):
        responses = result.responses
        reads = responses.reads
        named = np.array([name != "" for name in reads.rater])
        answers.append(base + reads.answer[named])
        items.append(np.full(int(named.sum()), i))
        raters.append(np.array(reads.rater, dtype=object)[named])
        scores.append(reads.score[named])
        categories.append(responses.n_classes)
        base += len(responses)
    return (np.concatenate(answers), np.concatenate(items),
            np.concatenate(raters).astype(str), np.concatenate(scores),
            np.array(categories))  # fmt: skip


def leniency_z(rasch: Rasch, reference: np.ndarray | None = None) -> dict[str, float]:
    """Each rater's leniency (minus severity) against the median rater, in standard errors
    (the rater's own; the median's is small beside it)."""
    lenient = -rasch.severity
    centre = np.median(lenient if reference is None else lenient[reference])
    return {name: float((lenient[j] - centre) / rasch.se[j]) for j, name in enumerate(rasch.raters)}
