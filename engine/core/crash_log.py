"""The crash log both front ends write when parm itself fails (a bug, not a problem with the
input): the traceback, one file per failure, in the user log folder (engine.core.places.log_dir;
$PARM_DATA_DIR/logs when set)."""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from engine.core.places import log_dir


def write_crash_log(error: BaseException) -> tuple[Path | None, str]:
    """Save the traceback of an unexpected error: (the file, ""), or (None, why not) when even
    that is impossible. A second failure in the same second of the same process is appended."""
    from engine.core.files import reason

    folder = log_dir()
    path = folder / f"parm-error-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8", errors="replace") as log:
            log.write(text)
    except OSError as failure:
        return None, reason(failure)
    return path, ""
