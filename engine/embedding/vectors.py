"""What the embedding stage hands on (`Embedded`): unit vectors, one per response, or the token
vectors of every response as one ragged array (`TokenEmbeddings`), with the typed facts of how
they were made (`EmbeddingFacts`)."""

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


# The model name in the facts of vectors handed in (`--embeddings`) rather than embedded here.
PRECOMPUTED = "precomputed"


@dataclass(frozen=True)
class EmbeddingFacts:
    """What the embedding stage did, for the report and the run's warnings.

    model: the model's name or path (PRECOMPUTED for vectors handed in); cached: read from the
    cache; seconds: spent encoding (0 when cached or handed in); truncated: responses longer
    than the model's input limit; device: where the model ran (None when it did not run);
    token_model: how token vectors were read ("multi-vector" or "sentence"; None otherwise);
    loading_seconds: spent loading (or distilling) the model, once per process; a timing,
    never written with the facts; warnings: for the run's warnings, never written either.
    """

    model: str
    cached: bool = False
    seconds: float = 0.0
    truncated: int = 0
    device: str | None = None
    token_model: str | None = None
    loading_seconds: float = 0.0
    warnings: tuple[str, ...] = ()

    def record(self) -> dict:
        """The facts as report.json and saved sessions keep them (device and token_model only
        when known, no warnings)."""
        record = {
            "model": self.model,
            "cached": self.cached,
            "seconds": self.seconds,
            "truncated": self.truncated,
        }
        if self.device is not None:
            record["device"] = self.device
        if self.token_model is not None:
            record["token_model"] = self.token_model
        return record

    @classmethod
    def from_record(cls, record: dict) -> EmbeddingFacts:
        """The facts back from `record()` (keys it does not know are not its own)."""
        device, token_model = record.get("device"), record.get("token_model")
        return cls(
            model=str(record["model"]),
            cached=bool(record["cached"]),
            seconds=float(record["seconds"]),
            truncated=int(record["truncated"]),
            device=None if device is None else str(device),
            token_model=None if token_model is None else str(token_model),
        )


@dataclass(frozen=True)
class Embedded:
    """The embedding stage's output: one unit vector per response, or in late-interaction mode
    every response's token vectors, with the facts of how they were made."""

    vectors: np.ndarray | TokenEmbeddings
    facts: EmbeddingFacts

    @classmethod
    def precomputed(cls, vectors: np.ndarray) -> Embedded:
        """Vectors computed elsewhere (one unit vector per response), handed in."""
        return cls(vectors, EmbeddingFacts(PRECOMPUTED))

    @property
    def tokens(self) -> bool:
        """Whether these are token embeddings (late interaction)."""
        return isinstance(self.vectors, TokenEmbeddings)

    def __len__(self) -> int:
        return self.vectors.n if isinstance(self.vectors, TokenEmbeddings) else len(self.vectors)

    def single_vectors(self) -> np.ndarray:
        """(N, d) one unit vector per response: the token vectors mean-pooled when tokens."""
        if isinstance(self.vectors, TokenEmbeddings):
            return self.vectors.mean_pooled()
        return self.vectors
