"""Installed packages' versions, each looked up once per process: a lookup scans every installed
package's metadata (a millisecond or more), and reports, saved runs, kept plots, the embedding
cache and a cluster's workers ask for parm's many times a run."""

from __future__ import annotations

import functools


@functools.cache
def package_version(package: str) -> str | None:
    """The installed version of `package`, None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def parm_version() -> str:
    """parm's version, "unknown" when it runs without being installed as a package."""
    return package_version("parm") or "unknown"
