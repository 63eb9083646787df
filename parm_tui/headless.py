"""`parm audit`, `parm export` and `parm review import`: the headless commands over the
workspace (engine.workspace), with a Rich progress bar and calm, one-line errors.

Exit codes: 0 done, 1 internal error (a bug: details go to a log file), 2 a problem the user can
fix (the message names the file, row, column or setting), 130 interrupted (Ctrl+C) or cancelled,
143 terminated (SIGTERM). Everything printed goes through engine.core.text.safe_text and never
through Rich markup, since messages quote answers, column names, paths and model names.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Column

from engine import workspace
from engine.core.crash_log import write_crash_log
from engine.core.errors import Cancelled, DataError, OutputsExist, ParmError
from engine.core.numbers import signed
from engine.core.progress import CLUSTER, STAGES
from engine.core.run_warnings import summary_lines
from engine.core.text import safe_text
from engine.workspace.settings import CHOSEN_KEYS, build_config, unused_columns

EXIT_INTERNAL, EXIT_USER, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 130, 143
# Every exit code with what it means, for the reference (docs/reference/exit-codes.md).
EXIT_CODES = (
    (0, "done"),
    (EXIT_INTERNAL, "an internal error (a bug): `Internal error: ...` and the details in a log file"),
    (EXIT_USER, "a problem with the input or the settings that you can fix: `Error: ...` names "
     "the file, row, column or setting"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl+C) or cancelled"),
    (EXIT_TERMINATED, "terminated (SIGTERM)"),
)  # fmt: skip


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

    def __init__(self, progress: Progress, quiet: bool = False):
        self.progress = progress
        self.quiet = quiet
        self.tasks: dict[str, int] = {}

    def __call__(self, event) -> None:
        stage = STAGES.get(event.stage)
        if stage is None:
            return
        if event.stage == CLUSTER and event.payload is not None and not self.quiet:
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
    the model's name, which may hold "[/]". The description takes what the bar, the counts and
    the time leave and is cut with an ellipsis, so at 80 columns the counts and the time stay
    whole."""
    description = Column(ratio=1, no_wrap=True, overflow="ellipsis", min_width=20)
    return Progress(
        TextColumn("{task.description}", markup=False, table_column=description),
        BarColumn(bar_width=12),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=quiet,
        transient=False,
        expand=True,  # the description's ratio applies: it gives way, the other columns do not
    )


@dataclass(frozen=True, kw_only=True)
class AuditRequest:
    """What `parm audit` was asked: the file, the settings (a --config file, the column flags,
    --set), given vectors, where to write, and whether to guess the columns not named."""

    file: Path
    config_path: Path | None = None
    columns: dict = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    embeddings: Path | None = None
    out: Path = Path("parm-out")
    force: bool = False
    quiet: bool = False
    guess: bool = True
    table_format: str = "csv"
    rerun: bool = False


def run_headless(request: AuditRequest) -> int:
    """Run an audit and write its outputs; returns the process exit code (see module doc)."""
    return guarded(lambda console, written: _run(console, request, written))


def run_export(file, out, force, run_id=None, table_format="csv") -> int:
    """`parm export`: write the saved run of `file` (its results and the review's decisions),
    running and embedding nothing, its tables as CSV files, a workbook or both; returns the
    process exit code."""
    return guarded(
        lambda console, written: _export(
            console, file, out, force, run_id, written, _format(table_format)
        )
    )


def _format(table_format: str) -> str:
    """The table format as given (csv, xlsx or both, any case), or a DataError naming them."""
    chosen = table_format.strip().lower()
    if chosen not in workspace.FORMATS:
        shown = safe_text(table_format, one_line=True)
        raise DataError(f"--format '{shown}': choose one of {', '.join(workspace.FORMATS)}.")
    return chosen


def run_review_import(file, decisions, config_path=None, overrides=()) -> int:
    """`parm review import`: a colleague's decisions.csv into this file's review; returns the
    process exit code."""
    return guarded(
        lambda console, written: _import(console, file, decisions, config_path, overrides)
    )


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


