"""Embeddings computed elsewhere (for example on a GPU machine), handed in as a .npy file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.core.errors import EmbeddingError
from engine.embedding.vectors import unit_rows


def load_embeddings(
    path: str | Path, rows: np.ndarray, n_file_rows: int | None = None
) -> np.ndarray:
    """Precomputed embeddings from a .npy file with one row per input data row.

    rows: the 1-based data rows the audit uses (skipped rows are left out). The file must have
    one row per data row of the input (n_file_rows when known), all finite.
    """
    path = Path(path).expanduser()
    try:
        array = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise EmbeddingError(f"Embeddings file not found: {path}") from None
    except (OSError, ValueError) as exc:
        raise EmbeddingError(
            f"Embeddings file {path} is not a readable .npy array: {exc}"
        ) from None
    if not isinstance(array, np.ndarray):
        # np.load returns an archive for .npz files; the audit needs one plain array.
        raise EmbeddingError(
            f"Embeddings file {path} is not a single .npy array (an .npz archive?); "
            "save it with numpy.save."
        )
    if array.ndim != 2 or array.shape[1] < 1 or array.shape[0] < 1:
        raise EmbeddingError(
            f"Embeddings file {path} has shape {array.shape}; expected (rows, dim)."
        )
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise EmbeddingError(
            f"Embeddings file {path} holds {array.dtype} values; expected numbers (float32)."
        )
    expected = n_file_rows if n_file_rows is not None else int(rows.max())
    if array.shape[0] != expected:
        raise EmbeddingError(
            f"Embeddings file {path} has {array.shape[0]:,} rows but the input has {expected:,} "
            "data rows; it needs one row per input row, in the same order."
        )
    array = array[rows - 1].astype(np.float32)
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad.size:
        shown = ", ".join(str(int(rows[i])) for i in bad[:5])
        raise EmbeddingError(
            f"Embeddings file {path} has non-finite values in {bad.size} row(s) (data rows {shown})."
        )
    return unit_rows(array)


def load_for_items(path: str | Path, items) -> list[np.ndarray]:
    """Precomputed embeddings for a file of items (engine.input.items.Items): the .npy file is
    read once and split into one array per audited item, rows in the item's order."""
    audited = items.audited
    rows = np.concatenate([responses.rows for responses in audited])
    vectors = load_embeddings(path, rows, items.file_rows)
    bounds = np.cumsum([len(responses) for responses in audited])[:-1]
    return np.split(vectors, bounds)
