"""`parm audit`: the headless run with a Rich progress bar and calm, one-line errors.

Exit codes: 0 done, 1 internal error (a bug: details go to a log file), 2 a problem the user can
fix (the message names the file, row, column or setting), 130 interrupted (Ctrl+C) or cancelled,
143 terminated (SIGTERM). Everything printed goes through engine.core.text.safe_text and never
through Rich markup, since messages quote answers, column names, paths and model names.
"""

from __future__ import annotations

import signal
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from engine.core.crash_log import write_crash_log
from engine.core.metric_names import METRIC
from engine.core.progress import CLUSTER, STAGES
from engine.core.text import safe_text

EXIT_INTERNAL, EXIT_USER, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 130, 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl+C raises KeyboardInterrupt, so every cleanup
    that runs for Ctrl+C (staged outputs, cache files) runs for it too."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated


def say(console: Console, text: str) -> None:
    """Print one message: plain text (no markup), control characters replaced."""
    console.print(safe_text(text), markup=False, highlight=False)


class StageBars:
    """Maps engine progress events onto Rich tasks, one per stage; the cluster a run uses (its
    workers and dashboard) is also printed as a line of its own, above the bars."""

    def __init__(self, progress: Progress):
        self.progress = progress
        self.tasks: dict[str, int] = {}

    def __call__(self, event) -> None:
        stage = STAGES.get(event.stage)
        if stage is None:
            return
        if event.stage == CLUSTER and event.payload is not None:
            self.progress.console.print(
                safe_text(f"Dask cluster: {event.message}", one_line=True),
                markup=False,
                highlight=False,
            )
        total = event.total if event.total > 0 else None
        if event.stage not in self.tasks:
            self.tasks[event.stage] = self.progress.add_task(stage.description, total=total)
        description = safe_text(f"{stage.description}: {event.message}", one_line=True)
        self.progress.update(
            self.tasks[event.stage],
            completed=event.done,
            total=total,
            description=description[:70],
        )


def progress_bars(console: Console, quiet: bool) -> Progress:
    """The run's progress display; descriptions are plain text (markup=False), since they quote
    the model's name, which may hold "[/]"."""
    return Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=quiet,
        transient=False,
    )


def run_headless(
    file, config_path, columns, overrides, embeddings_path, out, force, quiet, guess=True
) -> int:
    """Run an audit and write its outputs; returns the process exit code (see module doc).
    guess: choose the columns not named on the command line as the app's Load screen does."""

    def action(console, written):
        return _run(
            console, file, config_path, columns, overrides, embeddings_path, out, force, quiet,
            written, guess,
        )  # fmt: skip

    return guarded(action)


def run_export(file, out, force, run_id=None) -> int:
    """`parm export`: write the saved run of `file` (its results and the review's decisions),
    running and embedding nothing; returns the process exit code."""
    return guarded(lambda console, written: _export(console, file, out, force, run_id, written))


def guarded(action) -> int:
    """Run `action(console, written)` with calm one-line errors and signals handled; `written`
    collects the output set's files once they are in place."""
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    # The output set's files once it is in place: a signal after that must not claim that
    # nothing was written (a signal during the switch is held until the switch is done).
    written: list[Path] = []
    previous = _handle_sigterm(_raise_terminated)
    try:
        return action(console, written)
    except Terminated:
        say(console, stopped("Terminated", written))
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        say(console, stopped("Interrupted", written))
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        from engine.core.errors import Cancelled, ParmError

        if isinstance(exc, Cancelled):
            say(console, f"{exc} No outputs were written.")
            return EXIT_INTERRUPTED
        if isinstance(exc, ParmError):
            say(console, f"Error: {exc}")
            return EXIT_USER
        log, problem = write_crash_log(exc)
        where = f"details in {log}" if log else f"no log could be written: {problem}"
        say(console, f"Internal error: {type(exc).__name__}: {exc} ({where})")
        return EXIT_INTERNAL
    finally:
        _handle_sigterm(previous)


def stopped(how: str, written: list[Path]) -> str:
    """The line for a run stopped by a signal, true to what is on disk."""
    if not written:
        return f"{how}: no outputs were written."
    folder = written[0].parent
    names = ", ".join(path.name for path in written)
    return f"{how} after the outputs were written: {folder} has the new {names}."


