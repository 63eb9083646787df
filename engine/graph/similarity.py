"""Blocks of cosine similarities: rows start:stop of the N x N matrix, written into one reused
float32 buffer, so the all-pairs products never hold N x N at once.

Both the neighbour search and the dense graph's features read the similarities through here.
"""

from __future__ import annotations

import sys

import numpy as np

# Blocks hold chunk x N float32 similarities; this caps one block at 64 MB whatever chunk says.
# It also bounds the time between progress events: a block is at most 1.3e10 flops at d = 384,
# about 0.2 s on two idle cores (under 1 s with the cores shared by other work).
MAX_BLOCK_ELEMENTS = 16 * 1024 * 1024
# Above this many multiply-adds (N^2 d) the ~2 s it takes to import torch is won back by its
# faster float32 matrix product (~115 against ~75 GFLOP/s on two cores; FACTS.md).
TORCH_WORTH_IMPORTING = 2.0e11
# None: torch when already imported or worth importing (above); True/False force it (tests).
USE_TORCH: bool | None = None


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
        self.embeddings = embeddings
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
                self.tensor = torch.from_numpy(embeddings)
                self.flat_t = torch.empty(size, dtype=torch.float32)
            except ImportError:  # pragma: no cover - torch is a dependency
                self.torch = None
        if self.torch is None:
            self.flat = np.empty(size, dtype=np.float32)

    def _product(self, a: slice, b: slice) -> np.ndarray:
        """embeddings[a] @ embeddings[b].T into the buffer: a contiguous float32 view."""
        rows = len(range(*a.indices(self.embeddings.shape[0])))
        cols = len(range(*b.indices(self.embeddings.shape[0])))
        if self.torch is not None:
            out = self.flat_t[: rows * cols].view(rows, cols)
            self.torch.matmul(self.tensor[a], self.tensor[b].T, out=out)
            return out.numpy()
        out = self.flat[: rows * cols].reshape(rows, cols)
        np.matmul(self.embeddings[a], self.embeddings[b].T, out=out)
        return out

    def __call__(self, start: int, stop: int) -> np.ndarray:
        """(stop - start, N) float32 view of the reused buffer."""
        return self._product(slice(start, stop), slice(None))

    def tile(self, rows: slice, cols: slice) -> np.ndarray:
        """(rows, cols) float32 similarities; the buffer's `entries` must hold the tile."""
        return self._product(rows, cols)
