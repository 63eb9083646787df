"""The consensus's model (engine.audit.reads.consensus) and its fit: the prior from the base rates and
the text, the posterior it gives with the raters' error model, and the EM that estimates the
raters, the base rates and the text's weights from every read of the session.

Two posteriors of one model: the *fit posterior* over each answer's whole scale (a proper
likelihood of the reads: the EM maximises it), and the *consensus posterior*, the same model
conditioned on the truth lying within the answer's reads (consensus_layout: between the lowest
and highest read, among the given labels), with the prior tempered so that it moves the
log-odds between two scores of that range by at most `bound`: PRIOR_SHARE of the smallest
margin a 2-1 majority of the session's typical raters has between two scores of the range. An
answer whose reads agree has that score with probability 1; the prior weighs only between the
scores the reads allow, and never as much as a 2-1 majority of typical raters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.audit.reads.consensus_layout import Layout
from engine.audit.reads.error_model import (
    RaterCounts,
    RaterParameters,
    log_likelihood,
    read_given_truth,
    tied_raters,
)

MAX_ITERATIONS = 500
# EM stops when no answer's posterior moved by more than this in a step.
TOLERANCE = 1e-4
MAX_WEIGHT = 4.0
START_ACCURACY = 0.7
BASE_PSEUDO = 0.5
# The prior (base rates and text together) moves the log-odds between two scores of an answer's
# range by at most half the smallest margin of a 2-1 majority of the session's typical raters
# there, so text never outvotes agreeing humans of equal reliability, with room to spare for
# raters estimated a little apart.
PRIOR_SHARE = 0.5


@dataclass(frozen=True)
class ConsensusModel:
    """The fitted model: the raters' parameters (with the typical rater), the items' base rates
    (I, K), lambda (S,), the neighbour vote (A, K) or None, and how the EM ended."""

    rater: RaterParameters
    base: np.ndarray
    weights: np.ndarray
    vote: np.ndarray | None
    iterations: int
    converged: bool


def _row_reduce(ufunc, table: np.ndarray) -> np.ndarray:
    """ufunc over the last axis, one column at a time: with few codes per row this is an
    order of magnitude faster than numpy's reduction along a short last axis."""
    out = table[..., 0].copy()
    for c in range(1, table.shape[-1]):
        ufunc(out, table[..., c], out=out)
    return out


def log_softmax(log_p: np.ndarray) -> np.ndarray:
    """Rows of unnormalised log-probabilities (-inf allowed, not a whole row), normalised."""
    shifted = log_p - _row_reduce(np.maximum, log_p)[:, None]
    return shifted - np.log(_row_reduce(np.add, np.exp(shifted)))[:, None]


def softmax(log_p: np.ndarray) -> np.ndarray:
    """Rows of log-probabilities (-inf allowed, not a whole row) to probabilities."""
    p = np.exp(log_p - _row_reduce(np.maximum, log_p)[:, None])
    return p / _row_reduce(np.add, p)[:, None]


def read_terms(plan: Layout, rater: RaterParameters) -> np.ndarray:
    """(A, K) the sum over each answer's reads of log P(x | c, r) (0 beyond a scale)."""
    likelihood = np.zeros((plan.reads_of.shape[1], plan.width))
    for scale in plan.scales:
        likelihood[scale.positions, : scale.n_classes] = log_likelihood(scale, rater)
    return np.asarray(plan.reads_of @ likelihood)


def neighbour_vote(plan: Layout, base: np.ndarray, from_reads: np.ndarray) -> np.ndarray | None:
    """(A, K) p_nb: the similarity-weighted mean of the neighbours' posteriors from their own
    reads, with the item's base rates as one more neighbour of weight 1; None without
    neighbours."""
    if plan.similar is None:
        return None
    assert plan.similar_total is not None  # made with `similar` (consensus_layout._similar)
    rows = base[plan.item] * plan.valid
    return (np.asarray(plan.similar @ from_reads) + rows) / (plan.similar_total + 1.0)[:, None]


def features(plan: Layout, log_base: np.ndarray, vote: np.ndarray | None) -> np.ndarray:
    """(S, A, K): log p_k - log beta for each classifier, then for the neighbour vote; 0 where
    an answer has no such evidence and beyond its scale."""
    found = [np.where(plan.valid, np.nan_to_num(s - log_base, nan=0.0), 0.0) for s in plan.sources]
    if vote is not None:
        found.append(np.where(plan.valid, np.log(np.where(plan.valid, vote, 1.0)) - log_base, 0.0))
    return np.stack(found) if found else np.zeros((0, *log_base.shape))


def log_prior(log_base, found, weights, mask) -> np.ndarray:
    """log rho (A, K) over `mask` (the scale, or the support), normalised; -inf elsewhere."""
    log_rho = log_base.copy()
    for weight, feature in zip(weights, found):  # a few sources: no BLAS, exact sums
        log_rho += weight * feature
    return log_softmax(np.where(mask, log_rho, -np.inf))


