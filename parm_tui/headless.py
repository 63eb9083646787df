"""`parm audit`: the headless run with a Rich progress bar and calm, one-line errors.

Exit codes: 0 done, 1 internal error (a bug: details go to a log file), 2 a problem the user can
fix (the message names the file, row, column or setting), 130 interrupted or cancelled.
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from engine.core.places import log_dir

STAGE_NAMES = {
    "embedding": "Embedding",
    "neighbours": "Neighbour search",
    "tuning": "Tuning",
    "colbert": "MaxSim scoring",
    "audit": "Audit",
    "items": "Items",
}
EXIT_INTERNAL, EXIT_USER, EXIT_INTERRUPTED = 1, 2, 130


class _Bars:
    """Maps engine progress events onto Rich tasks, one per stage."""

    def __init__(self, progress: Progress):
        self.progress = progress
        self.tasks: dict[str, int] = {}

    def __call__(self, event) -> None:
        if event.stage not in STAGE_NAMES:
            return
        total = event.total if event.total > 0 else None
        if event.stage not in self.tasks:
            self.tasks[event.stage] = self.progress.add_task(STAGE_NAMES[event.stage], total=total)
        self.progress.update(
            self.tasks[event.stage],
            completed=event.done,
            total=total,
            description=f"{STAGE_NAMES[event.stage]}: {event.message}"[:70],
        )


def write_crash_log(exc: BaseException) -> Path | None:
    """Save the traceback of an unexpected error; None when even that is impossible."""
    folder = log_dir()
    path = folder / f"parm-error-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="replace")
    except OSError:
        return None
    return path


def run_headless(file, config_path, columns, overrides, embeddings_path, out, force, quiet) -> int:
    """Run an audit and write its outputs; returns the process exit code (see module doc)."""
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        return _run(
            console, file, config_path, columns, overrides, embeddings_path, out, force, quiet
        )
    except KeyboardInterrupt:
        console.print("Interrupted: no outputs were written.", markup=False)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        from engine.core.errors import Cancelled, ParmError

        if isinstance(exc, Cancelled):
            console.print(f"{exc} No outputs were written.", markup=False)
            return EXIT_INTERRUPTED
        if isinstance(exc, ParmError):
            console.print(f"Error: {exc}", markup=False)
            return EXIT_USER
        log = write_crash_log(exc)
        where = f"details in {log}" if log else "no log could be written"
        console.print(f"Internal error: {type(exc).__name__}: {exc} ({where})", markup=False)
        return EXIT_INTERNAL


def _run(console, file, config_path, columns, overrides, embeddings_path, out, force, quiet):
    # Imports inside the try of run_headless: Ctrl+C during the slow torch import is calm too.
    from engine.embedding.precomputed import load_for_items
    from engine.input.config import build_config
    from engine.input.items import load_items
    from engine.outputs.session import output_files, write_session
    from engine.outputs.write import check_writable
    from engine.session import run_session

    config = build_config(config_path, overrides, columns)
    items = load_items(file, config)
    check_writable(Path(out), output_files(config), force)
    vectors = None
    if embeddings_path is not None:
        vectors = load_for_items(embeddings_path, items)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=quiet,
        transient=False,
    )
    with progress:
        try:
            session = run_session(items, config, _Bars(progress), embeddings=vectors)
        except BaseException:
            # A stopped run's half-filled bars would only clutter the one-line message.
            progress.live.transient = True
            raise
    written = write_session(session, out, overwrite=force)
    for warning in session.warnings:
        console.print(f"Warning: {warning}", markup=False)
    _summary(console, session, written)
    return 0


def _summary(console: Console, session, written: list[Path]) -> None:
    for result in session.results:
        best = result.selected
        m = best.metrics
        k = "dense" if best.top_k is None else f"K={best.top_k}"
        item = "" if not session.by_item else f"Item {result.responses.item}: "
        console.print(
            f"{item}Selected {k}, p={best.power:.3g} by {result.config.selection_metric}: "
            f"accuracy {m['accuracy']:.3f}, kappa {m['kappa']:.3f}, QWK {m['qwk']:.3f}, "
            f"near {m['near']:.3f}, macro F1 {m['f1']:.3f}, NLL {m['nll']:.3f}. "
            f"{int(result.flagged.sum())} of {len(result.responses)} responses flagged.",
            markup=False,
        )
    if session.by_item:
        skipped = len(session.items.skipped)
        console.print(
            f"{len(session.results)} item(s) audited, {skipped} skipped; {session.flagged:,} of "
            f"{session.responses:,} responses flagged.",
            markup=False,
        )
    if session.raters is not None:
        judged = [r for r in session.raters.rows if r.judged]
        console.print(
            f"{len(session.raters.rows)} rater(s), farthest from the rest: "
            + (", ".join(f"{r.rater} ({r.leniency:+.2f} points)" for r in judged[:3]) or "none"),
            markup=False,
        )
    console.print("Wrote " + ", ".join(str(p) for p in written), markup=False)
