"""Running a session's units on a Dask cluster: `run_on_cluster` is engine.core.machine.workers.run_units
for a cluster, with the same contract (results in task order, every unit's progress forwarded,
cancel stops every unit, a unit's error stops the run and is raised here).

- Inputs go to the workers once: every item's inputs are scattered (each to one worker), and
  its unit is submitted on that data, largest items first, so no input travels through the
  scheduler or is sent twice.
- Progress: each unit's events come back as Dask events under a topic named for the run, and
  are forwarded here, in the caller's thread; a unit is reported done when its future is.
- Cancel: every pending future is cancelled and the run's stop flag (a Dask Event) is set, which
  running units read at their next cancel check.
- A worker that dies: Dask reschedules the unit on another worker when its inputs survived
  (the scheduler's allowed-failures); when they died with it (scattered data cannot be
  recomputed, so Dask cancels the unit), they are scattered again from here and the unit is
  submitted again. The scheduler says which units the dead worker was running, so only those
  are blamed: after ATTEMPTS deaths while running one unit the run stops with a message naming
  the item. Nothing is written in either case: outputs are written after the run.
"""

from __future__ import annotations

import contextlib
import pickle
import queue
import time
import uuid
from concurrent.futures import CancelledError
from typing import TYPE_CHECKING

from engine.core.errors import ClusterError
from engine.core.progress import CLUSTER, DONE, ProgressEvent, Reporter

if TYPE_CHECKING:
    from distributed import as_completed

# Deaths of the workers running a unit before the run gives up on it (Dask's allowed-failures
# is also 3: the fourth death stops it).
ATTEMPTS = 3
# Submissions of one unit before the run gives up on it, whoever is to blame: its inputs are
# lost with any worker that holds them, also one that another unit killed.
SUBMISSIONS = 10
# Dask's topic for the scheduler's own events: which tasks a worker that left was running.
SCHEDULER_EVENTS = "all"
# How often the parent looks at its units, their progress and its own cancel token.
POLL_SECONDS = 0.1


def run_on_cluster(
    function,
    tasks: list,
    address: str,
    timeout: float,
    reporter: Reporter,
    forward,
    names: list[str],
    sizes: list[int],
) -> list:
    """Results of `function(task, progress, cancel)` on every task, in task order, run on the
    Dask cluster at `address` (or `local:N`).

    forward(k, event): every progress event of unit k, here. names: each task in words for
    messages ("item volcano"); sizes: each task's size (larger ones start first). Stage
    "cluster" reports connecting and then the cluster's facts (payload: ClusterFacts).
    """
    from engine.cluster.address import local_workers
    from engine.cluster.connect import connected

    workers = local_workers(address)
    doing = (
        f"starting {workers} local worker process(es)" if workers else f"connecting to {address}"
    )
    reporter(CLUSTER, 0, 1, doing)
    with connected(address, timeout) as (client, facts):
        reporter(CLUSTER, 1, 1, facts.describe(), facts)
        return _ClusterRun(client, address, function, tasks, reporter, forward, names, sizes).run()


