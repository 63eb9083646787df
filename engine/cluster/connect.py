"""Connecting a run to its Dask cluster: a scheduler's address, reached within the connect
timeout the user sets (`scheduler_timeout`), or `local:N`, a LocalCluster of N worker processes
started here for the run and closed with it.

Dask's own log messages go to a file in parm's log folder (`dask.log`), never to the terminal,
where they would break `parm audit`'s progress bars and the app's screen; a local cluster's
worker processes are silenced the same way (engine.cluster.worker.WorkerSetup). Every failure
to reach or use the cluster is a ClusterError naming the address (or a ConfigError naming the
setting when Dask is not installed).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import socket
import warnings
from dataclasses import dataclass
from pathlib import Path

from engine.cluster.address import local_workers
from engine.core.errors import ClusterError, ConfigError
from engine.core.places import log_dir

EXTRA = "pip install 'parm[dask]'"
LOG_NAME = "dask.log"
# A log file that grows past this is started again (Dask's warnings are short and rare).
LOG_LIMIT_BYTES = 10 * 1024 * 1024
PLUGIN_NAME = "parm-worker-setup"


@dataclass(frozen=True)
class ClusterFacts:
    """The cluster a run uses, as the front ends show it."""

    address: str
    workers: int
    threads: int
    dashboard: str | None
    local: bool
    # Set when workers compute with other BLAS kernels than this machine (engine.core.machine.kernels).
    other_kernels: str | None = None

    def describe(self) -> str:
        """'2 workers (2 threads) started here; dashboard http://127.0.0.1:8787/status'."""
        where = "started here" if self.local else f"at {self.address}"
        board = f"dashboard {self.dashboard}" if self.dashboard else "no dashboard"
        if self.dashboard is None and self.local:
            board += " (pip install 'bokeh>=3.1' for one)"
        text = f"{self.workers} worker(s) ({self.threads} threads) {where}; {board}"
        return f"{text}. {self.other_kernels}" if self.other_kernels else text


def import_distributed(address: str):
    """Dask's `distributed`, or a ConfigError naming the setting and the extra to install."""
    try:
        import distributed
    except ImportError as exc:
        raise ConfigError(
            f"Setting 'scheduler' = \"{address}\" needs Dask, which is not installed here "
            f"({exc}): {EXTRA}.",
            "scheduler",
        ) from None
    return distributed


def log_file() -> Path:
    return log_dir() / LOG_NAME