def _run(console, request: AuditRequest, written: list[Path]) -> int:
    # --quiet: errors only; they are raised to `guarded`, which prints them on `console`.
    told = Console(stderr=True, quiet=True) if request.quiet else console
    table_format = _format(request.table_format)
    config = build_config(request.config_path, list(request.overrides), request.columns)
    file = _opened(request.file, config)
    guessed = _guessed(told, file, config, request) if request.guess else None
    config = config if guessed is None else config.updated(**guessed.columns)
    config = config if file.sheet is None else config.updated(sheet=file.sheet)
    unused = unused_columns(file.frame.columns, config)
    if unused:  # a column the user may have meant parm to read: said before the long run
        say(told, f"Not used: {', '.join(unused)}.")
    prepared = workspace.prepare(file, config)
    # Warnings about the file (a fallback encoding, replaced characters, small items) come at
    # once, one line per kind, so a wrong file can be stopped before a long run.
    for line in summary_lines(prepared.notes):
        say(told, f"Warning: {line}")
    store, problems = _review(told, prepared)
    names = workspace.output_names(config, store is not None, table_format=table_format)
    reused = _reused(prepared, request)
    # This run's own set in --out is replaced without --force: nothing of another run is lost.
    force = request.force or (reused is not None and reused.same_set_in_out)
    _check_out(request.out, names, force)
    if reused is not None:
        session, saved = reused.session, reused.saved
        _said_reused(console, told, reused, file, request.quiet)
    else:
        session = _computed(console, prepared, request)
        if session.reused_items:
            counted = workspace.reused_words(len(session.reused_items), len(session.results))
            model = " and the session model" if session.reused_model else ""
            say(told, f"Reused the audits of {counted}{model} (--rerun audits every item).")
        kept = workspace.keep(file, session)
        saved = kept.saved
        if kept.problem is not None:
            say(told, f"Warning: {kept.problem}")
            problems.append(kept.problem)
    unchanged = reused is not None and workspace.unchanged_set(reused, names, store)
    earlier = None if reused is None or unchanged else workspace.copyable_set(reused, names, store)
    # What writing the run now would write, already in the folder it was last written to
    # (engine.workspace.reuse.copyable_set): copied, not made again (made if it cannot be).
    copied = earlier is not None and not problems and workspace.copy_set(
        earlier, request.out, force, on_switched=written.extend) is not None  # fmt: skip
    if unchanged:
        written.extend(request.out / entry.name for entry in reused.out_set.files)
        say(told, f"Kept the outputs in {request.out}: this run's, and the review has not "
            "changed since they were written.")  # fmt: skip
        store.close()
    elif copied:
        store.close()
        say(told, f"Copied the outputs from {earlier.folder}: this run's, and the review has "
            "not changed since they were written.")  # fmt: skip
    else:
        _write(session, request.out, force, written, store, file, problems, table_format)
    _remember_out(told, saved, request.out)
    _warnings(told, session, prepared, written, problems)
    _summary(told, session, written, "Kept" if unchanged else "Wrote")
    return 0


def _reused(prepared, request: AuditRequest):
    """The kept run of the same file and settings (engine.workspace.reuse), unless --rerun or
    --embeddings (vectors handed in are not part of its key) say to compute it."""
    if request.rerun or request.embeddings is not None:
        return None
    return workspace.reuse(prepared, request.out)


def _said_reused(console, told, reused, file, quiet: bool) -> None:
    """The progress line of a reused run (nothing embedded or fitted), then the sentence."""
    with progress_bars(console, quiet) as progress:
        progress.add_task(
            safe_text(f"Reused: run {reused.saved.run_id}, nothing computed", one_line=True),
            total=1,
            completed=1,
        )
    say(told, reused.sentence(file))


def _computed(console, prepared, request: AuditRequest):
    """The run computed: the model starts loading in the background (if a cache miss needs
    it), then every item is embedded and audited under the progress bars."""
    workspace.preload(prepared, precomputed=request.embeddings is not None)
    progress = progress_bars(console, request.quiet)
    with progress:
        try:
            return workspace.run(prepared, StageBars(progress, request.quiet),
                                 embeddings=request.embeddings, reuse_items=not request.rerun)  # fmt: skip
        except BaseException:
            # A stopped run's half-filled bars would only clutter the one-line message.
            progress.live.transient = True
            raise


