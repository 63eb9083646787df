"""The out-of-fold logistic regressions on one feature matrix, fitted side by side.

Each fold's fit reads its training rows twice per objective evaluation, for products with one
column per score: alone, that runs at memory speed (at N = 12,000 and d = 384, 7.5 ms for the
two products). Stepped together (engine.model.lbfgsb.minimize_free_many), every fit that needs
its objective gets it from one product of all the rows with those fits' coefficients side by
side and one product back for their gradients, so the rows are read twice per round whatever
the number of fits, at matrix-matrix speed (ten fits at N = 15,000: 23 ms a round instead of
75; OpenBLAS's Haswell kernels, one thread).

Each fit runs the L-BFGS-B it would run alone, from the same start to the same stopping rule;
only the float rounding of the products differs (their sums run over all rows, a held-out row
adding an exact zero), so the iterates agree to that rounding: tests/test_fold_fits.py bounds
the probabilities' difference from the fits one by one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.machine.threads import one_blas_thread
from engine.model.lbfgsb import minimize_free_many

ROWS_AT_ONCE = 4096


@dataclass(frozen=True)
class FoldProblem:
    """One fit: its training responses (positions among all N), their one-hot codes (n,
    categories), the number of free categories (1 for a binomial fit), the L2 penalty on the
    mean log loss, and the standardisation (centre, spread) of its features or None."""

    train: np.ndarray
    target: np.ndarray
    free: int
    penalty: float
    scaling: tuple[np.ndarray, np.ndarray] | None = None


def on_raw_rows(problem: FoldProblem, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A fit's coefficients (free, d) and intercepts (free,) on the unstandardised features:
    ((x - centre) / spread) w + b = x (w / spread) + (b - centre (w / spread))."""
    weights, intercept = coef[:, :-1], coef[:, -1]
    if problem.scaling is None:
        return weights, intercept
    centre, spread = problem.scaling
    scaled = weights / spread
    return scaled, intercept - scaled @ centre


class FoldObjectives:
    """Mean log loss + penalty / 2 |coef|^2 and its gradient for any subset of the fits, over
    parameters (free, d + 1) each (engine.model.classifier._objective, one fit's version).

    responses: (N, d) every response's features. The products have the same shape whichever
    fits are evaluated: all N rows (a fit's held-out rows add exact zeros to its gradient) and a
    fixed block of columns per fit (zeros for the fits not evaluated). A fit's numbers then do
    not depend on which other fits or rows share the product (OpenBLAS's Haswell kernels, which
    parm pins, sum an entry differently by its place in a tile): a fit evaluated alone, as
    scipy's `minimize` does on another scipy version, and repeated rows give the same bits."""

    def __init__(self, responses: np.ndarray, problems: list[FoldProblem]):
        self.responses, self.problems = responses, problems
        self.ends = np.cumsum([p.free for p in problems])
        self.together = _Together(responses.shape[0], problems)

    def __call__(self, which: list[int], points: list[np.ndarray]) -> list[tuple]:
        d, dtype = self.responses.shape[1], self.responses.dtype
        chosen = [self.problems[k] for k in which]
        coefs = [w.reshape(p.free, d + 1) for p, w in zip(chosen, points)]
        raw = [on_raw_rows(p, coef) for p, coef in zip(chosen, coefs)]
        blocks = [slice(self.ends[k] - p.free, self.ends[k]) for k, p in zip(which, chosen)]
        product = np.zeros((d, int(self.ends[-1])), dtype=dtype)
        for block, (weights, _) in zip(blocks, raw):
            product[:, block] = weights.T
        logits = self.responses @ product
        if self.together.fits:
            losses, resid = self.together(logits, which, [b for _, b in raw])
        else:
            losses, resid = self._one_by_one(logits, chosen, raw, blocks)
        back = (resid.astype(dtype, copy=False).T @ self.responses).astype(np.float64)
        answers = []
        for p, coef, (value, total), block in zip(chosen, coefs, losses, blocks):
            weights = back[block]
            if p.scaling is not None:
                centre, spread = p.scaling
                weights = (weights - np.outer(total, centre)) / spread
            value += 0.5 * p.penalty * float((coef[:, :d] ** 2).sum())
            weights = weights + p.penalty * coef[:, :d]
            answers.append((value, np.hstack([weights, total[:, None]]).ravel()))
        return answers

    def _one_by_one(self, logits, chosen, raw, blocks):
        """Each fit's mean log loss and residuals on its own training rows (`_loss`)."""
        resid = np.zeros(logits.shape)
        losses = []
        for p, (_, intercept), block in zip(chosen, raw, blocks):
            value, own = _loss(logits[p.train, block], intercept, p)
            resid[p.train, block] = own
            losses.append((value, own.sum(axis=0)))
        return losses, resid


