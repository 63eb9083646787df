"""The session model's parameters and its pseudo-likelihood: value, gradient and Hessian blocks.

For read r of item g by rater m with features T~_r(c), S~_r, O_r(c) (engine.model.session.features),

    eta_rc = beta_c T~_r(c) + gamma_c S~_r + mu_c            the session's parameters theta_0
           + a_g T~_r(c) + nu_gc                             item g's random effects
           + rho_mc + lambda O_r(c) + delta U~_r(c),         rater m's intercepts, own reads,
                                                             the rater's own neighbour reads
    p_rc   = exp(eta_rc - Q_r),   Q_r = log sum_a exp(eta_ra),   c = 0..C,

with beta_0 = gamma_0 = mu_0 = nu_g0 = rho_m0 = 0 (a_g, lambda and delta weigh agreement in
every category, the paper's overall agreement indicator, so they need no baseline). The log
pseudo-likelihood is L = sum_r w_r log p_{r, x_r}. Which item effects the model has is its
`item_kinds`: "agreement" (a_g), "mu" (nu_g1..C), and optionally "beta" (per-category shifts
of beta) and "gamma" (of gamma).

Only differences eta_rc - eta_r0 matter, so each read's design lives on c = 1..C: its "local"
columns are theta_0 (3C), its item's effects, its rater's C intercepts, lambda and delta.

Parameters (the global vector w): the items' effects (one block per item, when items are random
effects), then the "core": theta_0, rho_m (C per rater, when raters are random effects), lambda (when
some answer has two reads) and delta (with two or more raters). The Hessian of -L is block-arrow: one block per item,
each item's cross block with the core, and the core block (engine.model.session.blocks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from engine.core.machine.memory import array_bytes, check_memory
from engine.core.machine.memory import empty as checked_empty
from engine.core.machine.memory import zeros as checked_zeros
from engine.model.session.features import ReadFeatures

# What to change when the session model's arrays would not fit (engine.core.machine.memory).
TOO_BIG = (
    'Set session_model to "off" to audit the items one by one, or check the score column: a '
    "scale of hundreds of scores is seldom a rubric."
)

ITEM_KINDS = ("agreement", "beta", "gamma", "mu")
DEFAULT_ITEM_KINDS = ("agreement", "mu")


@dataclass(frozen=True)
class Layout:
    """Where each parameter sits in the global vector w (items first, then the core)."""

    n_classes: int
    n_items: int
    n_raters: int
    item_effects: bool
    rater_effects: bool
    own_reads: bool
    item_kinds: tuple[str, ...] = DEFAULT_ITEM_KINDS
    same_rater: bool = False

    @property
    def c(self) -> int:
        return self.n_classes - 1

    @property
    def fixed(self) -> int:
        """theta_0: beta_1..C, gamma_1..C, mu_1..C."""
        return 3 * self.c

    def kind_size(self, kind: str) -> int:
        return 1 if kind == "agreement" else self.c

    def kind_slices(self) -> dict[str, slice]:
        """Where each kind of item effect sits in an item's block."""
        out, start = {}, 0
        for kind in self.item_kinds:
            out[kind] = slice(start, start + self.kind_size(kind))
            start += self.kind_size(kind)
        return out

    @property
    def q(self) -> int:
        """Random effects per item."""
        return sum(self.kind_size(k) for k in self.item_kinds)

    @property
    def item_blocks(self) -> int:
        return self.n_items if self.item_effects else 0

    @property
    def n_item_params(self) -> int:
        return self.item_blocks * self.q

    @property
    def rater_start(self) -> int:
        """Core index of rho_1."""
        return self.fixed

    @property
    def n_rater_params(self) -> int:
        return self.n_raters * self.c if self.rater_effects else 0

    @property
    def n_core(self) -> int:
        return self.fixed + self.n_rater_params + int(self.own_reads) + int(self.same_rater)

    @property
    def own_index(self) -> int | None:
        """Core index of lambda."""
        return self.fixed + self.n_rater_params if self.own_reads else None

    @property
    def same_index(self) -> int | None:
        """Core index of delta."""
        return self.n_core - 1 if self.same_rater else None

    @property
    def fixed_core(self) -> np.ndarray:
        """Core indices of the fixed parameters: theta_0, lambda, delta."""
        extra = [i for i in (self.own_index, self.same_index) if i is not None]
        return np.r_[np.arange(self.fixed), extra].astype(int)

    @property
    def size(self) -> int:
        return self.n_item_params + self.n_core

    @property
    def components(self) -> tuple[str, ...]:
        """The variance components: one per kind of item effect, one for the raters."""
        return (self.item_kinds if self.item_effects else ()) + (
            ("rater",) if self.rater_effects else ()
        )

    def local_size(self) -> int:
        """theta_0, the item's effects, the rater's intercepts, lambda, delta."""
        return self.fixed + self.q + self.c + 2

    def columns(self, item: np.ndarray, rater: np.ndarray) -> np.ndarray:
        """(R, L) global index of each read's local columns; `size` (a slot always 0) where a
        column is not in the model (no item or rater effects, rater unknown, no lambda)."""
        r, c, f, q = item.shape[0], self.c, self.fixed, self.q
        cols = np.full((r, self.local_size()), self.size, dtype=np.int64)
        cols[:, :f] = self.n_item_params + np.arange(f)
        if self.item_effects:
            cols[:, f : f + q] = item[:, None] * q + np.arange(q)
        if self.rater_effects:
            known = rater >= 0
            start = self.n_item_params + self.rater_start
            cols[known, f + q : f + q + c] = start + rater[known, None] * c + np.arange(c)
        if self.own_index is not None:  # with own_reads
            cols[:, -2] = self.n_item_params + self.own_index
        if self.same_index is not None:  # with same_rater
            cols[:, -1] = self.n_item_params + self.same_index
        return cols


