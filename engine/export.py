"""Writing outputs: predictions.csv, tuning.csv, report.json, report.md (and decisions.csv).

Every file is written to a temporary file in the same folder and renamed into place, so an
interrupted export leaves the previous file intact; existing outputs are never overwritten
unless asked. Text cells that a spreadsheet would run as a formula are prefixed with a quote.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path

from engine.errors import ExportError

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
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ExportError(f"Cannot write to {path.parent}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ExportError(f"Could not write {path}: {exc.strerror or exc}") from None


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
    """Refuse to replace existing outputs silently; check the folder can be written."""
    out_dir = Path(out_dir).expanduser()
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"Output path {out_dir} exists and is not a folder.")
    existing = [n for n in names if (out_dir / n).exists()]
    if existing and not overwrite:
        raise ExportError(
            f"{out_dir} already has {', '.join(existing)}; choose another folder or allow "
            "overwriting (--force in the CLI)."
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"Cannot create output folder {out_dir}: {exc.strerror or exc}") from None
    if not os.access(out_dir, os.W_OK):
        raise ExportError(f"Output folder {out_dir} is not writable.")


def write_outputs(result, out_dir: str | Path, overwrite: bool = False) -> list[Path]:
    """Write predictions.csv, tuning.csv, report.json and report.md into out_dir."""
    from engine import report

    out_dir = Path(out_dir).expanduser()
    check_writable(out_dir, OUTPUT_FILES, overwrite)
    contents = {
        "predictions.csv": csv_text(*report.prediction_table(result)),
        "tuning.csv": csv_text(*report.tuning_table(result)),
        "report.json": json_text(report.report_dict(result)),
        "report.md": report.report_markdown(result),
    }
    written = []
    for name, text in contents.items():
        atomic_write_text(out_dir / name, text)
        written.append(out_dir / name)
    return written
