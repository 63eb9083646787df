"""Exporting a run: the files a run can write (the choices an export offers, from
engine.outputs.names), checking the folder first, and writing the chosen ones as one output set
(engine.outputs.sets: nothing half-written, no set mixing runs); a reused run's set copied from
the folder it was last written to (`copy_set`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.outputs.names import (
    BOTH,
    CSV,
    DECISIONS_FILE,
    OUTPUT_GROUPS,
    REVIEWED_FILE,
    TABLE_FORMATS,
    OutputGroup,
)

if TYPE_CHECKING:
    import pandas as pd

    from engine.input.settings.config import AuditConfig
    from engine.outputs.manifest import OutputSet
    from engine.results.decision import Decisions
    from engine.results.session import SessionResult
    from engine.saved.store import SavedSession

OutputChoice = OutputGroup
OUTPUT_CHOICES = OUTPUT_GROUPS
# How a set holds its tables (csv, xlsx, both): `parm audit --format` and `parm export --format`.
FORMATS = TABLE_FORMATS


def output_names(
    config: AuditConfig,
    with_decisions: bool = True,
    with_table: bool = True,
    table_format: str = CSV,
) -> list[str]:
    """The files a run with these settings writes, in the order they are written: without a
    decision store no decisions.csv, without the input table no scores_reviewed.csv; its
    tables as CSV files, in results.xlsx ("xlsx") or both (engine.outputs.names)."""
    from engine.outputs.session import output_files

    left_out = set() if with_decisions else {DECISIONS_FILE}
    left_out |= set() if with_table else {REVIEWED_FILE}
    return [name for name in output_files(config, table_format) if name not in left_out]


def offered(config: AuditConfig) -> list[OutputGroup]:
    """The choices an export of a run with these settings offers (items.csv only with an item
    column, the rater files only with a rater column)."""
    names = set(output_names(config, table_format=BOTH))
    return [group for group in OUTPUT_GROUPS if set(group.files) <= names]


def check_outputs(out: str | Path, names: list[str], force: bool = False) -> None:
    """OutputsExist (naming the files) when `out` holds some of `names` and `force` is off;
    ExportError when the folder cannot take them."""
    from engine.outputs.write import check_writable

    check_writable(Path(out), names, force)


def export(
    result: SessionResult,
    out: str | Path,
    names: list[str] | None = None,
    decisions: Decisions | None = None,
    table: pd.DataFrame | None = None,
    force: bool = False,
    on_switched: Callable[[list[Path]], None] | None = None,
    warnings: Sequence[str] = (),
    table_format: str = CSV,
) -> list[Path]:
    """Write the chosen files of `result` (all it can write by default) into `out` as one output
    set: reports with the review's `decisions`, scores_reviewed.csv from `table` (the input file
    as read); the reads typed in the review count in the consensus (engine.results.added_reads).
    on_switched: told the paths the moment the set is in place. warnings: the run's warnings
    found around it (a review that could not be opened, a run that could not be kept), kept
    with the others in warnings.txt and the reports. table_format: the tables as CSV files,
    in results.xlsx, or both (engine.outputs.names; `names` lists the files otherwise).
    ParmError subclasses name the file or folder."""
    from engine.core.machine.collector import new_objects_only
    from engine.core.run_warnings import RunWarning
    from engine.outputs.session import write_session
    from engine.results.added_reads import session_with_added

    if decisions is not None:
        result = session_with_added(result, decisions.added_reads())
    if warnings:
        added = [
            RunWarning.about(w) for w in warnings if RunWarning.about(w) not in result.warnings
        ]
        result = dataclasses.replace(result, warnings=[*result.warnings, *added])

    with new_objects_only():  # engine.core.machine.collector: the tables' rows
        return write_session(
            result,
            out,
            overwrite=force,
            names=names,
            on_switched=on_switched,
            store=decisions,
            table=table,
            table_format=table_format,
        )


def copy_set(found: OutputSet, out: str | Path, force: bool = False,
             on_switched: Callable[[list[Path]], None] | None = None) -> list[Path] | None:  # fmt: skip
    """The output set `found` (engine.workspace.reuse.copyable_set: what writing its run now
    would write) put into `out` as one set of its run, each file's bytes checked against the
    manifest as read; returns the paths written, the manifest last, or None, with nothing
    written, when a file is gone or changed since it was checked (the caller writes the set)."""
    import hashlib

    from engine.outputs.write import write_files

    assert found.run_id is not None  # copyable_set gives only whole sets of one run
    contents: list[tuple[str, str | bytes]] = []
    for entry in found.files:
        try:
            raw = (found.folder / entry.name).read_bytes()
        except OSError:
            return None
        if hashlib.sha256(raw).hexdigest() != entry.sha256:
            return None
        contents.append((entry.name, raw))
    return write_files(out, found.run_id, contents, force, on_switched, whole=True)


def remember_out_folder(saved: SavedSession, folder: str | Path) -> SavedSession:
    """Keep the folder this saved run's outputs were written to (`parm audit --out`, an
    export): the folder the app's Export offers next. The run as now saved (ResumeError when
    it cannot be written: only the offer is lost)."""
    from engine.saved.store import save_out_folder

    return save_out_folder(saved, folder)
