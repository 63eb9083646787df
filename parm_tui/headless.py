"""`parm audit`: the headless run with a Rich progress bar and calm, one-line errors."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

STAGE_NAMES = {
    "embedding": "Embedding",
    "neighbours": "Neighbour search",
    "tuning": "Tuning",
    "colbert": "MaxSim scoring",
    "audit": "Audit",
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


def run_headless(file, config_path, columns, overrides, embeddings_path, out, force, quiet) -> int:
    """Run an audit and write its outputs; returns the process exit code."""
    from engine.data import load_responses
    from engine.embed import load_embeddings
    from engine.errors import Cancelled, ParmError
    from engine.export import OUTPUT_FILES, check_writable, write_outputs
    from engine.pipeline import run_audit
    from parm_tui.cli import build_config

    console = Console(stderr=True, highlight=False)
    try:
        config = build_config(config_path, overrides, columns)
        responses = load_responses(file, config)
        check_writable(Path(out), OUTPUT_FILES, force)
        vectors = None
        if embeddings_path is not None:
            vectors = load_embeddings(embeddings_path, responses.rows, responses.file_rows)
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=quiet,
            transient=False,
        ) as progress:
            result = run_audit(responses, config, _Bars(progress), embeddings=vectors)
        written = write_outputs(result, out, overwrite=force)
    except KeyboardInterrupt:
        console.print("Interrupted: no outputs were written.")
        return 130
    except Cancelled as exc:
        console.print(str(exc))
        return 130
    except ParmError as exc:
        console.print(f"Error: {exc}", markup=False)
        return 2
    for warning in result.warnings:
        console.print(f"Warning: {warning}", markup=False)
    _summary(console, result, written)
    return 0


def _summary(console: Console, result, written: list[Path]) -> None:
    best = result.selected
    m = best.metrics
    k = "dense" if best.top_k is None else f"K={best.top_k}"
    console.print(
        f"Selected {k}, p={best.power:.3g} by {result.config.selection_metric}: "
        f"accuracy {m['accuracy']:.3f}, kappa {m['kappa']:.3f}, QWK {m['qwk']:.3f}, "
        f"near {m['near']:.3f}, macro F1 {m['f1']:.3f}, NLL {m['nll']:.3f}. "
        f"{int(result.flagged.sum())} of {len(result.responses)} responses flagged.",
        markup=False,
    )
    console.print("Wrote " + ", ".join(str(p) for p in written), markup=False)
