"""Python's cyclic garbage collector kept to what a run makes, while it computes and writes.

Each of the collector's full passes reads every live object to find almost nothing: at
N = 15,000 a run's five passes took 0.21 s of this process's time and collected 146 objects in
all (reference counting frees the rest as it goes), most of what they read being the modules,
the file as read and the settings, alive before the run began. Those are set aside for the run
(`gc.freeze`): its passes read only the objects made since (the same run: one pass of 5 ms,
0.02 s in all) and still free the run's own cycles as they come. Turning the collector off
instead saved as much but cost 0.23 GB more at N = 100,000: importing torch in the middle of a
run leaves a cycle holding the frames of the functions below it, and with them their arrays,
until a pass frees it.

Set aside by a counter, so that blocks may nest or run on two threads (an export while a run
goes on): the objects are given back to the collector (`gc.unfreeze`) when the last one ends.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_blocks = [0]


@contextlib.contextmanager
def new_objects_only() -> Iterator[None]:
    """The objects alive now out of the collector's passes for the block (see the module
    docstring); given back when the last block ends."""
    with _lock:
        if _blocks[0] == 0:
            gc.freeze()
        _blocks[0] += 1
    try:
        yield
    finally:
        with _lock:
            _blocks[0] -= 1
            if _blocks[0] == 0:
                gc.unfreeze()
