"""Writing outputs: predictions.csv, tuning.csv, report.json, report.md (and decisions.csv).

Every file is written in full to a temporary file in the same folder before any is renamed into
place, so an interrupted or failed export leaves the previous outputs intact; existing outputs are never overwritten
unless asked. Text cells that a spreadsheet would run as a formula are prefixed with a quote.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import tempfile
from pathlib import Path

from engine.core.errors import ExportError

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
OUTPUT_FILES = ("predictions.csv", "tuning.csv", "report.json", "report.md")


def guard_cell(value):
    """Neutralise a text cell a spreadsheet would evaluate (numbers pass unchanged)."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        try:
            float(value)
            return value
        except ValueError:
            return "'" + value
    return value


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename; errors name the path."""
    atomic_write_files({Path(path): text})


def _stage(path: Path, text: str) -> Path:
    """Write `text` to a temporary file beside `path` (flushed to disk); returns its path."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ExportError(f"Cannot write to {path.parent}: {_reason(exc)}") from None
    try:
        # mkstemp creates 0600 files; outputs are shared, so give them the usual umask mode.
        os.fchmod(fd, 0o666 & ~_umask())
        # Lone surrogates cannot be encoded; replacing one character beats losing the export.
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        _remove(Path(tmp))
        if isinstance(exc, OSError):
            raise ExportError(f"Could not write {path}: {_reason(exc)}") from None
        raise
    return Path(tmp)


def atomic_write_files(files: dict[Path, str]) -> None:
    """Write several files all-or-nothing as far as the file system allows.

    Every file is first written in full to a temporary file beside its target; only when all
    are written are they renamed into place. A failure (full disk, Ctrl+C) before the renames
    leaves every previous file untouched, and no temporary file is left behind.
    """
    staged: dict[Path, Path] = {}
    try:
        for path, text in files.items():
            staged[Path(path)] = _stage(Path(path), text)
        for path, tmp in list(staged.items()):
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise ExportError(f"Could not write {path}: {_reason(exc)}") from None
            del staged[path]
    finally:
        for tmp in staged.values():
            _remove(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full (no space left on device)"
    return exc.strerror or str(exc)


def csv_text(header: list[str], rows) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([guard_cell(v) for v in row])
    return buffer.getvalue()


def json_text(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"


def check_writable(out_dir: Path, names, overwrite: bool) -> None:
    """Refuse to replace existing outputs silently; check the folder can be written.

    The folder is not created here (a run that fails later leaves nothing behind): the
    nearest existing folder is probed by creating and removing a temporary file, which also
    catches read-only file systems that permission bits do not show.
    """
    out_dir = Path(out_dir).expanduser()
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"Output path {out_dir} exists and is not a folder.")
    existing = [n for n in names if (out_dir / n).exists()]
    if existing and not overwrite:
        raise ExportError(
            f"{out_dir} already has {', '.join(existing)}; choose another folder or allow "
            "overwriting (--force in the CLI)."
        )
    probe = out_dir
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise ExportError(f"Cannot create output folder {out_dir}: {probe} is not a folder.")
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        raise ExportError(f"Output folder {out_dir} is not writable: {_reason(exc)}.") from None


def write_outputs(
    result,
    out_dir: str | Path,
    overwrite: bool = False,
    names=OUTPUT_FILES,
    extra: dict[str, str] | None = None,
) -> list[Path]:
    """Write predictions.csv, tuning.csv, report.json and report.md into out_dir.

    names: the subset of OUTPUT_FILES to write (the app's export screen lets users choose);
    extra: more files by name and content (decisions.csv), written in the same all-or-nothing
    batch.
    """
    from engine.outputs import report

    out_dir = Path(out_dir).expanduser()
    unknown = sorted(set(names) - set(OUTPUT_FILES))
    if unknown:
        raise ExportError(
            f"Unknown output file(s) {', '.join(unknown)}; choose from {OUTPUT_FILES}."
        )
    names = [name for name in OUTPUT_FILES if name in names]
    extra = extra or {}
    check_writable(out_dir, names + list(extra), overwrite)
    builders = {
        "predictions.csv": lambda: csv_text(*report.prediction_table(result)),
        "tuning.csv": lambda: csv_text(*report.tuning_table(result)),
        "report.json": lambda: json_text(report.report_dict(result)),
        "report.md": lambda: report.report_markdown(result),
    }
    files = {out_dir / name: builders[name]() for name in names}
    files.update({out_dir / name: text for name, text in extra.items()})
    atomic_write_files(files)
    return list(files)
