"""The raters' error model behind the consensus: how likely each read is under each true score.

Rater r gives the true score c with probability a_r (their accuracy, on every item of the
session). Otherwise, on an ordered scale, the read lands d = x - c steps from the truth, with the
rater's error shares e_r(d) over the signed distances d = -D..-1, 1..D (D the steps of the
session's longest ordered scale), renormalised over the distances the scale allows at c (a read
cannot fall off the scale):

    P(x | c, r) = a_r                                                  if x = c
                = (1 - a_r) e_r(x - c) / sum_{d feasible at c} e_r(d)      otherwise

Errors are near misses: on each side of the truth e_r(d) does not grow with |d| (a read one step
off is a rater's likeliest error, two steps at most as likely, and so on), measured in the
scale's steps, so on a half-point scale a half-point difference is one step. The two sides may
differ: a rater's lean up or down. On nominal labels an error is any other label,
P(x | c, r) = (1 - a_r) / (C - 1).

A read of s is never evidence against s: a_r >= (1 - a_r) times the largest renormalised share
on the session's scales (1 / (C - 1) on nominal ones), so P(s | s, r) >= P(s | c, r) for every c
(the consensus's "a read of s never lowers p(s)" rests on it; it is also Dawid-Skene's usual
condition that pins which code is which).

The M-step: a_r in closed form, shrunk towards the session's pooled accuracy by PRIOR_READS
reads, then raised to that floor where below it (the likelihood is concave in a_r, so the clip
is the constrained maximum). e_r: one fixed-point step of the truncated multinomial (each
distance's rate, its errors over its exposure), shrunk towards the pooled rates by PRIOR_ERRORS
of error mass, then made non-increasing in |d| on each side by weighted isotonic regression
(pool adjacent violators: the order-restricted estimate of rates). The pooled estimates are the
session's typical rater, whose parameters a rater new to the session starts from.

Reads are handled by scale (`ScaleReads`: every read of the session's items with one scale
size and kind), so a session of many small items costs a few array operations per scale.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import sparse

PSEUDO = 0.5
# A rater's accuracy is shrunk towards the session's pooled accuracy by this many reads: a rater
# with one read (typed in the review) is then as reliable as the session's raters until their
# reads say otherwise, instead of judged from that single read. With the 50-500 reads a rater
# has in a session it moves accuracies by well under .01.
PRIOR_READS = 4.0
PRIOR_ERRORS = 2.0
# The shares a rater starts from, and the pooled rates' prior where a distance is never
# exposed: each step further from the truth half as likely.
DECAY = 0.5


def distances(steps: int) -> np.ndarray:
    """(2D,) the signed distances -D..-1, 1..D the shares are over."""
    return np.concatenate([np.arange(-steps, 0), np.arange(1, steps + 1)])


def default_shares(steps: int) -> np.ndarray:
    """(2D,) shares falling by DECAY a step, the same on both sides."""
    weight = DECAY ** (np.abs(distances(steps)) - 1.0)
    return weight / weight.sum()


@dataclass(frozen=True)
class RaterParameters:
    """accuracy (M,): a_r; shares (M, 2D): e_r over the distances -D..-1, 1..D; pooled: the
    session's typical rater (accuracy (1,), shares (1, 2D)), None before the first M-step."""

    accuracy: np.ndarray
    shares: np.ndarray
    pooled: RaterParameters | None = None

    @property
    def steps(self) -> int:
        return self.shares.shape[1] // 2

    @staticmethod
    def start(raters: int, accuracy: float, steps: int) -> RaterParameters:
        return RaterParameters(
            np.full(raters, accuracy), np.tile(default_shares(steps), (raters, 1))
        )

    def extended(self, raters: int) -> RaterParameters:
        """The parameters of `raters` raters: these, then the typical rater's for new ones."""
        extra = raters - self.accuracy.size
        if extra <= 0:
            return self
        typical = self.pooled if self.pooled is not None else self
        accuracy = np.concatenate([self.accuracy, np.repeat(typical.accuracy[:1], extra)])
        shares = np.vstack([self.shares, np.repeat(typical.shares[:1], extra, axis=0)])
        return RaterParameters(accuracy, shares, self.pooled)


