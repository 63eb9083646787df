"""`parm embed`: a whole file's answers embedded into one array in file order, one unit vector
per data row (blank answers and rows an audit would skip included, items included), which is
exactly what `--embeddings` takes; written with its sidecar (engine.embedding.sidecar), both
in one all-or-nothing step. This is the GPU recipe (docs/how-to/embed-on-a-gpu.md) as a command: run it where the GPU
is (`device`), copy the two files, audit anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from engine.core.errors import ConfigError, ExportError
from engine.core.files import atomic_write_files
from engine.core.progress import CancelToken, ProgressCallback, Reporter
from engine.core.versions import package_version
from engine.embedding.models import model_identity
from engine.embedding.sentence import embed_texts
from engine.embedding.sidecar import sidecar_path, sidecar_record
from engine.input.responses import every_text
from engine.input.settings.config import AuditConfig
from engine.input.workbook import read_file


def default_output(source: str | Path) -> Path:
    """`answers.npy` (in the working folder) for `answers.csv` or `answers.csv.gz`."""
    return Path(Path(source).name.split(".")[0] + ".npy")


def check_output(out: Path, overwrite: bool) -> None:
    """Refuse to replace an existing array or sidecar without `overwrite` (`--force`)."""
    for path in (out, sidecar_path(out)):
        if path.exists() and not overwrite:
            raise ExportError(f"{path} exists; --force replaces it. Nothing was written.")


def embed_file(
    source: str | Path,
    config: AuditConfig,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
) -> tuple[np.ndarray, dict]:
    """(rows x d float32 unit vectors of every data row of `source`, in file order; the
    sidecar's record). Uses `embedding_model`, `embedding_batch_size`, `device`, `text_column`
    of `config`, and the embedding cache like an audit."""
    if config.late_interaction:
        raise ConfigError(
            f"Setting 'embedding_model' = \"{config.embedding_model}\" is a late-interaction "
            "(ColBERT) model, which compares token vectors: `parm embed` writes one vector per "
            "answer. Audit with that model directly instead.",
            "embedding_model",
        )
    source = Path(source).expanduser()
    texts = every_text(read_file(source, config.sheet), config, str(source))
    vectors, facts = embed_texts(
        texts,
        config.embedding_model,
        config.embedding_batch_size,
        Reporter(progress, cancel),
        device=config.device,
        long_answers=config.long_answers,
        cache_mb=config.embedding_cache_mb,
    )
    record = sidecar_record(
        len(texts), int(vectors.shape[1]), config.embedding_model,
        model_identity(config.embedding_model), facts.device, config.text_column, source,
        package_version("parm"),
    )  # fmt: skip
    record["long_answers"] = config.long_answers
    return vectors, record


def write_embeddings(out: str | Path, vectors: np.ndarray, record: dict) -> list[Path]:
    """`out` (a .npy array) and its sidecar, both or neither; the paths written."""
    out = Path(out).expanduser()
    array = np.ascontiguousarray(vectors, dtype=np.float32)
    header = _npy_header(array)
    # The array's bytes are written from the array itself: a large one is not copied.
    parts = (header, array.data.cast("B"))
    side = sidecar_path(out)
    atomic_write_files({out: parts, side: json.dumps(record, indent=2) + "\n"})
    return [out, side]


def _npy_header(array: np.ndarray) -> bytes:
    """The .npy magic and header `numpy.save` would write for `array`."""
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, np.lib.format.header_data_from_array_1_0(array))
    return buffer.getvalue()