def layout_for(
    features: ReadFeatures,
    item_effects=None,
    rater_effects=None,
    own_reads=None,
    item_kinds: tuple[str, ...] = DEFAULT_ITEM_KINDS,
):
    """The layout a session's kept reads support: item effects with two or more items, rater
    effects and delta with two or more known raters, lambda when some answer has two kept
    reads. An explicit False turns a part off (rater_effects False: no delta either)."""
    kept = features.kept
    raters = np.unique(features.rater[kept & (features.rater >= 0)])
    many_reads = bool(np.any(features.own[kept].sum(axis=1) > 0))
    n_raters = int(features.rater.max()) + 1 if features.rater.size else 0
    return Layout(
        n_classes=features.n_classes,
        n_items=features.n_items,
        n_raters=max(n_raters, 0),
        item_effects=features.n_items >= 2 and item_effects is not False,
        rater_effects=raters.size >= 2 and rater_effects is not False,
        own_reads=many_reads and own_reads is not False,
        item_kinds=tuple(item_kinds),
        same_rater=raters.size >= 2 and rater_effects is not False,
    )


@dataclass(frozen=True)
class Design:
    """The local design of every read: its non-zero values (R, C, k) in the columns
    `value_columns` (C, k) of category c's row (`category_columns`), and columns (R, L) the
    global index of each local column; reads grouped by
    (item, rater) for the Hessian: `order` sorts them, `bounds` (groups + 1,) cut the sorted
    reads, `group_item`, `group_rater` name each group, `targets` (`scatter_targets`) place
    each group's local Hessian in the blocks; values_by_category (C, R, k) the values in
    `order`, category first (`sorted_values` the same as (R, C, k)), and category_targets
    (groups, C, k, k) where each group's per-category products go (`targets` at the categories'
    columns), for the Hessian (`group_products`); matrix (R C, size + 1) the values as a
    sparse matrix at their parameters' global indices (`columns` at `value_columns`, `size`
    for the slot always 0), row r C + c - 1 read r's design in category c: `log_proba` and
    `log_pl`'s gradient are one sparse product each (all asked for at every Newton step)."""

    layout: Layout
    columns: np.ndarray
    score: np.ndarray
    answer: np.ndarray
    order: np.ndarray
    bounds: np.ndarray
    group_item: np.ndarray
    group_rater: np.ndarray
    targets: np.ndarray
    values: np.ndarray
    value_columns: np.ndarray
    values_by_category: np.ndarray
    category_targets: np.ndarray
    matrix: sp.csr_matrix

    @property
    def sorted_values(self) -> np.ndarray:
        """(R, C, k) the values in `order` (a view of values_by_category)."""
        return self.values_by_category.transpose(1, 0, 2)


def category_columns(layout: Layout) -> np.ndarray:
    """(C, k): the local columns that can be non-zero in category c's row of a read's design
    (the rest are 0 whatever the data): beta_c, gamma_c, mu_c, the item effects that act in c,
    rho_c and lambda."""
    c, f, q = layout.c, layout.fixed, layout.q
    cat = np.arange(c)
    parts = [cat, c + cat, 2 * c + cat]
    for kind, part in layout.kind_slices().items():
        parts.append(np.full(c, f + part.start) if kind == "agreement" else f + part.start + cat)
    last = layout.local_size() - 1
    parts += [f + q + cat, np.full(c, last - 1), np.full(c, last)]
    return np.stack(parts, axis=1)


