"""What the embedding stage hands on: unit vectors, one per response, or the token vectors of
every response as one ragged array."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)


@dataclass(frozen=True)
class TokenEmbeddings:
    """A ragged array: the token vectors of N responses stacked into one matrix.

    matrix: (T, d) float32 unit vectors, all responses' tokens one after another;
    offsets: (N + 1,) int64, response i owns rows offsets[i]:offsets[i + 1] (at least one).
    """

    matrix: np.ndarray
    offsets: np.ndarray

    @classmethod
    def from_list(cls, vectors: list[np.ndarray]) -> TokenEmbeddings:
        """Stack per-response (|T_i|, d) arrays; rows are L2-normalised."""
        lengths = np.array([len(v) for v in vectors], dtype=np.int64)
        if np.any(lengths == 0):
            raise ValueError("every response needs at least one token vector")
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return cls(unit_rows(np.concatenate(vectors, axis=0)), offsets)

    @property
    def n(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        """(N,) token counts |T_i|."""
        return np.diff(self.offsets)

    def of(self, i: int) -> np.ndarray:
        """(|T_i|, d) token vectors of response i."""
        return self.matrix[self.offsets[i] : self.offsets[i + 1]]

    def mean_pooled(self) -> np.ndarray:
        """(N, d) unit vectors: the mean of each response's token vectors, L2-normalised."""
        sums = np.add.reduceat(self.matrix.astype(np.float64), self.offsets[:-1], axis=0)
        return unit_rows(sums / self.lengths[:, None])
