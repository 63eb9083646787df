"""Bounded L-BFGS-B for the many small fits of tuning and cross-fitting, without the per-call
cost of `scipy.optimize.minimize`.

A session of many small items makes thousands of fits of 3C parameters, each taking tens to
hundreds of objective evaluations of a few dozen responses. There, `minimize`'s wrappers (a
ScalarFunction, memoised Jacobian, array-API conversions) cost several times the objective
itself. `minimize_bounded` drives the same L-BFGS-B routine scipy's `minimize` drives
(`scipy.optimize._lbfgsb.setulb`) with the same arguments, in the same loop, so the iterates,
the result and the message are identical to `minimize(..., method="L-BFGS-B")` (the tests
compare them). The routine is scipy's private interface, so it is used only on the scipy
versions whose loop this one copies (`DRIVEN_SCIPY`); any other version runs `minimize`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy

# scipy versions whose L-BFGS-B loop (_minimize_lbfgsb, C translation with `ln_task`) this
# module reproduces call for call; checked by tests/test_lbfgsb.py against `minimize`.
DRIVEN_SCIPY = ((1, 15), (1, 16), (1, 17))
# scipy's defaults for the options `fit` does not set.
MEMORY, MAX_LINE_SEARCH, MAX_EVALUATIONS = 10, 20, 15000


@dataclass(frozen=True)
class BoundedResult:
    """What the fits read from an L-BFGS-B run (the fields of scipy's OptimizeResult)."""

    x: np.ndarray
    fun: float
    nit: int
    success: bool
    message: str


def _scipy_version() -> tuple[int, int]:
    major, minor = scipy.__version__.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def _driver():
    """scipy's L-BFGS-B routine and its message tables, or None on another scipy version."""
    if _scipy_version() not in DRIVEN_SCIPY:
        return None
    try:
        from scipy.optimize import _lbfgsb
        from scipy.optimize._lbfgsb_py import status_messages, task_messages
    except ImportError:
        return None
    return _lbfgsb.setulb, status_messages, task_messages


_DRIVER = _driver()


def minimize_bounded(fun, x0, lower, upper, maxiter: int, ftol: float, gtol: float):
    """Minimise `fun(x) -> (value, gradient)` from x0 within [lower, upper] by L-BFGS-B.

    The same as `scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=...,
    options={"maxiter": maxiter, "ftol": ftol, "gtol": gtol})`, result for result.
    """
    if _DRIVER is None:
        return _by_minimize(fun, x0, lower, upper, maxiter, ftol, gtol)
    setulb, status_messages, task_messages = _DRIVER
    low = np.asarray(lower, dtype=np.float64)
    high = np.asarray(upper, dtype=np.float64)
    n = low.size
    x = np.array(np.clip(x0, low, high), dtype=np.float64)
    nbd = np.full(n, 2, dtype=np.int32)  # every parameter bounded on both sides
    m = MEMORY
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m, np.float64)
    iwa = np.zeros(3 * n, dtype=np.int32)
    task, ln_task = np.zeros(2, dtype=np.int32), np.zeros(2, dtype=np.int32)
    lsave, isave, dsave = np.zeros(4, np.int32), np.zeros(44, np.int32), np.zeros(29)
    factr = ftol / np.finfo(float).eps
    # As scipy's ScalarFunction: evaluated once at x0, then again only where x has moved.
    seen = x.copy()
    last = fun(x.copy())
    evaluations, iterations = 1, 0
    f, g = np.array(0.0), np.zeros(n)
    while True:
        g = np.asarray(g, dtype=np.float64).copy()
        setulb(m, x, low, high, nbd, f, g, factr, gtol, wa, iwa, task, lsave, isave, dsave,
               MAX_LINE_SEARCH, ln_task)  # fmt: skip
        if task[0] == 3:  # the routine wants f and g at the current x
            if not (x == seen).all():  # np.array_equal's test, without its overhead
                seen = x.copy()
                last = fun(x.copy())
                evaluations += 1
            f, g = last
        elif task[0] == 1:  # a new iteration
            iterations += 1
            if iterations >= maxiter:
                task[0], task[1] = 5, 504
            elif evaluations > MAX_EVALUATIONS:
                task[0], task[1] = 5, 502
        else:
            break
    message = status_messages[task[0]] + ": " + task_messages[task[1]]
    return BoundedResult(x, float(f), iterations, bool(task[0] == 4), message)


def _by_minimize(fun, x0, lower, upper, maxiter, ftol, gtol) -> BoundedResult:
    from scipy.optimize import minimize

    result = minimize(
        fun,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=list(zip(lower, upper)),
        options={"maxiter": maxiter, "ftol": ftol, "gtol": gtol},
    )
    return BoundedResult(
        result.x, float(result.fun), int(result.nit), bool(result.success), str(result.message)
    )
