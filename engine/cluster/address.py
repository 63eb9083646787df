"""Which Dask scheduler a run uses, without importing Dask: the `scheduler` setting, else Dask's
own DASK_SCHEDULER_ADDRESS; `local` or `local:N` is a cluster of N worker processes started on
this machine for the run (N: the machine's cores when left out)."""

from __future__ import annotations

import os

from engine.core.errors import ConfigError

# Dask's own variable for the scheduler's address (as `dask.config` reads it).
ENVIRONMENT = "DASK_SCHEDULER_ADDRESS"
LOCAL = "local"


def scheduler_address(setting: str | None) -> str | None:
    """The scheduler a run uses: the setting when given, else DASK_SCHEDULER_ADDRESS, else None
    (no cluster: items run here, one after another or on `jobs` processes)."""
    if setting is not None and setting.strip():
        return setting.strip()
    return os.environ.get(ENVIRONMENT, "").strip() or None


def local_workers(address: str, where: str = "Setting 'scheduler'") -> int | None:
    """N for `local:N` (the machine's cores for `local`), None for a scheduler's address.
    `where` names where the address came from, for the error about a bad N."""
    name, _, count = address.strip().partition(":")
    if name.lower() != LOCAL:
        return None
    if not count:
        return os.cpu_count() or 1
    if count.isdigit() and int(count) >= 1:
        return int(count)
    raise ConfigError(
        f'{where} = "{address}" is invalid: "local:N" needs N, the number of worker processes, '
        "an integer >= 1.",
        "scheduler",
    )


def where_from(setting: str | None) -> str:
    """Where the address a run uses came from, in words, for messages."""
    if setting is not None and setting.strip():
        return "Setting 'scheduler'"
    return ENVIRONMENT
