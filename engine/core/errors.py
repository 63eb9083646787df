"""Typed errors. Every message names the file, row, column or setting it is about."""

from __future__ import annotations

import os
from collections.abc import Iterable


class ParmError(Exception):
    """Base class: an error a user can act on. Front ends show the message, never a traceback."""


class ConfigError(ParmError):
    """A setting has an invalid value. key: the setting it is about (None when the problem is
    not one setting's: an unknown key, a settings file that is not JSON)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class DataError(ParmError):
    """The input file or its columns cannot be used."""


class EmbeddingError(ParmError):
    """The embedding model or precomputed embeddings cannot be used."""


class ExportError(ParmError):
    """Outputs cannot be written."""


class OutputsExist(ExportError):
    """The output folder has files of these names already and replacing them was not allowed
    (the front end says how to allow it: --force, or a confirmation)."""

    def __init__(
        self, message: str, folder: str | os.PathLike[str] | None = None, names: Iterable[str] = ()
    ) -> None:
        super().__init__(message)
        self.folder, self.names = folder, tuple(names)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (str(self), self.folder, self.names))


class ReviewError(ParmError):
    """A review decision cannot be recorded, or the decision store cannot be used."""


class ResumeError(ParmError):
    """A saved session (settings and results kept for an input file) cannot be read or written."""


class SessionError(ParmError):
    """A live session (`parm monitor --session DIR`) cannot be used: its database is damaged,
    in use past the wait, not a parm session or written by a newer parm. Never rebuilt: the
    message says what to do."""


class ClusterError(ParmError):
    """The Dask cluster cannot be reached or used, or could not run an item (the message names
    the scheduler's address, the worker or the item)."""


class Cancelled(ParmError):
    """The user cancelled a run."""

    def __init__(self, message: str = "Run cancelled.") -> None:
        super().__init__(message)
