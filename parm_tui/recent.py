"""The list of recently opened files, kept in parm's data folder, and paths as the app shows them."""

from __future__ import annotations

import json
from pathlib import Path

from engine.core.places import data_dir
from engine.core.text import safe_text

RECENT_FILE = "recent.json"
RECENT_LIMIT = 10


def recent_files() -> list[Path]:
    """Recently opened files, newest first. A missing or damaged list reads as empty."""
    try:
        entries = json.loads((data_dir() / RECENT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(entries, list):
        return []
    return [Path(entry) for entry in entries if isinstance(entry, str)]


def add_recent(path: Path) -> list[Path]:
    """Put `path` (made absolute) first in the recent list; returns the new list.

    The list is a convenience, so a folder that cannot be written is not an error.
    """
    path = Path(path).expanduser().resolve()
    entries = [path] + [p for p in recent_files() if p != path]
    entries = entries[:RECENT_LIMIT]
    try:
        folder = data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps([str(p) for p in entries], indent=2)
        (folder / RECENT_FILE).write_text(text, encoding="utf-8")
    except OSError:
        pass
    return entries


def display_path(path: Path) -> str:
    """A path as short as it can be said: relative to the working folder, else with `~`; with
    any control character in a file name replaced (engine.core.text), as it is only shown."""
    path = Path(path)
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return safe_text(prefix + str(path.relative_to(base)), one_line=True)
        except ValueError:
            continue
    return safe_text(str(path), one_line=True)
