"""The command line: `parm [FILE]` opens the app; `parm audit FILE` runs headless;
`parm --version`. Help shows readable value names (FILE, COLUMN, KEY=VALUE, N) and examples."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from engine.workspace.settings import BY_NAME
from parm_tui.cache_run import run_cache_clear, run_cache_show
from parm_tui.embed_run import run_embed
from parm_tui.headless import AuditRequest, run_export, run_headless, run_review_import
from parm_tui.monitor_run import MonitorRequest, run_monitor

# Click keeps a paragraph that starts with \b as written (no rewrapping): the examples.
APP_HELP = """Audit the reliability of human scoring of free-text answers (PARM).

\b
  parm                      open the app
  parm FILE                 open the app with FILE (CSV, TSV or workbook) loaded
  parm audit FILE           run the audit headless and write its outputs
  parm audit --help         every option of the headless run, with examples
  parm export FILE          write FILE's saved run again, with the review's decisions
  parm embed FILE           embed FILE's answers once into a .npy for --embeddings
  parm review import FILE DECISIONS.csv
                            bring a colleague's review decisions into FILE's review
  parm cache                where the embedding cache is and what it holds (clear: empty it)
  parm monitor FILE... --session DIR --out OUT
                            add a day's reads to a live session: its alerts, what changed
  parm serve FILE           the app in a browser for each reviewer, behind a token

\b
Examples:
  parm sample_data/plant_growth.csv
  parm sample_data/plant_growth.csv --embeddings vectors.npy
  parm audit sample_data/plant_growth.csv --out parm-out --force
"""
AUDIT_EXAMPLES = """\b
Examples:
  parm audit sample_data/plant_growth.csv --second-score-col score2 --out parm-out
  parm audit answers.csv --text-col response --score-col rater1 --id-col student
  parm audit answers.csv --set 'similarity_top_k=[5,10,20]' --set selection_metric=qwk
  parm audit levels.csv --score-order "low,medium,high"
  parm audit sessions.csv --item-col item --rater-col rater --time-col marked_at --jobs 2
  parm audit graded.csv --score-cols G1,G2,G3 --item-col question_id
  parm audit reads.csv --reads long --id-col answer_id --rater-col rater --answers answers.csv
  parm audit answers.csv --embeddings answers.npy --config my-settings.json --force
  parm audit marks.xlsx --sheet "Term 2" --format xlsx

Settings (--set KEY=VALUE, --config): see docs/reference/settings.md (the docs site's
Reference, Settings); VALUE is read as JSON, and as plain text when it is not JSON.
"""

MONITOR_EXAMPLES = """\b
Examples:
  parm monitor day1.csv --session scoring --out today
  parm monitor day2.csv --session scoring --out today --since last
  parm monitor --session scoring --out today --since last      # the session as it stands
  parm monitor export.xlsx --session scoring --out today --kind-col read_type
  parm monitor day3.csv --session scoring --out today --period 2026-05-06

Alert rules: the monitor_* settings (--set monitor_alert_p=0.001, --config); see
docs/explanation/monitor-alerts.md.
"""

SERVE_EXAMPLES = """\b
Examples:
  parm serve sample_data/plant_growth.csv
  parm serve answers.csv --port 8080 --set serve_max_sessions=8
  parm serve scoring --token-file ~/.parm-token     # a live session's folder
  PARM_SERVE_TOKEN=... parm serve answers.csv

Beyond this machine: bind to 127.0.0.1 and put a reverse proxy with TLS in front
(docs/how-to/serve.md).
"""

REVIEW_IMPORT_EXAMPLES = """\b
Examples:
  parm review import answers.csv ../ben/parm-out/decisions.csv
  parm export answers.csv --out parm-out     # decisions.csv now holds both reviews
