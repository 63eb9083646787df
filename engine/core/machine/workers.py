"""Independent units of work (a file's items) run one after another in this process, or on a
pool of worker processes, with the parent hearing every unit's progress and able to cancel.

A unit is `function(task, progress, cancel) -> result`: a top-level (picklable) function of
plain, picklable inputs, so the same function runs in a thread, a process, or later on a
cluster. Worker processes are started with "spawn": the parent has usually loaded torch to
embed, and forking a process with its thread pools running can deadlock.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from functools import partial
from typing import TYPE_CHECKING, Any

from engine.core.progress import CancelToken, ProgressEvent, Reporter

# How often the parent looks at its workers' progress and its own cancel token.
POLL_SECONDS = 0.1

Unit = Callable[[object, Callable[[ProgressEvent], None], CancelToken], object]
Forward = Callable[[int, ProgressEvent], None]
if TYPE_CHECKING:
    from multiprocessing.context import SpawnContext
    from multiprocessing.queues import Queue
    from multiprocessing.synchronize import Event as EventType

    Events = Queue[tuple[int, ProgressEvent]]

# Set in each worker process by _start_worker: where progress goes, the shared stop flag, and
# the BLAS thread limit (kept referenced for the worker's life).
_EVENTS: Events | None = None
_STOP: EventType | None = None
_LIMITS: object = None


def run_units(
    function: Unit, tasks: Sequence[object], jobs: int, reporter: Reporter, forward: Forward
) -> list[Any]:
    """Results of `function` on every task, in task order.

    jobs: 1 runs the units here, one after another; more runs them on that many processes.
    forward(k, event) receives every progress event of unit k (in the parent). Cancelling
    the reporter's token stops every unit at its next check and raises `Cancelled`; an error
    in a unit stops the others and is raised here.
    """
    if jobs <= 1 or len(tasks) <= 1:
        return [function(task, partial(forward, k), reporter.token) for k, task in enumerate(tasks)]
    return _in_processes(function, tasks, min(jobs, len(tasks)), reporter, forward)


def spawn_context() -> SpawnContext:
    """The "spawn" context, its resource tracker started first with a stderr it can pass on.

    multiprocessing starts that tracker (a process of its own) with this process's
    sys.stderr.fileno(); inside the app Textual's replacement stderr answers -1, and starting
    the tracker failed with "bad value(s) in fds_to_keep" (any run with worker processes or a
    helper). It is started here, once, with the stderr the process began with."""
    from multiprocessing import resource_tracker

    context = multiprocessing.get_context("spawn")
    try:
        passed = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # the tracker leaves such a stderr out
        passed = 0
    if passed >= 0 or sys.__stderr__ is None:
        return context
    replaced, sys.stderr = sys.stderr, sys.__stderr__
    try:
        resource_tracker.ensure_running()
    finally:
        sys.stderr = replaced
    return context


def _in_processes(
    function: Unit, tasks: Sequence[object], jobs: int, reporter: Reporter, forward: Forward
) -> list[Any]:
    context = spawn_context()
    events, stop = context.Queue(), context.Event()
    results: list[Any] = [None] * len(tasks)
    # Each worker gets its share of the cores for BLAS: more threads than cores only wait.
    threads = max(1, (os.cpu_count() or 1) // jobs)
    with ProcessPoolExecutor(
        jobs, mp_context=context, initializer=_start_worker, initargs=(events, stop, threads)
    ) as pool:
        futures = {pool.submit(_run_unit, function, k, task): k for k, task in enumerate(tasks)}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                _drain(events, forward)
                reporter.check()
                for future in done:
                    results[futures[future]] = future.result()
            _drain(events, forward)
        except BaseException:
            # Every unit stops at its next check; the pool then winds down cleanly.
            stop.set()
            for future in pending:
                future.cancel()
            raise
    return results


def _drain(events: Events, forward: Forward) -> None:
    while True:
        try:
            k, event = events.get_nowait()
        except queue.Empty:
            return
        forward(k, event)


def _start_worker(events: Events, stop: EventType, threads: int) -> None:
    global _EVENTS, _STOP, _LIMITS
    _EVENTS, _STOP = events, stop
    try:
        from threadpoolctl import threadpool_limits

        _LIMITS = threadpool_limits(limits=threads)
    except ImportError:  # scikit-learn brings threadpoolctl; without it only speed suffers
        pass


def _run_unit(function: Unit, k: int, task: object) -> object:
    events = _EVENTS
    assert events is not None, "set by _start_worker in this process"
    token = CancelToken(_STOP)
    return function(task, lambda event: events.put((k, event)), token)
