"""A second process for the part of a large item's audit that does not wait for the rest (issue
49): the checks (bootstrap intervals, cross-fitting, near-duplicates) need the tuned model but
not the severity, and the severity not them, so on a machine with two cores they run side by
side, the checks in a helper process, the severity here. Cross-fitting, which tunes on its own
folds, needs only the neighbour graph: it starts there as soon as the graph is found, beside
tuning (engine.pipeline). A large session model sends half its
cross-fitting folds there the same way (engine.model.session.cross_fit.CrossFitting), and a run
with several items to audit half of them (engine.session).

Work either process could do is offered (`Helper.offer`): queued behind the helper's own, and
done by whichever process begins it first, once (a flag per offer, shared with the helper from
its start): the severity offers its embedding fits, and an item's audit its rater expectation
and its reads' evidence, which the helper takes when its checks end before this process gets
to them (engine.audit.queue.severity.review_severity, engine.pipeline).

The helper is started ("spawn", as engine.core.machine.workers: the parent may have loaded
torch) when the item's audit starts, so its imports run during the neighbour search and tuning.
Its results are the same bits as this process's would be: the same code on the same inputs,
with the same BLAS kernels (engine.core.machine.kernels' choice is in the environment the child
inherits) and the same threads (the fits limit themselves to one, engine.core.machine.threads).
tests/test_helper.py compares an audit with and without it.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.sharedctypes import SynchronizedArray

from engine.core.machine.workers import spawn_context
from engine.core.progress import CHECKS, Reporter

# Items with fewer answers keep their checks here: at 2,000 answers the checks take about a
# second, and a process costs about that in imports on a busy two-core machine.
MIN_ANSWERS = 5000
# How often the parent, waiting for the helper, looks at its cancel token.
POLL_SECONDS = 0.1
# Offers one helper can take (an item's audit makes up to three: engine.pipeline).
OFFERS = 8


def helper_wanted(size: int, jobs: int, scheduler: str | None, smallest: int | None = None) -> bool:
    """A helper for work of `size` (an item's answers, a session's reads): two cores or more,
    items not already on worker processes or a cluster, not inside a worker process, and at
    least `smallest` (default MIN_ANSWERS)."""
    return (
        size >= (MIN_ANSWERS if smallest is None else smallest)
        and (os.cpu_count() or 1) >= 2
        and jobs <= 1
        and not scheduler
        and multiprocessing.parent_process() is None
    )


class Helper:
    """One helper process, started when made, importing the modules `warm` names at once (its
    imports then run while this process works). `submit(function, *args)` runs a top-level
    function of picklable arguments there; `result(future, check)` waits for it, calling
    `check()` (which may raise, e.g. Cancelled) every POLL_SECONDS; `close()` ends it."""

    def __init__(self, warm: tuple[str, ...] = ()) -> None:
        context = spawn_context()
        # One flag per offer, shared with the helper from its start: who began the work.
        self.claims = context.Array("b", OFFERS)
        self.offers = 0
        self.pool = ProcessPoolExecutor(
            1, mp_context=context, initializer=_share_claims, initargs=(self.claims,)
        )
        self.pool.submit(_warm, warm)

    def offer(self, function: Callable[..., object], *args: object) -> Offer | None:
        """Work this process would otherwise do itself, queued for the helper behind what it
        already has: whichever process starts it first does it (`Offer.result_or_here`). None
        when this helper has no flag left (the caller does the work)."""
        if self.offers >= OFFERS:
            return None
        slot, self.offers = self.offers, self.offers + 1
        return Offer(self, slot, self.submit(_unless_claimed, slot, function, *args))

    def submit(
        self, function: Callable[..., object], *args: object
    ) -> Future[tuple[object, float]]:
        """The function's future; one that raises BrokenProcessPool when the helper died before
        (e.g. killed while importing), so that `result_or` makes it here as for a helper that
        dies while working."""
        try:
            return self.pool.submit(_timed, function, *args)
        except BrokenProcessPool as error:
            failed: Future[tuple[object, float]] = Future()
            failed.set_exception(error)
            return failed

    def result(
        self, future: Future[tuple[object, float]], check: Callable[[], None] | None = None
    ) -> tuple[object, float]:
        """(function's result, its seconds in the helper); BrokenProcessPool when the helper
        died (e.g. out of memory), the function's own exception when it raised."""
        while True:
            try:
                return future.result(timeout=POLL_SECONDS)
            except TimeoutError:
                if check is not None:
                    check()

    def result_or(
        self,
        future: Future[tuple[object, float]],
        here: Callable[[], object],
        check: Callable[[], None] | None = None,
    ) -> tuple[object, float | None]:
        """`result`, or where the helper died (BrokenProcessPool) `here()`'s result made in this
        process, with None for the helper's seconds: a dead helper leaves its work to the
        parent."""
        try:
            return self.result(future, check)
        except BrokenProcessPool:
            return here(), None

    def close(self) -> None:
        """End the helper at once (a task still running is stopped with it)."""
        processes = list(getattr(self.pool, "_processes", {}).values())
        manager = getattr(self.pool, "_executor_manager_thread", None)
        self.pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        # The pool's own thread reaps the processes too: wait for it, so that no process is
        # reaped by two threads at once (is_alive() then said True of one already gone, about
        # one close in 40 on a loaded machine).
        if manager is not None:
            manager.join(timeout=5)
        for process in processes:
            process.join(timeout=5)


class Offer:
    """Work offered to the helper (`Helper.offer`)."""

    def __init__(self, helper: Helper, slot: int, future: Future[tuple[object, float]]):
        self.helper, self.slot, self.future = helper, slot, future

    def result_or_here(
        self, here: Callable[[], object], check: Callable[[], None] | None = None
    ) -> tuple[object, float | None]:
        """(`here()`, None) when the helper has not begun the work (it then skips it), else
        the helper's (result, its seconds there), waiting for it (calling `check` as
        `Helper.result` does); (`here()`, None) too when the helper died."""
        if _claim(self.helper.claims, self.slot):
            return here(), None
        return self.helper.result_or(self.future, here, check)


def offered_result(
    offer: Offer | None, here: Callable[[], object], reporter: Reporter, message: str
) -> tuple[object, float | None]:
    """(result, the helper's seconds or None) of work that may have been offered: `here()`
    without an offer, else `Offer.result_or_here`, saying `message` and the seconds waited
    while this process waits for the helper (every quarter second at most)."""
    if offer is None:
        return here(), None
    started = time.monotonic()

    def waiting() -> None:
        reporter.tick(CHECKS, 0, 1, f"{message}, {time.monotonic() - started:.0f} s")

    return offer.result_or_here(here, waiting)


_CLAIMS: SynchronizedArray[int] | None = None  # the helper process's Helper.claims


def _share_claims(claims: SynchronizedArray[int]) -> None:
    global _CLAIMS
    _CLAIMS = claims


def _claim(claims: SynchronizedArray[int] | None, slot: int) -> bool:
    """Take the offer's flag; False when the other process took it first."""
    assert claims is not None  # set in the helper by _share_claims, here by Helper
    with claims.get_lock():
        if claims[slot]:
            return False
        claims[slot] = 1
        return True


def _unless_claimed(slot: int, function: Callable[..., object], *args: object) -> object:
    return function(*args) if _claim(_CLAIMS, slot) else None


def _warm(modules: tuple[str, ...]) -> None:
    for module in modules:
        importlib.import_module(module)


def _timed(function: Callable[..., object], *args: object) -> tuple[object, float]:
    started = time.perf_counter()
    out = function(*args)
    return out, time.perf_counter() - started


__all__ = ["BrokenProcessPool", "Helper", "Offer", "helper_wanted", "offered_result"]