"""

app = typer.Typer(
    name="parm",
    help=APP_HELP,
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
)
COMMANDS = ("audit", "export", "open", "embed", "review", "cache", "monitor", "serve")
SCHEDULER_HELP = (
    'Run the items on this Dask scheduler ("tcp://HOST:8786"), or "local:N" for N worker '
    "processes here (needs pip install 'parm[dask]')."
)
DEVICE_HELP = "Where the embedding model runs: auto (a GPU when PyTorch sees one), cpu or cuda."


# Options several commands share, declared once.
ConfigFile = Annotated[
    Path | None, typer.Option("--config", metavar="FILE.json", help="JSON settings file.")
]
Overrides = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override a setting (repeatable; VALUE as JSON, else text).",
    ),
]
Model = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="MODEL",
        help='Embedding model: a name or path, or "static" (fast; distilled from the bundled '
        "model on first use).",
    ),
]
Device = Annotated[str | None, typer.Option("--device", metavar="DEVICE", help=DEVICE_HELP)]
Embeddings = Annotated[
    Path | None,
    typer.Option("--embeddings", metavar="FILE.npy", help=".npy array, one row per input row."),
]
TableFormat = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="csv|xlsx|both",
        help="The tables as CSV files (default), in one workbook, results.xlsx (a sheet each; "
        "decisions.csv stays), or both.",
    ),
]
Sheet = Annotated[
    str | None,
    typer.Option(
        "--sheet",
        metavar="NAME",
        help="A workbook's sheet (default: the one with a text and a score column).",
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
AuditQuiet = Annotated[
    bool,
    typer.Option("--quiet", "-q", help="Errors only: no progress bar, warnings or summary."),
]


def _version(value: bool) -> None:
    if value:
        from engine.core.versions import package_version

        installed = package_version("parm")
        typer.echo(f"parm {installed}" if installed else "parm (not installed as a package)")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Audit the reliability of human scoring of free-text answers (PARM)."""


def column_flag(name: str) -> str:
    """The flag of a column setting: text_column -> --text-col, score_columns -> --score-cols."""
    return "--" + name.replace("_columns", "_cols").replace("_column", "_col").replace("_", "-")


def column(name: str, metavar: str = "COLUMN"):
    """A column setting's flag, its help the settings table's (engine.input.settings.declared)."""
    return typer.Option(column_flag(name), metavar=metavar, help=BY_NAME[name].help)


