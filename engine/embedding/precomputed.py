"""Embeddings computed elsewhere (for example on a GPU machine), handed in as a .npy file.

The file is opened only when it is a regular file, and its header is read and checked (shape,
value type, and that the file really holds that many bytes) before the array is allocated, so
a header that announces a huge array is an error message, not a MemoryError.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format

from engine.core.errors import EmbeddingError
from engine.core.files import open_regular
from engine.embedding.sidecar import check_sidecar
from engine.embedding.vectors import unit_rows

_HEADER_READERS = {
    (1, 0): npy_format.read_array_header_1_0,
    (2, 0): npy_format.read_array_header_2_0,
}


def load_embeddings(
    path: str | Path, rows: np.ndarray, n_file_rows: int | None = None
) -> np.ndarray:
    """Precomputed embeddings from a .npy file with one row per input data row.

    rows: the 1-based data rows the audit uses (skipped rows are left out). The file must have
    one row per data row of the input (n_file_rows when known), all finite.
    """
    path = Path(path).expanduser()
    expected = n_file_rows if n_file_rows is not None else int(rows.max())
    with open_regular(path, "Embeddings file", EmbeddingError) as handle:
        _check_header(handle, path, expected)
        handle.seek(0)
        try:
            array = np.load(handle, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise EmbeddingError(
                f"Embeddings file {path} is not a readable .npy array: {exc}"
            ) from None
    array = array[rows - 1].astype(np.float32)
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad.size:
        shown = ", ".join(str(int(rows[i])) for i in bad[:5])
        raise EmbeddingError(
            f"Embeddings file {path} has non-finite values in {bad.size} row(s) (data rows {shown})."
        )
    return unit_rows(array)


def _read_header(handle, path: Path) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) from a .npy header, without reading the data."""
    start = handle.read(4)
    handle.seek(0)
    if start.startswith(b"PK\x03\x04"):
        # np.savez writes a zip archive; the audit needs one plain array.
        raise EmbeddingError(
            f"Embeddings file {path} is not a single .npy array (an .npz archive?); "
            "save it with numpy.save."
        )
    try:
        version = npy_format.read_magic(handle)
        reader = _HEADER_READERS.get(version)
        if reader is None:
            raise ValueError(f"unsupported .npy format version {version[0]}.{version[1]}")
        shape, _, dtype = reader(handle)
    except (OSError, ValueError, SyntaxError) as exc:
        raise EmbeddingError(
            f"Embeddings file {path} is not a readable .npy array: {exc}"
        ) from None
    return shape, dtype


def _check_header(handle, path: Path, expected_rows: int) -> None:
    """Refuse a wrong shape, type or row count, or a file shorter than its header announces."""
    shape, dtype = _read_header(handle, path)
    if len(shape) != 2 or shape[1] < 1 or shape[0] < 1:
        raise EmbeddingError(f"Embeddings file {path} has shape {shape}; expected (rows, dim).")
    if not (np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.integer)):
        raise EmbeddingError(
            f"Embeddings file {path} holds {dtype} values; expected numbers (float32)."
        )
    if shape[0] != expected_rows:
        raise EmbeddingError(
            f"Embeddings file {path} has {shape[0]:,} rows but the input has {expected_rows:,} "
            "data rows; it needs one row per input row, in the same order."
        )
    announced = shape[0] * shape[1] * dtype.itemsize
    available = _file_size(handle) - handle.tell()
    if available < announced:
        raise EmbeddingError(
            f"Embeddings file {path} is cut short: its header announces {shape[0]:,} x "
            f"{shape[1]:,} {dtype} values ({announced:,} bytes) but it holds {available:,} bytes."
        )


def _file_size(handle) -> int:
    return os.fstat(handle.fileno()).st_size


def load_for_items(path: str | Path, items, text_column: str | None = None) -> list[np.ndarray]:
    """Precomputed embeddings for a file of items (engine.input.items.Items): the .npy file is
    read once and split into one array per audited item, rows in the item's order. A sidecar
    from `parm embed` (engine.embedding.sidecar) must describe this input file, its row count
    and (when given) the text column."""
    check_sidecar(Path(path).expanduser(), items.source, text_column, items.file_rows)
    audited = items.audited
    rows = np.concatenate([responses.rows for responses in audited])
    vectors = load_embeddings(path, rows, items.file_rows)
    bounds = np.cumsum([len(responses) for responses in audited])[:-1]
    return np.split(vectors, bounds)