def log_base_rows(plan: Layout, base: np.ndarray) -> np.ndarray:
    """(A, K) log beta of each answer's item, 0 beyond its scale (masked later)."""
    rows = base[plan.item]
    return np.where(plan.valid, np.log(np.where(plan.valid, rows, 1.0)), 0.0)


def majority_margins(n_classes: int, ordered: bool, typical: RaterParameters) -> np.ndarray:
    """(K, K) [a, b]: the log-odds of a over b that reads a, a, b by three raters with the
    typical rater's parameters give, log P(a|a)^2 P(b|a) / (P(a|b)^2 P(b|b)) (P(x | c) at [c, x]):
    a 2-1 majority's margin (inf on the diagonal)."""
    table = np.log(read_given_truth(n_classes, ordered, typical)[0])
    right = np.diagonal(table)
    margin = 2 * right[:, None] + table - 2 * table.T - right[None, :]
    np.fill_diagonal(margin, np.inf)
    return margin


def prior_bounds(plan: Layout, rater: RaterParameters, share: float = PRIOR_SHARE) -> np.ndarray:
    """(A,) how far the prior may move the log-odds between two scores of each answer's support:
    `share` of the smallest margin of a 2-1 majority of typical raters between two scores of it
    (majority_margins; 0 where that is not positive). It depends on the support only, not on
    how many reads give each score, so a read within the support leaves it as it was."""
    typical = rater.pooled if rater.pooled is not None else rater
    bounds = np.zeros(plan.support.shape[0])
    for key in set(plan.item_scales):
        rows = np.flatnonzero(np.isin(plan.item, [j for j, s in enumerate(plan.item_scales)
                                                  if s == key]))  # fmt: skip
        if key[0] < 2 or rows.size == 0:
            continue
        margin = majority_margins(key[0], key[1], typical)
        inside = plan.support[rows, : key[0]]
        pairs = inside[:, :, None] & inside[:, None, :]
        smallest = np.min(np.where(pairs, margin[None], np.inf), axis=(1, 2))
        # A support of one score has no pair: nothing for the prior to weigh.
        bounds[rows] = share * np.clip(np.where(np.isfinite(smallest), smallest, 0.0), 0.0, None)
    return bounds


