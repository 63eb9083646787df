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
}
EXIT_INTERNAL, EXIT_USER, EXIT_INTERRUPTED = 1, 2, 130
SUMMARY_NAMES = {
    "accuracy": "accuracy",
    "kappa": "kappa",
    "qwk": "QWK",
    "near": "near",
    "f1": "macro F1",
    "nll": "NLL",
}


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
    from engine.embedding.precomputed import load_embeddings
    from engine.input.config import build_config
    from engine.input.responses import load_responses
    from engine.outputs.write import OUTPUT_FILES, check_writable, write_outputs
    from engine.pipeline import run_audit

    config = build_config(config_path, overrides, columns)
    responses = load_responses(file, config)
    check_writable(Path(out), OUTPUT_FILES, force)
    vectors = None
    if embeddings_path is not None:
        vectors = load_embeddings(embeddings_path, responses.rows, responses.file_rows)
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
            result = run_audit(responses, config, _Bars(progress), embeddings=vectors)
        except BaseException:
            # A stopped run's half-filled bars would only clutter the one-line message.
            progress.live.transient = True
            raise
    written = write_outputs(result, out, overwrite=force)
    for warning in result.warnings:
        console.print(f"Warning: {warning}", markup=False)
    _summary(console, result, written)
    return 0


def _summary(console: Console, result, written: list[Path]) -> None:
    best = result.selected
    k = "dense" if best.top_k is None else f"K={best.top_k}"
    figures = ", ".join(f"{SUMMARY_NAMES[m]} {v:.3f}" for m, v in best.metrics.items())
    nominal = "" if result.responses.ordered else " (no QWK or near: unordered text labels)"
    console.print(
        f"Selected {k}, p={best.power:.3g} by {result.config.selection_metric}: {figures}"
        f"{nominal}. {int(result.flagged.sum())} of {len(result.responses)} responses flagged.",
        markup=False,
    )
    console.print("Wrote " + ", ".join(str(p) for p in written), markup=False)
