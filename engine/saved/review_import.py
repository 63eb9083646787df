"""A colleague's review brought in: the decisions of their decisions.csv (what `parm export`
writes) applied to the same answers of this file, as `parm review import` and the Export
screen do it.

A decision is taken only for the answer it was made on: the same data row, id and text (the
text as decisions.csv wrote it, formula guard included). One on an answer without a decision
here is taken as it was made (its reviewer, time and run); one that makes the same call as the
decision here is already there; one that differs is kept beside it as a conflict, for the lead
to settle in the review (engine.saved.decisions). Rows that cannot be used are skipped with the
reason; nothing is ever applied to another answer. Importing the same file twice changes
nothing the second time.

The reads a colleague typed in their review (decisions.csv's `added_reads`, engine.saved.added_reads)
come in the same way: each for the answer it was typed for, one per rater and answer; a read by a
rater who already has one of that answer here is already there when it gives the same score, else
skipped with the reason (a rater reads an answer once). A row without a decision (action empty)
is there for its reads alone.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from engine.core.errors import ReviewError
from engine.core.files import open_regular, reason
from engine.core.text import safe_text
from engine.outputs.write import guard_cell
from engine.results.added_reads import RESOLUTION, AddedRead
from engine.results.decision import Decision, RunContext
from engine.saved.decisions import DecisionStore

NEEDED = ("row", "id", "text", "action", "new_score", "note", "decided_at")
# decisions.csv is one row per decision: a file far larger than this is not one.
MAX_BYTES = 512 * 1024 * 1024


@dataclass
class ImportReport:
    """What an import did: decisions taken, already there, kept as conflicts, and the rows
    skipped with why (csv line number, reason)."""

    source: str
    taken: int = 0
    already: int = 0
    conflicting: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)
    # Reads typed in their review: taken, and already here.
    reads_taken: int = 0
    reads_already: int = 0

    def sentence(self) -> str:
        total = self.taken + self.already + self.conflicting + len(self.skipped)
        parts = [f"{self.taken} taken", f"{self.already} already here"]
        if self.conflicting:
            parts.append(
                f"{self.conflicting} conflicting (kept beside the decision made here; settle "
                "them in the review)"
            )
        if self.skipped:
            first = "; ".join(f"line {line}: {why}" for line, why in self.skipped[:3])
            more = f"; and {len(self.skipped) - 3} more" if len(self.skipped) > 3 else ""
            parts.append(f"{len(self.skipped)} skipped ({first}{more})")
        reads = ""
        if self.reads_taken or self.reads_already:
            reads = (f" Reads typed in the review: {self.reads_taken} taken, "
                     f"{self.reads_already} already here.")  # fmt: skip
        return f"{total} decision(s) in {self.source}: {', '.join(parts)}.{reads}"


def import_decisions(store: DecisionStore, path: str | Path) -> ImportReport:
    """Apply the decisions of the decisions.csv at `path` to the store's answers."""
    path = Path(path).expanduser()
    report = ImportReport(str(path))
    for line, cells in _rows(path):
        typed = bool(_unguard(cells.get("added_reads", "")))
        steps = [_import_reads] if typed else []
        if _unguard(cells["action"]) or not typed:  # else a row for its typed reads alone
            steps.append(_import_one)
        for step in steps:
            try:
                step(store, cells, path, report)
            except _Skip as skip:
                report.skipped.append((line, str(skip)))
    return report


class _Skip(Exception):
    """A row of decisions.csv that cannot be applied, and why."""


def _rows(path: Path):
    """(line number, {column: cell}) of decisions.csv; ReviewError when it is not one."""
    with open_regular(path, "Decisions file", ReviewError) as handle:
        if os.fstat(handle.fileno()).st_size > MAX_BYTES:
            raise ReviewError(f"{path} is too large to be a decisions.csv.")
        try:
            text = handle.read().decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise ReviewError(f"Decisions file {path} cannot be read: {reason(exc)}") from None
    # Quoted cells may hold line breaks (a note, an answer): the csv module reads them whole.
    reader = csv.reader(io.StringIO(text, newline=""))
    columns = [_unguard(c) for c in next(reader, [])]
    missing = [c for c in NEEDED if c not in columns]
    if missing:
        raise ReviewError(
            f"{path} is not a decisions.csv written by parm export: it has no "
            f"{', '.join(missing)} column(s)."
        )
    while True:
        start = reader.line_num + 1  # a record's first line (its cells may span several)
        cells = next(reader, None)
        if cells is None:
            return
        yield start, dict(zip(columns, cells + [""] * (len(columns) - len(cells))))