class _ClusterRun:
    """One run's units on a connected client (see the module docstring)."""

    def __init__(self, client, address, function, tasks, reporter, forward, names, sizes) -> None:
        import distributed

        self.distributed, self.client, self.address = distributed, client, address
        self.function, self.tasks, self.reporter, self.forward = function, tasks, reporter, forward
        self.names, self.sizes = names, sizes
        run = uuid.uuid4().hex[:12]
        self.run_id, self.topic, self.stop_name = run, f"parm-progress-{run}", f"parm-stop-{run}"
        self.events: queue.SimpleQueue = queue.SimpleQueue()
        self.attempts = [0] * len(tasks)
        self.deaths = [0] * len(tasks)
        self.results: list = [None] * len(tasks)
        self.done = [False] * len(tasks)
        self.live: dict = {}  # future key -> (k, the unit's future, its inputs' future, attempt)
        self.started = [0] * len(tasks)  # the latest attempt of each unit that began to run
        self.pending: as_completed | None = None  # the futures not yet settled, from run()

    def run(self) -> list:
        # Both kinds of events are queued by the client's thread and handled in this one.
        self.client.subscribe_topic(self.topic, lambda event: self.events.put((True, event)))
        self.client.subscribe_topic(SCHEDULER_EVENTS, lambda e: self.events.put((False, e)))
        try:
            self.pending = self.distributed.as_completed(loop=self.client.loop)
            inputs = self._scatter(self.tasks)
            for k in sorted(range(len(self.tasks)), key=lambda k: -self.sizes[k]):
                self._submit(k, inputs[k])
            del inputs  # each unit holds its own
            while not all(self.done):
                finished = self.pending.next_batch(block=False)
                self._relay()
                self.reporter.check()
                for future in finished:
                    self._settle(future)
                if not finished:
                    time.sleep(POLL_SECONDS)
            return self.results
        except BaseException:
            self._stop()
            raise
        finally:
            for topic in (self.topic, SCHEDULER_EVENTS):
                with contextlib.suppress(Exception):
                    self.client.unsubscribe_topic(topic)

    def _scatter(self, tasks: list) -> list:
        try:
            return self.client.scatter(list(tasks), hash=False)
        except Exception as exc:  # noqa: BLE001 - the connection went, or the data cannot go
            raise self._lost(exc) from None

    def _submit(self, k: int, inputs) -> None:
        from engine.cluster.worker import run_unit

        self.attempts[k] += 1
        try:
            future = self.client.submit(
                run_unit, self.function, k, self.attempts[k], inputs, self.topic, self.stop_name,
                key=f"parm-item-{k}-{self.run_id}-{self.attempts[k]}",
                pure=False, priority=int(self.sizes[k]),
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001
            raise self._lost(exc) from None
        self.live[future.key] = (k, future, inputs, self.attempts[k])
        assert self.pending is not None  # units are submitted from run(), which makes it
        self.pending.add(future)

    def _settle(self, future) -> None:
        """A unit's future is done: its result, its error, or its inputs were lost."""
        k, _, inputs, _ = self.live.pop(future.key)
        if future.status == "finished" and self._fetch(k, future):
            future.release()
            inputs.release()  # the item's inputs leave the worker's memory
            self.forward(k, ProgressEvent(DONE, 1, 1, "audit finished"))
            return
        if future.status == "error":
            error = future.exception()
            if isinstance(error, self.distributed.KilledWorker):
                self.deaths[k] += int(getattr(error, "allowed_failures", ATTEMPTS - 1)) + 1
                raise self._died(k, error)
            future.result()  # the unit's own error, raised here with its traceback
        # Cancelled by Dask: the worker that held the item's inputs (or its result) died, or
        # the link to the scheduler did.
        if self.client.status not in ("running", "connecting"):
            raise self._lost(None)
        if self.deaths[k] >= ATTEMPTS or self.attempts[k] >= SUBMISSIONS:
            raise self._died(k, None)
        self._submit(k, self._scatter([self.tasks[k]])[0])

    def _fetch(self, k: int, future) -> bool:
        """Fetch unit k's result; False when it was lost with its worker before it came."""
        try:
            self.results[k] = future.result()
        except CancelledError:
            return False
        self.done[k] = True
        return True

    def _relay(self) -> None:
        """Forward the progress events that arrived (none of a unit already done), and count
        a death for each unit a worker that left was running. The scheduler reports a worker's
        death before it cancels the units that lost their inputs with it, so this runs before
        those units are settled."""
        while True:
            try:
                ours, (_, message) = self.events.get_nowait()
            except queue.Empty:
                return
            if ours:
                k, attempt, blob = message
                if blob is None:
                    self.started[k] = max(self.started[k], attempt)
                elif not self.done[k]:
                    self.forward(k, pickle.loads(blob))
            elif isinstance(message, dict) and message.get("action") == "remove-worker":
                self._count_deaths(message.get("processing-tasks") or ())

    def _count_deaths(self, keys) -> None:
        """A worker left while these tasks were assigned to it: a death for each of this run's
        units among them that had begun to run there (the others were only queued on it)."""
        for key in keys:
            entry = self.live.get(key)
            if entry is not None and self.started[entry[0]] == entry[3]:
                self.deaths[entry[0]] += 1

    def _stop(self) -> None:
        """Cancel every pending unit and tell the running ones to stop."""
        with contextlib.suppress(Exception):
            self.distributed.Event(self.stop_name, client=self.client).set()
        futures = [entry[1] for entry in self.live.values()]
        futures += [entry[2] for entry in self.live.values()]
        with contextlib.suppress(Exception):
            self.client.cancel(futures, force=True)

    def _died(self, k: int, error) -> ClusterError:
        from engine.cluster.connect import log_file

        last = getattr(getattr(error, "last_worker", None), "address", None)
        where = f" (the last was {last})" if last else ""
        return ClusterError(
            f"The Dask workers running {self.names[k]} died {self.deaths[k]} time(s) while "
            f"running it{where}, so the run stopped; nothing was written. A worker dies when it "
            f"runs out of memory or is killed; Dask's own messages are in {log_file()}."
        )

    def _lost(self, error) -> ClusterError:
        why = f" ({type(error).__name__}: {str(error)[:200]})" if error is not None else ""
        return ClusterError(
            f"The connection to the Dask scheduler at {self.address} was lost during the "
            f"run{why}; nothing was written."
        )
