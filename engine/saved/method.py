"""What a kept result was computed by: parm's version and the engine's own source files. A run or
an item kept by another parm (an upgrade, or a changed method in a working copy whose version did
not move) is computed again, never reused: on a developer's machine the sample's run kept before
the second-read severity's leak was fixed (2026-11-29) was reused under the fixed code and
printed the leak's "100.0% against 0.0%" beside today's "48.9% against 6.7%"."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[1]


@functools.cache
def method_version() -> str:
    """parm's version and a digest of every engine/*.py file (their paths and bytes), once a
    process (about 20 ms, with importlib.metadata loaded)."""
    from engine.core.versions import parm_version

    release = parm_version()
    digest = hashlib.sha256(release.encode("utf-8") + b"\0")
    for path in sorted(ENGINE.rglob("*.py")):
        digest.update(path.relative_to(ENGINE).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return f"{release}+{digest.hexdigest()[:16]}"
