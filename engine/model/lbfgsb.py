"""L-BFGS-B for the many small fits of tuning and cross-fitting (bounded) and of the severity's
logistic regressions (unbounded, `minimize_free`), without the per-call cost of
`scipy.optimize.minimize`.

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


class _Run:
    """One L-BFGS-B minimisation as scipy's _minimize_lbfgsb runs it, stepped by its caller:
    `wants()` runs the routine until it needs the objective at a new point (or is done), and
    `tell()` hands it the value and gradient there. The objective is evaluated once at x0
    first and then only where x has moved, as scipy's ScalarFunction does."""

    def __init__(
        self, x0, lower, upper, maxiter: int, ftol: float, gtol: float, *,
        max_line_search: int = MAX_LINE_SEARCH, each_iteration=None,
    ):  # fmt: skip
        if lower is None:  # unbounded: scipy hands the routine zeros and "no bound" (0)
            n = np.size(x0)
            self.low, self.high = np.zeros(n), np.zeros(n)
            self.x = np.array(x0, dtype=np.float64)
            self.nbd = np.zeros(n, dtype=np.int32)
        else:
            self.low = np.asarray(lower, dtype=np.float64)
            self.high = np.asarray(upper, dtype=np.float64)
            n = self.low.size
            self.x = np.array(np.clip(x0, self.low, self.high), dtype=np.float64)
            self.nbd = np.full(n, 2, dtype=np.int32)  # every parameter bounded on both sides
        self.max_line_search, self.each_iteration = max_line_search, each_iteration
        m = MEMORY
        self.wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m, np.float64)
        self.iwa = np.zeros(3 * n, dtype=np.int32)
        self.task, self.ln_task = np.zeros(2, dtype=np.int32), np.zeros(2, dtype=np.int32)
        self.lsave, self.isave = np.zeros(4, np.int32), np.zeros(44, np.int32)
        self.dsave = np.zeros(29)
        self.factr, self.gtol, self.maxiter = ftol / np.finfo(float).eps, gtol, maxiter
        self.f, self.g = np.array(0.0), np.zeros(n)  # what the routine is given next
        # The point last evaluated and its (value, gradient); None before the first.
        self.seen: np.ndarray | None = None
        self.last: tuple | None = None
        self.evaluations = self.iterations = 0
        self.done = False

    def wants(self) -> np.ndarray | None:
        """The point where the objective is needed next, or None when the run is over."""
        if self.last is None:
            return self.x.copy()
        setulb = _DRIVER[0]
        while True:
            g = np.asarray(self.g, dtype=np.float64).copy()
            setulb(MEMORY, self.x, self.low, self.high, self.nbd, self.f, g, self.factr,
                   self.gtol, self.wa, self.iwa, self.task, self.lsave, self.isave, self.dsave,
                   self.max_line_search, self.ln_task)  # fmt: skip
            self.g = g
            if self.task[0] == 3:  # the routine wants f and g at the current x
                if not (self.x == self.seen).all():  # np.array_equal, without its overhead
                    return self.x.copy()
                self.f, self.g = self.last
            elif self.task[0] == 1:  # a new iteration
                self.iterations += 1
                if self.each_iteration is not None:  # scipy's callback: it may raise
                    self.each_iteration()
                if self.iterations >= self.maxiter:
                    self.task[0], self.task[1] = 5, 504
                elif self.evaluations > MAX_EVALUATIONS:
                    self.task[0], self.task[1] = 5, 502
            else:
                self.done = True
                return None

    def tell(self, point: np.ndarray, value_and_gradient) -> None:
        started = self.last is not None
        self.seen, self.last = point, value_and_gradient
        self.evaluations += 1
        if started:  # the first call of the routine is given f = 0 and g = 0, as scipy does
            self.f, self.g = value_and_gradient

    def result(self) -> BoundedResult:
        _, status_messages, task_messages = _DRIVER
        message = status_messages[self.task[0]] + ": " + task_messages[self.task[1]]
        return BoundedResult(
            self.x, float(self.f), self.iterations, bool(self.task[0] == 4), message
        )


