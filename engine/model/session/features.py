"""The session model's data: every read of every item, and its features on one graph (K, p).

A read is one rater's score of one answer. Item g's reads are plain arrays: `answer` (R_g,)
in 0..N_g-1 (rows of the item's neighbour graph), `rater` (R_g,) in 0..M-1 shared by the
session's items (-1: not recorded), `score` (R_g,) codes 0..C on the session's scale. An answer
may be read once, twice or more.

Features of read r of answer a in item g (c = 0..C; b runs over a's neighbours in the item's
top-K graph, s_ab the transformed similarity, A_b(c) the number of b's reads with score c, n_b
= sum_c A_b(c)):

    T_r(c) = sum_b s_ab A_b(c) / n_b        each neighbour counts once, its reads averaged
    S_r    = sum_c T_r(c)                   = sum_b s_ab over neighbours with a read
    O_r(c) = A_a(c) - 1{x_r = c}            the answer's own other reads
    U_r(c) = sum_b s_ab A_b^m(c) / n_b^m     the neighbours' reads by the read's own rater m
                                             (those b that rater m read)

U is T restricted to the rater's own reads: a rater grades answers like those they graded
before, beyond what the other raters' reads of them say. Dividing by n_b keeps T on today's scale (one read per answer gives the paper's T_i(c)) and
stops an answer read three times from weighing three times as much as its neighbours read once;
a neighbour read twice with two different scores adds half its similarity to each. The fit sees
T, U and S per unit of the item's mean neighbourhood mass (T~ = T / S-bar_g, S~ = S / S-bar_g - 1,
S-bar_g the mean S over the item's answers with a read), so the item parameters mean the same
on items of 30 and of 1,500 answers and can be shrunk towards each other.

Only `kept` reads (the training reads when cross-fitting) enter any feature: a held-out answer's
reads see its training neighbours, and none of its own reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from engine.graph.neighbour_graph import NeighbourGraph


@dataclass(frozen=True)
class SessionItem:
    """One item of a session: its reads and its answers' neighbour graph.

    answer, rater, score: (R,) int arrays (see the module docstring); n_classes: C+1, the
    session's scale (every item of one fit shares it); graph: the top-K graph over the item's
    N answers (engine.graph.search.build_graph); audited: (R,) bool, the read parm audits for
    each answer (at most one per answer), or None for each answer's first read; name: the item.
    """

    answer: np.ndarray
    rater: np.ndarray
    score: np.ndarray
    n_classes: int
    graph: NeighbourGraph
    ordered: bool = True
    audited: np.ndarray | None = None
    name: str = ""
    # (K, p, symmetric) -> (weights, adjacency): a fit and each cross-fitting fold ask for the
    # same graphs, and building them was most of the session model's time on small items.
    _graphs: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def n_answers(self) -> int:
        return self.graph.n

    @property
    def n_reads(self) -> int:
        return int(self.score.shape[0])

    def audited_reads(self) -> np.ndarray:
        """(N,) position of each answer's audited read, -1 for an answer without one."""
        chosen = np.full(self.n_answers, -1)
        if self.audited is None:
            answers, first = np.unique(self.answer, return_index=True)
            chosen[answers] = first
        else:
            where = np.flatnonzero(self.audited)
            chosen[self.answer[where]] = where
        return chosen


@dataclass(frozen=True)
class ReadFeatures:
    """Every read of the session on one graph, items one after another.

    item, rater, score, answer: (R,) with `answer` numbered across the session (item g's
    answers after item g-1's); t: (R, C+1) T~_r(c); s: (R,) S~_r; own: (R, C+1) O_r(c);
    same: (R, C+1) U~_r(c) (0 for a read whose rater is not recorded);
    kept: (R,) the reads the features were built from (and a fit uses); scale: (G,) S-bar_g;
    neighbours: (A, A) 0/1 adjacency of the answers (an edge of an item's fitted graph),
    block-diagonal over items; answers_of_item: (G + 1,) where each item's answers start.
    """

    item: np.ndarray
    rater: np.ndarray
    score: np.ndarray
    answer: np.ndarray
    t: np.ndarray
    s: np.ndarray
    own: np.ndarray
    same: np.ndarray
    kept: np.ndarray
    scale: np.ndarray
    neighbours: sp.csr_matrix
    answers_of_item: np.ndarray
    n_classes: int
    top_k: int
    power: float

    @property
    def n_reads(self) -> int:
        return int(self.score.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.scale.shape[0])

    def subset(self, reads: np.ndarray) -> ReadFeatures:
        """The same features restricted to `reads` (indices or a mask); answers unchanged."""
        take = np.asarray(reads)
        return ReadFeatures(
            self.item[take],
            self.rater[take],
            self.score[take],
            self.answer[take],
            self.t[take],
            self.s[take],
            self.own[take],
            self.same[take],
            self.kept[take],
            self.scale,
            self.neighbours,
            self.answers_of_item,
            self.n_classes,
            self.top_k,
            self.power,
        )


def read_counts(answer: np.ndarray, score: np.ndarray, n_answers: int, n_classes: int):
    """A (N, C+1): A_a(c), the number of reads of answer a with score c."""
    return np.bincount(answer * n_classes + score, minlength=n_answers * n_classes).reshape(
        n_answers, n_classes
    )