def _handle_sigterm(handler):
    """Install a SIGTERM handler; returns the previous one (None where signals cannot be set:
    outside the main thread, or on a platform without SIGTERM)."""
    if handler is None:
        return None
    try:
        return signal.signal(signal.SIGTERM, handler)
    except (ValueError, AttributeError, OSError):
        return None


def _run(
    console, file, config_path, columns, overrides, embeddings_path, out, force, quiet, written,
    guess,
):  # fmt: skip
    # Imports inside the guard of run_headless: Ctrl+C during the slow torch import is calm too.
    from engine.embedding.loading import preload_for
    from engine.embedding.precomputed import load_for_items
    from engine.input.config import build_config
    from engine.input.items import split_items
    from engine.input.table import read_table
    from engine.session import run_session

    config = build_config(config_path, overrides, columns)
    path = Path(file).expanduser()
    frame = read_table(path)
    if guess:
        config = _guessed(console, frame, config, columns, overrides)
    items = split_items(frame, config, source=str(path))
    # Warnings about the file (a fallback encoding, replaced characters) come at once, so a
    # wrong file can be stopped before a long run; the others come after the run.
    for warning in items.warnings:
        say(console, f"Warning: {warning}")
    store = _decision_store(console, path, items, config)
    _check_out(out, config, store, force)
    # The model (if a cache miss needs it) starts loading now, in the background.
    preload_for(items, config, precomputed=embeddings_path is not None)
    vectors = None
    if embeddings_path is not None:
        vectors = load_for_items(embeddings_path, items, config.text_column)
    progress = progress_bars(console, quiet)
    with progress:
        try:
            session = run_session(items, config, StageBars(progress), embeddings=vectors)
        except BaseException:
            # A stopped run's half-filled bars would only clutter the one-line message.
            progress.live.transient = True
            raise
    _keep(console, session, path, frame)
    _write(session, out, force, written, store, frame)
    for warning in session.warnings:
        if warning not in items.warnings:
            say(console, f"Warning: {warning}")
    _summary(console, session, written)
    return 0


def _guessed(console, frame, config, columns, overrides):
    """The settings with the columns chosen as the app's Load screen chooses them: those named
    on the command line (a column flag or --set) as named, the others from the settings where
    the file has them and guessed where it does not; one line says what was guessed."""
    from engine.input.column_guess import COLUMN_KEYS, choose_columns

    given = {key for key, value in columns.items() if key in COLUMN_KEYS and value is not None}
    given |= {item.partition("=")[0].strip() for item in overrides}
    choice = choose_columns(frame, config, given)
    sentence = choice.sentence()
    if sentence is None:
        return config
    say(console, sentence + " (--no-guess turns guessing off.)")
    return config.updated(**choice.columns)


def _decision_store(console, path: Path, items, config):
    """The file's decision store, as the app opens it, so a run reports the decisions made in
    the app; None, with a warning, when it cannot be opened."""
    from engine.core.errors import ParmError
    from engine.saved.decisions import open_store
    from parm_tui.state import pooled

    responses, on_scale = pooled(items, config)
    try:
        store = open_store(path, responses, on_scale=on_scale)
    except (ParmError, OSError) as exc:
        say(console, f"Warning: the review's decisions cannot be read: {exc}")
        return None
    if store.stale:
        say(console, f"Warning: {store.stale_message()}")
    return store


def _check_out(out, config, store, force) -> None:
    from engine.core.errors import OutputsExist
    from engine.outputs.names import DECISIONS_FILE
    from engine.outputs.session import output_files
    from engine.outputs.write import check_writable

    names = [n for n in output_files(config) if store is not None or n != DECISIONS_FILE]
    try:
        check_writable(Path(out), names, force)
    except OutputsExist as exc:  # the engine's message names no flag: here it is --force
        raise OutputsExist(
            f"{exc.folder} already has {', '.join(exc.names)}; choose another folder with --out, "
            "or add --force to replace them.",
            exc.folder,
            exc.names,
        ) from None


