"""`parm embed FILE --out vectors.npy`: a file's answers embedded (every data row, in file
order) with a Rich progress bar, written with its sidecar (engine.embedding.whole_file); the
same exit codes and calm one-line errors as `parm audit` (parm_tui.headless)."""

from __future__ import annotations

from pathlib import Path

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
    from engine.embedding.whole_file import (
        check_output,
        default_output,
        embed_file,
        write_embeddings,
    )
    from engine.input.config import build_config

    config = build_config(config_path, overrides, columns)
    out = Path(out) if out is not None else default_output(file)
    check_output(out, force)
    progress = progress_bars(console, quiet)
    with progress:
        try:
            vectors, record = embed_file(file, config, StageBars(progress))
        except BaseException:
            progress.live.transient = True
            raise
    written.extend(write_embeddings(out, vectors, record))
    rows, dim = vectors.shape
    where = f"on {record['device']}" if record["device"] else "from the embedding cache"
    say(
        console,
        f"Wrote {written[0]} ({rows:,} rows x {dim} float32, {config.embedding_model} {where}) "
        f"and {written[1]}. Use it with: parm audit {file} --embeddings {written[0]}",
    )
    return 0
