"""Writing outputs: predictions.csv, tuning.csv, report.json, report.md and decisions.csv.

All files of one export are one output set (engine.outputs.sets): each names its run, a manifest
comes last, and the set is switched into place as a whole, so an interrupted or failed export
leaves the previous outputs intact and a reader never takes a mix of runs for one; existing
outputs are never overwritten unless asked, and a target that is a folder stops the export
before anything is written. Every CSV field is quoted, and text cells that a spreadsheet would
run as a formula are prefixed with a quote.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
from pathlib import Path

from engine.core.errors import ExportError, OutputsExist
from engine.core.files import reason, refuse_non_regular_targets
from engine.outputs import tables
from engine.outputs.names import DECISIONS_FILE, MANIFEST_FILE, OUTPUT_FILES
from engine.outputs.report import report_json
from engine.outputs.report.report_md import session_markdown
from engine.outputs.sets import FolderAppeared, dropped_files, write_set
from engine.results.decision import Decisions
from engine.results.item import AuditResult
from engine.results.session import single_item_session

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\x00")
# What a spreadsheet may skip before it decides a cell is a formula: blanks, and quote
# characters around a cell whose own quotes were escaped by the csv module.
_SKIPPED_LEAD = " \t\r\n\"'"
# The first characters after which a cell may still be read as a formula.
_LEADS = frozenset(FORMULA_PREFIXES + tuple(_SKIPPED_LEAD))
# A plain decimal number (not "inf", "nan" or "1_000", which float() also accepts).
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
# Characters json.dumps leaves raw that a terminal acts on (it escapes C0 itself).
_JSON_RAW_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
RUN_COLUMN = "run_id"


def guard_cell(value):
    """Neutralise a text cell a spreadsheet would evaluate: one that starts with = + - @ tab,
    carriage return or NUL, also after leading blanks or quote characters, gets a leading `'`.

    Numbers stay numbers: a cell that is a plain decimal number ("-0.250000", "+1", "1e-3") is
    left as it is, because a spreadsheet reads it as that number, not as a formula. A formula
    after a newline inside a cell stays text: the csv module quotes the cell, so a spreadsheet
    keeps it as one cell and never evaluates its second line.
    """
    if not isinstance(value, str) or value[:1] not in _LEADS:
        return value  # most cells: no character a formula or a skipped lead begins with
    if value.startswith(FORMULA_PREFIXES) or value.lstrip(_SKIPPED_LEAD).startswith(
        FORMULA_PREFIXES
    ):
        return value if _NUMBER.fullmatch(value) else "'" + value
    return value


def csv_text(header: list[str], rows) -> str:
    """A CSV with every field quoted (csv.QUOTE_ALL) and every cell and header name guarded, so
    no field can end early, spill into the next column or run as a formula."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(list(map(guard_cell, header)))
    writer.writerows(list(map(guard_cell, row)) for row in rows)
    return buffer.getvalue()


def run_csv(table: tuple[list[str], list[list]], run_id: str) -> str:
    """A CSV of (header, rows) with a last column, run_id, naming the run on every row, so a
    file copied out of its folder still says which run it belongs to."""
    header, rows = table
    return csv_text([*header, RUN_COLUMN], [[*row, run_id] for row in rows])


def json_text(data: dict) -> str:
    """Indented JSON, readable text kept; DEL, C1 controls and bidi overrides, which JSON allows
    raw inside strings, are written as \\u escapes (the same string, inert in a terminal)."""
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=str)
    return _JSON_RAW_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def check_writable(out_dir: Path, names, overwrite: bool) -> None:
    """Refuse to replace existing outputs silently; check the folder can be written.

    The folder is not created here (a run that fails later leaves nothing behind): the
    nearest existing folder is probed by creating and removing a temporary file, which also
    catches read-only file systems that permission bits do not show.
    """
    out_dir = Path(out_dir).expanduser()
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"Output path {out_dir} exists and is not a folder.")
    # Every target is checked before anything is written, so no export stops half-way on one.
    refuse_non_regular_targets([out_dir / n for n in [*names, MANIFEST_FILE]])
    existing = [n for n in names if (out_dir / n).exists()]
    if existing and not overwrite:
        raise OutputsExist(
            f"{out_dir} already has {', '.join(existing)}; choose another folder or allow "
            "replacing them.",
            out_dir,
            existing,
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
        raise ExportError(f"Output folder {out_dir} is not writable: {reason(exc)}.") from None


def write_files(
    out_dir: str | Path,
    run_id: str,
    contents: list[tuple[str, str | bytes]],
    overwrite: bool = False,
    on_switched=None,
    whole: bool = False,
) -> list[Path]:
    """Check the folder, then write `contents` ((name, text), in order) as one output set of
    run `run_id` (engine.outputs.sets.write_set); returns the paths, the manifest last.
    whole: every file of the run, so the folder's parm files of another run go (replacing them
    needs `overwrite` as much as replacing the files written)."""
    out_dir = Path(out_dir).expanduser()
    names = [name for name, _ in contents]
    gone = dropped_files(out_dir, names) if whole else []
    check_writable(out_dir, names + gone, overwrite)
    try:
        return write_set(out_dir, run_id, contents, on_switched, whole)
    except FolderAppeared:
        if not overwrite:  # another run's outputs are there now: replaced only when allowed
            raise
    # Another parm made the folder meanwhile (two runs into one new --out): switch with it.
    return write_set(out_dir, run_id, contents, on_switched, whole)


def write_outputs(
    result: AuditResult,
    out_dir: str | Path,
    overwrite: bool = False,
    names=OUTPUT_FILES,
    extra: dict[str, str] | None = None,
    on_switched=None,
) -> list[Path]:
    """Write predictions.csv, tuning.csv, report.json and report.md into out_dir.

    names: the subset of OUTPUT_FILES to write (the app's export screen lets users choose);
    extra: more files by name and content (decisions.csv), written in the same set.
    """
    unknown = sorted(set(names) - set(OUTPUT_FILES))
    if unknown:
        raise ExportError(
            f"Unknown output file(s) {', '.join(unknown)}; choose from {OUTPUT_FILES}."
        )
    run_id = result.run_id
    # One audit written on its own has no decision store: its reports say so, as a session's do
    # (a session's reports are made with no decisions: review_summary's NO_STORE).
    builders = {
        "predictions.csv": lambda: run_csv(tables.prediction_table(result), run_id),
        "tuning.csv": lambda: run_csv(tables.tuning_table(result), run_id),
        "report.json": lambda: json_text(report_json.session_dict(single_item_session(result))),
        # As a session of one item writes it: what the lead concludes first.
        "report.md": lambda: session_markdown(single_item_session(result)),
    }
    contents: list[tuple[str, str | bytes]] = [
        (name, builders[name]()) for name in OUTPUT_FILES if name in names
    ]
    contents += list((extra or {}).items())
    return write_files(out_dir, run_id, contents, overwrite, on_switched)


def decisions_csv(store: Decisions, result: AuditResult) -> str:
    """The text of decisions.csv (formula cells guarded, the exported run in run_id)."""
    return run_csv(tables.decisions_table(store, result), result.run_id)


def write_decisions(
    store: Decisions, result: AuditResult, out_dir: str | Path, overwrite: bool = False
) -> Path:
    """Write decisions.csv into out_dir (never replacing an existing one unless asked)."""
    written = write_files(
        out_dir, result.run_id, [(DECISIONS_FILE, decisions_csv(store, result))], overwrite
    )
    return written[0]