@app.command(epilog=AUDIT_EXAMPLES)
def audit(
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE", help="CSV or TSV file, or workbook (.xlsx, .ods), of scored responses."
        ),
    ],
    config: ConfigFile = None,
    text_col: Annotated[str | None, column("text_column")] = None,
    score_col: Annotated[str | None, column("score_column")] = None,
    id_col: Annotated[str | None, column("id_column")] = None,
    second_score_col: Annotated[str | None, column("second_score_column")] = None,
    score_cols: Annotated[
        str | None,
        column("score_columns", "COLUMN,..."),
    ] = None,
    rater_cols: Annotated[
        str | None,
        column("rater_columns", "COLUMN,..."),
    ] = None,
    reads: Annotated[
        str | None,
        typer.Option(
            "--reads",
            metavar="wide|long",
            help="long: one row per read (--id-col the answer, --score-col the score, "
            "--rater-col who read it); wide (default): one row per answer.",
        ),
    ] = None,
    answers: Annotated[
        Path | None,
        typer.Option(
            "--answers",
            metavar="FILE",
            help="A long file's answers: a CSV or TSV of id and text, joined by id.",
        ),
    ] = None,
    sheet: Sheet = None,
    score_order: Annotated[
        str | None,
        typer.Option(
            "--score-order",
            metavar="LOW,...,HIGH",
            help='Score labels lowest first, e.g. "low,medium,high" (text labels need it to be '
            "ordered; numbers are ordered numerically).",
        ),
    ] = None,
    item_col: Annotated[str | None, column("item_column")] = None,
    rater_col: Annotated[str | None, column("rater_column")] = None,
    second_rater_col: Annotated[str | None, column("second_rater_column")] = None,
    time_col: Annotated[
        str | None,
        column("time_column"),
    ] = None,
    expert_col: Annotated[
        str | None,
        column("expert_column"),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", min=1, metavar="N", help="Worker processes for the items (default 1)."
        ),
    ] = None,
    model: Model = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", metavar="ADDRESS", help=SCHEDULER_HELP)
    ] = None,
    device: Device = None,
    embeddings: Embeddings = None,
    out: Annotated[Path, typer.Option("--out", metavar="FOLDER", help="Output folder.")] = Path(
        "parm-out"
    ),
    force: Annotated[bool, typer.Option("--force", help="Replace existing outputs.")] = False,
    rerun: Annotated[
        bool,
        typer.Option(
            "--rerun",
            help="Compute the run again even where the same file (its bytes) was audited with "
            "the same settings, and audit every item (default: that finished run is reused, and "
            "items unchanged since an earlier run are not audited again).",
        ),
    ] = False,
    set_: Overrides = None,
    table_format: TableFormat = "csv",
    quiet: AuditQuiet = False,
    no_guess: Annotated[
        bool,
        typer.Option(
            "--no-guess",
            help="Read only the columns the settings name (no guess for the others, as the "
            "app's Load screen makes).",
        ),
    ] = False,
) -> None:
    """Run the PARM audit headless, keep the run for the app and `parm export`, and write what
    the app's Export writes: predictions.csv, tuning.csv, report.json, report.md, report.html,
    decisions.csv, scores_reviewed.csv (and items.csv with an item column; raters.csv,
    rater_item_bias.csv and rater_feedback.csv with a rater column); with --format xlsx the
    tables in one workbook, results.xlsx, instead. The same file (its bytes) audited before
    with the same settings: that finished run is reused, nothing computed (--rerun computes
    it again)."""
    reads_named = None if score_cols is None else [c.strip() for c in score_cols.split(",")]
    columns = {
        "text_column": text_col,
        # --score-cols names the audited score column first.
        "score_column": score_col or (reads_named[0] if reads_named else None),
        "id_column": id_col,
        "second_score_column": second_score_col,
        "score_columns": reads_named,
        "rater_columns": None if rater_cols is None else [c.strip() for c in rater_cols.split(",")],
        "reads": reads,
        "answers_file": None if answers is None else str(answers),
        "sheet": sheet,
        "score_order": score_order,
        "item_column": item_col,
        "rater_column": rater_col,
        "second_rater_column": second_rater_col,
        "time_column": time_col,
        "expert_column": expert_col,
        "jobs": jobs,
        "embedding_model": model,
        "scheduler": scheduler,
        "device": device,
    }
    request = AuditRequest(
        file=file, config_path=config, columns=columns, overrides=tuple(set_ or ()),
        embeddings=embeddings, out=out, force=force, quiet=quiet, guess=not no_guess,
        table_format=table_format, rerun=rerun,
    )  # fmt: skip
    raise typer.Exit(run_headless(request))


