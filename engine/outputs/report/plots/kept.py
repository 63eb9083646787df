"""report.html's plots kept by what they draw, so that a page written again draws only what
changed: a report written from a reused run into another folder, or after a few answers were
added (the unchanged items' plots), skips matplotlib (about 0.1 s a plot and 0.5 s to import it
on a 2-core machine; docs/explanation/benchmarks.md, "Running again").

A plot is kept under the SHA-256 of what draws it (parm's version, the sources of the plots' module
and of the text rules it cuts names by, so a change to either draws them anew, and matplotlib's
version), the plot's kind and its
arguments pickled, in the `plots` folder of the embedding cache's folder
(engine.embedding.cache; `parm cache` counts them, `parm cache clear` removes them). A kept plot goes through `inline_svg` again when read (the same text
for one parm wrote: the cleaning is idempotent), so a file changed in the cache cannot put
anything but drawing into a report. The folder holds at most PLOTS_LIMIT plots, the least recently
used removed first; a folder that cannot be written or read only means drawing again.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import pickle
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

_bounded: list[bool] = [False]  # once per process: a listing of the folder costs milliseconds


def kept(draw):
    """`draw` (a plot of engine.outputs.report.plots.drawing, with a `title` argument) kept by its
    arguments."""
    signature = inspect.signature(draw)

    @functools.wraps(draw)
    def drawn(*args, **kwargs) -> str:
        from engine.outputs.report.plots.drawing import inline_svg

        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()  # one key however the arguments were passed
        path = _path(draw.__name__, tuple(bound.arguments.items()))
        found = _read(path)
        if found is not None:
            try:
                return inline_svg(found, bound.arguments["title"])
            except ET.ParseError:
                pass  # damaged: drawn again and kept over it
        svg = draw(*args, **kwargs)
        _keep(path, svg)
        return svg

    return drawn


def _path(kind: str, arguments: tuple) -> Path | None:
    """Where the plot of these arguments is kept (None: no cache folder, or arguments that
    cannot be pickled)."""
    from engine.embedding.cache.entries import PLOTS_FOLDER, cache_folder

    folder, _ = cache_folder()
    if folder is None:
        return None
    try:
        drawn = pickle.dumps((kind, arguments), protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    digest = hashlib.sha256()
    digest.update(_drawer())
    digest.update(drawn)
    return folder / PLOTS_FOLDER / f"{digest.hexdigest()}.svg"


@functools.cache
def _drawer() -> bytes:
    """What draws the plots: parm's version, the sources of the plots' module and of the text
    rules it writes names by (engine.core.text), matplotlib's version."""
    from engine.core import text
    from engine.core.versions import package_version
    from engine.outputs.report.plots import drawing

    sources = hashlib.sha256(Path(drawing.__file__).read_bytes() + Path(text.__file__).read_bytes())
    parm, matplotlib = (package_version(name) or "unknown" for name in ("parm", "matplotlib"))
    return b"\0".join([parm.encode(), sources.digest(), matplotlib.encode()])


def _read(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
        os.utime(path)  # recently used: kept longest
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def _keep(path: Path | None, svg: str) -> None:
    """Written whole (a temporary file renamed) or not at all. Not engine.core.files'
    atomic_write_text: a cache needs no fsync and no signal hold per plot (a plot torn by a
    crash fails inline_svg's parse and is drawn again)."""
    if path is None:
        return
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".part")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(svg)
        os.replace(temporary, path)
    except OSError:
        if temporary is not None:  # a full disk: no half-written plot left behind
            Path(temporary).unlink(missing_ok=True)
        return
    if not _bounded[0]:
        _bounded[0] = True
        bound(path.parent)


def bound(folder: Path, limit: int | None = None) -> None:
    """At most `limit` (engine.embedding.cache.entries.PLOTS_LIMIT) plots in `folder`: the
    least recently used removed first."""
    from engine.embedding.cache.entries import PLOTS_LIMIT

    limit = PLOTS_LIMIT if limit is None else limit
    try:
        entries = [(entry.stat().st_mtime, entry) for entry in folder.glob("*.svg")]
    except OSError:
        return
    if len(entries) <= limit:
        return
    entries.sort()
    for _, entry in entries[: len(entries) - limit]:
        try:
            entry.unlink()
        except OSError:
            pass
