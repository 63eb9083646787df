"""The command line: `parm [FILE]` opens the app; `parm audit FILE` runs headless;
`parm --version`. Help shows readable value names (FILE, COLUMN, KEY=VALUE, N) and examples."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

# Click keeps a paragraph that starts with \b as written (no rewrapping): the examples.
APP_HELP = """Audit the reliability of human scoring of free-text answers (PARM).

\b
  parm                      open the app
  parm FILE                 open the app with FILE (CSV or TSV) loaded
  parm audit FILE           run the audit headless and write its outputs
  parm audit --help         every option of the headless run, with examples
  parm export FILE          write FILE's saved run again, with the review's decisions
  parm embed FILE           embed FILE's answers once into a .npy for --embeddings
  parm cache                where the embedding cache is and what it holds (clear: empty it)

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
  parm audit answers.csv --embeddings answers.npy --config my-settings.json --force

Settings (--set KEY=VALUE, --config): see the README's settings table; VALUE is read
as JSON, and as plain text when it is not JSON.
"""

app = typer.Typer(
    name="parm",
    help=APP_HELP,
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
)
COMMANDS = ("audit", "export", "open", "embed", "cache")
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
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"parm {version('parm')}")
        except PackageNotFoundError:
            typer.echo("parm (not installed as a package)")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Audit the reliability of human scoring of free-text answers (PARM)."""


def column(flag: str, help_text: str):
    return typer.Option(flag, metavar="COLUMN", help=help_text)


@app.command(epilog=AUDIT_EXAMPLES)
def audit(
    file: Annotated[
        Path, typer.Argument(metavar="FILE", help="CSV or TSV file of scored responses.")
    ],
    config: ConfigFile = None,
    text_col: Annotated[str | None, column("--text-col", "Text column.")] = None,
    score_col: Annotated[str | None, column("--score-col", "Score column.")] = None,
    id_col: Annotated[str | None, column("--id-col", "Id column.")] = None,
    second_score_col: Annotated[
        str | None, column("--second-score-col", "A second rater's score column.")
    ] = None,
    score_order: Annotated[
        str | None,
        typer.Option(
            "--score-order",
            metavar="LOW,...,HIGH",
            help='Score labels lowest first, e.g. "low,medium,high" (text labels need it to be '
            "ordered; numbers are ordered numerically).",
        ),
    ] = None,
    item_col: Annotated[
        str | None, column("--item-col", "Item (question) column: each item audited on its own.")
    ] = None,
    rater_col: Annotated[
        str | None, column("--rater-col", "Who gave each score: the rater table.")
    ] = None,
    second_rater_col: Annotated[
        str | None, column("--second-rater-col", "Who gave each second score.")
    ] = None,
    time_col: Annotated[
        str | None,
        column(
            "--time-col",
            "When (ISO date/time) or in which order (a number) each score was given: each "
            "rater's drift.",
        ),
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
    set_: Overrides = None,
    quiet: Quiet = False,
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
    rater_item_bias.csv and rater_feedback.csv with a rater column)."""
    from parm_tui.headless import run_headless

    columns = {
        "text_column": text_col,
        "score_column": score_col,
        "id_column": id_col,
        "second_score_column": second_score_col,
        "score_order": score_order,
        "item_column": item_col,
        "rater_column": rater_col,
        "second_rater_column": second_rater_col,
        "time_column": time_col,
        "jobs": jobs,
        "embedding_model": model,
        "scheduler": scheduler,
        "device": device,
    }
    code = run_headless(
        file, config, columns, set_ or [], embeddings, out, force, quiet, guess=not no_guess
    )
    raise typer.Exit(code)


@app.command("export")
def export(
    file: Annotated[
        Path, typer.Argument(metavar="FILE", help="The CSV or TSV file whose saved run to export.")
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
) -> None:
    """Write the saved run of FILE (by `parm audit` or the app) with the review's decisions, as
    the app's Export writes it, running and embedding nothing: scores_reviewed.csv has the
    corrected scores."""
    from parm_tui.headless import run_export

    raise typer.Exit(run_export(file, out, force, run))


@app.command()
def embed(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="CSV or TSV file of answers.")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE.npy",
            help="The .npy file to write (default: FILE's name with .npy).",
        ),
    ] = None,
    text_col: Annotated[
        str | None, typer.Option("--text-col", metavar="COLUMN", help="Text column.")
    ] = None,
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
    from parm_tui.embed_run import run_embed

    columns = {
        "text_column": text_col,
        "embedding_model": model,
        "device": device,
        "embedding_batch_size": batch_size,
    }
    code = run_embed(file, out, config, columns, set_ or [], force, quiet)
    raise typer.Exit(code)


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
        from parm_tui.cache_run import run_cache_show

        raise typer.Exit(run_cache_show(config, set_ or []))


@cache_app.command("clear")
def cache_clear() -> None:
    """Empty the embedding cache (every answer's vectors; the next runs embed them again)."""
    from parm_tui.cache_run import run_cache_clear

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
