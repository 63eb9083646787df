"""A consensus score for every answer read more than once, each rater's reliability, and the
third-read queue: the answers whose consensus is least sure, to be read again first.

The model (a Dawid-Skene model with a structured error model and a prior from the text):

    P(true score of u = c | reads, text)  proportional to  rho_u(c) prod_{reads of u} P(x | c, r)

P(x | c, r) is the raters' error model (engine.audit.reads.error_model: accuracy a_r, near-miss error
shares over the scale's steps, shared by every item of the session). The prior rho_u pools the
item's base rates beta_i with the text evidence as a product of experts with the base rate
divided out:

    log rho_u(c) = log beta_i(c) + sum_k lambda_k (log p_k(c | u) - log beta_i(c)) + const

over the sources k: out-of-fold classifiers (probabilities of u's score from models fitted on
other answers' reads) and the neighbour vote

    p_nb(c | u) = (sum_j w_uj q_j(c) + beta_i(c)) / (sum_j w_uj + 1)

over u's nearest answers j in the embedding space, q_j their posterior from their own reads
alone. Both are cross-fitted: nothing in p_k(. | u) saw u's reads, so an answer's reads vote once,
through their own likelihood. EM estimates a_r, the shares, beta_i and lambda (a conditional
logit in lambda, fitted by Newton steps on the expected log prior) by maximising the likelihood
of all reads over each answer's whole scale (engine.audit.reads.consensus_fit).

The consensus is that model's posterior given that the true score lies within the answer's reads
(between the lowest and highest read; among the labels given on nominal items), with the prior
tempered to move the log-odds between two of those scores by at most half a read of the
session's typical rater (consensus_fit.PRIOR_SHARE): reads that agree are the consensus, with
probability 1; the text weighs only between the scores the reads allow, and never outvotes a
read. Its most probable score (ties: the lower code) and that probability are the consensus.
An answer is sure when the probability is at least SURE; the other answers read at least twice
are ranked for a third read, least sure first (ties: item order, then answer order).

With the model held fixed a read of score s never lowers p(s) (rater_model: a read of s is
never evidence against s; the support does not change when s lies within it, and p(s) was 0 when
it did not). `consensus(..., model=...)` computes the posterior under a fitted model: reads
typed in the review (engine.results.added_reads) update their answers under the run's model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from engine.audit.reads.consensus_fit import (
    ConsensusModel,
    fit,
    fit_posterior,
    posteriors,
    rater_counts,
    read_terms,
)
from engine.audit.reads.consensus_layout import Layout, TextEvidence, layout
from engine.audit.reads.item_reads import ItemReads

# A consensus at least this probable needs no third read: where the posterior is calibrated
# (tests/benchmarks/bench_consensus.py measures it), at most 1 in 20 of such answers is wrong,
# the error rate RSMTool's 95% adjacent-agreement threshold tolerates between two raters.
SURE = 0.95
LEVEL = 0.95

__all__ = ["TextEvidence", "ConsensusModel", "consensus", "third_read_ranks", "SURE"]


@dataclass(frozen=True)
class ItemConsensus:
    """One item's consensus. proba (N, K): the posterior of each answer's true score, 0 outside
    its reads' range; prior (N, K): rho there (base rates and text, tempered); from_reads
    (N, K): the posterior from the answer's reads and the base rates alone; reads (N,);
    consensus (N,): the most probable score, -1 for answers read fewer than twice; consensus_p
    (N,): its probability (NaN there); third_read_rank (N,): 1 = read first, 0 = no third read
    needed (sure, or read < twice)."""

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
    its Jeffreys interval on the effective reads (rater_model.RaterCounts.effective_reads: fewer
    than the reads, since the true scores are estimated), their reads, and the shares of their
    errors by distance (-D..-1, 1..D steps; from ordered items)."""

    accuracy: np.ndarray
    low: np.ndarray
    high: np.ndarray
    reads: np.ndarray
    error_shares: np.ndarray


@dataclass(frozen=True)
class SessionConsensus:
    """Every item's consensus, the raters' reliability, lambda (each classifier's weight, then
    the neighbours'), how the EM ended, and the fitted model (for reads added later)."""

    items: tuple[ItemConsensus, ...]
    raters: RaterReliability
    weights: tuple[float, ...]
    iterations: int
    converged: bool
    model: ConsensusModel


def _reliability(plan: Layout, model: ConsensusModel, own, level: float) -> RaterReliability:
    counts = rater_counts(plan, fit_posterior(plan, model, own), model.rater)
    tail = (1 - level) / 2
    accuracy = model.rater.accuracy
    worth = counts.effective_reads(accuracy)
    right, wrong = accuracy * worth + 0.5, (1 - accuracy) * worth + 0.5
    # The Beta quantiles (scipy.stats.beta.ppf's, without importing scipy.stats: ~0.9 s).
    low = np.where(counts.total > 0, special.betaincinv(right, wrong, tail), 0.0)
    high = np.where(counts.total > 0, special.betaincinv(right, wrong, 1 - tail), 1.0)
    return RaterReliability(accuracy, low, high, counts.total.astype(np.int64), model.rater.shares)


def third_read_ranks(reads: np.ndarray, probability: np.ndarray, sure: float = SURE) -> np.ndarray:
    """Ranks for a third read over the session's answers in item order (reads (A,), the
    consensus probability (A,)): answers read at least twice whose consensus is less probable
    than `sure`, least probable first (ties: the earlier answer); 0 for the rest."""
    unsure = np.flatnonzero((reads >= 2) & (probability < sure))
    order = unsure[np.argsort(probability[unsure], kind="stable")]
    rank = np.zeros(reads.size, dtype=np.int64)
    rank[order] = np.arange(1, order.size + 1)
    return rank


def _items(plan: Layout, items: list[ItemReads], model: ConsensusModel, own, sure):
    reads = np.asarray(plan.reads_of.sum(axis=1)).ravel().astype(np.int64)
    posterior, prior, from_reads = posteriors(plan, model, own)
    best = np.argmax(posterior, axis=1)
    p = posterior[np.arange(best.size), best]
    rank = third_read_ranks(reads, p, sure)
    found = []
    for j, item in enumerate(items):
        rows, size = slice(plan.offsets[j], plan.offsets[j + 1]), item.n_classes
        many = reads[rows] >= 2
        found.append(ItemConsensus(
            posterior[rows, :size], prior[rows, :size], from_reads[rows, :size],
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
    model: ConsensusModel | None = None,
    restricted_fit: bool = False,
) -> SessionConsensus:
    """The session's consensus (module docstring) from its items' reads (raters 0..n_raters-1
    shared by every item) and each item's text evidence (None: the reads alone). model: a
    fitted model of these items and evidence to use instead of fitting one (raters beyond its
    own take its typical rater's parameters); restricted_fit: the EM variant of
    consensus_fit.fit."""
    evidence = list(evidence) if evidence is not None else [None] * len(items)
    plan = layout(items, evidence)
    if model is None:
        model = fit(plan, n_raters, restricted_fit)
    else:
        model = ConsensusModel(model.rater.extended(n_raters), model.base, model.weights,
                               model.vote, model.iterations, model.converged)  # fmt: skip
    own = read_terms(plan, model.rater)
    return SessionConsensus(
        _items(plan, items, model, own, sure),
        _reliability(plan, model, own, level),
        tuple(float(w) for w in model.weights),
        model.iterations,
        model.converged,
        model,
    )
