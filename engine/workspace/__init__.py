"""The front door: what a user does with a scoring file, as the calls both front ends make.

`parm audit`, `parm export`, `parm embed`, `parm review import` (parm_tui.headless and its
neighbours) and every screen of the app (through parm_tui.state) drive these and nothing
deeper; they hold no Textual or Rich, and their tests use neither.

    open_file(path, sheet=) -> OpenedFile          read (a workbook's sheet), digest, saved runs
    choose_columns(file, config, given) -> ColumnChoice   named columns as named, the rest guessed
    prepare(file, config) -> Prepared             the file's items under the settings
    open_review(prepared) -> Review               the review's decision store, and what to say
    run(prepared, ...) -> SessionResult           embed (or given vectors), audit every item
    keep(file, result) -> Kept                    the run kept as the file's newest saved run
    reuse(prepared, out) -> Reused | None         a kept run of the same file and settings, restored
    unchanged_set(reused, names, store)           its set in `out` is what writing it would write
    copyable_set(reused, names, store)            that set in the folder last written, to copy
    saved_run(file, run_id) / restore(file, saved) -> (Prepared, SessionResult)
    export(result, out, ...) -> written paths      one output set, the chosen files (FORMATS)
    copy_set(found, out, force, on_switched)       a reused run's set copied as one set
    import_review(store, decisions.csv) -> ImportReport
    add_read(store, review, i, rater, score, kind)  a read typed in the review, kept with it
    todays_lists(result, store) -> Actions         the lead's lists: status, backreads, third reads
    with_added_reads(review, added) -> ReviewSet  the consensus with the typed reads counted
    remember_review_row(saved, row)                where the review stopped, kept with the run
    remember_out_folder(saved, folder)             where the run's outputs went: the next export's
    embed_to(path, out, config, ...)               parm embed: a file's vectors and sidecar
    cache_contents(config) / clear_cache()         parm cache: the embedding cache, emptied
    monitor(session, files, config, out, since) -> Monitored   parm monitor: a live session
    is_session(path), monitor_trends(result), changes_since(result, run_id)   the Monitor screen
    monitor_lists(result, out)                                    the Monitor screen's lists, written

The heavy modules (pandas, numpy, the pipeline, torch) load inside these calls, so a front end
may import the workspace at its top and still start at once. Sits above engine.saved; may import
every engine package.
"""

from __future__ import annotations

from engine.workspace.actions import backread_rows, backread_words, status_by_rater, todays_lists
from engine.workspace.embed import cache_contents, clear_cache, embed_to
from engine.workspace.export import (
    FORMATS,
    OUTPUT_CHOICES,
    OutputChoice,
    check_outputs,
    copy_set,
    export,
    output_names,
    remember_out_folder,
)
from engine.workspace.files import OpenedFile, open_file
from engine.workspace.monitor import (
    Monitored,
    changes_since,
    is_session,
    monitor,
    monitor_lists,
    monitor_trends,
    session_runs,
)
from engine.workspace.prepare import Prepared, choose_columns, prepare, restore, saved_run
from engine.workspace.reuse import Reused, copyable_set, finished_run, reuse, unchanged_set
from engine.workspace.review import (
    Review,
    add_read,
    import_review,
    open_review,
    remember_review_row,
    with_added_reads,
)
from engine.workspace.run import Kept, keep, preload, reused_words, run

__all__ = [
    "FORMATS",
    "OUTPUT_CHOICES",
    "Kept",
    "Monitored",
    "OpenedFile",
    "OutputChoice",
    "Prepared",
    "Review",
    "Reused",
    "add_read",
    "backread_rows",
    "backread_words",
    "cache_contents",
    "status_by_rater",
    "todays_lists",
    "unchanged_set",
    "copyable_set",
    "changes_since",
    "check_outputs",
    "clear_cache",
    "choose_columns",
    "embed_to",
    "export",
    "copy_set",
    "finished_run",
    "import_review",
    "is_session",
    "keep",
    "monitor",
    "monitor_lists",
    "monitor_trends",
    "open_file",
    "reused_words",
    "open_review",
    "output_names",
    "prepare",
    "remember_out_folder",
    "remember_review_row",
    "preload",
    "restore",
    "reuse",
    "run",
    "saved_run",
    "session_runs",
    "with_added_reads",
]
