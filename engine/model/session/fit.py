"""The session model: one pseudo-likelihood over every read of every item, with items and raters
as random effects, fitted by empirical Bayes (docs/explanation/session-model.md).

Priors: each kind k of item effect (engine.model.session.design: the agreement shift a_g, the
intercept shifts nu_gc, ...) ~ N(0, tau_k^2), rho_mc ~ N(0, tau_rho^2), and a weak N(0, 1 / RIDGE)
on the fixed theta_0, lambda and delta (it only keeps a category no kept read has, or a separated one,
finite). For given variances the mode w^ maximises the penalised pseudo-likelihood

    L(w) - 1/2 sum_k sum_{j in k} u_j^2 / tau_k^2 - RIDGE/2 (|theta_0|^2 + lambda^2 + delta^2)

by Newton's method on the block-arrow Hessian (the objective is convex). The variances maximise
the Laplace approximation of the marginal pseudo-likelihood with the fixed parameters integrated
out as well (restricted, as REML),

    l(tau) = L(w^) - penalty(w^) - 1/2 sum_k n_k log tau_k^2 - 1/2 log det H(w^),

by Fisher scoring on log tau^2: the score is (sum u^2 + tr Var u_k) / (2 tau_k^2) - n_k / 2, the
information 1/2 tr(Q_kl Q_lk) with Q = I - Var(u) Tau^-1 (the Gaussian-approximation identities,
engine.model.session.blocks for Var(u)). A variance that falls to VARIANCE_FLOOR is held there
(its effects are then pooled).

The model reduces by itself: one item -> no item effects; fewer than two known raters -> no
rater effects and no delta; no answer read twice -> no lambda. One item, one read per answer and no raters is
today's model (engine.model.pseudo_likelihood) in the per-item scaling, up to the weak ridge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.machine.threads import one_blas_thread
from engine.model.pseudo_likelihood import class_weights
from engine.model.session.blocks import BlockFactor, BlockMatrix, information, moments, split
from engine.model.session.design import (
    Design,
    Layout,
    design,
    layout_for,
    log_pl,
    log_proba,
)
from engine.model.session.features import ReadFeatures

# Precision of the weak prior on theta_0 and lambda (features are O(1), estimates O(1-10)).
RIDGE = 1e-4
VARIANCE_FLOOR = 1e-4
START_VARIANCE = 1.0
# Within this much of the floor (in log tau^2) a decreasing variance goes to the floor.
SNAP = np.log(20.0)
MAX_NEWTON, MAX_OUTER = 100, 60
# Newton's method stops when its decrement g^T H^-1 g is below this times the reads' weight: the
# penalised gradient then stays under 1e-4 in the stiffest directions of the simulations (1e-11
# left 2.5e-4 where no later fit happened to refine the mode).
NEWTON_TOL = 1e-12
# Stop estimating the variances when a Fisher step would gain less than this in l(tau).
GAIN_TOL = 1e-5
# A Fisher step that promises less than this in l(tau) and loses at full length is not halved
# (down to a thousandth of itself, ten fits of the mode) for what is left: a likelihood ratio of
# e^0.01, against e^1.92 at a 95% interval's edge. With NEWTON_TOL: on Mohler 174 fits of the mode
# instead of 294 (36 fits of the model), probabilities within 6.4e-6 of before; on the sample
# 362 instead of 630, within 3.0e-3 (cross-fitted; 1.2e-4 in-sample); no decision changed.
FLAT_GAIN = 1e-2


@dataclass(frozen=True)
class ModeFit:
    """The penalised mode for fixed variances: w (size,), the penalised objective
    f = -L + penalty, the Hessian factor at w, p (R, C+1) of the kept reads."""

    w: np.ndarray
    objective: float
    factor: BlockFactor
    proba: np.ndarray
    iterations: int
    converged: bool


@dataclass(frozen=True)
class SessionFit:
    """A fitted session model (one scale).

    layout: where the parameters are; w: the mode; log_var: (K,) log tau_k^2 for
    `layout.components`; information: (K, K) Fisher information of log tau^2; laplace: the
    restricted Laplace log marginal pseudo-likelihood; weights: (R_kept,) the reads' weights;
    features: the features it was fitted on (K, p, scale); design: of the kept reads.
    """

    layout: Layout
    w: np.ndarray
    log_var: np.ndarray
    information: np.ndarray
    laplace: float
    mode: ModeFit
    weights: np.ndarray
    class_weight: str | None
    features: ReadFeatures
    design: Design
    outer_iterations: int
    converged: bool

    @property
    def theta0(self) -> np.ndarray:
        """(3C,) the session's beta_1..C, gamma_1..C, mu_1..C (per-item scaling)."""
        return self.w[self.layout.n_item_params :][: self.layout.fixed]

    @property
    def item_effects(self) -> dict[str, np.ndarray]:
        """Each kind of item effect: (G, 1) agreement shifts a_g, (G, C) the others; zeros
        without item effects."""
        lay = self.layout
        items, _ = split(self.w, lay)
        return {
            kind: items[:, part]
            if lay.item_effects
            else np.zeros((lay.n_items, part.stop - part.start))
            for kind, part in lay.kind_slices().items()
        }

    @property
    def rater_intercepts(self) -> np.ndarray:
        """(M, C) rho_m1..C (zeros without rater effects)."""
        lay = self.layout
        if not lay.rater_effects:
            return np.zeros((lay.n_raters, lay.c))
        start = lay.n_item_params + lay.rater_start
        return self.w[start : start + lay.n_rater_params].reshape(lay.n_raters, lay.c)

    @property
    def own_weight(self) -> float:
        """lambda (0 without it)."""
        index = self.layout.own_index
        return 0.0 if index is None else float(self.w[self.layout.n_item_params + index])

    @property
    def same_rater_weight(self) -> float:
        """delta (0 without it)."""
        index = self.layout.same_index
        return 0.0 if index is None else float(self.w[self.layout.n_item_params + index])

    @property
    def shares(self) -> np.ndarray:
        """(C+1,) the categories' shares among the kept reads (the decision rule's pi_c)."""
        counts = np.bincount(self.design.score, minlength=self.layout.n_classes)
        return counts / max(counts.sum(), 1)

    @property
    def variances(self) -> dict[str, float]:
        return dict(zip(self.layout.components, np.exp(self.log_var).tolist()))

    def proba(self, reads: np.ndarray) -> np.ndarray:
        """p (len(reads), C+1): each read's conditional given every other kept read (its
        answer's other kept reads included, through lambda)."""
        return np.exp(log_proba(self.w, design(self.features, self.layout, reads)))

    def predictive(self, reads: np.ndarray) -> np.ndarray:
        """p (len(reads), C+1) for reads whose answers have no kept read (held out): each
        read's marginal under the joint of its answer's reads, all unknown, given the
        neighbours (`answer_marginals`); `reads` must hold every read of those answers."""
        reads = np.asarray(reads)
        log_p = log_proba(self.w, design(self.features, self.layout, reads))
        return answer_marginals(log_p, self.features.answer[reads], self.own_weight)


