"""Simulating sessions from the session model with known parameters, for tests and benchmarks
that check estimates and intervals against the truth (engine/model/session/fit.py).

Each item's answers are random unit vectors in a few clusters; parm's own top-K graph is built
over them. Reads are drawn by Gibbs sampling from the model's full conditionals
P(x_r = c | rest) ~ exp(beta_gc T~_r(c) + gamma_gc S~_r + mu_gc + rho_mc + lambda O_r(c)
+ delta U~_r(c)),
the features as engine.model.session.features defines them. Answers of one colour of a greedy
colouring of the item graphs share no edge, so all their reads of one slot (first read, second
read) are drawn together from their exact conditionals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from potts import colour_classes

from engine.graph.search import build_graph
from engine.model.session.features import SessionItem


@dataclass(frozen=True)
class Truth:
    """theta0 (3C,): beta_1..C, gamma_1..C, mu_1..C; agreement_sd, mu_sd: the items' random
    agreement shift a_g and intercept shifts nu_gc; rater_sd; own (lambda); same (delta)."""

    theta0: np.ndarray
    agreement_sd: float
    mu_sd: float
    rater_sd: float
    own: float
    same: float = 0.0

    @property
    def c(self) -> int:
        return self.theta0.size // 3

    @property
    def variances(self) -> dict[str, float]:
        return {"agreement": self.agreement_sd**2, "mu": self.mu_sd**2, "rater": self.rater_sd**2}


# Four categories of similar shares, moderate neighbour effects; item and rater variation of
# the size the session fits find on the shared data's small items.
TRUTH = Truth(
    theta0=np.array([1.5, 2.0, 2.5, 0.0, 0.0, 0.0, -0.5, -0.7, -0.9]),
    agreement_sd=0.5,
    mu_sd=0.5,
    rater_sd=0.4,
    own=1.0,
    same=0.5,
)


@dataclass
class Design:
    """A session's fixed part: its items' graphs and who reads what."""

    graphs: list
    answer: list[np.ndarray]
    rater: list[np.ndarray]
    n_raters: int
    top_k: int


def clustered_vectors(n: int, rng: np.random.Generator, dim: int = 8, clusters: int = 4):
    centres = rng.normal(size=(clusters, dim))
    vectors = centres[rng.integers(clusters, size=n)] + 0.9 * rng.normal(size=(n, dim))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def session_design(items, answers, raters, double, top_k, seed) -> Design:
    """`items` items of `answers` answers; each answer read by one rater, `double` of them by
    a second (another rater, drawn at random from `raters`)."""
    rng = np.random.default_rng(seed)
    graphs, answer_of, rater_of = [], [], []
    for _ in range(items):
        graphs.append(build_graph(clustered_vectors(answers, rng), top_k))
        second = rng.random(answers) < double
        first_rater = rng.integers(raters, size=answers)
        other = (first_rater + rng.integers(1, raters, size=answers)) % raters
        answer_of.append(np.r_[np.arange(answers), np.flatnonzero(second)])
        rater_of.append(np.r_[first_rater, other[second]])
    return Design(graphs, answer_of, rater_of, raters, top_k)


def draw_effects(truth: Truth, items: int, raters: int, rng):
    """beta, gamma, mu (G, C+1) per item, category 0 included, and rho (M, C+1), drawn from
    their priors: beta_gc = beta_c + a_g (every category, 0 too), mu_gc = mu_c + nu_gc."""
    c = truth.c
    zero = np.zeros(1)
    beta = np.r_[zero, truth.theta0[:c]] + truth.agreement_sd * rng.normal(size=(items, 1))
    gamma = np.tile(np.r_[zero, truth.theta0[c : 2 * c]], (items, 1))
    mu = (
        np.r_[zero, truth.theta0[2 * c :]]
        + np.c_[np.zeros(items), truth.mu_sd * rng.normal(size=(items, c))]
    )
    rho = np.c_[np.zeros(raters), truth.rater_sd * rng.normal(size=(raters, c))]
    return (beta, gamma, mu), rho


def gibbs(design: Design, item_parameters, rho, truth: Truth, sweeps, seed) -> list[np.ndarray]:
    """Scores (R_g,) per item after `sweeps` sweeps from a random start."""
    rng = np.random.default_rng(seed)
    beta, gamma, mu = item_parameters
    k = beta.shape[1]
    weights = sp.block_diag(
        [g.weights(min(design.top_k, g.k_max), 1.0, True) for g in design.graphs], format="csr"
    )
    sizes = [g.n for g in design.graphs]
    offsets = np.r_[0, np.cumsum(sizes)]
    answer = np.concatenate([a + o for a, o in zip(design.answer, offsets)])
    rater = np.concatenate(design.rater)
    item_of_answer = np.repeat(np.arange(len(sizes)), sizes)
    total = np.asarray(weights.sum(axis=1)).ravel()
    scale = np.array([total[offsets[g] : offsets[g + 1]].mean() for g in range(len(sizes))])
    slot = np.zeros(answer.size, int)
    seen: dict[int, int] = {}
    for r, a in enumerate(answer):
        slot[r] = seen.get(a, 0)
        seen[a] = slot[r] + 1
    x = rng.integers(k, size=answer.size)
    n_answers, n_raters = offsets[-1], design.n_raters
    counts = np.zeros((n_answers, k))
    np.add.at(counts, (answer, x), 1.0)
    reads = counts.sum(axis=1)
    by_rater = np.zeros((n_answers, n_raters, k))
    np.add.at(by_rater, (answer, rater, x), 1.0)
    rater_reads = by_rater.sum(axis=2, keepdims=True)
    colour = np.empty(n_answers, int)
    for number, members in enumerate(colour_classes(weights)):
        colour[members] = number
    batches = [
        np.flatnonzero((colour[answer] == col) & (slot == s))
        for col in range(colour.max() + 1)
        for s in range(slot.max() + 1)
    ]
    batches = [b for b in batches if b.size]
    for _ in range(sweeps):
        for batch in batches:
            a, g = answer[batch], item_of_answer[answer[batch]]
            t = np.asarray(weights[a] @ (counts / reads[:, None])) / scale[g][:, None]
            mine = by_rater / np.maximum(rater_reads, 1.0)
            u = np.asarray(weights[a] @ mine.reshape(n_answers, -1)).reshape(-1, n_raters, k)
            u = u[np.arange(batch.size), rater[batch]] / scale[g][:, None]
            s = total[a] / scale[g] - 1.0
            other = counts[a].copy()
            other[np.arange(batch.size), x[batch]] -= 1.0
            eta = beta[g] * t + gamma[g] * s[:, None] + mu[g] + rho[rater[batch]]
            eta += truth.own * other + truth.same * u
            p = np.exp(eta - eta.max(axis=1, keepdims=True))
            cum = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
            new = np.minimum((rng.random((batch.size, 1)) > cum).sum(axis=1), k - 1)
            np.add.at(counts, (a, x[batch]), -1.0)
            np.add.at(counts, (a, new), 1.0)
            np.add.at(by_rater, (a, rater[batch], x[batch]), -1.0)
            np.add.at(by_rater, (a, rater[batch], new), 1.0)
            x[batch] = new
    ends = np.cumsum([r.size for r in design.rater])
    return np.split(x, ends[:-1])


def session_items(design: Design, scores: list[np.ndarray], n_classes: int) -> list[SessionItem]:
    return [
        SessionItem(a, r, s, n_classes, g, name=f"item{i}")
        for i, (g, a, r, s) in enumerate(zip(design.graphs, design.answer, design.rater, scores))
    ]


def simulate(design: Design, truth: Truth, sweeps: int, seed: int):
    """One replication: effects drawn, reads sampled; (items, (beta, gamma, mu), rho)."""
    rng = np.random.default_rng(seed)
    item_parameters, rho = draw_effects(truth, len(design.graphs), design.n_raters, rng)
    scores = gibbs(design, item_parameters, rho, truth, sweeps, seed + 1)
    return session_items(design, scores, truth.c + 1), item_parameters, rho


def simulated_items(items, answers, raters, double, top_k, sweeps, seed) -> list[SessionItem]:
    """A session drawn under TRUTH: its design from `seed`, its reads from `seed + 1`."""
    plan = session_design(items, answers, raters, double, top_k, seed)
    return simulate(plan, TRUTH, sweeps=sweeps, seed=seed + 1)[0]
