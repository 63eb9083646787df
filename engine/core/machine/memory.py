"""Memory checked before an array sized by the data is made: a file whose shape would ask for
more memory than the machine has stops with a DataError that says what needs it, how much, and
what to change, instead of a MemoryError (or the system's out-of-memory killer) minutes later.

`check_memory(nbytes, what, advice)` is called with the size an allocation will take, worked
out from the data's dimensions before anything is allocated (`array_bytes(shape)`); `zeros` and
`empty` are numpy's, checked first.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

import numpy as np
from numpy.typing import DTypeLike

from engine.core.errors import DataError

# One array may take at most this share of the memory the system says is available: the run
# holds other arrays beside it (several of the same size in the session model's fit), and the
# machine keeps running other programs.
MEMORY_SHARE = 0.5
GIB = 1024**3


class MemoryNeeded(DataError):
    """An array the data asks for would not fit in memory. nbytes: what it needs; available:
    what the system had (None: unknown, so only what no machine has is refused)."""

    def __init__(self, message: str, nbytes: int, available: int | None) -> None:
        super().__init__(message)
        self.nbytes, self.available = nbytes, available

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (str(self), self.nbytes, self.available))


def available_bytes() -> int | None:
    """The memory the system can give this process now (Linux: MemAvailable; other POSIX
    systems: free pages), or None where it does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


# Without a figure from the system, only what no ordinary machine has (1 TiB) is refused.
_UNKNOWN_LIMIT = 1024 * GIB


def array_bytes(shape: Iterable[int], dtype: DTypeLike = np.float64) -> int:
    """The bytes an array of this shape and type takes (Python integers: no overflow)."""
    return math.prod(int(n) for n in shape) * np.dtype(dtype).itemsize


def check_memory(nbytes: int, what: str, advice: str = "") -> None:
    """MemoryNeeded when `nbytes` exceeds MEMORY_SHARE of the available memory. what: the
    array in words, with its dimensions in the data's terms; advice: what would make it
    smaller (a setting to change, a file to split)."""
    available = available_bytes()
    limit = _UNKNOWN_LIMIT if available is None else MEMORY_SHARE * available
    if nbytes <= limit:
        return
    have = (
        "the system does not say how much memory is free"
        if available is None
        else f"this machine has {_size(available)} free and one array may take {MEMORY_SHARE:.0%}"
    )
    raise MemoryNeeded(
        f"{what} would need {_size(nbytes)} of memory; {have}. Nothing was allocated."
        + (f" {advice}" if advice else ""),
        nbytes,
        available,
    )


def zeros(
    shape: tuple[int, ...], dtype: DTypeLike = np.float64, what: str = "An array", advice: str = ""
) -> np.ndarray:
    """np.zeros, after check_memory."""
    check_memory(array_bytes(shape, dtype), what, advice)
    return np.zeros(shape, dtype=dtype)


def empty(
    shape: tuple[int, ...], dtype: DTypeLike = np.float64, what: str = "An array", advice: str = ""
) -> np.ndarray:
    """np.empty, after check_memory."""
    check_memory(array_bytes(shape, dtype), what, advice)
    return np.empty(shape, dtype=dtype)


def _size(nbytes: float) -> str:
    """'778 GiB', '3.2 GiB', '512 MiB'."""
    if nbytes >= 100 * GIB:
        return f"{nbytes / GIB:,.0f} GiB"
    if nbytes >= GIB:
        return f"{nbytes / GIB:.1f} GiB"
    return f"{nbytes / 1024**2:.0f} MiB"
