"""The sidecar of an embeddings file that `parm embed` writes: `vectors.npy.json` beside
`vectors.npy`, with the row count, the model, the text column, the SHA-256 of the input file
and the parm version. `--embeddings` checks it when it is there, so vectors made from another
file, an edited one or another column are refused with both named; an array made by hand has
no sidecar, which is fine.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from engine.core.errors import EmbeddingError
from engine.core.files import file_digest, open_regular

# What the sidecar's "format" says, and its version (a later parm may add keys, never change them).
FORMAT = "parm-embeddings"
VERSION = 1
# A sidecar is a few hundred bytes; a bigger file is not one, and is not read whole.
MAX_BYTES = 64 * 1024


def sidecar_path(vectors: str | Path) -> Path:
    """`vectors.npy.json` for `vectors.npy`."""
    vectors = Path(vectors)
    return vectors.with_name(vectors.name + ".json")


def sidecar_record(
    rows: int, dim: int, model: str, identity: str, device: str | None, text_column: str,
    source: Path, parm_version: str | None,
) -> dict:  # fmt: skip
    """The sidecar's content for `rows` x `dim` unit vectors embedded from `source`'s column."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "rows": rows,
        "dim": dim,
        "dtype": "float32",
        "normalized": True,
        "model": model,
        "model_identity": identity,
        "device": device,
        "text_column": text_column,
        "file": source.name,
        "file_sha256": file_digest(source),
        "parm_version": parm_version,
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def read_sidecar(vectors: str | Path) -> dict | None:
    """The sidecar of `vectors`, or None when there is none; an unreadable or foreign one is an
    EmbeddingError naming it."""
    path = sidecar_path(vectors)
    if not path.exists():
        return None
    with open_regular(path, "Embeddings sidecar", EmbeddingError) as handle:
        raw = handle.read(MAX_BYTES + 1)
    try:
        record = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_BYTES else None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        record = None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise EmbeddingError(
            f"Embeddings sidecar {path} is not one `parm embed` wrote; remove it or make the "
            "embeddings again with `parm embed`."
        )
    return record


def check_sidecar(
    vectors: str | Path, source: str | Path, text_column: str | None, rows: int
) -> None:
    """Refuse vectors whose sidecar says they were made from another file (its SHA-256),
    another number of rows or another text column (when given) than the audit's input."""
    record = read_sidecar(vectors)
    if record is None:
        return
    made = f"Embeddings file {vectors} was made by `parm embed` from {record.get('file')}"
    if record.get("rows") != rows:
        raise EmbeddingError(
            f"{made} ({record.get('rows')} rows), but the input {source} has {rows:,} data rows: "
            "it needs one vector per data row of this file."
        )
    source = Path(source)
    if source.is_file() and record.get("file_sha256") != file_digest(source):
        raise EmbeddingError(
            f"{made} (SHA-256 {str(record.get('file_sha256'))[:12]}…), not from the input "
            f"{source} (SHA-256 {file_digest(source)[:12]}…): the file changed since, or it is "
            "another file. Make the embeddings again with `parm embed`."
        )
    if text_column is not None and record.get("text_column") != text_column:
        raise EmbeddingError(
            f"{made}'s column '{record.get('text_column')}', but this run reads the answers in "
            f"column '{text_column}'. Make them again with `parm embed --text-col {text_column}`."
        )
