"""Validity papers: each rater against the lead's (expert's) scores of some answers, and the
expert as the reference for leniency when there are enough of them.

Accuracy, per rater over their reads of expert-scored answers (every read, not only the audited
one): n, exact agreement, adjacent agreement (at most one step apart on the item's scale,
ordered scores) and the mean difference g = mean(x - expert) in points, with a t interval
g +/- t(0.975, n - 1) x se, se = max(s_r, s) / sqrt(n): s_r the rater's own standard deviation
of x - expert, s the one pooled over raters (within raters, n - R degrees of freedom). A rater's
own s_r from ten papers is often 0 (every paper agreed) and says little; the pooled s keeps the
interval honest, the max keeps a noisy rater's wide.

The anchor (`anchor`): every rater's model figure b (engine.audit.raters.effects, combined with
the co-raters' pairs) measures their leniency L_r from an origin o no one knows (the model is
fitted to the raters), and g measures L_r from the expert. So b_r - g_r estimates the same o for
every rater, lenient or not, and no rater has to be judged neutral: weighted least squares of
b_r = L_r + o (weights 1/se_b^2) and g_r = L_r (1/se_g^2), only figures with a positive, finite
standard error, gives each L_r against the expert with its standard error (the origin's own
uncertainty included). It is used from MIN_EXPERT_READS expert-scored reads pooled over raters:
o's standard error is then about s / sqrt(50) = 0.14 s, which beside a rater's own model figure
(about 0.07 s at 200 scores) keeps an effect of half a residual sd (bench_raters.py's) above
3 standard errors (0.5 / sqrt(0.14^2 + 0.07^2) = 3.2); with fewer, the expert's own noise would
hide the effects the neutral-rater median finds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.audit.raters.every_read import every_read
from engine.audit.raters.pairs import usable
from engine.input.scale import score_values

# Expert-scored reads, pooled over raters, from which the expert is the reference for leniency.
MIN_EXPERT_READS = 50
LEVEL = 0.95
# What the rater table's method adds when leniency is against the expert.
METHOD = (
    " Against the expert (validity papers): each rater's leniency L_r from weighted least "
    "squares of b_r = L_r + o (the combined figure above, its origin o unknown) and "
    "g_r = L_r (mean rater - expert over the rater's expert-scored reads, SE max(s_r, s) / "
    "sqrt(n)), so the reference is the expert, not the reference raters' median."
)


@dataclass(frozen=True)
class ExpertReads:
    """Reads of expert-scored answers: who read (rater), the read's and the expert's code on the
    item's scale, the same in points, and the answer (a cluster id over the session)."""

    rater: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    code: np.ndarray = field(default_factory=lambda: np.array([], dtype=np.int64))
    expert_code: np.ndarray = field(default_factory=lambda: np.array([], dtype=np.int64))
    value: np.ndarray = field(default_factory=lambda: np.array([], dtype=float))
    expert: np.ndarray = field(default_factory=lambda: np.array([], dtype=float))

    def __len__(self) -> int:
        return int(self.value.size)


@dataclass(frozen=True)
class ExpertFigures:
    """One rater against the expert: n reads of expert-scored answers, exact and adjacent
    agreement (adjacent None for unordered labels), and the mean difference rater - expert in
    points with its 95% t interval (None for unordered labels; the interval None below 2)."""

    n: int
    exact: float
    adjacent: float | None
    difference: float | None
    low: float | None
    high: float | None


def expert_reads(answer, rater, code, values, expert) -> ExpertReads:
    """An item's reads of expert-scored answers. answer: (R,) each read's answer; rater: R
    names ("" not recorded: left out); code: (R,) codes on the item's scale; values: (C,) each
    code's points; expert: (N,) each answer's expert code, -1 where none."""
    rater = np.asarray(rater, dtype=object)
    their = expert[answer]
    keep = (their >= 0) & (rater != "")
    return ExpertReads(rater[keep], code[keep], their[keep], values[code[keep]],
                       values[their[keep]])  # fmt: skip


def join(parts: list[ExpertReads]) -> ExpertReads:
    if not parts:
        return ExpertReads()
    return ExpertReads(*(np.concatenate([getattr(p, k) for p in parts])
                         for k in ExpertReads.__dataclass_fields__))  # fmt: skip


