"""Output sets: the files one export writes into a folder, switched into place so that a reader
never takes a mix of two runs for one.

Every file of a set names its run (a `run_id` column in each CSV, a field in report.json, a line
in report.md), and the set's manifest, parm-manifest.json, comes last: the run, and every parm
file in the folder with its size, SHA-256 and run (files of earlier exports that this one left
alone keep their own run). engine.outputs.manifest.read_set checks a folder against it.

The switch is the first of these that applies:

1. create: the folder does not exist yet. The set is written into a fresh sibling folder,
   `.NAME.parm-PID-XXXXXXXX.set`, which is then renamed to NAME: one atomic step.
2. exchange: the folder exists, holds nothing but files a set can hold (engine.outputs.names),
   belongs to this user, is neither the working folder (nor holds it) nor a mount point, and
   the system can exchange two folders (engine.core.folders: Linux, macOS; not NFS or SMB).
   The new set, plus the folder's other parm files carried over as hard links, is written
   into a sibling folder, the two folders are exchanged in one atomic step, and the old set is
   removed.
3. in place: everything else (`--out .`, a folder holding other files, Windows). Each file is
   written to a temporary file beside its target; then the old manifest is removed, the files
   are renamed into place one by one, and the new manifest is renamed last, with Ctrl+C and
   SIGTERM held until the end (engine.core.signals). Only a kill -9 or a power cut can stop it
   half-way, and then the folder has no manifest that matches, which `read_set` reports.

A whole set (`whole`: every file a run writes, as `parm audit`, `parm export` and a full export
write them) carries nothing over: the folder's parm files of an earlier run that it does not
write (a decisions.csv this run could not write, items.csv of a file with items) go with the
old set, so its manifest names one run. An export of some files (`whole` off: the app's
choice) carries the others over, each with its own run in the manifest.

Files parm did not write are never touched; temporary files and set folders that killed runs
left (by name, and their process no longer runs) are removed before writing.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from engine.core import files
from engine.core.errors import ExportError
from engine.core.folders import exchange
from engine.core.signals import deferred_signals
from engine.outputs.manifest import file_entry, intact, listed, manifest_bytes
from engine.outputs.names import MANIFEST_FILE, SET_FILES

_OWN_NAMES = frozenset(SET_FILES + (MANIFEST_FILE,))


class FolderAppeared(ExportError):
    """The output folder did not exist when the set was begun and another process (another
    parm writing to the same --out) made it before the set could be renamed in."""


def write_set(
    folder: str | Path,
    run_id: str,
    contents: list[tuple[str, str | bytes]],
    on_switched: Callable[[list[Path]], None] | None = None,
    whole: bool = False,
) -> list[Path]:
    """Write the files `contents` ((name, text or bytes), in order) and the manifest into
    `folder` as one set of run `run_id` (see the module docstring); returns their paths.
    whole: the set is every file of its run, and the folder's other parm files go.

    The caller has checked the folder (engine.outputs.write.check_writable). on_switched is
    called with the paths the moment the set is in place, before a signal held during the
    switch is delivered, so a front end can say truthfully what was written.
    """
    folder = Path(folder).expanduser().absolute()
    data = [(name, _encoded(content)) for name, content in contents]
    names = [name for name, _ in data]
    files.refuse_non_regular_targets([folder / name for name in [*names, MANIFEST_FILE]])
    tidy(folder)
    entries = [file_entry(name, raw, run_id) for name, raw in data]
    others = [e for e in listed(folder) if e.name not in names and intact(folder, e)]
    kept, dropped = ([], [e.name for e in others]) if whole else (others, [])
    manifest = manifest_bytes(run_id, entries + kept)
    written = [folder / name for name in names] + [folder / MANIFEST_FILE]
    report = (lambda: on_switched(written)) if on_switched is not None else (lambda: None)
    mode = _mode(folder)
    if mode == "create":
        _create(folder, data, manifest, report)
    elif mode == "in place" or not _exchange(folder, data, manifest, names, report, whole):
        _in_place(folder, data, manifest, report, dropped)
    return written


def dropped_files(folder: str | Path, names: list[str]) -> list[str]:
    """The folder's parm files (those its manifest lists, as written) that a whole set of
    `names` removes."""
    folder = Path(folder).expanduser().absolute()
    return [e.name for e in listed(folder) if e.name not in names and intact(folder, e)]


def _encoded(content: str | bytes) -> bytes:
    # Lone surrogates cannot be encoded; replacing one character beats losing the export.
    return content if isinstance(content, bytes) else content.encode("utf-8", "replace")


# -- the three ways to switch -------------------------------------------------------------------
def _mode(folder: Path) -> str:
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return "create"
    except OSError:
        return "in place"
    return "exchange" if _exchangeable(folder, info) else "in place"


def _exchangeable(folder: Path, info: os.stat_result) -> bool:
    """A real folder of this user's, holding only files a set can hold, that is neither the
    working folder (nor holds it) nor a mount point."""
    if not stat.S_ISDIR(info.st_mode) or not hasattr(os, "geteuid"):
        return False
    try:
        if info.st_uid != os.geteuid() or os.stat(folder.parent).st_dev != info.st_dev:
            return False
        here, real = Path.cwd().resolve(), folder.resolve()
        if real == here or real in here.parents:
            return False
        for entry in os.scandir(folder):
            if entry.name not in _OWN_NAMES or not entry.is_file(follow_symlinks=False):
                return False
    except OSError:
        return False
    return True


def _staging(folder: Path) -> Path:
    """A fresh sibling folder for the new set, with the mode a new folder gets (mkdtemp's is
    private)."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        path = Path(
            tempfile.mkdtemp(
                prefix=f".{folder.name}.parm-{os.getpid()}-", suffix=".set", dir=folder.parent
            )
        )
    except OSError as exc:
        raise ExportError(f"Cannot write to {folder.parent}: {files.reason(exc)}") from None
    try:
        os.chmod(path, 0o777 & ~files._umask())
    except OSError:
        pass
    return path