# Answers with more reads than this have their joint approximated by mean field.
EXACT_READS = 4


def answer_marginals(log_p: np.ndarray, answer: np.ndarray, own: float) -> np.ndarray:
    """(R, C+1) marginals of reads whose answer's reads are all unknown.

    The reads of one answer given its neighbours have the joint
    P(x_1..x_n) ~ exp(sum_i eta_i(x_i) + lambda sum_{i<j} 1{x_i = x_j}) (the model's
    conditionals, with O_r counting the answer's other reads, are its full conditionals).
    log_p: each read's log p with no own read known (O = 0), i.e. eta_i up to a constant.
    Exact by enumeration up to EXACT_READS reads per answer, mean field beyond."""
    out = np.exp(log_p)
    if own == 0.0:
        return out
    order = np.argsort(answer, kind="stable")
    starts = np.flatnonzero(np.r_[True, answer[order][1:] != answer[order][:-1]])
    sizes = np.diff(np.r_[starts, answer.size])
    k = log_p.shape[1]
    for n in np.unique(sizes[sizes > 1]):
        chosen = starts[sizes == n]
        reads = order[chosen[:, None] + np.arange(n)]  # (answers, n)
        terms = log_p[reads]  # (answers, n, K)
        if n <= EXACT_READS:
            out[reads] = _exact_marginals(terms, own, k)
        else:
            out[reads] = _mean_field(terms, own)
    return out


def _exact_marginals(terms: np.ndarray, own: float, k: int) -> np.ndarray:
    n = terms.shape[1]
    joint = np.zeros((terms.shape[0],) + (k,) * n)
    grids = np.indices((k,) * n)
    agree = sum((grids[i] == grids[j]).astype(float) for i in range(n) for j in range(i + 1, n))
    for i in range(n):
        shape = [terms.shape[0]] + [1] * n
        shape[i + 1] = k
        joint += terms[:, i].reshape(shape)
    joint += own * agree
    joint = np.exp(joint - joint.reshape(joint.shape[0], -1).max(axis=1).reshape((-1,) + (1,) * n))
    joint /= joint.reshape(joint.shape[0], -1).sum(axis=1).reshape((-1,) + (1,) * n)
    axes = range(1, n + 1)
    return np.stack(
        [joint.sum(axis=tuple(a for a in axes if a != i + 1)) for i in range(n)], axis=1
    )


