"""`parm embed FILE --out vectors.npy`: a file's answers embedded (every data row, in file
order) with a Rich progress bar, written with its sidecar (engine.embedding.whole_file); the
same exit codes and calm one-line errors as `parm audit` (parm_tui.headless)."""

from __future__ import annotations

from engine import workspace
from engine.workspace.settings import build_config
from parm_tui.headless import StageBars, guarded, progress_bars, say


def run_embed(file, out, config_path, columns, overrides, force, quiet) -> int:
    """Embed `file`'s answers into `out` (default: the file's name with .npy, here); returns
    the process exit code."""
    return guarded(
        lambda console, written: _embed(
            console, file, out, config_path, columns, overrides, force, quiet, written
        )
    )


def _embed(console, file, out, config_path, columns, overrides, force, quiet, written) -> int:
    config = build_config(config_path, overrides, columns)
    progress = progress_bars(console, quiet)
    with progress:
        try:
            done = workspace.embed_to(file, out, config, force, StageBars(progress))
        except BaseException:
            progress.live.transient = True
            raise
    written.extend(done.written)
    where = f"on {done.device}" if done.device else "from the embedding cache"
    say(
        console,
        f"Wrote {written[0]} ({done.rows:,} rows x {done.dimensions} float32, "
        f"{config.embedding_model} {where}) and {written[1]}. Use it with: parm audit {file} "
        f"--embeddings {written[0]}",
    )
    return 0