def _keep(console, session, path: Path, frame) -> None:
    """Save the run as the file's session, as the app does, so the app resumes it and
    `parm export` writes it again."""
    from engine.core.files import file_digest
    from parm_tui.state import LoadedFile, keep_session

    try:
        digest = file_digest(path)
    except OSError as exc:
        say(console, f"Warning: the run could not be kept for the app: {exc.strerror or exc}")
        return
    _, _, problem = keep_session(session, LoadedFile(path, digest, frame))
    if problem is not None:
        say(console, f"Warning: {problem}")


def _write(session, out, force, written, store, frame) -> None:
    from engine.outputs.session import write_session

    try:
        write_session(
            session, out, overwrite=force, on_switched=written.extend, store=store, table=frame
        )
    finally:
        if store is not None:
            store.close()


def _export(console, file, out, force, run_id, written) -> int:
    from engine.core.errors import ParmError, ResumeError
    from engine.core.files import file_digest
    from engine.input.items import split_items
    from engine.input.table import read_table
    from engine.saved.store import find_run, find_session, restore_session

    path = Path(file).expanduser()
    frame = read_table(path)
    for warning in frame.attrs.get("warnings", ()):
        say(console, f"Warning: {warning}")
    try:
        digest = file_digest(path)
    except OSError as exc:
        raise ResumeError(f"File {path} cannot be read: {exc.strerror or exc}") from None
    # The newest run, or the one asked for (ResumeError naming the runs that are kept).
    saved = find_session(digest) if run_id is None else find_run(digest, run_id)
    if saved is None:
        raise ResumeError(
            f"{path} has no saved audit (with these exact contents): audit it first with "
            f"`parm audit {path}` or in the app; parm export writes a saved run again."
        )
    config = saved.config()
    try:
        items = split_items(frame, config, source=str(path))
    except ParmError as exc:
        raise ResumeError(f"The saved run's columns no longer fit {path}: {exc}") from None
    session = restore_session(saved, items, config)
    store = _decision_store(console, path, items, config)
    _check_out(out, config, store, force)
    decisions = None if store is None else store.all()
    _write(session, out, force, written, store, frame)
    say(console, f"Exported run {session.run_id} of {path} (saved {saved.saved_at}), nothing "
        f"run again; {_decided(session, decisions)}")  # fmt: skip
    say(console, "Wrote " + ", ".join(str(p) for p in written))
    return 0


def _decided(session, decisions) -> str:
    """'9 decisions, 6 scores changed.' or why there is no review yet."""
    from engine.outputs.review_summary import NO_REVIEW, review_summary

    review = review_summary(session, decisions)
    if review["status"] == NO_REVIEW:
        return f"no review yet: {review['why']}."
    n, changed = review["decisions"], review["scores_changed"]
    return f"{n} decision{'' if n == 1 else 's'}, {changed} score{'' if changed == 1 else 's'} changed."


def _summary(console: Console, session, written: list[Path]) -> None:
    for result in session.results:
        best = result.selected
        k = "dense" if best.top_k is None else f"K={best.top_k}"
        item = "" if not session.by_item else f"Item {result.responses.item}: "
        figures = ", ".join(f"{METRIC[m].word} {v:.3f}" for m, v in best.metrics.items())
        nominal = "" if result.responses.ordered else " (no QWK or near: unordered text labels)"
        say(
            console,
            f"{item}Selected {k}, p={best.power:.3g} by {result.config.selection_metric}: "
            f"{figures}{nominal}. {int(result.flagged.sum())} of {len(result.responses)} "
            "responses flagged.",
        )
    if session.by_item:
        skipped = len(session.items.skipped)
        say(
            console,
            f"{len(session.results)} item(s) audited, {skipped} skipped; {int(session.flagged.sum()):,} of "
            f"{session.n_responses:,} responses flagged.",
        )
    if session.raters is not None:
        judged = [r for r in session.raters.rows if r.judged]
        farthest = ", ".join(
            r.rater
            if r.leniency is None
            else f"{r.rater} ({r.leniency:+.2f} points)"  # None: unordered labels
            for r in judged[:3]
        )
        say(
            console,
            f"{len(session.raters.rows)} rater(s), farthest from the rest: {farthest or 'none'}",
        )
        words = [f"{r.rater}: {r.verdict}" for r in judged if r.verdict != "fine"]
        say(console, "Raters who need a word: " + ("; ".join(words) or "none"))
    say(console, "Wrote " + ", ".join(str(p) for p in written))
