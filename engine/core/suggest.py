"""'Did you mean ...?' for a mistyped name: a setting, a column. One place, so every message
suggests the same way (difflib's closest match, as Python's own NameError does)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# How alike a name must be to be suggested (difflib's ratio; 0.6 is its default).
CUTOFF = 0.6


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to `name`, or None when none is close."""
    known = [str(k) for k in known]
    found = difflib.get_close_matches(str(name), known, n=1, cutoff=CUTOFF)
    if not found:  # a difference of case only ("Answer" for "answer")
        found = [k for k in known if k.lower() == str(name).lower()]
    return found[0] if found else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """ " Did you mean 'x'?" for the closest known name, or "" when none is close."""
    match = closest(name, known)
    return "" if match is None else f" Did you mean '{match}'?"