class _Together:
    """The fits' losses computed together, over all N rows with each fit's held-out rows
    weighted 0, when every fit has the same categories (fits = 0 otherwise: a fold lacking a
    score fits fewer). The arrays keep their shape whichever fits are evaluated, so a fit's
    numbers do not depend on the others. Category first, (categories, N, fits): the sums over
    categories are sums of whole arrays (numpy reduces a short last axis slowly), ROWS_AT_ONCE
    rows at a time so that they stay in the cache (at N = 100,000, 81 ms a round in one piece)."""

    def __init__(self, n: int, problems: list[FoldProblem]):
        shapes = {p.target.shape[1] for p in problems}
        self.fits = len(problems) if len(shapes) == 1 else 0
        if not self.fits:
            return
        self.free = problems[0].free
        self.targets = np.zeros((shapes.pop(), n, self.fits))
        self.weights = np.zeros((n, self.fits))
        self.sizes = np.array([p.train.size for p in problems], dtype=np.float64)
        for k, p in enumerate(problems):
            self.targets[:, p.train, k] = p.target.T
            self.weights[p.train, k] = 1.0 / p.train.size

    def __call__(self, logits, which, intercepts) -> tuple[list, np.ndarray]:
        n, free = logits.shape[0], self.free
        shift = np.zeros((free, 1, self.fits))
        shift[:, 0, which] = np.array(intercepts).T
        values, sums = np.zeros(self.fits), np.zeros((free, self.fits))
        resid = np.empty(logits.shape, dtype=logits.dtype)
        for start in range(0, n, ROWS_AT_ONCE):
            rows = slice(start, min(n, start + ROWS_AT_ONCE))
            value, own = self._rows(logits[rows], shift, rows)
            values += value
            sums += own.sum(axis=1)
            resid[rows] = own.transpose(1, 2, 0).reshape(own.shape[1], -1)
        values /= self.sizes
        return [(float(values[k]), sums[:, k]) for k in which], resid

    def _rows(self, logits, shift, rows) -> tuple[np.ndarray, np.ndarray]:
        """Minus the log-likelihood's sum over these rows (fits,) and their residuals p - y,
        weighted (free, rows, fits)."""
        free, targets = self.free, self.targets[:, rows]
        z = np.empty((targets.shape[0], logits.shape[0], self.fits))
        z[-free:] = logits.reshape(logits.shape[0], self.fits, free).transpose(2, 0, 1) + shift
        if free == 1:
            z[0] = 0.0
        z -= z.max(axis=0)
        e = np.exp(z)
        total = e.sum(axis=0)
        z -= np.log(total)
        value = -(targets * z).sum(axis=0).sum(axis=0)
        return value, (e[-free:] / total - targets[-free:]) * self.weights[rows]


def _loss(products, intercept, problem: FoldProblem) -> tuple[float, np.ndarray]:
    """A fit's mean log loss and its residuals p - y over its free categories, / n."""
    n = problem.train.size
    logits = products.astype(np.float64) + intercept
    if problem.free == 1:
        logits = np.hstack([np.zeros((logits.shape[0], 1)), logits])
    logits -= logits.max(axis=1, keepdims=True)
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    value = -(problem.target * log_p).sum() / n
    return float(value), (np.exp(log_p) - problem.target)[:, -problem.free :] / n


def fit_side_by_side(
    responses, problems: list[FoldProblem], max_iter: int, ftol: float, gtol: float, tick=None
) -> list[np.ndarray]:
    """Every problem's coefficients and intercepts (categories, d + 1), on its standardised
    features when it has a scaling, fitted from zero by L-BFGS-B (at most 50 line-search steps,
    as scikit-learn). tick(done, total): before each round, done = the fits finished (it may
    raise, e.g. to cancel)."""
    objectives = FoldObjectives(responses, problems)
    d = responses.shape[1]

    def evaluate(which, points):
        if tick is not None:
            tick(len(problems) - len(which), len(problems))
        return objectives(which, points)

    starts = [np.zeros(p.free * (d + 1)) for p in problems]
    with one_blas_thread():
        results = minimize_free_many(evaluate, starts, max_iter, ftol, gtol, 50)
    coefs = [r.x.reshape(p.free, d + 1) for r, p in zip(results, problems)]
    return [
        c if p.free > 1 else np.vstack([np.zeros((1, d + 1)), c]) for c, p in zip(coefs, problems)
    ]