def _remember_out(console, saved, out: Path) -> None:
    """The folder written, kept with the saved run: the app's Export offers it next."""
    if saved is None:
        return
    try:
        workspace.remember_out_folder(saved, out)
    except (ParmError, OSError) as exc:
        say(console, f"Warning: the app's Export will not offer {out}: {exc}")


def _opened(path, config):
    """The file, a workbook's sheet as the settings name it or as guessed; a doubtful guess of
    the sheet stops with the question (a command cannot ask)."""
    file = workspace.open_file(path, runs=False, sheet=config.sheet)
    if file.sheet_question() is not None:
        raise DataError(f"File {file.path}: {file.sheet_question()} Name it with --sheet NAME.")
    return file


def _warnings(console, session, prepared, written: list[Path], problems=()) -> None:
    """The run's warnings not said before it, one line per kind, and where all of them are
    (with the `problems` said as they came: the review's, the saved run's)."""
    from engine.workspace.reporting import WARNINGS_FILE  # loaded by the run by now

    said = set(prepared.notes)
    for line in summary_lines([w for w in session.warnings if w not in said]):
        say(console, f"Warning: {line}")
    listed = [path for path in written if path.name == WARNINGS_FILE]
    if (session.warnings or problems) and listed:
        n = len(session.warnings) + len(problems)
        if n == 1:
            say(console, f"The warning is also in {listed[0]}.")
        else:
            say(console, f"All {n:,} warnings, one a line: {listed[0]}")


def _guessed(console, file, config, request: AuditRequest):
    """The columns chosen as the app's Load screen chooses them: those named on the command
    line (a column flag or --set) as named, the others from the settings where the file has
    them and guessed where it does not; one line says what was guessed. None when nothing was."""
    given = {
        key for key, value in request.columns.items() if key in CHOSEN_KEYS and value is not None
    }
    given |= {item.partition("=")[0].strip() for item in request.overrides}
    choice = workspace.choose_columns(file, config, given)
    if choice.question() is not None:  # a guess that would audit the wrong column: ask
        raise DataError(f"{choice.question()} Name it with --score-col COLUMN.")
    if choice.sentence() is None:
        return None
    say(console, choice.sentence() + " (--no-guess turns guessing off.)")
    return choice


def _review(console, prepared):
    """(The file's decision store, as the app opens it, so a run reports the decisions made in
    the app; the warnings said about it): no store, with a warning, when it cannot be opened."""
    review = workspace.open_review(prepared)
    if review.problem is not None:
        say(console, f"Warning: {review.problem}")
    for note in review.notes:
        say(console, note)
    return review.store, [review.problem] if review.problem is not None else []


def _check_out(out, names, force) -> None:
    try:
        workspace.check_outputs(out, names, force)
    except OutputsExist as exc:  # the engine's message names no flag: here it is --force
        raise OutputsExist(
            f"{exc.folder} already has {', '.join(exc.names)}; choose another folder with --out, "
            "or add --force to replace them.",
            exc.folder,
            exc.names,
        ) from None


def _write(session, out, force, written, store, file, problems=(), table_format="csv") -> None:
    try:
        workspace.export(
            session, out, decisions=store, table=file.frame, force=force,
            on_switched=written.extend, warnings=problems, table_format=table_format,
        )  # fmt: skip
    finally:
        if store is not None:
            store.close()


def _export(console, file, out, force, run_id, written, table_format="csv") -> int:
    file = workspace.open_file(file, runs=False)
    for warning in file.warnings:
        say(console, f"Warning: {warning}")
    # The newest run, or the one asked for (ResumeError naming the runs that are kept).
    saved = workspace.saved_run(file, run_id)
    prepared, session = workspace.restore(file, saved)
    file = prepared.file  # a workbook: the sheet the run read
    store, problems = _review(console, prepared)
    names = workspace.output_names(prepared.config, store is not None, table_format=table_format)
    _check_out(out, names, force)
    decisions = None if store is None else store.all()
    typed = 0 if store is None else len(store.added_reads())
    _write(session, out, force, written, store, file, problems, table_format)
    _remember_out(console, saved, out)
    say(console, f"Exported run {session.run_id} of {file.path} (saved {saved.saved_at}), "
        f"nothing run again; {_decided(session, decisions)}")  # fmt: skip
    if typed:
        say(console, f"{typed} read{'' if typed == 1 else 's'} typed in the review counted in "
            "the consensus (consensus.csv, decisions.csv, scores_reviewed.csv).")  # fmt: skip
    say(console, "Wrote " + ", ".join(str(p) for p in written))
    return 0


