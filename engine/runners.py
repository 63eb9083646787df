"""Where a session's items run: one contract (`Runner`), three runners in a registry, chosen
from the settings. Each runs the same units (engine.session.ItemTask through `audit_item`) and
gives their results in the items' order; they differ in where the work happens and so in who
embeds the answers and how the timings add up.

    here       this process, one item after another (`jobs` 1)
    processes  `jobs` worker processes on this machine (engine.core.machine.workers)
    dask       a Dask cluster (the `scheduler` setting or DASK_SCHEDULER_ADDRESS,
               engine.cluster): its workers embed their own items, so the parent never
               loads a model
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from engine.cluster.address import scheduler_address
from engine.core.machine.workers import run_units
from engine.core.progress import Reporter
from engine.core.stages import EMBEDDING, ITEM_STAGES, LOADING
from engine.input.settings.config import AuditConfig


class Runner(Protocol):
    """Runs units of work and says how to count their time. embeds_here: the parent embeds
    every item before the units run (else each unit embeds its own, where it runs)."""

    name: str
    embeds_here: bool

    def run(self, function: Callable, tasks: list, reporter: Reporter, forward,
            names: list[str], sizes: list[int]) -> list:  # fmt: skip
        """The results of function(task, progress, cancel) for every task, in order."""

    def timings(self, results: list, loading: float, embedding: float) -> dict[str, float]:
        """The session's model-loading and embedding seconds, and each item stage's seconds
        summed over the items (engine.core.stages.ITEM_STAGES)."""


@dataclass(frozen=True)
class Here:
    """This process, one item after another."""

    name: str = "here"
    embeds_here: bool = True
    jobs: int = 1

    def run(self, function, tasks, reporter, forward, names, sizes) -> list:
        return run_units(function, tasks, self.jobs, reporter, forward)

    def timings(self, results, loading: float, embedding: float) -> dict[str, float]:
        here = {LOADING: round(loading, 3), EMBEDDING: round(embedding, 3)}
        return here | summed(results, ITEM_STAGES)


@dataclass(frozen=True)
class Processes(Here):
    """`jobs` worker processes on this machine; the parent embeds, the workers audit."""

    name: str = "processes"


@dataclass(frozen=True)
class Dask:
    """A Dask cluster's workers; each embeds its own items (or gets the given vectors)."""

    address: str
    timeout: float
    name: str = "dask"
    embeds_here: bool = False

    def run(self, function, tasks, reporter, forward, names, sizes) -> list:
        from engine.cluster.run import run_on_cluster  # Dask loads only for a cluster's run

        return run_on_cluster(
            function, tasks, self.address, self.timeout, reporter, forward, names, sizes
        )

    def timings(self, results, loading: float, embedding: float) -> dict[str, float]:
        # Each worker's own seconds, summed (its items' timings already hold them).
        return summed(results, (LOADING, EMBEDDING, *ITEM_STAGES))


def summed(results: list, stages) -> dict[str, float]:
    """Each of `stages` summed over the items' timings; a stage no item had is left out (the
    raters' and the reads' exist only with a rater column and with reads). On worker
    processes the items overlap in time, so the sums can exceed the run's wall total."""
    return {
        stage: round(sum(r.timings.get(stage, 0.0) for r in results), 3)
        for stage in stages
        if any(stage in r.timings for r in results)
    }


RUNNERS = {"here": Here, "processes": Processes, "dask": Dask}


def runner_for(config: AuditConfig) -> Runner:
    """The runner the settings ask for: a Dask cluster when there is a scheduler (the setting,
    else DASK_SCHEDULER_ADDRESS), else `jobs` worker processes, else this process."""
    address = scheduler_address(config.scheduler)
    if address is not None:
        return RUNNERS["dask"](address, config.scheduler_timeout)
    if config.jobs > 1:
        return RUNNERS["processes"](jobs=config.jobs)
    return RUNNERS["here"]()