def differences(reads: ExpertReads, names: np.ndarray):
    """(g, se, n) for each of `names`: the mean rater - expert in points, its standard error
    max(s_r, s) / sqrt(n) (module docstring; NaN below 2 reads or where no spread is known),
    and the rater's expert-scored reads."""
    diff = reads.value - reads.expert
    n = np.array([int(np.sum(reads.rater == name)) for name in names])
    g = np.array([float(diff[reads.rater == name].mean()) if k else np.nan
                  for name, k in zip(names, n)])  # fmt: skip
    own = np.array([float(diff[reads.rater == name].var(ddof=1)) if k >= 2 else np.nan
                    for name, k in zip(names, n)])  # fmt: skip
    dof = int(np.sum(np.maximum(n - 1, 0)))
    pooled = float(np.nansum(own * np.maximum(n - 1, 0)) / dof) if dof else np.nan
    spread = np.sqrt(np.fmax(own, pooled))
    se = np.where(n >= 2, spread / np.sqrt(np.maximum(n, 1)), np.nan)
    return g, se, n


def figures(reads: ExpertReads, names: np.ndarray, ordered: bool) -> dict[str, ExpertFigures]:
    """Each of `names` with at least one expert-scored read, against the expert."""
    from scipy.special import stdtrit

    g, se, n = differences(reads, names)
    out = {}
    for r, name in enumerate(names):
        if n[r] == 0:
            continue
        mine = reads.rater == name
        gap = np.abs(reads.code[mine] - reads.expert_code[mine])
        half = float(stdtrit(n[r] - 1, 0.5 + LEVEL / 2)) * se[r] if n[r] >= 2 else np.nan
        interval = np.isfinite(half) and ordered
        out[str(name)] = ExpertFigures(
            n=int(n[r]),
            exact=float(np.mean(gap == 0)),
            adjacent=float(np.mean(gap <= 1)) if ordered else None,
            difference=float(g[r]) if ordered else None,
            low=float(g[r] - half) if interval else None,
            high=float(g[r] + half) if interval else None,
        )
    return out


def anchor(b, b_se, g, g_se):
    """Leniency against the expert: (L, se, origin, origin_se) by the weighted least squares of
    the module docstring, over the raters whose b has a positive, finite standard error (the
    others keep b - origin and their b's SE). None where no rater has both figures."""
    has_b, has_g = usable(b_se) & np.isfinite(b), usable(g_se) & np.isfinite(g)
    if not (has_b & has_g).any():
        return None
    rows = np.flatnonzero(has_b)
    count = rows.size
    x_rows, y_rows, w_rows = [], [], []
    for k, r in enumerate(rows):
        x_rows.append(np.r_[np.eye(count)[k], 1.0])
        y_rows.append(b[r])
        w_rows.append(1 / b_se[r] ** 2)
        if has_g[r]:
            x_rows.append(np.r_[np.eye(count)[k], 0.0])
            y_rows.append(g[r])
            w_rows.append(1 / g_se[r] ** 2)
    x, y, w = np.array(x_rows), np.array(y_rows), np.array(w_rows)
    covariance = np.linalg.inv(x.T @ (w[:, None] * x))
    fitted = covariance @ x.T @ (w * y)
    origin, origin_se = float(fitted[-1]), float(np.sqrt(covariance[-1, -1]))
    value = b - origin
    se = np.sqrt(b_se**2 + origin_se**2)
    value[rows] = fitted[:-1]
    se[rows] = np.sqrt(np.diag(covariance)[:-1])
    return value, se, origin, origin_se


def session_reads(results, order) -> ExpertReads:
    """Every item's reads of expert-scored answers (engine.audit.raters.every_read: every read), as
    one ExpertReads; order: the score_order."""
    parts = []
    for result in results:
        r = result.responses
        if r.expert is None or r.raters is None:
            continue
        reads = every_read(r)
        values = score_values(r.labels, order)
        parts.append(expert_reads(reads.answer, reads.rater, reads.code, values, r.expert))
    return join(parts)
