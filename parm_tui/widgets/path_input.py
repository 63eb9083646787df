"""A path input with filesystem completion, `~` expansion and specific problems with a path."""

from __future__ import annotations

import os
from pathlib import Path

from textual.suggester import Suggester
from textual.widgets import Input

from engine.core.text import is_safe
from parm_tui import keymap

TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".txt")


def expand(text: str) -> Path:
    """The path a user typed, with `~` and environment variables expanded."""
    return Path(os.path.expandvars(os.path.expanduser(text.strip())))


def path_problem(text: str, want_file: bool = True) -> str | None:
    """Why the typed path cannot be opened (not found / not a file / not readable), or None."""
    if not text.strip():
        return "Type the path of a CSV or TSV file."
    path = expand(text)
    if not path.exists():
        parent = path.parent
        if not parent.is_dir():
            return f"Not found: folder {parent} does not exist."
        return f"Not found: {path}"
    if want_file and path.is_dir():
        return f"Not a file: {path} is a folder."
    if want_file and not path.is_file():
        return f"Not a file: {path}"
    if not os.access(path, os.R_OK):
        return f"Not readable: {path} (check its permissions)."
    return None


class PathSuggester(Suggester):
    """Completes the last path component from the folder's entries (folders end with /)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        head, _, stem = value.rpartition("/")
        folder = expand(head + "/") if "/" in value else Path(".")
        try:
            names = sorted(entry.name for entry in os.scandir(folder))
        except OSError:
            return None
        # A name with control characters cannot be shown as it is (engine.core.text), so it is
        # never suggested; such a file can still be opened by its path on the command line.
        visible = [
            n for n in names if is_safe(n) and (not n.startswith(".") or stem.startswith("."))
        ]
        matches = [n for n in visible if n.startswith(stem) and n != stem]
        if not matches:
            return None
        # Prefer table files and folders, which are what the user is looking for.
        tables = [n for n in matches if n.lower().endswith(TABLE_SUFFIXES)]
        name = (tables or matches)[0]
        prefix = value[: len(value) - len(stem)]
        suffix = "/" if (folder / name).is_dir() else ""
        return prefix + name + suffix


class PathInput(Input):
    """An Input for file paths: the suggestion is accepted with tab or right arrow."""

    BINDINGS = keymap.PATH_INPUT

    def __init__(self, value: str = "", **kwargs) -> None:
        kwargs.setdefault("placeholder", "path/to/answers.csv  (tab completes, ~ works)")
        super().__init__(value, suggester=PathSuggester(), **kwargs)

    def action_complete(self) -> None:
        """Accept the shown completion; with none, tab moves focus on as usual."""
        if self._suggestion and len(self._suggestion) > len(self.value):
            self.value = self._suggestion
            self.cursor_position = len(self.value)
        else:
            self.screen.focus_next()
