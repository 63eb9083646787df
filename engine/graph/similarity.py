"""Blocks of cosine similarities: rows start:stop of the N x N matrix, written into one reused
float32 buffer, so the all-pairs products never hold N x N at once.

Both the neighbour search and the dense graph's features read the similarities through here.

The products are exact, so a similarity is the same number on every machine: the vectors are
rounded to multiples of 2^-21 (`on_grid`; a change of at most 2.4e-7 per coordinate, below what
the model's float32 output carries) and multiplied in float64, where every product of two such
numbers and every partial sum of a dot product of unit vectors is an exact multiple of 2^-42 of
magnitude below 2^11, so no BLAS kernel, thread count, summation order or library can round
differently. The exact similarity is then rounded once to float32. A float32 product would be
twice as fast, but its last bits differ between CPU kinds, BLAS kernels and numpy and torch
(1.8e-7 seen), which reorders near-tied neighbours and, through them, flags and the selected K.
"""

from __future__ import annotations

import sys

import numpy as np

# Blocks hold chunk x N float32 similarities; this caps one block at 64 MB whatever chunk says.
# It also bounds the time between progress events: a block is at most 1.3e10 flops at d = 384,
# about 0.2 s on two idle cores (under 1 s with the cores shared by other work).
MAX_BLOCK_ELEMENTS = 16 * 1024 * 1024
# Vectors are rounded to multiples of 1 / GRID before the float64 products (module docstring).
GRID = 2.0**21
# Exactness needs |x| |y| < 2^(53 - 42) for every pair: far above unit vectors' 1.
MAX_NORM = 32.0
# Above this many multiply-adds (N^2 d) the ~2 s it takes to import torch is won back by its
# faster float32 matrix product (~115 against ~75 GFLOP/s on two cores; FACTS.md).
TORCH_WORTH_IMPORTING = 2.0e11
# None: torch when already imported or worth importing (above); True/False force it (tests).
USE_TORCH: bool | None = None


def on_grid(vectors: np.ndarray) -> np.ndarray:
    """float64 copies of `vectors` rounded to multiples of 1 / GRID: their products are exact."""
    grid = np.rint(np.asarray(vectors, dtype=np.float64) * GRID)
    grid /= GRID
    if grid.size and float(np.max(np.einsum("ij,ij->i", grid, grid))) > MAX_NORM**2:
        raise ValueError("similarities need unit vectors (their norms are far above 1)")
    return grid


def effective_chunk(n: int, chunk: int) -> int:
    """Rows per block: the configured chunk, capped so a block stays under MAX_BLOCK_ELEMENTS."""
    return max(1, min(chunk, MAX_BLOCK_ELEMENTS // max(n, 1)))


def blocks(n: int, chunk: int):
    step = effective_chunk(n, chunk)
    for start in range(0, n, step):
        yield start, min(n, start + step)


class Similarities:
    """Blocks of cosine similarities (rows start:stop against all rows, or a tile of rows
    against columns) written into one reused buffer, by torch when it is already loaded or
    worth loading, else by numpy."""

    def __init__(self, embeddings: np.ndarray, chunk: int, entries: int = 0):
        n, d = embeddings.shape
        self.embeddings = on_grid(embeddings)
        # Room for `entries` similarities (a tile of the neighbour search), else for a block of
        # full rows (the dense graph's blocks).
        size = entries or effective_chunk(n, chunk) * n
        self.torch = None
        wanted = USE_TORCH
        if wanted is None:
            wanted = "torch" in sys.modules or float(n) * n * d > TORCH_WORTH_IMPORTING
        if wanted:
            try:
                import torch

                self.torch = torch
                self.tensor = torch.from_numpy(self.embeddings)
                self.exact_t = torch.empty(size, dtype=torch.float64)
            except ImportError:  # pragma: no cover - torch is a dependency
                self.torch = None
        if self.torch is None:
            self.exact = np.empty(size, dtype=np.float64)
        self.flat = np.empty(size, dtype=np.float32)

    def _product(self, a: slice, b: slice) -> np.ndarray:
        """embeddings[a] @ embeddings[b].T, exact, rounded into the float32 buffer: a contiguous
        view of it."""
        rows = len(range(*a.indices(self.embeddings.shape[0])))
        cols = len(range(*b.indices(self.embeddings.shape[0])))
        if self.torch is not None:
            exact_t = self.exact_t[: rows * cols].view(rows, cols)
            self.torch.matmul(self.tensor[a], self.tensor[b].T, out=exact_t)
            exact = exact_t.numpy()
        else:
            exact = self.exact[: rows * cols].reshape(rows, cols)
            np.matmul(self.embeddings[a], self.embeddings[b].T, out=exact)
        out = self.flat[: rows * cols].reshape(rows, cols)
        np.copyto(out, exact, casting="same_kind")
        return out

    def __call__(self, start: int, stop: int) -> np.ndarray:
        """(stop - start, N) float32 view of the reused buffer."""
        return self._product(slice(start, stop), slice(None))

    def tile(self, rows: slice, cols: slice) -> np.ndarray:
        """(rows, cols) float32 similarities; the buffer's `entries` must hold the tile."""
        return self._product(rows, cols)