def _unguard(cell: str) -> str:
    """A cell as it was before decisions.csv guarded it against spreadsheet formulas."""
    if cell.startswith("'") and guard_cell(cell[1:]) == cell:
        return cell[1:]
    return cell


def _import_one(store: DecisionStore, cells: dict, path: Path, report: ImportReport) -> None:
    decision, text = _decision(store, cells)
    here = store.get(decision.row)
    if here is None:
        store.adopt(decision, text)
        report.taken += 1
    elif here.same_call(decision) or store.known_conflict(decision):
        report.already += 1
    else:
        store.add_conflict(decision, text, str(path))
        report.conflicting += 1


def _answer(store: DecisionStore, cells: dict) -> tuple[int, str, str]:
    """The row, id and text of the answer a row of decisions.csv is about; _Skip when it is not
    this file's answer at that row."""
    try:
        row = int(_unguard(cells["row"]))
        i = store.position(row)
    except (ValueError, ReviewError):
        raise _Skip(f"row {safe_text(cells['row'])[:20]!r} is not an answer of this file") from None
    text = store.responses.texts[i]
    response_id = _unguard(cells["id"])
    if response_id != store.responses.ids[i] or guard_cell(text) != cells["text"]:
        raise _Skip(f"the answer at row {row} is not the one decided on (its id or text changed)")
    return row, response_id, text


def _import_reads(store: DecisionStore, cells: dict, path: Path, report: ImportReport) -> None:
    """The reads typed in their review of this row's answer (module docstring)."""
    row, response_id, text = _answer(store, cells)
    try:
        reads = json.loads(_unguard(cells["added_reads"]))
        reads = [(safe_text(str(r["rater"])).strip(), str(r["score"]), safe_text(str(r["added_at"])),
                  safe_text(str(r.get("reviewer", ""))), str(r.get("kind", RESOLUTION)))
                 for r in reads]  # fmt: skip
    except (ValueError, TypeError, KeyError):
        raise _Skip(f"row {row}: its added_reads cell is not parm's list of reads") from None
    here = {read.rater: read for read in store.added_reads() if read.row == row}
    for rater, score, added_at, reviewer, kind in reads:
        if rater in here:
            if here[rater].score != score:
                raise _Skip(f"row {row}: rater '{rater}' already has a read of this answer here "
                            f"({here[rater].score}, theirs {score}); a rater reads an answer once")  # fmt: skip
            report.reads_already += 1
            continue
        try:
            read = AddedRead(row, response_id, rater, score, added_at, reviewer, kind)
            store.reads.restore(read, text)
        except ReviewError as exc:
            raise _Skip(str(exc)) from None
        report.reads_taken += 1


def _decision(store: DecisionStore, cells: dict) -> tuple[Decision, str]:
    """The decision of one row and the text of the answer it is for; _Skip when it does not
    apply to this file's answer at that row."""
    row, response_id, text = _answer(store, cells)
    action, new_score = _unguard(cells["action"]), _unguard(cells["new_score"]) or None
    try:
        store.check(row, response_id, text, action, new_score)
    except ReviewError as exc:
        raise _Skip(str(exc)) from None
    decision = Decision(
        row=row,
        response_id=response_id,
        action=action,
        new_score=new_score,
        note=safe_text(_unguard(cells["note"])),
        decided_at=safe_text(_unguard(cells["decided_at"])),
        context=_context(cells),
        reviewer=safe_text(_unguard(cells.get("reviewer", ""))),
    )
    return decision, text


def _context(cells: dict) -> RunContext | None:
    """The run the decision was made on, when decisions.csv says."""
    run = _unguard(cells.get("decided_run_id", ""))
    if not run:
        return None
    try:
        severity = float(_unguard(cells.get("decided_severity", "")))
    except ValueError:
        return None
    return RunContext(
        run,
        _unguard(cells.get("decided_settings", "")),
        _unguard(cells.get("decided_predicted", "")),
        severity,
    )