def scatter_targets(layout: Layout, group_item: np.ndarray, group_rater: np.ndarray) -> np.ndarray:
    """(groups, L, L) where each entry of a group's local Hessian goes in the flat buffer
    [items | cross | core] of a BlockMatrix; the buffer's length (one past its end) where the
    entry is not in the model or not needed (the core-item half of a cross block)."""
    g_count, q, n = layout.item_blocks, layout.q, layout.n_core
    cross_at, core_at = g_count * q * q, g_count * q * q + g_count * q * n
    end = core_at + n * n
    columns = layout.columns(group_item, group_rater)
    start, size = layout.n_item_params, layout.size
    core = np.where((columns >= start) & (columns < size), columns - start, -1)
    local = np.full(columns.shape, -1)
    if layout.item_effects:
        local[:, layout.fixed : layout.fixed + q] = np.arange(q)
    g = group_item[:, None, None]
    row_core, col_core = core[:, :, None], core[:, None, :]
    row_local, col_local = local[:, :, None], local[:, None, :]
    targets = np.full(core.shape + core.shape[1:], end)
    both_core = (row_core >= 0) & (col_core >= 0)
    targets = np.where(both_core, core_at + row_core * n + col_core, targets)
    item_cross = (row_local >= 0) & (col_core >= 0)
    targets = np.where(item_cross, cross_at + (g * q + row_local) * n + col_core, targets)
    both_items = (row_local >= 0) & (col_local >= 0)
    return np.where(both_items, (g * q + row_local) * q + col_local, targets)


def _fill_design(x, t, s, own, same, layout: Layout) -> None:
    """The local design's values: x[r, c-1, column] for category c."""
    c, f = layout.c, layout.fixed
    cat = np.arange(c)
    agree = t[:, 1:] - t[:, :1]
    x[:, cat, cat] = t[:, 1:]
    x[:, cat, c + cat] = s[:, None]
    x[:, cat, 2 * c + cat] = 1.0
    feature = {"beta": t[:, 1:], "gamma": np.repeat(s[:, None], c, axis=1), "mu": 1.0}
    for kind, part in layout.kind_slices().items():
        if kind == "agreement":
            x[:, :, f + part.start] = agree
        else:
            x[:, cat, f + part.start + cat] = feature[kind]
    x[:, cat, f + layout.q + cat] = 1.0
    x[:, :, -2] = own[:, 1:] - own[:, :1]
    x[:, :, -1] = same[:, 1:] - same[:, :1]


def fit_bytes(layout: Layout, n_reads: int, groups: int) -> int:
    """The largest array a fit of `layout` on `n_reads` reads in `groups` (item, rater) groups
    makes: the design (`design`) or the groups' information (`group_products`)."""
    local = layout.local_size()
    return max(array_bytes((n_reads, layout.c, local)), array_bytes((groups, local, local)))


def check_fit_memory(layout: Layout, n_reads: int, groups: int) -> int:
    """MemoryNeeded (engine.core.machine.memory) when a fit of `layout` on these reads would not fit;
    else the bytes of its largest array (`fit_bytes`)."""
    shape = (n_reads, layout.c, layout.local_size())
    needed = fit_bytes(layout, n_reads, groups)
    check_memory(needed, _design_words(*shape), TOO_BIG)
    return needed


def _design_words(reads: int, c: int, local: int) -> str:
    return (
        f"The session model over {reads:,} reads on a scale of {c + 1:,} scores (a design of "
        f"{reads:,} x {c:,} x {local:,} numbers)"
    )


def design(features: ReadFeatures, layout: Layout, reads: np.ndarray | None = None) -> Design:
    """The design of `reads` (default: the kept reads)."""
    take = np.flatnonzero(features.kept) if reads is None else np.asarray(reads)
    item, rater = features.item[take], features.rater[take]
    shape = (take.size, layout.c, layout.local_size())
    x = checked_zeros(shape, what=_design_words(*shape), advice=TOO_BIG)
    _fill_design(
        x, features.t[take], features.s[take], features.own[take], features.same[take], layout
    )
    rater_key = np.where(layout.rater_effects, rater, -1)
    order = np.lexsort((rater_key, item))
    key = item[order] * (layout.n_raters + 1) + rater_key[order] + 1
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if take.size else np.zeros(0, int)
    columns, chosen = layout.columns(item, rater), category_columns(layout)
    values = np.take_along_axis(x, chosen[None], axis=2)
    targets = scatter_targets(layout, item[order][starts], rater_key[order][starts])
    return Design(
        layout,
        columns,
        features.score[take],
        features.answer[take],
        order,
        np.r_[starts, take.size],
        item[order][starts],
        rater_key[order][starts],
        targets,
        values,
        chosen,
        np.ascontiguousarray(values[order].transpose(1, 0, 2)),
        targets[:, chosen[:, :, None], chosen[:, None, :]],
        _sparse(values, columns[:, chosen], layout.size + 1),
    )


