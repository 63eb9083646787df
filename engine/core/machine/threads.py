"""BLAS threads: one thread for the many tiny matrix products of small problems.

OpenBLAS hands every product to its thread pool; for a product of a few thousand numbers the
threads' wake-up costs far more than the product (on a busy two-core machine about 10 ms a
call, measured: a 9-parameter fit took 2 s instead of 0.1 s, and the neighbour search of an
item of 36 answers 4 ms instead of 0.6 ms). The results are the same with one thread or two.
"""

from __future__ import annotations

import contextlib

_CONTROLLER = None


def one_blas_thread() -> contextlib.AbstractContextManager[object]:
    """A context with BLAS limited to one thread (a no-op without threadpoolctl)."""
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # scikit-learn brings it; without it, only speed suffers
        return contextlib.nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    limited: contextlib.AbstractContextManager[object] = _CONTROLLER.limit(
        limits=1, user_api="blas"
    )
    return limited