def item_top_k(item: SessionItem, top_k: int) -> int:
    """The K an item uses: the session's K, at most N - 1 (and the graph's Kmax)."""
    return int(min(top_k, item.graph.k_max))


def _same_rater(item: SessionItem, weights, kept: np.ndarray) -> np.ndarray:
    """U (R, C+1): each read's neighbours' shares among the reads of the read's own rater
    (every rater's shares side by side through one product with the weights)."""
    k = item.n_classes
    same = np.zeros((item.n_reads, k))
    raters = np.unique(item.rater[item.rater >= 0])
    if raters.size == 0:
        return same
    shares = np.empty((item.n_answers, raters.size * k))
    for j, rater in enumerate(raters):
        mine = kept & (item.rater == rater)
        counts = read_counts(item.answer[mine], item.score[mine], item.n_answers, k)
        shares[:, j * k : (j + 1) * k] = counts / np.maximum(counts.sum(axis=1), 1.0)[:, None]
    near = np.asarray(weights @ shares)
    for j, rater in enumerate(raters):
        mine = item.rater == rater
        same[mine] = near[item.answer[mine], j * k : (j + 1) * k]
    return same


# The most graph entries (weights and adjacency, all K) one item keeps between fits, about
# 0.6 MB: an item of up to about 200 answers keeps every K of the default grid (the fixed costs
# this saves are a small item's); a larger one keeps the first K that fit and builds the others
# for each fit, as before, so a session of many large items does not hold every graph twice.
GRAPHS_KEPT = 50_000


def _item_graph(item: SessionItem, top_k: int, power: float, symmetric: bool):
    """The item's weights W on the top-K graph and its 0/1 adjacency (W or W' nonzero, no
    diagonal), built once per (K, p) and kept on the item (read-only: never changed in place)."""
    key = (item_top_k(item, top_k), float(power), bool(symmetric))
    if key in item._graphs:
        return item._graphs[key]
    weights = item.graph.weights(key[0], power, symmetric)
    pattern = (abs(weights) + abs(weights.T)).tocsr()
    pattern.setdiag(0)
    pattern.eliminate_zeros()
    pattern.data[:] = 1.0
    held = sum(w.nnz + a.nnz for w, a in item._graphs.values())
    if held + weights.nnz + pattern.nnz <= GRAPHS_KEPT:
        item._graphs[key] = (weights, pattern)
    return weights, pattern


def _item_features(item: SessionItem, top_k: int, power: float, kept: np.ndarray, symmetric):
    """T, S, O, U per read, S-bar and the answers' adjacency for one item."""
    k = item.n_classes
    counts = read_counts(item.answer[kept], item.score[kept], item.n_answers, k).astype(float)
    reads = counts.sum(axis=1)
    shares = counts / np.maximum(reads, 1.0)[:, None]
    weights, pattern = _item_graph(item, top_k, power, symmetric)
    t_answers = np.asarray(weights @ shares)
    s_answers = t_answers.sum(axis=1)
    read = reads > 0
    scale = float(s_answers[read].mean()) if read.any() else 0.0
    scale = scale if scale > 0 else 1.0
    own = counts[item.answer].copy()
    own[np.flatnonzero(kept), item.score[kept]] -= 1.0
    return (
        t_answers[item.answer] / scale,
        s_answers[item.answer] / scale - 1.0,
        own,
        _same_rater(item, weights, kept) / scale,
        scale,
        pattern,
    )


def read_features(
    items: list[SessionItem],
    top_k: int,
    power: float = 1.0,
    kept: list[np.ndarray] | None = None,
    symmetric: bool = True,
) -> ReadFeatures:
    """The features of every read of `items` on the top-K graph with power p.

    kept: per item, (R_g,) bool, the reads the features are built from (default: all).
    """
    n_classes = items[0].n_classes
    if any(it.n_classes != n_classes for it in items):
        raise ValueError("one session model fits items on one scale (the same n_classes)")
    parts, offset, starts = [], 0, [0]
    for g, item in enumerate(items):
        keep = np.ones(item.n_reads, bool) if kept is None else np.asarray(kept[g], bool)
        t, s, own, same, scale, pattern = _item_features(item, top_k, power, keep, symmetric)
        parts.append((g, item, keep, t, s, own, scale, pattern, offset, same))
        offset += item.n_answers
        starts.append(offset)
    return ReadFeatures(
        item=np.concatenate([np.full(p[1].n_reads, p[0]) for p in parts]),
        rater=np.concatenate([np.asarray(p[1].rater, int) for p in parts]),
        score=np.concatenate([np.asarray(p[1].score, int) for p in parts]),
        answer=np.concatenate([p[1].answer + p[8] for p in parts]),
        t=np.concatenate([p[3] for p in parts]),
        s=np.concatenate([p[4] for p in parts]),
        own=np.concatenate([p[5] for p in parts]),
        same=np.concatenate([p[9] for p in parts]),
        kept=np.concatenate([p[2] for p in parts]),
        scale=np.array([p[6] for p in parts]),
        neighbours=sp.block_diag([p[7] for p in parts], format="csr"),
        answers_of_item=np.array(starts),
        n_classes=n_classes,
        top_k=int(top_k),
        power=float(power),
    )