@dataclass(frozen=True)
class ScaleKinds:
    """An ordered scale's error kinds: kind (K, K) the index of x - c among the distances,
    [c, x] (-1 on the diagonal); feasible (K, 2D) which distances can happen at each true c."""

    kind: np.ndarray
    feasible: np.ndarray

    @staticmethod
    @lru_cache(maxsize=256)
    def of(n_classes: int, steps: int) -> ScaleKinds:
        """The kinds of a scale of n_classes codes (cached: read them, never write)."""
        grid = np.arange(n_classes)
        offset = grid[None, :] - grid[:, None]
        kind = np.where(offset < 0, offset + steps, offset + steps - 1)
        kind[offset == 0] = -1
        feasible = np.stack([np.any(kind == k, axis=1) for k in range(2 * steps)], axis=1)
        return ScaleKinds(kind, feasible)


@dataclass(frozen=True)
class ScaleReads:
    """Every read on one scale (size K, ordered or not): positions (R,) into the session's
    reads, answer (R,) session-wide answer index, rater (R,), score (R,); on an ordered scale
    its kinds and cells (R, K): rater * 2D + the kind of the read at each true score (the
    M-step's bins; fixed, so made once)."""

    n_classes: int
    ordered: bool
    positions: np.ndarray
    answer: np.ndarray
    rater: np.ndarray
    score: np.ndarray
    kinds: ScaleKinds | None = None
    cells: np.ndarray | None = None

    @staticmethod
    def of(n_classes, ordered, positions, answer, rater, score, steps: int) -> ScaleReads:
        if not ordered or n_classes < 2:
            return ScaleReads(n_classes, ordered, positions, answer, rater, score)
        kinds = ScaleKinds.of(n_classes, steps)
        cells = rater[:, None] * (2 * steps) + np.maximum(kinds.kind[:, score].T, 0)
        return ScaleReads(n_classes, ordered, positions, answer, rater, score, kinds, cells)


