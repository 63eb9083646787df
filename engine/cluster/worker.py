"""What runs on a Dask worker for parm: each unit (one item's audit) with its progress sent to
the parent as Dask events and the run's stop flag checked at the unit's own cancel checks; and
the worker's setup (`WorkerSetup`, a Dask worker plugin): BLAS and PyTorch threads limited as
`--jobs` limits its processes, and, for a cluster started here, the worker process's output
sent to parm's log file instead of the terminal it inherited.

Imported on the workers (by reference: every worker needs this parm installed) and by the
parent only when a run has a scheduler.
"""

from __future__ import annotations

import os
import pickle
import socket
import sys
import time

from distributed import Event, WorkerPlugin, get_client, get_worker
from distributed.comm import get_address_host

from engine.core.progress import DONE, CancelToken

# How often a running unit asks the scheduler whether the run was stopped.
STOP_POLL_SECONDS = 0.5


def parm_version() -> str:
    """This machine's parm version (the parent compares its workers' with its own); a function
    of this module, which the workers import, so that Dask runs it there."""
    from engine.core.versions import parm_version as installed

    return installed()


def blas_kernels() -> list[str]:
    """This machine's BLAS kernel sets, numpy's loaded (the parent compares its workers')."""
    import numpy  # noqa: F401 - threadpoolctl lists only the libraries loaded

    from engine.core.machine.kernels import blas_kernels as loaded

    return loaded()


class StopFlag:
    """The run's stop flag (a Dask Event named for the run) as a CancelToken reads it: asked of
    the scheduler at most every STOP_POLL_SECONDS, since units check their token in tight loops.
    A scheduler that cannot be asked leaves the unit running; the parent has gone then."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.stopped = False
        self.next_look = 0.0
        self.event: Event | None = None

    def is_set(self) -> bool:
        now = time.monotonic()
        if not self.stopped and now >= self.next_look:
            self.next_look = now + STOP_POLL_SECONDS
            try:
                if self.event is None:
                    self.event = Event(self.name)
                self.stopped = bool(self.event.is_set())
            except Exception:  # noqa: BLE001, S110 - see the class docstring
                pass
        return self.stopped

    def set(self) -> None:
        self.stopped = True


def run_unit(function, k: int, attempt: int, task, topic: str, stop: str):
    """Unit k's `attempt` on this worker: it says it started (through the scheduler, waiting
    until it is logged, so that a unit that kills its worker at once is still known to have
    run), its progress events go to the parent under `topic` (pickled, since Dask events carry
    plain data), and it stops at its next check once `stop` is set. The parent says when a
    unit is done (it sees the future finish), so DONE is not sent."""
    worker = get_worker()
    get_client().log_event(topic, [k, attempt, None])

    def progress(event) -> None:
        if event.stage != DONE:
            worker.log_event(topic, [k, attempt, pickle.dumps(event)])

    return function(task, progress, CancelToken(StopFlag(stop)))


class WorkerSetup(WorkerPlugin):
    """Set up each worker of a run's cluster (also workers that join or restart later).

    threads_by_host: the task threads of all workers on each host, so a host's cores are
    shared out as `--jobs` shares them (cores // threads, at least 1 per worker). parent:
    (host name, pid) of the parent; a worker inside the parent's own process (an in-process
    cluster) leaves the parent's threads and output alone. output: the log file a local
    cluster's worker processes write to (None for a remote cluster).
    """

    def __init__(self, threads_by_host: dict[str, int], parent: tuple[str, int], output) -> None:
        self.threads_by_host = threads_by_host
        self.parent = parent
        self.output = output
        self.limits = None

    def setup(self, worker) -> None:
        if (socket.gethostname(), os.getpid()) == tuple(self.parent):
            return
        if self.output is not None:
            _write_output_to(self.output)
        host = get_address_host(worker.address)
        sharing = max(1, int(self.threads_by_host.get(host, worker.state.nthreads)))
        threads = max(1, (os.cpu_count() or 1) // sharing)
        self.limits = _limit_threads(threads)

    def teardown(self, worker) -> None:
        if self.limits is not None:
            self.limits.restore_original_limits()
            self.limits = None


def _limit_threads(threads: int):
    """BLAS (threadpoolctl) and PyTorch to `threads` threads in this process. Dask's nanny
    starts workers with OMP_NUM_THREADS=1, which would leave PyTorch's embedding one thread."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # scikit-learn brings threadpoolctl; without it only speed suffers
        return None
    return threadpool_limits(limits=threads)


def _write_output_to(path: str) -> None:
    """This process's stdout and stderr into `path` (or nowhere), so a worker started here
    never writes over parm's progress bars or the app's screen."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError:
        target = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os.dup2(target, 1)
    os.dup2(target, 2)
    os.close(target)