@app.command(epilog=MONITOR_EXAMPLES)
def monitor(
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="FILE...",
            help="Files of reads to add (CSV, TSV or workbook; a day's or a cumulative export; "
            "none: the session as it stands).",
        ),
    ] = None,
    session: Annotated[
        Path,
        typer.Option("--session", metavar="DIR", help="The session's folder (made on first use)."),
    ] = ...,
    out: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="Where the run's files go.")
    ] = Path("parm-monitor"),
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="last|RUN_ID",
            help="List what changed since the last run (or that run): alerts raised, cleared, "
            "still open; raters and items that changed; reads added.",
        ),
    ] = None,
    period: Annotated[
        str | None,
        typer.Option(
            "--period",
            metavar="YYYY-MM-DD",
            help="The day of reads the file does not date (default: the file's modification date).",
        ),
    ] = None,
    config: ConfigFile = None,
    text_col: Annotated[str | None, column("text_column")] = None,
    score_col: Annotated[str | None, column("score_column")] = None,
    id_col: Annotated[str | None, column("id_column")] = None,
    item_col: Annotated[str | None, column("item_column")] = None,
    rater_col: Annotated[str | None, column("rater_column")] = None,
    time_col: Annotated[str | None, column("time_column")] = None,
    expert_col: Annotated[str | None, column("expert_column")] = None,
    kind_col: Annotated[
        str | None,
        column("kind_column"),
    ] = None,
    reads: Annotated[
        str | None,
        typer.Option("--reads", metavar="wide|long", help="One row per read (long) or answer."),
    ] = None,
    sheet: Sheet = None,
    set_: Overrides = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace files in --out that this session did not write."),
    ] = False,
    quiet: AuditQuiet = False,
) -> None:
    """Add each FILE's reads to the live session in --session and write what a lead acts on
    into --out: monitor.csv (agreement per item, rater and day), alerts.csv (the open alerts),
    changes.md (what changed since the last run) and report.html. Adding a file twice, or an
    export that repeats earlier reads, changes nothing."""
    columns = {
        "text_column": text_col, "score_column": score_col, "id_column": id_col,
        "item_column": item_col, "rater_column": rater_col, "time_column": time_col,
        "expert_column": expert_col, "kind_column": kind_col, "reads": reads, "sheet": sheet,
    }  # fmt: skip
    request = MonitorRequest(
        files=tuple(files or ()), session=session, out=out, since=since, period=period,
        config_path=config, columns=columns, overrides=tuple(set_ or ()), force=force,
        quiet=quiet,
    )  # fmt: skip
    raise typer.Exit(run_monitor(request))


@app.command("export")
def export(
    file: Annotated[
        Path, typer.Argument(metavar="FILE", help="The file whose saved run to export.")
    ],
    out: Annotated[Path, typer.Option("--out", metavar="FOLDER", help="Output folder.")] = Path(
        "parm-out"
    ),
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing outputs.")] = False,
    run: Annotated[
        str | None,
        typer.Option(
            "--run", metavar="RUN_ID", help="An earlier saved run's id (default: the newest run)."
        ),
    ] = None,
    table_format: TableFormat = "csv",
) -> None:
    """Write the saved run of FILE (by `parm audit` or the app) with the review's decisions, as
    the app's Export writes it, running and embedding nothing: scores_reviewed.csv has the
    corrected scores."""
    raise typer.Exit(run_export(file, out, force, run, table_format))


@app.command()
def embed(
    file: Annotated[
        Path, typer.Argument(metavar="FILE", help="CSV or TSV file, or workbook, of answers.")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE.npy",
            help="The .npy file to write (default: FILE's name with .npy).",
        ),
    ] = None,
    text_col: Annotated[str | None, column("text_column")] = None,
    sheet: Sheet = None,
    model: Model = None,
    device: Device = None,
    batch_size: Annotated[
        int | None,
        typer.Option(
            "--batch-size", min=1, metavar="N", help="Texts per batch (32 on a CPU; 256 on a GPU)."
        ),
    ] = None,
    config: ConfigFile = None,
    set_: Overrides = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
    quiet: Quiet = False,
) -> None:
    """Embed every answer of FILE (every data row, in file order) into one .npy array, with a
    sidecar JSON (rows, model, text column, the file's SHA-256) that --embeddings checks."""
    columns = {
        "text_column": text_col,
        "sheet": sheet,
        "embedding_model": model,
        "device": device,
        "embedding_batch_size": batch_size,
    }
    code = run_embed(file, out, config, columns, set_ or [], force, quiet)
    raise typer.Exit(code)