def error_given_truth(n_classes: int, shares: np.ndarray) -> np.ndarray:
    """(M, K, K) on an ordered scale: P(x | c, r) / (1 - a_r), 0 on the diagonal."""
    scale = ScaleKinds.of(n_classes, shares.shape[1] // 2)
    usable = shares @ scale.feasible.T.astype(np.float64)  # (M, K) at each true c
    error = shares[:, np.maximum(scale.kind, 0)] / usable[:, :, None]
    return np.where(scale.kind < 0, 0.0, error)


def read_given_truth(n_classes: int, ordered: bool, rater: RaterParameters) -> np.ndarray:
    """(M, K, K) P(x | c, r) indexed [r, c, x] (module docstring)."""
    accuracy = rater.accuracy[:, None, None]
    if n_classes == 1:
        return np.ones((rater.accuracy.size, 1, 1))
    identity = np.eye(n_classes)
    if not ordered:
        return accuracy * identity + (1.0 - accuracy) / (n_classes - 1) * (1.0 - identity)
    return accuracy * identity + (1.0 - accuracy) * error_given_truth(n_classes, rater.shares)


def largest_error(shares: np.ndarray, scales) -> np.ndarray:
    """(M,) the largest P(x | c, r) / (1 - a_r) over x != c on the session's scales (pairs
    (n_classes, ordered)): the accuracy floor's ratio."""
    found = np.zeros(shares.shape[0])
    for n_classes, ordered in set(scales):
        if n_classes < 2:
            continue
        if ordered:
            largest = error_given_truth(n_classes, shares).max(axis=(1, 2))
        else:
            largest = np.full(shares.shape[0], 1.0 / (n_classes - 1))
        found = np.maximum(found, largest)
    return found


def accuracy_floor(shares: np.ndarray, scales) -> np.ndarray:
    """(M,) the least accuracy at which no read counts against its own score: a >= (1 - a) m,
    m the largest error ratio (largest_error)."""
    ratio = largest_error(shares, scales)
    return ratio / (1.0 + ratio)


def log_likelihood(scale: ScaleReads, rater: RaterParameters) -> np.ndarray:
    """(R, K) log P(read's code | true score c, read's rater) for the scale's reads."""
    table = np.log(read_given_truth(scale.n_classes, scale.ordered, rater))
    # Rows [r, x] of the table over c: one contiguous row per read is the fastest gather.
    rows = table.transpose(0, 2, 1).reshape(-1, scale.n_classes)
    return rows[scale.rater * scale.n_classes + scale.score]


def decreasing(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted least-squares non-increasing fit of `values` (pool adjacent violators)."""
    means: list[float] = []
    mass: list[float] = []
    counts: list[int] = []
    for value, weight in zip(values.tolist(), weights.tolist()):
        means.append(value)
        mass.append(weight)
        counts.append(1)
        while len(means) > 1 and means[-2] < means[-1]:
            total = mass[-2] + mass[-1]
            mean = (means[-2] * mass[-2] + means[-1] * mass[-1]) / total
            means[-2:], mass[-2:], counts[-2:] = [mean], [total], [counts[-2] + counts[-1]]
    return np.repeat(means, counts)


def near_misses(rates: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(M, 2D) rates made non-increasing in |d| on each side of the truth (module docstring)."""
    steps = rates.shape[1] // 2
    out = np.empty_like(rates)
    for r in range(rates.shape[0]):
        below = slice(steps - 1, None, -1)  # d = -1, -2, ..., -D
        out[r, below] = decreasing(rates[r, below], weights[r, below])
        out[r, steps:] = decreasing(rates[r, steps:], weights[r, steps:])
    return out


@dataclass
class RaterCounts:
    """Expected counts for the M-step over the session: right (M,) reads equal to the true
    score, total (M,) reads, kinds (M, 2D) errors at each distance, exposure (M, 2D) the error
    mass each distance competed for (the truncated multinomial's denominator), unsure (M,) the
    sum of p (1 - p) over the reads, p the posterior probability that the read is right (the
    information the unknown true scores take away)."""

    right: np.ndarray
    total: np.ndarray
    kinds: np.ndarray
    exposure: np.ndarray
    unsure: np.ndarray

    @staticmethod
    def empty(raters: int, steps: int) -> RaterCounts:
        return RaterCounts(np.zeros(raters), np.zeros(raters), np.zeros((raters, 2 * steps)),
                           np.zeros((raters, 2 * steps)), np.zeros(raters))  # fmt: skip

    def effective_reads(self, accuracy: np.ndarray) -> np.ndarray:
        """(M,) the reads' worth once the true scores are estimated: n - sum p (1 - p) /
        (a (1 - a)), from the observed information of a_r (Louis' missing-information
        principle: the complete data's n / (a (1 - a)) less the variance of its score over the
        posterior), at least 1."""
        spread = np.maximum(accuracy * (1 - accuracy), 1e-12)
        return np.maximum(self.total - self.unsure / spread, np.minimum(self.total, 1.0))

    def add(self, scale: ScaleReads, truth: np.ndarray, rater: RaterParameters) -> None:
        """Add a scale's reads under the posterior truth (R, K) of their answers' true score."""
        raters, width = self.right.size, self.kinds.shape[1]
        reads = np.arange(scale.score.size)
        right = truth[reads, scale.score]
        self.right += np.bincount(scale.rater, weights=right, minlength=raters)
        self.unsure += np.bincount(scale.rater, weights=right * (1 - right), minlength=raters)
        self.total += np.bincount(scale.rater, minlength=raters)
        if scale.kinds is None:
            return
        assert scale.cells is not None  # made with the kinds (ScaleReads.of)
        wrong = truth.copy()
        wrong[reads, scale.score] = 0.0  # the error mass at each true score
        found = np.bincount(scale.cells.ravel(), weights=wrong.ravel(), minlength=raters * width)
        self.kinds += found.reshape(raters, width)
        feasible = scale.kinds.feasible.astype(np.float64)
        usable = rater.shares @ feasible.T  # (M, K)
        share = wrong / usable[scale.rater]
        # Summed by rater first, then spread over the distances feasible at each true score.
        by_rater = np.stack(
            [np.bincount(scale.rater, weights=share[:, c], minlength=raters)
             for c in range(share.shape[1])], axis=1,
        )  # fmt: skip
        self.exposure += by_rater @ feasible

    def tied(self, groups: np.ndarray) -> RaterCounts:
        """The counts with each group of raters (groups (M,): a group index per rater) pooled
        and given back to every member: raters the design cannot tell apart share one
        estimate (tied_raters)."""
        size = int(groups.max(initial=-1)) + 1

        def pool(values):
            summed = np.zeros((size, *values.shape[1:]))
            np.add.at(summed, groups, values)
            return summed[groups]

        return RaterCounts(pool(self.right), pool(self.total), pool(self.kinds),
                           pool(self.exposure), pool(self.unsure))  # fmt: skip

    def parameters(self, scales) -> RaterParameters:
        """The M-step (module docstring) on the session's scales (pairs (n_classes,
        ordered)): every rater's parameters and the pooled (typical) rater's."""
        steps = self.kinds.shape[1] // 2
        pooled_accuracy = (self.right.sum() + PSEUDO) / (self.total.sum() + 2 * PSEUDO)
        accuracy = (self.right + PRIOR_READS * pooled_accuracy) / (self.total + PRIOR_READS)
        exposure = self.exposure.sum(axis=0, keepdims=True) + PSEUDO
        pooled = self.kinds.sum(axis=0, keepdims=True) + PSEUDO * default_shares(steps)
        pooled = near_misses(pooled / exposure, exposure)
        weight = self.exposure + PRIOR_ERRORS
        rates = near_misses((self.kinds + PRIOR_ERRORS * pooled) / weight, weight)
        shares = rates / rates.sum(axis=1, keepdims=True)
        pooled = pooled / pooled.sum()
        typical = np.maximum([pooled_accuracy], accuracy_floor(pooled, scales))
        return RaterParameters(
            np.maximum(accuracy, accuracy_floor(shares, scales)),
            shares,
            RaterParameters(typical, pooled),
        )


def tied_raters(answer: np.ndarray, rater: np.ndarray, raters: int) -> np.ndarray:
    """(M,) a group per rater: the raters of a connected set of raters who read common answers
    share a group when that set has no odd cycle (two raters who read the same answers, say),
    each rater their own group otherwise. Reads compared in pairs only give each pair's
    agreement, a product of the two raters' accuracies (roughly): a triangle of raters who
    share answers pins each accuracy, a bipartite set leaves one factor free between its two
    sides, and the fit would then pick it from the error model's shape alone (on two Mohler
    graders, 0.55 and 0.995 or 0.999 and 0.55, by how the posterior was restricted)."""
    pairs: Iterable[tuple[int, int]]
    if answer.size:
        incidence = sparse.csr_matrix(
            (np.ones(answer.size), (answer, rater)), shape=(int(answer.max()) + 1, raters)
        )
        shared = (incidence.T @ incidence).tocoo()  # raters x raters: answers read by both
        pairs = zip(shared.row.tolist(), shared.col.tolist())
    else:
        pairs = iter(())
    near: list[set[int]] = [set() for _ in range(raters)]
    for r, x in pairs:
        if r != x:
            near[r].add(x)
    groups, colour = np.arange(raters), np.full(raters, -1)
    for root in range(raters):
        if colour[root] >= 0:
            continue
        colour[root], members, queue, odd = 0, [root], [root], False
        while queue:
            r = queue.pop()
            for x in near[r]:
                if colour[x] < 0:
                    colour[x] = 1 - colour[r]
                    members.append(x)
                    queue.append(x)
                odd = odd or colour[x] == colour[r]
        if not odd:
            groups[members] = root
    return groups