def _import(console, file, decisions, config_path, overrides) -> int:
    """The review of `file` is that of its newest saved run's responses (the answers its
    decisions are about); a file never audited is read as `parm audit` reads it."""
    file = workspace.open_file(file)
    if file.runs:
        prepared, _ = workspace.restore(file, file.runs[0])
    else:
        config = build_config(config_path, list(overrides))
        file = _opened(file.path, config)
        config = config.updated(**workspace.choose_columns(file, config).columns)
        prepared = workspace.prepare(file, config)
    store, _ = _review(console, prepared)
    if store is None:
        return EXIT_USER
    try:
        report = workspace.import_review(store, decisions)
    finally:
        store.close()
    say(console, report.sentence())
    return 0


def _decided(session, decisions) -> str:
    """'9 decisions, 6 scores changed.' or why there is no review yet."""
    from engine.workspace.reporting import NO_REVIEW, review_summary

    review = review_summary(session, decisions)
    if review["status"] == NO_REVIEW:
        return f"no review yet: {review['why']}."
    n, changed = review["decisions"], review["scores_changed"]
    return f"{n} decision{'' if n == 1 else 's'}, {changed} score{'' if changed == 1 else 's'} changed."


# More items than this and their figures are left to items.csv and the reports: a line each
# would push the run's summary out of view.
ITEM_LINES = 10


def _summary(console: Console, session, written: list[Path], verb: str = "Wrote") -> None:
    # Imported here: the figures' modules pull in scipy.stats, which `parm --help` and a file's
    # error must not wait for (tests/test_cli.py checks what importing the CLI loads).
    from engine.results.figures import run_figures
    from engine.results.headline import item_headline
    from engine.results.lead import run_lead, session_model_lead, session_wrong, wrong_phrase
    from engine.workspace.reporting import conclusions, plural

    shown = len(session.results) <= ITEM_LINES
    for k in range(len(session.results) if shown else 0):
        say(console, item_headline(session, k).line())
    if session.by_item:
        if not shown:
            say(console, "Each item's figures: items.csv, report.md and report.html.")
        skipped = len(session.items.skipped)
        say(
            console,
            f"{len(session.results)} item(s) audited, {skipped} skipped; "
            f"{int(session.flagged.sum()):,} of {session.n_responses:,} responses flagged, "
            f"{wrong_phrase(session_wrong(session.results))}.",
        )
    figures = run_figures(session)
    if session.by_item:
        say(console, "Session (all items pooled): " + "; ".join(run_lead(figures)) + ".")
    modelled = session_model_lead(figures)
    if modelled is not None and session.by_item:  # one item: its headline has it
        say(console, f"{modelled[0].upper()}{modelled[1:]}: one fit over every item and read.")
    if session.raters is not None:
        judged = [r for r in session.raters.rows if r.judged]
        farthest = ", ".join(
            r.rater
            if r.leniency is None
            else f"{r.rater} ({signed(r.leniency)} points)"  # None: unordered labels
            for r in judged[:3]
        )
        say(
            console,
            f"{plural(len(session.raters.rows), 'rater')}, farthest from the rest: "
            f"{farthest or 'none'}",
        )
        words = [f"{r.rater}: {r.verdict}" for r in judged if r.verdict != "fine"]
        say(console, "Raters who need a word: " + ("; ".join(words) or "none"))
    # What the lead concludes, as report.html's first screen says it (what to do first: there).
    say(console, "In short: " + conclusions(session).short)
    say(console, f"{verb} " + ", ".join(str(p) for p in written))
