"""The same arithmetic on every machine: one set of BLAS kernels for every x86-64 CPU.

OpenBLAS (numpy's and scipy's BLAS) picks its kernels by CPU when it loads: SkylakeX's on one
machine, Haswell's or Zen's on another. They sum in different orders, so a product differs in
its last bits, and the optimisers downstream (the classifiers behind the review queue's
severity, the rater expectation) turn that into severities that differ by up to 0.02 and a
queue in another order (measured on the sample session with OPENBLAS_CORETYPE=Haswell against
SkylakeX on one machine). parm therefore asks OpenBLAS for its Haswell kernels (AVX2 and FMA,
which every x86-64 CPU of the last ten years has) before numpy loads, as MKL's conditional
numerical reproducibility mode (MKL_CBWR) does for MKL. Within one kernel set, results do not
depend on the number of BLAS threads (OpenBLAS splits a product's rows and columns between
threads, never the sum of one entry). A user's own OPENBLAS_CORETYPE is left as it is.

The similarities of the neighbour graph do not rely on this: they are exact
(engine.graph.similarity). Standard library only: it runs before numpy is imported.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import MutableMapping

# The kernels parm asks for, and the CPU features they need.
PINNED = "Haswell"
NEEDS = ("avx2", "fma")
VARIABLE = "OPENBLAS_CORETYPE"


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> set[str]:
    """The CPU's feature flags as Linux lists them; empty where it does not."""
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def pin_blas_kernels(
    environ: MutableMapping[str, str] = os.environ, flags: set[str] | None = None
) -> str | None:
    """Ask OpenBLAS for the PINNED kernels where they run (x86-64 Linux with AVX2 and FMA) and
    numpy is not loaded yet; returns the kernel set asked for (or the user's), else None."""
    if VARIABLE in environ:
        return environ[VARIABLE]
    if "numpy" in sys.modules or platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    flags = cpu_flags() if flags is None else flags
    if not all(need in flags for need in NEEDS):
        return None
    environ[VARIABLE] = PINNED
    return PINNED


def blas_kernels() -> list[str]:
    """The kernel sets of the BLAS libraries loaded in this process ("openblas Haswell", ...),
    for the run's record and the cluster's check that its workers compute alike."""
    from threadpoolctl import threadpool_info

    return sorted(
        {
            f"{pool.get('internal_api', '?')} {pool.get('architecture') or '?'}"
            for pool in threadpool_info()
            if pool.get("user_api") == "blas"
        }
    )