def minimize_bounded(fun, x0, lower, upper, maxiter: int, ftol: float, gtol: float):
    """Minimise `fun(x) -> (value, gradient)` from x0 within [lower, upper] by L-BFGS-B.

    The same as `scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=...,
    options={"maxiter": maxiter, "ftol": ftol, "gtol": gtol})`, result for result.
    """
    if _DRIVER is None:
        return _by_minimize(fun, x0, lower, upper, maxiter, ftol, gtol)
    run = _Run(x0, lower, upper, maxiter, ftol, gtol)
    while (point := run.wants()) is not None:
        run.tell(point, fun(point.copy()))
    return run.result()


def minimize_free(fun, x0, maxiter: int, ftol: float, gtol: float, max_line_search: int,
                  each_iteration=None):  # fmt: skip
    """Minimise `fun(x) -> (value, gradient)` from x0 without bounds by L-BFGS-B: the same as
    `scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", callback=..., options=
    {"maxiter": maxiter, "maxls": max_line_search, "ftol": ftol, "gtol": gtol})`, result for
    result. each_iteration() is called after every iteration, as scipy's callback (it may
    raise, e.g. to cancel)."""
    if _DRIVER is None:
        from scipy.optimize import minimize

        result = minimize(
            fun,
            x0,
            jac=True,
            method="L-BFGS-B",
            callback=(lambda _: each_iteration()) if each_iteration else None,
            options={"maxiter": maxiter, "maxls": max_line_search, "ftol": ftol, "gtol": gtol},
        )
        return BoundedResult(
            result.x, float(result.fun), int(result.nit), bool(result.success), str(result.message)
        )
    run = _Run(x0, None, None, maxiter, ftol, gtol, max_line_search=max_line_search,
               each_iteration=each_iteration)  # fmt: skip
    while (point := run.wants()) is not None:
        run.tell(point, fun(point.copy()))
    return run.result()


def minimize_bounded_many(joint, starts, lowers, uppers, maxiter: int, ftol: float, gtol: float):
    """Several independent `minimize_bounded` runs stepped together, so that one call of
    `joint(which, points) -> [(value, gradient), ...]` evaluates the objectives of every run
    that needs one (`which`: their positions in `starts`). Each run's result is the one it
    would have alone."""
    if _DRIVER is None:
        return [
            _by_minimize(lambda x, k=k: joint([k], [x])[0], start, low, high, maxiter, ftol, gtol)
            for k, (start, low, high) in enumerate(zip(starts, lowers, uppers))
        ]
    runs = [_Run(*box, maxiter, ftol, gtol) for box in zip(starts, lowers, uppers)]
    return _together(runs, joint)


def minimize_free_many(joint, starts, maxiter: int, ftol: float, gtol: float,
                       max_line_search: int, each_iteration=None):  # fmt: skip
    """Several independent `minimize_free` runs stepped together, `joint` evaluating every run
    that needs its objective at once (as in `minimize_bounded_many`); each_iteration(k) is
    called after each iteration of run k. Each run's result is the one it would have alone
    given the same values and gradients."""
    if _DRIVER is None:
        return [
            minimize_free(
                lambda x, k=k: joint([k], [x])[0], start, maxiter, ftol, gtol, max_line_search,
                (lambda k=k: each_iteration(k)) if each_iteration else None,
            )
            for k, start in enumerate(starts)
        ]  # fmt: skip
    runs = [
        _Run(start, None, None, maxiter, ftol, gtol, max_line_search=max_line_search,
             each_iteration=(lambda k=k: each_iteration(k)) if each_iteration else None)
        for k, start in enumerate(starts)
    ]  # fmt: skip
    return _together(runs, joint)


def _together(runs: list[_Run], joint) -> list[BoundedResult]:
    """Step the runs until all are done, each round evaluating every run that wants a point in
    one call of `joint(which, points)`."""
    while True:
        offered = [(k, run.wants()) for k, run in enumerate(runs) if not run.done]
        wanted = [(k, point) for k, point in offered if point is not None]
        if not wanted:
            return [run.result() for run in runs]
        answers = joint([k for k, _ in wanted], [point.copy() for _, point in wanted])
        for (k, point), answer in zip(wanted, answers):
            runs[k].tell(point, answer)


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
