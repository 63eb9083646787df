"""Leniency from co-raters: where answers are read more than once, the differences between two
raters' reads of the same answer say who is the more lenient, with no model in between; and the
reference raters a session's effects are measured against, chosen so that effects cannot drag it.

Paired leniency: for every two reads of one answer by raters a and b, x_a - x_b = c_a - c_b + e
(points). The c are fitted by least squares over all such pairs (the minimum-norm solution:
each connected group of raters has mean 0), with a standard error clustered by answer (an answer
read three times gives three pairs that share reads), never below the homoscedastic one (a
rater whose few pairs happen to agree exactly would otherwise weigh without limit).

Combined with the model's figure b (engine.audit.raters.effects: X - E on every read) by
inverse variance, after moving c onto b's origin by the median over raters of b - c: the origin
is arbitrary in both, and the median keeps a few raters' differences from setting it. Both use
every read, so a pair's two reads are in both figures: the combination's standard error adds
their covariance, summed over the answers (`Influence`: each answer's part of c), or an answer
read three times would count as more answers than it is.

The reference (robust_members): among the candidate raters, the largest group whose leniencies
agree with one of them within CONSISTENT standard errors (of the difference), ties going to the
group least unusual otherwise, then to the tighter one; then moved to the raters within
CONSISTENT standard errors of its median until it settles. A median of all raters is dragged when up to half of them push the same way (a
session of four neutral raters and four pushing scores up: the median sits between, and the
neutral ones look harsh); the largest consistent group is the neutral raters as long as the
raters pushing do not agree with each other more than the neutral ones do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

# A rater needs this many paired reads for a paired figure.
MIN_PAIRS = 10
# Two raters' leniencies agree when within this many standard errors of their difference.
CONSISTENT = 2.5


@dataclass(frozen=True)
class CoReads:
    """Pairs of reads of one answer by two raters: who read first in the pair (a) and second
    (b), the difference x_a - x_b in points, and the answer (a cluster id over the session)."""

    a: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    b: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    diff: np.ndarray = field(default_factory=lambda: np.array([], dtype=float))
    cluster: np.ndarray = field(default_factory=lambda: np.array([], dtype=np.int64))

    def __len__(self) -> int:
        return int(self.diff.size)

    def counts(self, names: np.ndarray) -> np.ndarray:
        """(R,) how many pairs each of `names` is in."""
        return np.array([int(np.sum(self.a == n) + np.sum(self.b == n)) for n in names])


def co_reads(answer: np.ndarray, rater, value: np.ndarray, base: int) -> CoReads:
    """Every pair of reads of one answer by two named raters. answer: (R,) answer index within
    the item; rater: R names ("" not recorded: left out); value: (R,) points; base: added to the
    answer index to make the cluster id unique over a session."""
    rater = np.asarray(rater, dtype=object)
    named = np.flatnonzero(rater != "")
    a, b, diff, cluster = [], [], [], []
    by_answer: dict[int, list[int]] = {}
    for read in named:
        by_answer.setdefault(int(answer[read]), []).append(int(read))
    for k, reads in by_answer.items():
        for i, j in combinations(reads, 2):
            a.append(rater[i])
            b.append(rater[j])
            diff.append(float(value[i] - value[j]))
            cluster.append(base + k)
    return CoReads(np.array(a, dtype=object), np.array(b, dtype=object),
                   np.array(diff, dtype=float), np.array(cluster, dtype=np.int64))  # fmt: skip


def join(parts: list[CoReads]) -> CoReads:
    if not parts:
        return CoReads()
    return CoReads(*(np.concatenate([getattr(p, k) for p in parts])
                     for k in ("a", "b", "diff", "cluster")))  # fmt: skip


@dataclass(frozen=True)
class Influence:
    """How much each answer moves each rater's paired figure: c - E[c] = sum over answers of
    `by_answer[g]` (the cluster ids `answers`), for the covariance with the model's figure."""

    answers: np.ndarray
    by_answer: np.ndarray  # (answers, names)