def _sparse(values: np.ndarray, index: np.ndarray, width: int) -> sp.csr_matrix:
    """(R C, width): each (read, category)'s k values at their global indices."""
    r, c, k = values.shape
    pointers = np.arange(0, r * c * k + 1, k)
    return sp.csr_matrix((values.ravel(), index.ravel(), pointers), shape=(r * c, width))


def log_proba(w: np.ndarray, d: Design) -> np.ndarray:
    """log p_rc (R, C+1) by log-sum-exp."""
    eta = np.zeros((d.score.size, d.layout.n_classes))
    eta[:, 1:] = (d.matrix @ np.append(w, 0.0)).reshape(d.score.size, -1)
    top = eta.max(axis=1, keepdims=True)
    return eta - (top + np.log(np.exp(eta - top).sum(axis=1, keepdims=True)))


def read_contributions(w: np.ndarray, d: Design, weights: np.ndarray, p=None) -> np.ndarray:
    """(R, L) each read's gradient of w_r log p_{r,x_r} over its local columns:
    w_r sum_c (1{x_r = c} - p_rc) x_rc (p: the reads' probabilities at w, when known)."""
    p = np.exp(log_proba(w, d)) if p is None else p
    resid = residuals(p, d.score)
    return weights[:, None] * spread(resid[:, :, None] * d.values, d)


def residuals(p: np.ndarray, score: np.ndarray) -> np.ndarray:
    """(R, C): 1{x_r = c} - p_rc for categories 1..C."""
    resid = -p[:, 1:]
    hit = score > 0
    resid[np.flatnonzero(hit), score[hit] - 1] += 1.0
    return resid


def spread(per_category: np.ndarray, d: Design) -> np.ndarray:
    """(R, L): sum over categories of (R, C, k) terms placed in their local columns, category
    by category (a category's k columns are distinct; categories share some), each column
    summed in contiguous rows of the transpose."""
    out = np.zeros((d.layout.local_size(), per_category.shape[0]))
    terms = per_category.transpose(1, 2, 0)
    for c, columns in enumerate(d.value_columns):
        out[columns] += terms[c]
    return out.T


def log_pl(w: np.ndarray, d: Design, weights: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """L, its gradient (size,) and p (R, C+1)."""
    logp = log_proba(w, d)
    value = float(np.sum(weights * logp[np.arange(d.score.size), d.score]))
    p = np.exp(logp)
    grad = d.matrix.T @ (weights[:, None] * residuals(p, d.score)).ravel()
    return value, grad[: d.layout.size], p


def contribution_matrix(w: np.ndarray, d: Design, weights: np.ndarray) -> sp.csr_matrix:
    """(R, size) sparse: row r is read r's gradient of w_r log p_{r,x_r} (for the sandwich)."""
    local = read_contributions(w, d, weights)
    rows = np.repeat(np.arange(d.score.size), local.shape[1])
    cols = d.columns.ravel()
    keep = cols < d.layout.size
    return sp.csr_matrix(
        (local.ravel()[keep], (rows[keep], cols[keep])), shape=(d.score.size, d.layout.size)
    )


def group_products(d: Design, p: np.ndarray, weights: np.ndarray):
    """The two terms of each (item, rater) group's information of -L in its local columns,
    sum_r w_r X_r^T (diag p_r - p_r p_r^T) X_r over categories 1..C: (first, second).

    first (groups, C, k, k): sum_c w_r p_rc x_rc x_rc^T, category by category, since x_rc has
    at most k << L non-zero columns (`category_columns`): to be placed at
    `Design.category_targets`. second (groups, L, L): y_r y_r^T with y_r = sum_c p_rc x_rc,
    dense, at `Design.targets`. Each group's products read rows that lie next to each other
    (the reads in group order, category first), one stack of C small products and one product
    per group."""
    n_local = d.layout.local_size()
    groups = d.bounds.size - 1
    p, w = p[d.order, 1:], weights[d.order]
    values = d.sorted_values
    n, c, k = values.shape
    # (C, k, n): each category's weighted values, the reads last
    weighted = np.ascontiguousarray(((w[:, None] * p)[:, :, None] * values).transpose(1, 2, 0))
    y = spread(p[:, :, None] * values, d)
    weighted_y = y * w[:, None]
    first = np.empty((groups, c, k, k))
    what = f"The session model's information ({groups:,} item-rater groups x {n_local:,}^2)"
    second = checked_empty((groups, n_local, n_local), what=what, advice=TOO_BIG)
    for g in range(groups):
        part = slice(d.bounds[g], d.bounds[g + 1])
        first[g] = weighted[:, :, part] @ d.values_by_category[:, part]
        second[g] = y[part].T @ weighted_y[part]
    return first, second