class _LogFile(logging.Handler):
    """Appends records to parm's dask.log, opening it per record (they are rare), and drops
    them when it cannot be written. Not a StreamHandler: Dask's `silence_logs` retunes those."""

    def __init__(self, path: Path) -> None:
        super().__init__(logging.WARNING)
        self.path = path
        self.setFormatter(logging.Formatter("%(asctime)s %(process)d %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            big = self.path.exists() and self.path.stat().st_size > LOG_LIMIT_BYTES
            with self.path.open("w" if big else "a", encoding="utf-8", errors="replace") as out:
                out.write(self.format(record) + "\n")
        except (OSError, ValueError):
            pass


def quiet_dask_logs() -> None:
    """Dask's loggers write warnings and errors to dask.log only (not the terminal)."""
    handler = _LogFile(log_file())
    for name in ("distributed", "dask", "tornado"):
        logger = logging.getLogger(name)
        for old in list(logger.handlers):
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.propagate = False
        if logger.level < logging.WARNING:
            logger.setLevel(logging.WARNING)


@contextlib.contextmanager
def connected(address: str, timeout: float):
    """(client, ClusterFacts) for a run on `address`; on leaving, the client (and the local
    cluster started for `local:N`) is closed."""
    distributed = import_distributed(address)
    quiet_dask_logs()
    workers = local_workers(address)
    cluster = _local_cluster(distributed, workers) if workers is not None else None
    try:
        client = _client(distributed, cluster if cluster is not None else address, timeout)
    except BaseException:
        _close(None, cluster)
        raise
    try:
        facts = _ready(distributed, client, address, timeout, cluster is not None)
        yield client, facts
    finally:
        with contextlib.suppress(Exception):
            client.unregister_worker_plugin(PLUGIN_NAME)
        _close(client, cluster)


def has_bokeh() -> bool:
    """Whether Dask's dashboard can be served here (it needs bokeh)."""
    return importlib.util.find_spec("bokeh") is not None


def _local_cluster(distributed, workers: int):
    """A cluster of `workers` processes of one thread each, as `--jobs` would start them."""
    try:
        with warnings.catch_warnings():
            # "Port 8787 is already in use" and the like: Dask takes another, and says so
            # with a warning that would land on the terminal.
            warnings.simplefilter("ignore")
            return distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":8787" if has_bokeh() else ":0",
                silence_logs=logging.CRITICAL,
            )
    except Exception as exc:  # noqa: BLE001 - Dask raises anything while starting processes
        raise ClusterError(
            f"Could not start a local Dask cluster of {workers} worker process(es): "
            f"{type(exc).__name__}: {exc}"
        ) from None


def _unreachable(address: str, timeout: float, exc: BaseException) -> ClusterError:
    why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    return ClusterError(
        f"The Dask scheduler at {address} did not answer within {timeout:g} s (setting "
        f"'scheduler_timeout'): {why}. Start it there with `dask scheduler` and workers with "
        f"`dask worker {address}`, check the address and that its port is open, or raise "
        "scheduler_timeout."
    )


def _probe(distributed, address: str, timeout: float) -> None:
    """Open and close one connection to the scheduler, so an address that does not answer is
    a message (before a Client exists, which would complain on its own when collected)."""

    async def knock() -> None:
        comm = await distributed.comm.connect(address, timeout=timeout)
        await comm.close()

    try:
        asyncio.run(knock())
    except ValueError as exc:
        raise ClusterError(
            f"'{address}' is not a Dask scheduler address ({exc}); expected, for example, "
            "tcp://10.0.0.5:8786, or local:N for N worker processes on this machine."
        ) from None
    except (OSError, asyncio.TimeoutError) as exc:
        raise _unreachable(address, timeout, exc) from None
    except Exception as exc:  # noqa: BLE001 - something answered, but not a Dask scheduler
        raise ClusterError(
            f"Something answered at {address}, but not as a Dask scheduler speaks "
            f"({type(exc).__name__}: {str(exc)[:200]})."
        ) from None


def _client(distributed, target, timeout: float):
    """A Client of `target` (an address, or the local cluster)."""
    if isinstance(target, str):
        _probe(distributed, target, timeout)
    # Made in two steps so that a Client whose start fails is closed here, not by the garbage
    # collector, which would print its complaint over the terminal.
    client = distributed.Client.__new__(distributed.Client)
    try:
        client.__init__(target, timeout=timeout, set_as_default=False)
    except Exception as exc:  # noqa: BLE001
        with contextlib.suppress(Exception):
            client.close(timeout=2)
        address = target if isinstance(target, str) else "the local cluster"
        raise _unreachable(address, timeout, exc) from None
    return client


def _ready(distributed, client, address: str, timeout: float, local: bool) -> ClusterFacts:
    """Wait for a worker, check that the workers run this parm, set them up (BLAS threads,
    a local cluster's output); the cluster's facts."""
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (TimeoutError, asyncio.TimeoutError):
        raise ClusterError(
            f"The Dask scheduler at {address} has no workers (waited {timeout:g} s, setting "
            f"'scheduler_timeout'): start them with `dask worker {address}`."
        ) from None
    from engine.cluster import worker

    _check_versions(client, worker.parm_version())
    workers = client.scheduler_info(n_workers=-1)["workers"]
    threads_by_host: dict[str, int] = {}
    for name, info in workers.items():
        host = distributed.comm.get_address_host(name)
        threads_by_host[host] = threads_by_host.get(host, 0) + int(info.get("nthreads", 1))
    parent = (socket.gethostname(), os.getpid())
    output = str(log_file()) if local else None
    client.register_plugin(worker.WorkerSetup(threads_by_host, parent, output), name=PLUGIN_NAME)
    # A scheduler serves the dashboard's address even without bokeh (its page then says to
    # install it); a local one without bokeh is said to have none.
    services = client.scheduler_info(n_workers=0).get("services", {})
    serves = "dashboard" in services and (has_bokeh() or not local)
    dashboard = client.dashboard_link if serves else None
    threads = sum(int(info.get("nthreads", 1)) for info in workers.values())
    return ClusterFacts(
        str(client.scheduler.address), len(workers), threads, dashboard, local,
        _other_kernels(client),
    )  # fmt: skip


def _check_versions(client, here: str) -> None:
    """Every worker must import this parm: the units are parm's own functions."""
    from engine.cluster import worker

    try:
        versions = client.run(worker.parm_version)
    except Exception as exc:  # noqa: BLE001 - an unpickling error from a worker without parm
        raise ClusterError(
            f"The Dask workers cannot run parm ({type(exc).__name__}: {str(exc)[:200]}): install "
            f"parm {here} with {EXTRA} on every worker machine."
        ) from None
    other = {name: version for name, version in versions.items() if version != here}
    if other:
        shown = ", ".join(f"{name} has {version}" for name, version in sorted(other.items())[:3])
        raise ClusterError(
            f"The Dask workers must run the same parm as this machine ({here}): {shown}. "
            f"Install parm {here} with {EXTRA} on every worker machine."
        )


def _other_kernels(client) -> str | None:
    """What to say when a worker's BLAS kernels differ from this machine's: its figures may then
    differ in their last digits and its queue order among near-equal severities."""
    from engine.cluster import worker

    here = worker.blas_kernels()
    try:
        theirs = client.run(worker.blas_kernels)
    except Exception:  # noqa: BLE001 - the check is advice; the run does not depend on it
        return None
    other = sorted(name for name, kernels in theirs.items() if kernels != here)
    if not other:
        return None
    return (
        f"Worker {other[0]}{f' and {len(other) - 1} more' if len(other) > 1 else ''} "
        f"compute with {', '.join(theirs[other[0]]) or 'no BLAS'} and this machine with "
        f"{', '.join(here)}: figures may differ in their last digits. Start the workers with "
        "OPENBLAS_CORETYPE=Haswell for the same results."
    )


def _close(client, cluster) -> None:
    """Close quietly: a run's outcome is already decided when its cluster goes."""
    for thing in (client, cluster):
        if thing is not None:
            with contextlib.suppress(Exception):
                thing.close()