def _fill(staging: Path, data, manifest: bytes, final: Path) -> None:
    """Write the set into `staging`, each file flushed to disk; errors name the final path."""
    for name, raw in [*data, (MANIFEST_FILE, manifest)]:
        try:
            os.replace(files.stage(staging / name, raw), staging / name)
        except ExportError as exc:
            raise ExportError(str(exc).replace(str(staging), str(final))) from None
        except OSError as exc:
            raise ExportError(f"Could not write {final / name}: {files.reason(exc)}") from None
    files.fsync_folder(staging)


def _create(folder: Path, data, manifest: bytes, report) -> None:
    staging, moved = _staging(folder), False
    try:
        _fill(staging, data, manifest, folder)
        with deferred_signals():
            try:
                os.rename(staging, folder)
            except OSError as exc:
                if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                    raise FolderAppeared(
                        f"{folder} appeared while the outputs were being written (another "
                        "parm?); nothing was written. Run the export again."
                    ) from None
                raise ExportError(f"Could not write {folder}: {files.reason(exc)}") from None
            moved = True
            files.fsync_folder(folder.parent)
            report()
    finally:
        if not moved:
            remove_set_folder(staging)


def _carried(folder: Path, names: list[str]) -> list[str]:
    """The folder's parm files that this export leaves as they are."""
    try:
        present = [entry.name for entry in os.scandir(folder)]
    except OSError:
        return []
    return [n for n in present if n in _OWN_NAMES and n != MANIFEST_FILE and n not in names]


