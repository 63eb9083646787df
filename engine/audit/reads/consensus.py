"""A consensus score for every answer read more than once, each rater's reliability, and the
third-read queue: the answers whose consensus is least sure, to be read again first.

The model (a Dawid-Skene model with a structured error model and a prior from the text):

    P(true score of u = c | reads, text)  proportional to  rho_u(c) prod_{reads of u} P(x | c, r)

P(x | c, r) is the raters' error model (engine.audit.reads.error_model: accuracy a_r, error shares over
offsets, shared by every item of the session). The prior rho_u pools the item's base rates
beta_i with the text evidence as a product of experts with the base rate divided out:

    log rho_u(c) = log beta_i(c) + sum_k lambda_k (log p_k(c | u) - log beta_i(c)) + const

over the sources k: out-of-fold classifiers (probabilities of u's score from models fitted on
other answers' reads) and the neighbour vote

    p_nb(c | u) = (sum_j w_uj q_j(c) + beta_i(c)) / (sum_j w_uj + 1)

over u's nearest answers j in the embedding space, q_j their posterior from their own reads
alone. Both are cross-fitted: nothing in p_k(. | u) saw u's reads, so an answer's reads vote once,
through their own likelihood. EM estimates a_r, the shares, beta_i and lambda (a conditional
logit in lambda, fitted by Newton steps on the expected log prior) by maximising the likelihood
of all reads; each source's lambda says how much the reads let the text count.

The consensus is the posterior's most probable score (ties: the lower code) and its probability.
An answer is sure when that probability is at least SURE; the other answers read at least twice
are ranked for a third read, least sure first (ties: item order, then answer order). Adding a
read changes the input, so the consensus is recomputed: it is a pure function of the reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from engine.audit.reads.consensus_layout import Layout, TextEvidence, layout
from engine.audit.reads.error_model import RaterCounts, RaterParameters, log_likelihood
from engine.audit.reads.item_reads import ItemReads

# A consensus at least this probable needs no third read: where the posterior is calibrated
# (tests/benchmarks/bench_consensus.py measures it), at most 1 in 20 of such answers is wrong,
# the error rate RSMTool's 95% adjacent-agreement threshold tolerates between two raters.
SURE = 0.95
LEVEL = 0.95
MAX_ITERATIONS = 500
# EM stops when no answer's posterior moved by more than this in a step.
TOLERANCE = 1e-4
MAX_WEIGHT = 4.0
START_ACCURACY = 0.7
BASE_PSEUDO = 0.5

__all__ = ["TextEvidence", "consensus", "third_read_ranks", "SURE"]


@dataclass(frozen=True)
class ItemConsensus:
    """One item's consensus. proba (N, K): the posterior of each answer's true score; prior
    (N, K): rho, the text's part of it; from_reads (N, K): the posterior from the answer's reads
    alone (the raters' model and the base rates); reads (N,); consensus (N,): the most probable
    score, -1 for answers read fewer than twice; consensus_p (N,): its probability (NaN there);
    third_read_rank (N,): 1 = read first, 0 = no third read needed (sure, or read < twice)."""

    proba: np.ndarray
    prior: np.ndarray
    from_reads: np.ndarray
    reads: np.ndarray
    consensus: np.ndarray
    consensus_p: np.ndarray
    third_read_rank: np.ndarray


@dataclass(frozen=True)
class RaterReliability:
    """Each rater's estimated accuracy (the probability a read of theirs is the true score) with
    its Jeffreys interval on the effective reads (error_model.RaterCounts.effective_reads: fewer
    than the reads, since the true scores are estimated), their reads, and the shares of their
    errors by offset (-2, -1, +1, +2, far; from ordered items)."""

    accuracy: np.ndarray
    low: np.ndarray
    high: np.ndarray
    reads: np.ndarray
    error_shares: np.ndarray


@dataclass(frozen=True)
class SessionConsensus:
    """Every item's consensus, the raters' reliability, lambda (each classifier's weight, then
    the neighbours'), and how the EM ended."""

    items: tuple[ItemConsensus, ...]
    raters: RaterReliability
    weights: tuple[float, ...]
    iterations: int
    converged: bool


def _row_reduce(ufunc, table: np.ndarray) -> np.ndarray:
    """ufunc over the last axis, one column at a time: with few codes per row this is an
    order of magnitude faster than numpy's reduction along a short last axis."""
    out = table[..., 0].copy()
    for c in range(1, table.shape[-1]):
        ufunc(out, table[..., c], out=out)
    return out


def _log_softmax(log_p: np.ndarray) -> np.ndarray:
    """Rows of unnormalised log-probabilities (-inf allowed, not a whole row), normalised."""
    shifted = log_p - _row_reduce(np.maximum, log_p)[:, None]
    return shifted - np.log(_row_reduce(np.add, np.exp(shifted)))[:, None]


def _softmax(log_p: np.ndarray) -> np.ndarray:
    """Rows of log-probabilities (-inf allowed, not a whole row) to probabilities."""
    p = np.exp(log_p - _row_reduce(np.maximum, log_p)[:, None])
    return p / _row_reduce(np.add, p)[:, None]


@dataclass
class _State:
    """The EM's current estimates: the posterior (A, K), the items' base rates (I, K),
    lambda (S,) and the raters' parameters."""

    posterior: np.ndarray
    base: np.ndarray
    weights: np.ndarray
    rater: RaterParameters


def _read_terms(plan: Layout, rater: RaterParameters) -> np.ndarray:
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
    rows = base[plan.item] * plan.valid
    return (np.asarray(plan.similar @ from_reads) + rows) / (plan.similar_total + 1.0)[:, None]


def _features(plan: Layout, log_base: np.ndarray, vote: np.ndarray | None) -> np.ndarray:
    """(S, A, K): log p_k - log beta for each classifier, then for the neighbour vote; 0 where
    an answer has no such evidence and beyond its scale."""
    found = [np.where(plan.valid, np.nan_to_num(s - log_base, nan=0.0), 0.0) for s in plan.sources]
    if vote is not None:
        found.append(np.where(plan.valid, np.log(np.where(plan.valid, vote, 1.0)) - log_base, 0.0))
    return np.stack(found) if found else np.zeros((0, *log_base.shape))


def _log_prior(plan: Layout, log_base, features, weights) -> np.ndarray:
    """log rho (A, K), normalised; -inf beyond each answer's scale."""
    log_rho = log_base.copy()
    for weight, feature in zip(weights, features):  # a few sources: no BLAS, exact sums
        log_rho += weight * feature
    log_rho = np.where(plan.valid, log_rho, -np.inf)
    return _log_softmax(log_rho)


def _fit_weights(plan, log_base, features, posterior, weights, steps: int = 2) -> np.ndarray:
    """Newton steps on lambda for sum_u sum_c q_u(c) log rho_u(c) (concave in lambda), kept in
    [0, MAX_WEIGHT]."""
    for _ in range(steps if weights.size else 0):
        rho = np.exp(_log_prior(plan, log_base, features, weights))
        mean = _row_reduce(np.add, features * rho[None])  # (S, A)
        gradient = np.sum(features * (posterior - rho)[None], axis=(1, 2))
        hessian = np.array([
            [np.sum(features[s] * features[t] * rho) - np.sum(mean[s] * mean[t])
             for t in range(weights.size)] for s in range(weights.size)
        ])  # fmt: skip
        hessian = -hessian
        step = np.linalg.solve(hessian - 1e-9 * np.eye(weights.size), -gradient)
        weights = np.clip(weights + step, 0.0, MAX_WEIGHT)
    return weights


def _m_step(plan: Layout, state: _State) -> tuple[RaterParameters, np.ndarray]:
    counts = RaterCounts.empty(state.rater.accuracy.size)
    for scale in plan.scales:
        counts.add(scale, state.posterior[scale.answer][:, : scale.n_classes], state.rater)
    sizes = np.diff(plan.offsets)
    totals = np.stack([np.bincount(plan.item, weights=state.posterior[:, c], minlength=sizes.size)
                       for c in range(plan.width)], axis=1)  # fmt: skip
    valid_item = np.zeros((sizes.size, plan.width), dtype=bool)
    valid_item[plan.item] = plan.valid
    base = (totals + BASE_PSEUDO) * valid_item
    return counts.parameters(state.rater), base / base.sum(axis=1, keepdims=True)


def _log_base_rows(plan: Layout, base: np.ndarray) -> np.ndarray:
    """(A, K) log beta of each answer's item, 0 beyond its scale (masked later)."""
    rows = base[plan.item]
    return np.where(plan.valid, np.log(np.where(plan.valid, rows, 1.0)), 0.0)


def _step(plan: Layout, state: _State, vote, text: bool) -> tuple[_State, np.ndarray, np.ndarray]:
    """One EM step: the M-step on the current posterior, then the E-step, with the text
    evidence (the fixed neighbour vote too) when `text`. Returns the new state, the reads' terms
    (A, K) and the evidence features (S, A, K) it used."""
    rater, base = _m_step(plan, state)
    own = _read_terms(plan, rater)
    log_base = _log_base_rows(plan, base)
    features = _features(plan, log_base, vote)
    weights = state.weights
    if text:
        weights = _fit_weights(plan, log_base, features, state.posterior, weights)
    log_prior = _log_prior(plan, log_base, features, weights)
    posterior = _softmax(log_prior + own)
    return _State(posterior, base, weights, rater), own, features


def _run(plan: Layout, state: _State, vote, text: bool):
    """EM steps until no posterior moves by TOLERANCE (at most MAX_ITERATIONS)."""
    iteration, change = 0, np.inf
    while iteration < MAX_ITERATIONS and change >= TOLERANCE:
        new, own, features = _step(plan, state, vote, text)
        change = float(np.max(np.abs(new.posterior - state.posterior), initial=0.0))
        state, iteration = new, iteration + 1
    return state, own, features, iteration, change < TOLERANCE


def _start(plan: Layout, raters: int, sources: int) -> _State:
    """The reads alone under equally good raters (a soft majority vote), uniform base rates."""
    rater = RaterParameters.start(raters, START_ACCURACY)
    uniform = plan.valid / plan.valid.sum(axis=1, keepdims=True)
    own = _read_terms(plan, rater)
    posterior = _softmax(np.where(plan.valid, own, -np.inf))
    base = np.zeros((plan.offsets.size - 1, plan.width))
    base[plan.item] = uniform
    return _State(posterior, base, np.zeros(sources), rater)


def _reliability(plan: Layout, state: _State, level: float) -> RaterReliability:
    counts = RaterCounts.empty(state.rater.accuracy.size)
    for scale in plan.scales:
        counts.add(scale, state.posterior[scale.answer][:, : scale.n_classes], state.rater)
    tail = (1 - level) / 2
    accuracy = state.rater.accuracy
    worth = counts.effective_reads(accuracy)
    right, wrong = accuracy * worth + 0.5, (1 - accuracy) * worth + 0.5
    low = np.where(counts.total > 0, stats.beta.ppf(tail, right, wrong), 0.0)
    high = np.where(counts.total > 0, stats.beta.ppf(1 - tail, right, wrong), 1.0)
    return RaterReliability(
        state.rater.accuracy, low, high, counts.total.astype(np.int64), state.rater.shares
    )


def third_read_ranks(reads: np.ndarray, probability: np.ndarray, sure: float = SURE) -> np.ndarray:
    """Ranks for a third read over the session's answers in item order (reads (A,), the
    consensus probability (A,)): answers read at least twice whose consensus is less probable
    than `sure`, least probable first (ties: the earlier answer); 0 for the rest."""
    unsure = np.flatnonzero((reads >= 2) & (probability < sure))
    order = unsure[np.argsort(probability[unsure], kind="stable")]
    rank = np.zeros(reads.size, dtype=np.int64)
    rank[order] = np.arange(1, order.size + 1)
    return rank


def _items(plan: Layout, items: list[ItemReads], state: _State, own, features, sure):
    reads = np.asarray(plan.reads_of.sum(axis=1)).ravel().astype(np.int64)
    best = np.argmax(state.posterior, axis=1)
    p = state.posterior[np.arange(best.size), best]
    rank = third_read_ranks(reads, p, sure)
    log_base = _log_base_rows(plan, state.base)
    prior = np.exp(_log_prior(plan, log_base, features, state.weights))
    from_reads = _softmax(np.where(plan.valid, log_base + own, -np.inf))
    found = []
    for j, item in enumerate(items):
        rows, size = slice(plan.offsets[j], plan.offsets[j + 1]), item.n_classes
        many = reads[rows] >= 2
        found.append(ItemConsensus(
            state.posterior[rows, :size], prior[rows, :size], from_reads[rows, :size],
            reads[rows], np.where(many, best[rows], -1), np.where(many, p[rows], np.nan),
            rank[rows],
        ))  # fmt: skip
    return tuple(found)


def consensus(
    items: list[ItemReads],
    evidence: list[TextEvidence | None] | None,
    n_raters: int,
    sure: float = SURE,
    level: float = LEVEL,
) -> SessionConsensus:
    """The session's consensus (module docstring) from its items' reads (raters 0..n_raters-1
    shared by every item) and each item's text evidence (None: the reads alone)."""
    evidence = list(evidence) if evidence is not None else [None] * len(items)
    plan = layout(items, evidence)
    sources = len(plan.sources) + (plan.similar is not None)
    # First the reads alone (a proper likelihood, Dawid-Skene's); then the text, with the
    # neighbours' votes fixed at their reads-alone posteriors. Letting those votes follow the
    # EM feeds answers' reads back into their neighbours' priors, and on two reads per answer
    # it drifted to a solution shifted by one score (rater accuracies near 0.4, ASAP-SAS).
    state, own, features, first, settled = _run(plan, _start(plan, n_raters, sources), None, False)
    log_base = _log_base_rows(plan, state.base)
    vote = neighbour_vote(plan, state.base, _softmax(np.where(plan.valid, log_base + own, -np.inf)))
    if sources:
        state, own, features, then, settled = _run(plan, state, vote, True)
        first += then
    iteration, change = first, 0.0 if settled else np.inf
    return SessionConsensus(
        _items(plan, items, state, own, features, sure),
        _reliability(plan, state, level),
        tuple(float(w) for w in state.weights),
        iteration,
        change < TOLERANCE,
    )