def _mean_field(terms: np.ndarray, own: float, sweeps: int = 100) -> np.ndarray:
    q = np.exp(terms - terms.max(axis=2, keepdims=True))
    q /= q.sum(axis=2, keepdims=True)
    for _ in range(sweeps):
        field = terms + own * (q.sum(axis=1, keepdims=True) - q)
        q = np.exp(field - field.max(axis=2, keepdims=True))
        q /= q.sum(axis=2, keepdims=True)
    return q


def precisions(layout: Layout, log_var: np.ndarray) -> tuple[np.ndarray, float]:
    """(q,) the prior precision of each item effect, and the raters'."""
    var = dict(zip(layout.components, np.exp(log_var)))
    item = (
        np.concatenate([np.full(layout.kind_size(k), 1.0 / var[k]) for k in layout.item_kinds])
        if layout.item_effects
        else np.zeros(layout.q)
    )
    return item, 1.0 / var.get("rater", np.inf)


def penalty(w: np.ndarray, layout: Layout, log_var: np.ndarray):
    """The penalty's value, gradient (size,) and Hessian (a BlockMatrix)."""
    item_prec, rater_prec = precisions(layout, log_var)
    items, core = split(w, layout)
    hess = BlockMatrix.zeros(layout)
    value = 0.5 * float(np.sum(items**2 * item_prec))
    grad_items = items * item_prec
    hess.items[:, np.arange(layout.q), np.arange(layout.q)] = item_prec
    grad_core = np.zeros_like(core)
    fixed = layout.fixed_core
    value += 0.5 * RIDGE * float(np.sum(core[fixed] ** 2))
    grad_core[fixed] += RIDGE * core[fixed]
    hess.core[fixed, fixed] += RIDGE
    if layout.rater_effects:
        rho = np.arange(layout.rater_start, layout.rater_start + layout.n_rater_params)
        value += 0.5 * rater_prec * float(np.sum(core[rho] ** 2))
        grad_core[rho] += rater_prec * core[rho]
        hess.core[rho, rho] += rater_prec
    return value, np.concatenate([grad_items.ravel(), grad_core]), hess


def objective(w, d: Design, weights, log_var):
    """f = -L + penalty, its gradient, the Hessian blocks and p."""
    value, grad, p = log_pl(w, d, weights)
    pen_value, pen_grad, hess = penalty(w, d.layout, log_var)
    info = information(d, p, weights)
    hess.items += info.items
    hess.cross += info.cross
    hess.core += info.core
    return pen_value - value, pen_grad - grad, hess, p


def _value(w, d: Design, weights, log_var) -> float:
    logp = log_proba(w, d)
    return penalty(w, d.layout, log_var)[0] - float(
        np.sum(weights * logp[np.arange(d.score.size), d.score])
    )


def fit_mode(d: Design, weights: np.ndarray, log_var: np.ndarray, start=None) -> ModeFit:
    """The penalised mode by Newton's method with backtracking (Armijo) line search."""
    lay = d.layout
    w = np.zeros(lay.size) if start is None else np.array(start, float)
    scale = max(float(np.sum(weights)), 1.0)
    converged, iterations = False, 0
    while not converged and iterations < MAX_NEWTON:
        iterations += 1
        value, grad, hess, p = objective(w, d, weights, log_var)
        factor = BlockFactor(hess)
        step_items, step_core = factor.solve(*split(-grad, lay))
        step = np.concatenate([step_items.ravel(), step_core])
        decrement = -float(grad @ step)
        converged = decrement < NEWTON_TOL * scale
        if converged:
            break
        t = 1.0
        while t > 1e-10:
            trial = _value(w + t * step, d, weights, log_var)
            if trial <= value - 1e-4 * t * decrement:
                break
            t /= 2
        w = w + t * step
    if not converged:  # the last step's point has not been evaluated yet
        value, _, hess, p = objective(w, d, weights, log_var)
        factor = BlockFactor(hess)
    return ModeFit(w, value, factor, p, iterations, converged)