def tempered(plan: Layout, log_rho: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """(A, K) the prior restricted to each answer's support and tempered (raised to the power
    min(1, bound / its log range there)), normalised; -inf outside the support."""
    inside = np.where(plan.support, log_rho, np.nan)
    high, low = np.nanmax(inside, axis=1), np.nanmin(inside, axis=1)
    spread = high - low
    power = np.where(spread > bound, bound / np.where(spread > 0, spread, 1.0), 1.0)
    centred = np.where(plan.support, log_rho - high[:, None], 0.0)
    return log_softmax(np.where(plan.support, power[:, None] * centred, -np.inf))


def posteriors(plan: Layout, model: ConsensusModel, own=None, share: float = PRIOR_SHARE):
    """The consensus posterior (A, K), its prior (A, K) and the posterior from the reads and
    base rates alone (A, K), all on each answer's support, under `model` (own: read_terms, when
    computed already; share: PRIOR_SHARE, or another for the benchmark)."""
    own = read_terms(plan, model.rater) if own is None else own
    log_base = log_base_rows(plan, model.base)
    log_rho = log_prior(log_base, features(plan, log_base, model.vote), model.weights, plan.valid)
    bound = prior_bounds(plan, model.rater, share)
    prior = tempered(plan, log_rho, bound)
    base = tempered(plan, log_prior(log_base, (), (), plan.valid), bound)
    restricted = np.where(plan.support, own, -np.inf)
    return softmax(prior + restricted), np.exp(prior), softmax(base + restricted)


def fit_posterior(plan: Layout, model: ConsensusModel, own: np.ndarray) -> np.ndarray:
    """(A, K) the fit posterior (module docstring) under `model`."""
    log_base = log_base_rows(plan, model.base)
    found = features(plan, log_base, model.vote)
    return softmax(log_prior(log_base, found, model.weights, plan.valid) + own)


def _fit_weights(log_base, found, posterior, weights, mask, steps: int = 2) -> np.ndarray:
    """Newton steps on lambda for sum_u sum_c q_u(c) log rho_u(c) (concave in lambda), kept in
    [0, MAX_WEIGHT]."""
    for _ in range(steps if weights.size else 0):
        rho = np.exp(log_prior(log_base, found, weights, mask))
        mean = _row_reduce(np.add, found * rho[None])  # (S, A)
        gradient = np.sum(found * (posterior - rho)[None], axis=(1, 2))
        hessian = np.array([
            [np.sum(found[s] * found[t] * rho) - np.sum(mean[s] * mean[t])
             for t in range(weights.size)] for s in range(weights.size)
        ])  # fmt: skip
        hessian = -hessian
        step = np.linalg.solve(hessian - 1e-9 * np.eye(weights.size), -gradient)
        weights = np.clip(weights + step, 0.0, MAX_WEIGHT)
    return weights


def _m_step(plan: Layout, posterior: np.ndarray, rater: RaterParameters, groups: np.ndarray):
    """The raters' parameters (tied within `groups`) and the items' base rates (I, K) from the
    posterior."""
    counts = rater_counts(plan, posterior, rater).tied(groups)
    sizes = np.diff(plan.offsets)
    totals = np.stack([np.bincount(plan.item, weights=posterior[:, c], minlength=sizes.size)
                       for c in range(plan.width)], axis=1)  # fmt: skip
    valid_item = np.zeros((sizes.size, plan.width), dtype=bool)
    valid_item[plan.item] = plan.valid
    base = (totals + BASE_PSEUDO) * valid_item
    return counts.parameters(plan.item_scales), base / base.sum(axis=1, keepdims=True)


def rater_counts(plan: Layout, posterior: np.ndarray, rater: RaterParameters) -> RaterCounts:
    """The M-step's expected counts of every rater under the posterior (A, K)."""
    counts = RaterCounts.empty(rater.accuracy.size, plan.steps)
    for scale in plan.scales:
        counts.add(scale, posterior[scale.answer][:, : scale.n_classes], rater)
    return counts


@dataclass
class _State:
    """The EM's current estimates: the posterior it steps on (A, K) and the model; groups (M,):
    the raters that share one estimate (rater_model.tied_raters)."""

    posterior: np.ndarray
    model: ConsensusModel
    groups: np.ndarray


def _step(plan: Layout, state: _State, text: bool, restricted: bool) -> _State:
    """One EM step: the M-step on the current posterior, then the E-step, with the text
    evidence (the fixed neighbour vote too) when `text`; on each answer's support, the prior
    tempered, when `restricted` (else over its scale)."""
    old = state.model
    rater, base = _m_step(plan, state.posterior, old.rater, state.groups)
    own = read_terms(plan, rater)
    log_base = log_base_rows(plan, base)
    found = features(plan, log_base, old.vote if text else None)
    weights = old.weights
    if text:
        mask = plan.support if restricted else plan.valid
        weights = _fit_weights(log_base, found, state.posterior, weights, mask)
    model = ConsensusModel(rater, base, weights, old.vote if text else None, 0, False)
    if restricted:
        return _State(posteriors(plan, model, own)[0], model, state.groups)
    posterior = softmax(log_prior(log_base, found, weights, plan.valid) + own)
    return _State(posterior, model, state.groups)


def _run(plan: Layout, state: _State, text: bool, restricted: bool) -> tuple[_State, int, bool]:
    """EM steps until no posterior moves by TOLERANCE (at most MAX_ITERATIONS)."""
    iteration, change = 0, np.inf
    while iteration < MAX_ITERATIONS and change >= TOLERANCE:
        new = _step(plan, state, text, restricted)
        change = float(np.max(np.abs(new.posterior - state.posterior), initial=0.0))
        state, iteration = new, iteration + 1
    return state, iteration, change < TOLERANCE


def _start(plan: Layout, raters: int, sources: int, restricted: bool) -> _State:
    """The reads alone under equally good raters (a soft majority vote), uniform base rates."""
    rater = RaterParameters.start(raters, START_ACCURACY, plan.steps)
    own = read_terms(plan, rater)
    posterior = softmax(np.where(plan.support if restricted else plan.valid, own, -np.inf))
    base = np.zeros((plan.offsets.size - 1, plan.width))
    base[plan.item] = plan.valid / plan.valid.sum(axis=1, keepdims=True)
    answer = np.concatenate([s.answer for s in plan.scales] or [np.zeros(0, dtype=np.int64)])
    rater_of = np.concatenate([s.rater for s in plan.scales] or [np.zeros(0, dtype=np.int64)])
    groups = tied_raters(answer, rater_of, raters)
    return _State(posterior, ConsensusModel(rater, base, np.zeros(sources), None, 0, False), groups)


def fit(plan: Layout, raters: int, restricted: bool = False) -> ConsensusModel:
    """The model fitted by EM: first the reads alone (Dawid-Skene's likelihood with the
    raters' error model), then the text, with the neighbours' votes fixed at their reads-alone
    posteriors. Letting those votes follow the EM feeds answers' reads back into their
    neighbours' priors, and on two reads per answer it drifted to a solution shifted by one
    score (rater accuracies near 0.4, ASAP-SAS). restricted: the EM steps on the consensus
    posterior instead of the fit posterior (a variant the benchmark compares)."""
    sources = len(plan.sources) + (plan.similar is not None)
    state, iterations, settled = _run(plan, _start(plan, raters, sources, restricted), False,
                                      restricted)  # fmt: skip
    model = state.model
    own = read_terms(plan, model.rater)
    log_base = log_base_rows(plan, model.base)
    alone = softmax(np.where(plan.valid, log_base + own, -np.inf))
    vote = neighbour_vote(plan, model.base, alone)
    if sources:
        text = ConsensusModel(model.rater, model.base, model.weights, vote, 0, False)
        state = _State(state.posterior, text, state.groups)
        state, more, settled = _run(plan, state, True, restricted)
        iterations += more
    model = state.model
    return ConsensusModel(model.rater, model.base, model.weights, model.vote, iterations, settled)
