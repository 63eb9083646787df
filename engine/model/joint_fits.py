"""Several small pseudo-likelihood fits at once: cross-fitting's folds for one configuration.

On an item of a few dozen responses, a fit's objective costs a few dozen numpy calls of a few
hundred numbers each, so the calls' own overhead is the cost. `fit_many` runs the fits' L-BFGS-B
routines side by side (engine.model.lbfgsb.minimize_bounded_many) and evaluates the objectives of
all fits that need one together: the element-wise work on all their responses at once, and only
the sums over each fit's own responses apart, in the same order as `_Objective` does them, so
every fit's value, gradient, iterates and result are bit for bit those of `fit` alone (the tests
compare them). Large fits gain nothing from this and are fitted one by one.
"""

from __future__ import annotations

import numpy as np

from engine.core.machine.threads import one_blas_thread
from engine.model.lbfgsb import minimize_bounded_many
from engine.model.pseudo_likelihood import (
    BOUND,
    IN_PLACE_FROM,
    FittedPARM,
    _Objective,
    class_weights,
    fit,
    fitted_from,
)


class _JointObjective:
    """The `_Objective`s of several fits, evaluated together for any subset of them."""

    def __init__(self, objectives: list[_Objective]):
        self.parts = objectives
        self.c = objectives[0].c
        self._layouts: dict[tuple[int, ...], tuple] = {}

    def _layout(self, which: tuple[int, ...]) -> tuple:
        """The chosen fits' data side by side (built once per subset)."""
        if which not in self._layouts:
            parts = [self.parts[k] for k in which]
            sizes = np.array([p.s.size for p in parts])
            ends = np.cumsum(sizes)
            total = int(ends[-1])
            chosen = np.concatenate(
                [(p.chosen // p.s.size) * total + (end - p.s.size) + np.arange(p.s.size)
                 for p, end in zip(parts, ends)]
            )  # fmt: skip
            self._layouts[which] = (
                sizes,
                ends - sizes,
                np.hstack([p.t for p in parts]),
                np.concatenate([p.s for p in parts]),
                np.concatenate([p.weights for p in parts]),
                np.hstack([p.weighted_target for p in parts]),
                chosen,
                np.zeros((self.c + 1, total)),
            )
        return self._layouts[which]

    def __call__(self, which: list[int], points: list[np.ndarray]) -> list[tuple]:
        sizes, starts, t, s, weights, weighted_target, chosen_at, eta = self._layout(tuple(which))
        c, add = self.c, np.add.reduce  # ndarray.sum's own reduction, without its wrapper
        # Each fit's parameters repeated over its responses: (3C, responses of all fits).
        theta = np.repeat(np.array(points).T, sizes, axis=1)
        np.multiply(t, theta[:c], out=eta[1:])
        eta[1:] += s * theta[c : 2 * c]
        eta[1:] += theta[2 * c :]
        top = np.maximum.reduce(eta, axis=0)
        e = np.exp(eta - top)
        z = add(e, axis=0)
        chosen = eta.ravel()[chosen_at] - np.log(z) - top
        weighted = weights * chosen
        resid = weighted_target - e[1:] * (weights / z)
        moment = resid * t
        answers = []
        for k, start, size in zip(which, starts, sizes):
            part, end = self.parts[k], start + size
            value = -add(weighted[start:end]) / part.total
            own = np.ascontiguousarray(resid[:, start:end])
            grad = np.concatenate(
                [add(np.ascontiguousarray(moment[:, start:end]), axis=1), own @ part.s,
                 add(own, axis=1)]
            )  # fmt: skip
            answers.append((float(value), -grad / part.total))
        return answers


def fit_many(problems: list[tuple]) -> list[FittedPARM]:
    """`fit(t, s, scores, class_weight, start)` for each problem (all with the same number of
    categories), with identical results; small ones are fitted side by side."""
    if len(problems) < 2 or any(t.shape[0] >= IN_PLACE_FROM for t, *_ in problems):
        return [fit(*problem) for problem in problems]
    objectives, starts, factors = [], [], []
    for t, s, scores, class_weight, start in problems:
        c = t.shape[1] - 1
        weights = class_weights(scores, t.shape[1], class_weight)
        theta0 = np.zeros(3 * c) if start is None else np.asarray(start, float)
        scale = float(np.mean(np.abs(s))) or 1.0  # as in `fit`
        factor = np.concatenate([np.full(2 * c, scale), np.ones(c)])
        objectives.append(_Objective(t / scale, s / scale, scores, weights))
        starts.append(theta0 * factor)
        factors.append(factor)
    with one_blas_thread():
        results = minimize_bounded_many(
            _JointObjective(objectives),
            starts,
            [-BOUND * factor for factor in factors],
            [BOUND * factor for factor in factors],
            maxiter=5000,
            ftol=1e-12,
            gtol=1e-8,
        )
    return [
        fitted_from(result, factor, t, s)
        for result, factor, (t, s, *_) in zip(results, factors, problems)
    ]