def laplace(mode: ModeFit, layout: Layout, log_var: np.ndarray) -> float:
    """The restricted Laplace log marginal pseudo-likelihood (module docstring), to a constant."""
    counts = moments(mode.factor, layout, mode.w).n
    return -mode.objective - 0.5 * float(np.sum(counts * log_var)) - 0.5 * mode.factor.logdet


def score_and_information(mode: ModeFit, layout: Layout, log_var: np.ndarray):
    """The score (K,) and Fisher information (K, K) of log tau^2."""
    m = moments(mode.factor, layout, mode.w)
    var = np.exp(log_var)
    score = 0.5 * ((m.sum_sq + m.trace) / var - m.n)
    info = 0.5 * (m.squares / np.outer(var, var))
    info[np.diag_indices_from(info)] += 0.5 * (m.n - 2 * m.trace / var)
    return score, info


def _fisher_step(
    mode: ModeFit, layout: Layout, log_var: np.ndarray
) -> tuple[np.ndarray, float] | None:
    """The Fisher scoring step on log tau^2 and the gain it promises in l(tau), or None when
    that is less than GAIN_TOL. A variance at the floor whose score points lower stays there."""
    floor = np.log(VARIANCE_FLOOR)
    score, info = score_and_information(mode, layout, log_var)
    free = ~((log_var <= floor + 1e-9) & (score < 0))
    step = np.zeros(log_var.size)
    if free.any():
        sub = info[np.ix_(free, free)] + 1e-8 * np.eye(int(free.sum()))
        step[free] = np.linalg.solve(sub, score[free])
    promised = 0.5 * float(score @ step)
    if promised < GAIN_TOL:
        return None
    step = np.clip(step, -3.0, 3.0)
    # A variance heading for 0 creeps there (its information vanishes): send it to the floor
    # at once when that is where the step points.
    return np.where((step < 0) & (log_var + step < floor + SNAP), floor - log_var, step), promised


def _estimate_variances(d: Design, weights, log_var, mode: ModeFit):
    """Fisher scoring with step halving on l(tau): (mode, log_var, l, iterations, converged)."""
    layout, floor = d.layout, np.log(VARIANCE_FLOOR)
    best = laplace(mode, layout, log_var)
    for outer in range(1, MAX_OUTER + 1):
        proposed = _fisher_step(mode, layout, log_var)
        if proposed is None:
            return mode, log_var, best, outer, True
        step, promised = proposed
        t = 1.0
        while True:
            trial_var = np.maximum(log_var + t * step, floor)
            trial = fit_mode(d, weights, trial_var, mode.w)
            value = laplace(trial, layout, trial_var)
            if value >= best - 1e-9 or t < 1e-3:
                break
            if promised < FLAT_GAIN:  # flat here: what halving could find is not worth its fits
                return mode, log_var, best, outer, True
            t /= 2
        moved, gain = np.max(np.abs(trial_var - log_var)), value - best
        mode, log_var, best = trial, trial_var, value
        # A flat l(tau) (a variance near 0 whose information vanishes) stops here too.
        if moved < 1e-4 or gain < GAIN_TOL:
            return mode, log_var, best, outer, True
    return mode, log_var, best, MAX_OUTER, False


def fit_session(
    features: ReadFeatures,
    class_weight: str | None = None,
    layout: Layout | None = None,
    start: np.ndarray | None = None,
    log_var: np.ndarray | None = None,
    estimate_variances: bool = True,
) -> SessionFit:
    """Fit the session model on the kept reads of `features`.

    class_weight: None, or "balanced" (each kept read weighted by R / (G n_c), the categories'
    counts over the whole scale group); layout: default `layout_for(features)`; start: w and
    log_var to start from (a neighbouring K's fit); estimate_variances False keeps log_var.
    """
    lay = layout or layout_for(features)
    d = design(features, lay)
    weights = class_weights(d.score, lay.n_classes, class_weight)
    k = len(lay.components)
    log_var = np.full(k, np.log(START_VARIANCE)) if log_var is None else np.array(log_var, float)
    with one_blas_thread():
        mode = fit_mode(d, weights, log_var, start)
        if estimate_variances and k:
            mode, log_var, best, outer, converged = _estimate_variances(d, weights, log_var, mode)
        else:
            best, outer, converged = laplace(mode, lay, log_var), 0, True
        information = score_and_information(mode, lay, log_var)[1] if k else np.zeros((0, 0))
    return SessionFit(
        lay, mode.w, log_var, information, best, mode, weights, class_weight, features, d,
        outer, converged and mode.converged,
    )  # fmt: skip
