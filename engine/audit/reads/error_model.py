"""The raters' error model behind the consensus: how likely each read is under each true score.

Rater r gives the true score c with probability a_r (their accuracy, on every item of the
session). Otherwise, on an ordered scale, the read lands at an offset d = x - c from the truth:
one of the error kinds k in {-2, -1, +1, +2, far (|d| >= 3)} with the rater's shares e_rk, among
the kinds the scale allows at c (a read cannot fall off the scale, so the shares are renormalised
over the feasible kinds, and a far error is spread evenly over the far codes):

    P(x | c, r) = a_r                                                   if x = c
                = (1 - a_r) e_{r,k(x-c)} / sum_{k' feasible at c} e_{rk'} / far(c)^[k = far]

On nominal labels an error is any other label: P(x | c, r) = (1 - a_r) / C. The shares carry a
rater's lean (errors up or down) and how far their errors go; accuracy alone ranks the raters.
The M-step is closed-form for a_r and one fixed-point step of the truncated multinomial's
likelihood for e_r, both with PSEUDO pseudo-counts so a rater with few reads stays inside (0, 1).

Reads are handled by scale (`ScaleReads`: every read of the session's items with one scale
size and kind), so a session of many small items costs a few array operations per scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS = (-2, -1, 1, 2)  # then "far": |d| >= 3
FAR = len(KINDS)
PSEUDO = 0.5
# A rater's accuracy is shrunk towards the session's pooled accuracy by this many reads: a rater
# with one read (typed in the review) is then as reliable as the session's raters until their
# reads say otherwise, instead of judged from that single read (one dissent gave an accuracy
# under chance, which turned the read into evidence for the score it dissents from). With the
# 50-500 reads a rater has in a session it moves accuracies by well under .01.
PRIOR_READS = 4.0
PRIOR_ERRORS = 2.0


@dataclass(frozen=True)
class RaterParameters:
    """accuracy (M,): a_r; shares (M, 5): e_r over the error kinds -2, -1, +1, +2, far."""

    accuracy: np.ndarray
    shares: np.ndarray

    @staticmethod
    def start(raters: int, accuracy: float) -> RaterParameters:
        return RaterParameters(np.full(raters, accuracy), np.full((raters, FAR + 1), 0.2))


@dataclass(frozen=True)
class ScaleKinds:
    """An ordered scale's error kinds: kind (K, K) of x - c, [c, x] (-1 on the diagonal),
    feasible (K, 5) which kinds can happen at each true score, far (K,) the far codes."""

    kind: np.ndarray
    feasible: np.ndarray
    far: np.ndarray

    @staticmethod
    def of(n_classes: int) -> ScaleKinds:
        grid = np.arange(n_classes)
        offset = grid[None, :] - grid[:, None]
        kind = np.full(offset.shape, FAR)
        for number, d in enumerate(KINDS):
            kind[offset == d] = number
        kind[offset == 0] = -1
        feasible = np.stack([np.any(kind == k, axis=1) for k in range(FAR + 1)], axis=1)
        return ScaleKinds(kind, feasible, np.sum(kind == FAR, axis=1))


@dataclass(frozen=True)
class ScaleReads:
    """Every read on one scale (size K, ordered or not): positions (R,) into the session's
    reads, answer (R,) session-wide answer index, rater (R,), score (R,); on an ordered scale
    its kinds and cells (R, K): rater * 5 + the kind of the read at each true score (the
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
    def of(n_classes, ordered, positions, answer, rater, score) -> ScaleReads:
        if not ordered or n_classes < 2:
            return ScaleReads(n_classes, ordered, positions, answer, rater, score)
        kinds = ScaleKinds.of(n_classes)
        cells = rater[:, None] * (FAR + 1) + np.maximum(kinds.kind[:, score].T, 0)
        return ScaleReads(n_classes, ordered, positions, answer, rater, score, kinds, cells)


def read_given_truth(n_classes: int, ordered: bool, rater: RaterParameters) -> np.ndarray:
    """(M, K, K) P(x | c, r) indexed [r, c, x] (module docstring)."""
    accuracy = rater.accuracy[:, None, None]
    if n_classes == 1:
        return np.ones((rater.accuracy.size, 1, 1))
    identity = np.eye(n_classes)
    if not ordered:
        return accuracy * identity + (1.0 - accuracy) / (n_classes - 1) * (1.0 - identity)
    scale = ScaleKinds.of(n_classes)
    usable = rater.shares @ scale.feasible.T.astype(np.float64)  # (M, K) at each true c
    error = rater.shares[:, np.maximum(scale.kind, 0)] / usable[:, :, None]
    error = np.where(scale.kind == FAR, error / np.maximum(scale.far, 1)[:, None], error)
    return accuracy * identity + (1.0 - accuracy) * np.where(scale.kind < 0, 0.0, error)


def log_likelihood(scale: ScaleReads, rater: RaterParameters) -> np.ndarray:
    """(R, K) log P(read's code | true score c, read's rater) for the scale's reads."""
    table = np.log(read_given_truth(scale.n_classes, scale.ordered, rater))
    # Rows [r, x] of the table over c: one contiguous row per read is the fastest gather.
    rows = table.transpose(0, 2, 1).reshape(-1, scale.n_classes)
    return rows[scale.rater * scale.n_classes + scale.score]


@dataclass
class RaterCounts:
    """Expected counts for the M-step over the session: right (M,) reads equal to the true
    score, total (M,) reads, kinds (M, 5) errors of each kind, exposure (M, 5) the error mass
    each kind competed for (the truncated multinomial's denominator), unsure (M,) the sum of
    p (1 - p) over the reads, p the posterior probability that the read is right (the
    information the unknown true scores take away)."""

    right: np.ndarray
    total: np.ndarray
    kinds: np.ndarray
    exposure: np.ndarray
    unsure: np.ndarray

    @staticmethod
    def empty(raters: int) -> RaterCounts:
        return RaterCounts(np.zeros(raters), np.zeros(raters), np.zeros((raters, FAR + 1)),
                           np.zeros((raters, FAR + 1)), np.zeros(raters))  # fmt: skip

    def effective_reads(self, accuracy: np.ndarray) -> np.ndarray:
        """(M,) the reads' worth once the true scores are estimated: n - sum p (1 - p) /
        (a (1 - a)), from the observed information of a_r (Louis' missing-information
        principle: the complete data's n / (a (1 - a)) less the variance of its score over the
        posterior), at least 1."""
        spread = np.maximum(accuracy * (1 - accuracy), 1e-12)
        return np.maximum(self.total - self.unsure / spread, np.minimum(self.total, 1.0))

    def add(self, scale: ScaleReads, truth: np.ndarray, rater: RaterParameters) -> None:
        """Add a scale's reads under the posterior truth (R, K) of their answers' true score."""
        raters = self.right.size
        reads = np.arange(scale.score.size)
        right = truth[reads, scale.score]
        self.right += np.bincount(scale.rater, weights=right, minlength=raters)
        self.unsure += np.bincount(scale.rater, weights=right * (1 - right), minlength=raters)
        self.total += np.bincount(scale.rater, minlength=raters)
        if scale.kinds is None:
            return
        wrong = truth.copy()
        wrong[reads, scale.score] = 0.0  # the error mass at each true score
        found = np.bincount(
            scale.cells.ravel(), weights=wrong.ravel(), minlength=raters * (FAR + 1)
        )
        self.kinds += found.reshape(raters, FAR + 1)
        feasible = scale.kinds.feasible.astype(np.float64)
        usable = rater.shares @ feasible.T  # (M, K)
        share = wrong / usable[scale.rater]
        # Summed by rater first, then spread over the kinds feasible at each true score.
        by_rater = np.stack(
            [np.bincount(scale.rater, weights=share[:, c], minlength=raters)
             for c in range(share.shape[1])], axis=1,
        )  # fmt: skip
        self.exposure += by_rater @ feasible

    def parameters(self, previous: RaterParameters) -> RaterParameters:
        """The M-step: a_r in closed form, shrunk towards the pooled accuracy by PRIOR_READS
        reads; e_r one fixed-point step, each kind's rate shrunk towards the pooled rate by
        PRIOR_ERRORS (raters with no ordered errors keep their shares)."""
        pooled = (self.right.sum() + PSEUDO) / (self.total.sum() + 2 * PSEUDO)
        accuracy = (self.right + PRIOR_READS * pooled) / (self.total + PRIOR_READS)
        seen = self.exposure.sum(axis=1) > 0
        shares = previous.shares.copy()
        # Each kind's rate shrunk towards the session's by PRIOR_ERRORS of error mass, so that a
        # rater with one error does not learn that every error of theirs is of that kind.
        pooled = (self.kinds.sum(axis=0) + PSEUDO) / (self.exposure.sum(axis=0) + PSEUDO)
        raw = (self.kinds[seen] + PRIOR_ERRORS * pooled) / (self.exposure[seen] + PRIOR_ERRORS)
        shares[seen] = raw / raw.sum(axis=1, keepdims=True)
        return RaterParameters(accuracy, shares)