review_app = typer.Typer(
    name="review",
    help="The review's decisions: bring a colleague's in.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(review_app)


@review_app.command("import", epilog=REVIEW_IMPORT_EXAMPLES)
def review_import(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The file whose review it is.")],
    decisions: Annotated[
        Path,
        typer.Argument(
            metavar="DECISIONS.csv", help="A colleague's decisions.csv (parm export writes it)."
        ),
    ],
    config: ConfigFile = None,
    set_: Overrides = None,
) -> None:
    """Bring a colleague's decisions (their decisions.csv) into FILE's review: each decision is
    taken for the same answer only (row, id and text); one that makes another call than the
    decision made here is kept beside it as a conflict to settle in the review; rows whose
    answer changed are skipped, with the reason. The review is that of FILE's newest saved run
    (FILE read as `parm audit` reads it when it has none). `--set reviewer=NAME` names who
    decides here (default: the login name)."""
    raise typer.Exit(run_review_import(file, decisions, config, tuple(set_ or ())))


cache_app = typer.Typer(
    help="The embedding cache: where it is, what it holds, its limit (`clear` empties it).",
    invoke_without_command=True,
    rich_markup_mode=None,
)
app.add_typer(cache_app, name="cache")


@cache_app.callback()
def cache_show(context: typer.Context, config: ConfigFile = None, set_: Overrides = None) -> None:
    """Show where the embedding cache is, how many answers it holds, its size and its limit
    (the embedding_cache_mb setting, from --config or --set)."""
    if context.invoked_subcommand is None:
        raise typer.Exit(run_cache_show(config, set_ or []))


@cache_app.command("clear")
def cache_clear() -> None:
    """Empty the embedding cache (every answer's vectors; the next runs embed them again)."""
    raise typer.Exit(run_cache_clear())


@app.command("open")
def open_app(
    file: Annotated[
        Path | None, typer.Argument(metavar="FILE", help="File to load on start.")
    ] = None,
    config: ConfigFile = None,
    embeddings: Embeddings = None,
    set_: Overrides = None,
    model: Model = None,
) -> None:
    """Open the interactive app (the same as `parm` or `parm FILE`)."""
    try:
        from parm_tui.app import run_app
    except KeyboardInterrupt:
        # Ctrl+C while Textual loads: leave as quietly as parm_tui.launch does before it.
        raise typer.Exit(130) from None

    # --model is the embedding_model setting; a --set of the same key still wins.
    overrides = ([f"embedding_model={model}"] if model is not None else []) + (set_ or [])
    run_app(file, config_path=config, embeddings_path=embeddings, overrides=overrides)


@app.command(epilog=SERVE_EXAMPLES)
def serve(
    target: Annotated[
        Path,
        typer.Argument(
            metavar="FILE-OR-SESSION", help="The file to review, or a live session's folder."
        ),
    ],
    host: Annotated[
        str,
        typer.Option(
            "--host", metavar="ADDRESS", help="Where to listen (default: this machine only)."
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, metavar="N", help="Port (0: any free one).")
    ] = 8000,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            metavar="FILE",
            help="Read the token from FILE (at least 16 characters) instead of $PARM_SERVE_TOKEN "
            "or a new random one.",
        ),
    ] = None,
    config: ConfigFile = None,
    set_: Overrides = None,
) -> None:
    """Serve the app to browsers: each connection asks its reviewer's name and runs its own app
    process on FILE-OR-SESSION with that reviewer (decisions.csv names them). Prints a link with
    a random token once; every request without the token is refused (403). At most
    serve_max_sessions apps at once; one idle for serve_idle_minutes is closed."""
    from parm_tui.serve_run import ServeRequest, run_serve

    request = ServeRequest(
        target=target, host=host, port=port, token_file=token_file, config=config,
        overrides=tuple(set_ or ()),
    )  # fmt: skip
    raise typer.Exit(run_serve(request))


def main(argv: list[str] | None = None) -> None:
    """Entry point: a first argument that is not a command or an option is a file to open."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        args = ["open"]
    elif args[0] not in COMMANDS and not args[0].startswith("-"):
        args = ["open", *args]
    app(args=args, prog_name="parm")


if __name__ == "__main__":
    main()