def paired_leniency(co: CoReads, names: np.ndarray, influence: bool = False):
    """(c, se, n) for each of `names`: the paired leniency (points, minimum-norm origin), its
    clustered standard error, and the rater's pairs; c and se NaN below MIN_PAIRS pairs. With
    `influence`, (c, se, n, Influence) (None without pairs)."""
    n = co.counts(names)
    c = np.full(names.size, np.nan)
    se = np.full(names.size, np.nan)
    if len(co) == 0:
        return (c, se, n, None) if influence else (c, se, n)
    everyone, ia = np.unique(np.r_[co.a, co.b], return_inverse=True)
    p = len(co)
    x = np.zeros((p, everyone.size))
    x[np.arange(p), ia[:p]] += 1.0
    x[np.arange(p), ia[p:]] -= 1.0
    inverse = np.linalg.pinv(x.T @ x)
    fitted = inverse @ x.T @ co.diff
    e = co.diff - x @ fitted
    groups, g = np.unique(co.cluster, return_inverse=True)
    scores = np.zeros((groups.size, everyone.size))
    np.add.at(scores, g, x * e[:, None])
    factor = groups.size / max(groups.size - 1, 1)
    clustered = factor * inverse @ (scores.T @ scores) @ inverse
    dof = max(p - np.linalg.matrix_rank(x), 1)
    plain = (e @ e / dof) * inverse
    spread = np.sqrt(np.maximum(np.diag(clustered), np.diag(plain)))
    where = {name: k for k, name in enumerate(everyone)}
    for r, name in enumerate(names):
        if name in where and n[r] >= MIN_PAIRS:
            c[r], se[r] = fitted[where[name]], spread[where[name]]
    if not influence:
        return c, se, n
    moves = scores @ inverse.T  # (answers, everyone): each answer's part of fitted - E[fitted]
    by_answer = np.zeros((groups.size, names.size))
    for r, name in enumerate(names):
        if name in where:
            by_answer[:, r] = moves[:, where[name]]
    return c, se, n, Influence(groups, by_answer)


def combine(b: np.ndarray, b_se: np.ndarray, c: np.ndarray, c_se: np.ndarray,
            covariance: np.ndarray | None = None):  # fmt: skip
    """The model's figure b and the paired c (moved onto b's origin: the median over raters with
    both of b - c) by inverse variance: (figure, standard error); b alone where c is NaN.

    covariance: (R,) cov(b, c) where the two are computed from the same reads (the model's
    figure counts every read, so a pair's two reads are in both): the combination's variance
    is then w_b^2 se_b^2 + w_c^2 se_c^2 + 2 w_b w_c cov (normalised weights), not
    1 / (1/se_b^2 + 1/se_c^2), which would count each answer read twice as two answers."""
    both = np.isfinite(c) & np.isfinite(b)
    if not both.any():
        return b.copy(), b_se.copy()
    moved = c + float(np.median(b[both] - c[both]))
    # Only figures with a positive, finite standard error are weighed (a rater with too few
    # scores has none, and b alone stands).
    both &= usable(b_se) & usable(c_se)
    w_b = 1 / np.where(both, b_se, 1.0) ** 2
    w_c = np.where(both, 1 / np.where(both, c_se, 1.0) ** 2, 0.0)
    value = np.where(both, (w_b * b + w_c * np.nan_to_num(moved)) / (w_b + w_c), b)
    shared = np.zeros(b.size) if covariance is None else np.nan_to_num(covariance)
    # A correlation outside [-1, 1] is the estimate's noise: bounded by the two variances.
    shared = np.clip(shared, -b_se * np.nan_to_num(c_se), b_se * np.nan_to_num(c_se))
    u_b, u_c = w_b / (w_b + w_c), w_c / (w_b + w_c)
    variance = 1 / (w_b + w_c) + 2 * u_b * u_c * shared
    return value, np.where(both, np.sqrt(np.maximum(variance, 0.0)), b_se)


def usable(se: np.ndarray) -> np.ndarray:
    """Standard errors a figure can be weighed by: positive and finite."""
    return np.isfinite(se) & (se > 0)


def robust_members(values: np.ndarray, errors: np.ndarray, candidates: np.ndarray,
                   unusual: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """The largest group of candidates whose values agree with one of them within CONSISTENT
    standard errors of the difference; among groups as large, the one whose raters are the
    least unusual otherwise (`unusual`: per rater, e.g. the sum of their squared middle and
    drift z against the median of all; a session split in half has no other way to say which
    half is neutral), then the tightest (the smallest sum of squared standard distances).
    The group is then moved to the candidates within CONSISTENT standard errors of its median
    until it settles. The candidates' indices, sorted."""
    unusual = np.zeros(values.size) if unusual is None else unusual
    best, best_key = candidates, None
    for j in candidates:
        distance = np.abs(values[candidates] - values[j]) / np.hypot(errors[candidates], errors[j])
        close = candidates[distance <= CONSISTENT]
        key = (-close.size, round(float(np.sum(unusual[close])), 9),
               float(np.sum(distance[distance <= CONSISTENT] ** 2)))  # fmt: skip
        if best_key is None or key < best_key:
            best, best_key = close, key
    for _ in range(10):
        centre = float(np.median(values[best]))
        moved = candidates[np.abs(values[candidates] - centre) <= CONSISTENT * errors[candidates]]
        if moved.size < 3 or np.array_equal(np.sort(moved), np.sort(best)):
            break
        best = moved
    return np.sort(best)
