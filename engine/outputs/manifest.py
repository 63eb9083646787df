"""The manifest of an output set, parm-manifest.json: which run the last export was, and every
parm file in the folder with its size, SHA-256 and run. It is the last file of a set to be
written (engine.outputs.sets), so a folder whose manifest is missing or does not match its
files is not one run's set, and `read_set` says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from engine.core import files
from engine.core.errors import ExportError
from engine.outputs.names import MANIFEST_FILE, SET_FILES

MANIFEST_VERSION = 1


@dataclass(frozen=True)
class SetFile:
    """One file of a set as its manifest lists it."""

    name: str
    size: int
    sha256: str
    run_id: str


@dataclass(frozen=True)
class OutputSet:
    """A folder's parm files as read by `read_set`: the run of the last export (None without a
    manifest), its files, and what does not fit (a missing, changed or unlisted file)."""

    folder: Path
    run_id: str | None
    written_at: str | None
    files: tuple[SetFile, ...]
    problems: tuple[str, ...]

    @property
    def one_run(self) -> bool:
        """Whether every parm file in the folder is listed, intact, and from the same run."""
        return (
            self.run_id is not None
            and not self.problems
            and all(f.run_id == self.run_id for f in self.files)
        )


def file_entry(name: str, raw: bytes, run_id: str) -> SetFile:
    """The manifest's entry for a file of these bytes."""
    return SetFile(name, len(raw), hashlib.sha256(raw).hexdigest(), run_id)


def manifest_bytes(run_id: str, entries: list[SetFile]) -> bytes:
    """The manifest of a set of run `run_id` listing `entries` (its own files and the ones
    earlier exports left), as written."""
    from engine.core.versions import parm_version

    document = {
        "parm_manifest": MANIFEST_VERSION,
        "run_id": run_id,
        "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "parm_version": parm_version(),
        "files": [
            {"name": e.name, "bytes": e.size, "sha256": e.sha256, "run_id": e.run_id}
            for e in entries
        ],
    }
    return (json.dumps(document, indent=2, ensure_ascii=True) + "\n").encode("ascii")


def read_set(folder: str | Path) -> OutputSet:
    """The parm files of `folder` checked against its manifest: each listed file must be there
    with the size and SHA-256 listed, and every parm file there must be listed."""
    folder = Path(folder).expanduser()
    problems: list[str] = []
    document = _manifest(folder)
    if document is None:
        present = sorted(n for n in SET_FILES if (folder / n).is_file())
        what = f" ({', '.join(present)})" if present else ""
        problems.append(
            f"{folder} has no readable {MANIFEST_FILE}: its files{what} cannot be told to be "
            "one run's (an export was interrupted, or an older parm wrote them)."
        )
        return OutputSet(folder, None, None, (), tuple(problems))
    entries = _entries(document)
    for entry in entries:
        problem = _problem(folder, entry)
        if problem:
            problems.append(problem)
    names = {e.name for e in entries}
    for name in SET_FILES:
        if name not in names and (folder / name).is_file():
            problems.append(f"{folder / name} is not listed in the manifest (not of this set).")
    run_id = str(document.get("run_id")) if document.get("run_id") else None
    written_at = document.get("written_at")
    return OutputSet(folder, run_id, written_at, tuple(entries), tuple(problems))


def _manifest(folder: Path) -> dict | None:
    try:
        with files.open_regular(folder / MANIFEST_FILE, "Manifest", ExportError) as handle:
            document = json.loads(handle.read(1 << 20).decode("utf-8"))
    except (ExportError, OSError, ValueError):
        return None
    ok = isinstance(document, dict) and document.get("parm_manifest") == MANIFEST_VERSION
    return document if ok and isinstance(document.get("files"), list) else None


def _entries(document: dict) -> list[SetFile]:
    entries = []
    for item in document.get("files", []):
        try:
            entries.append(
                SetFile(str(item["name"]), int(item["bytes"]), str(item["sha256"]),
                        str(item["run_id"]))
            )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            continue
    return [e for e in entries if e.name in SET_FILES]


def listed(folder: Path) -> list[SetFile]:
    """The files the folder's manifest lists (none without a readable manifest)."""
    document = _manifest(folder)
    return [] if document is None else _entries(document)


def intact(folder: Path, entry: SetFile) -> bool:
    """Whether the folder's file is the one the manifest entry describes."""
    return _problem(folder, entry) is None


def _problem(folder: Path, entry: SetFile) -> str | None:
    path = folder / entry.name
    try:
        info = os.lstat(path)
    except OSError:
        return f"{path} is listed in the manifest but missing."
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is listed in the manifest but is not a file."
    if info.st_size != entry.size or files.file_digest(path) != entry.sha256:
        return (
            f"{path} is not the file the manifest lists for run {entry.run_id} (written by "
            "another run, or changed since)."
        )
    return None
