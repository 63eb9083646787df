"""Progress events, the stages they come from, and the cancel token that every long loop in the
engine checks."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from engine.core.errors import Cancelled

# The stages the engine reports, by the name events carry.
CLUSTER = "cluster"  # connecting to a Dask cluster, then its facts (engine.cluster)
ITEMS = "items"  # items audited of all (a session)
DISTILLING = "distilling"  # making the static model, once per machine (engine.embedding.static)
MODEL = "model"  # loading the embedding model, once per process (engine.embedding.loading)
EMBEDDING = "embedding"
NEIGHBOURS = "neighbours"
MAXSIM = "colbert"  # MaxSim between candidate pairs (late interaction)
TUNING = "tuning"  # one event per configuration tried, the TuningRow as payload
CHECKS = "audit"  # bootstrap, cross-fitting and the severity's folds
SESSION_MODEL = "session_model"  # one fit over every item's reads, cross-fitted (a session)
DONE = "done"  # the run (or one item's audit) finished


@dataclass(frozen=True)
class Stage:
    """A stage as the front ends show it: `label` on the app's Run screen, `description` in
    `parm audit`'s progress bars."""

    name: str
    label: str
    description: str


# Every stage a front end shows, in the order the engine reports them (DONE is not shown).
STAGES = {
    stage.name: stage
    for stage in (
        Stage(CLUSTER, "Cluster", "Dask cluster"),
        Stage(ITEMS, "Items", "Items"),
        Stage(DISTILLING, "Static model", "Making the static model"),
        Stage(MODEL, "Model", "Loading model"),
        Stage(EMBEDDING, "Embedding", "Embedding"),
        Stage(NEIGHBOURS, "Neighbours", "Neighbour search"),
        Stage(MAXSIM, "MaxSim", "MaxSim scoring"),
        Stage(TUNING, "Tuning", "Tuning"),
        Stage(CHECKS, "Checks", "Audit"),
        Stage(SESSION_MODEL, "Session model", "Session model"),
    )
}


@dataclass(frozen=True)
class ProgressEvent:
    """One progress report: `done` of `total` units of `stage` finished."""

    stage: str
    done: int
    total: int
    message: str = ""
    payload: object = None


ProgressCallback = Callable[[ProgressEvent], None]


class Flag(Protocol):
    """What a CancelToken sets and asks: a threading or multiprocessing Event, or a Dask run's
    stop flag (engine.cluster.worker.StopFlag)."""

    def set(self) -> None: ...

    def is_set(self) -> bool: ...


class CancelToken:
    """A thread-safe flag; `check()` raises `Cancelled` once `cancel()` was called.

    event: the flag itself; by default a threading.Event, or a multiprocessing Event shared
    with worker processes (engine.core.machine.workers), or a Dask run's stop flag.
    """

    def __init__(self, event: Flag | None = None) -> None:
        self._event = event if event is not None else threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled()


class Reporter:
    """Bundles an optional callback and an optional token so loops need one object."""

    def __init__(self, callback: ProgressCallback | None = None, cancel: CancelToken | None = None):
        self.callback = callback
        self.token = cancel or CancelToken()
        self._last_event = 0.0

    def __call__(
        self, stage: str, done: int, total: int, message: str = "", payload: object = None
    ) -> None:
        self.token.check()
        if self.callback is not None:
            self.callback(ProgressEvent(stage, done, total, message, payload))

    def check(self) -> None:
        self.token.check()

    def tick(
        self, stage: str, done: int, total: int, message: str = "", interval: float = 0.25
    ) -> None:
        """Check cancel every call, but emit an event only every `interval` seconds (and at the
        end), so tight loops stay cheap and front ends still hear from them several times a second."""
        now = time.monotonic()
        if done >= total or now - self._last_event >= interval:
            self._last_event = now
            self(stage, done, total, message)
        else:
            self.token.check()
