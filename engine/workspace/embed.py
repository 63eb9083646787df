"""`parm embed`: a file's answers embedded once (every data row, in file order) and written as a
.npy array with its sidecar, for `--embeddings` (engine.embedding.whole_file)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.core.progress import CancelToken
    from engine.input.settings.config import AuditConfig


@dataclass(frozen=True)
class Embedded:
    """What `embed_to` wrote: the array and its sidecar, rows x dimensions, and where the model
    ran ("" when every vector came from the cache)."""

    written: list[Path]
    rows: int
    dimensions: int
    device: str


def embed_to(
    source: str | Path,
    out: str | Path | None,
    config: AuditConfig,
    force: bool = False,
    progress=None,
    cancel: CancelToken | None = None,
) -> Embedded:
    """Embed `source`'s answers with the settings' model into `out` (default: the file's name
    with .npy, here); an existing array is replaced only with `force` (checked first, before
    anything is embedded)."""
    from engine.embedding.whole_file import (
        check_output,
        default_output,
        embed_file,
        write_embeddings,
    )

    out = Path(out) if out is not None else default_output(source)
    check_output(out, force)
    vectors, record = embed_file(source, config, progress, cancel)
    written = write_embeddings(out, vectors, record)
    return Embedded(written, int(vectors.shape[0]), int(vectors.shape[1]), record["device"] or "")


def cache_contents(config: AuditConfig):
    """`parm cache`: the embedding cache's folder and what it holds
    (engine.embedding.cache.contents.CacheContents), and its bound in MB from the settings."""
    from engine.embedding.cache.contents import cache_contents as held

    return held(), config.embedding_cache_mb


def clear_cache():
    """`parm cache clear`: every answer's vectors go; what was held before."""
    from engine.embedding.cache.contents import clear_cache as clear

    return clear()