def _exchange(folder: Path, data, manifest: bytes, names: list[str], report, whole) -> bool:
    """The new set in a sibling folder (with the folder's other parm files unless the set is
    whole), exchanged with `folder` in one step; False (nothing changed) when the system or
    file system cannot exchange folders."""
    try:
        staging = _staging(folder)
    except ExportError:
        return False  # the parent cannot be written: the folder itself may still be
    try:
        try:
            os.chmod(staging, stat.S_IMODE(os.stat(folder).st_mode))
        except OSError:
            pass
        for name in [] if whole else _carried(folder, names):
            _link_or_copy(folder / name, staging / name)
        _fill(staging, data, manifest, folder)
        with deferred_signals():
            try:
                swapped = exchange(staging, folder)
            except OSError as exc:
                raise ExportError(f"Could not write {folder}: {files.reason(exc)}") from None
            if swapped:
                files.fsync_folder(folder.parent)
                remove_set_folder(staging)  # now the old set
                report()
        return swapped
    finally:
        remove_set_folder(staging)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target, follow_symlinks=False)
        return
    except OSError:
        pass
    try:
        shutil.copy2(source, target)
    except OSError as exc:
        raise ExportError(f"Could not write {target.parent.parent}: {files.reason(exc)}") from None


def _in_place(folder: Path, data, manifest: bytes, report, dropped: list[str]) -> None:
    """Stage every file beside its target, then, with signals held, rename them in, the
    manifest last; the `dropped` parm files of the earlier set are removed before it."""
    order = [*data, (MANIFEST_FILE, manifest)]
    staged: dict[str, Path] = {}
    done: list[str] = []
    try:
        for name, raw in order:
            staged[name] = files.stage(folder / name, raw)
        with deferred_signals():
            _remove_manifest(folder)
            for name in dropped:  # the old set's: with its manifest gone, no run claims them
                files.remove_quietly(folder / name)
            for name, _ in order:
                try:
                    os.replace(staged[name], folder / name)
                except OSError as exc:
                    raise ExportError(_half_done(folder, name, exc, done)) from None
                done.append(name)
                del staged[name]
            files.fsync_folder(folder)
            report()
    finally:
        for tmp in staged.values():
            files.remove_quietly(tmp)


def _remove_manifest(folder: Path) -> None:
    """From here until the new manifest is in place, the folder claims no run."""
    try:
        os.unlink(folder / MANIFEST_FILE)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ExportError(
            f"Could not replace {folder / MANIFEST_FILE}: {files.reason(exc)}; nothing was written."
        ) from None


def _half_done(folder: Path, name: str, exc: OSError, done: list[str]) -> str:
    if not done:
        return f"Could not write {folder / name}: {files.reason(exc)}; nothing was written."
    return (
        f"Could not write {folder / name}: {files.reason(exc)}. Already replaced: "
        f"{', '.join(done)}; the folder's other files are from an earlier run, and it has no "
        "manifest (parm-manifest.json), so it is not taken for one run. Export again."
    )


# -- tidying -------------------------------------------------------------------------------------
def tidy(folder: Path) -> list[Path]:
    """Remove what killed parm runs left: temporary files in `folder` and set folders beside
    it (by name, and only when the process that made them no longer runs)."""
    removed = files.remove_stale_temporaries(folder, _OWN_NAMES)
    try:
        siblings = list(folder.parent.iterdir())
    except OSError:
        return removed
    for entry in siblings:
        found = files.TEMPORARY.fullmatch(entry.name)
        if found and found["kind"] == "set" and found["name"] == folder.name:
            if files.is_stale_temporary(entry) and remove_set_folder(entry):
                removed.append(entry)
    return removed


def remove_set_folder(path: Path) -> bool:
    """Remove a set folder parm made: its parm files and temporaries, then the folder (left in
    place, with whatever else it holds, when it holds anything else). True when it is gone."""
    try:
        entries = list(os.scandir(path))
    except OSError:
        return False
    for entry in entries:
        ours = entry.name in _OWN_NAMES or files.TEMPORARY.fullmatch(entry.name)
        if ours and entry.is_file(follow_symlinks=False):
            files.remove_quietly(Path(entry.path))
    try:
        os.rmdir(path)
    except OSError:
        return False
    return True
