"""The late-interaction (ColBERT) graph: candidate retrieval, then MaxSim on the candidates.

An `embedding_model` whose name contains colbert, lateon or late-interaction selects this mode
(`engine.input.settings.config.similarity_mode`). The graph is built in two stages, as in the paper:

1. Coarse retrieval. Each response's token vectors are mean-pooled and L2-normalised, and
   `engine.graph.search.build_graph` picks its K_c = `colbert_top_k` nearest candidates by cosine
   (null: all N - 1 candidates, i.e. MaxSim on every pair).
2. MaxSim on the candidate pairs only, `colbert_batch_size` pairs per batch, symmetrised as the
   mean of the two directions, each length-normalised (`colbert_maxsim` "normalised") or not
   ("raw", the paper's sum; see `engine.graph.maxsim`):
       s_ij = ( MaxSim(i -> j) / |T_i| + MaxSim(j -> i) / |T_j| ) / 2.

Each response's candidates are then re-sorted by s_ij into a `NeighbourGraph` (mode
"late-interaction", no embeddings), whose low/high are the min/max over the scored pairs; the usual
normalisation, power and top-K views apply unchanged. Every similarity_top_k must be
<= colbert_top_k; similarity_top_k null means "all K_c candidates" (`tuning_config`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from engine.core.errors import ConfigError
from engine.core.progress import Reporter
from engine.embedding.vectors import TokenEmbeddings
from engine.graph.maxsim import pair_scores
from engine.graph.neighbour_graph import NeighbourGraph
from engine.graph.search import build_graph
from engine.input.settings.config import LATE_INTERACTION, AuditConfig, replace

MODE = LATE_INTERACTION


@dataclass(frozen=True)
class LateInteractionFacts:
    """What building the late-interaction graph did, for the report: K_c candidates per
    response, the distinct pairs MaxSim scored, the token vectors in all; and warnings for the
    run's warnings (never written with the facts)."""

    candidates: int
    pairs: int
    tokens: int
    warnings: tuple[str, ...] = ()

    def record(self) -> dict:
        """The facts as report.json and saved sessions keep them (beside the embedding's)."""
        return {"candidates": self.candidates, "pairs": self.pairs, "tokens": self.tokens}

    @classmethod
    def from_record(cls, record: dict) -> LateInteractionFacts | None:
        """The facts back from a record that holds them, else None (single-vector mode)."""
        if "candidates" not in record:
            return None
        return cls(int(record["candidates"]), int(record["pairs"]), int(record["tokens"]))


def late_interaction_graph(
    tokens: TokenEmbeddings, config: AuditConfig, reporter: Reporter | None = None
) -> tuple[NeighbourGraph, LateInteractionFacts]:
    """The MaxSim neighbour graph of the responses' token embeddings.

    Returns the graph ((N, K_c) candidates sorted by s_ij) and the facts of building it.
    """
    warnings: list[str] = []
    k_c = candidate_count(config, tokens.n, warnings)
    graph, pairs = maxsim_graph(
        tokens,
        k_c,
        config.colbert_batch_size,
        config.normalize_similarities,
        reporter,
        raw=config.colbert_maxsim == "raw",
    )
    facts = LateInteractionFacts(k_c, pairs, int(tokens.lengths.sum()), tuple(warnings))
    return graph, facts


def candidate_count(config: AuditConfig, n: int, warnings: list[str]) -> int:
    """K_c for N responses: colbert_top_k capped at N - 1 (null: N - 1); checks top-K against it."""
    if n < 2:
        raise ConfigError("A similarity graph needs at least two responses.")
    if config.colbert_top_k is None:
        warnings.append(
            f"colbert_top_k is null: MaxSim is computed on all {n * (n - 1) // 2:,} pairs, which "
            "costs O(N^2 x tokens^2); set colbert_top_k to score only the nearest candidates."
        )
        k_c = n - 1
    elif config.colbert_top_k > n - 1:
        warnings.append(
            f"colbert_top_k = {config.colbert_top_k} but there are only {n} responses; "
            f"all {n - 1} other responses are candidates."
        )
        k_c = n - 1
    else:
        k_c = config.colbert_top_k
    too_large = [k for k in config.top_k_values if k is not None and k > k_c]
    if too_large:
        raise ConfigError(
            f"Setting 'similarity_top_k' asks for {max(too_large)} neighbours but late "
            f"interaction scores only {k_c} candidates per response ('colbert_top_k' = "
            f"{json.dumps(config.colbert_top_k)}, {n} responses); use values <= {k_c}.",
            "similarity_top_k",
        )
    return k_c


def tuning_config(config: AuditConfig, graph: NeighbourGraph) -> AuditConfig:
    """The config tuning uses: similarity_top_k null means "all K_c candidates" in this mode.

    The dense graph needs every pairwise similarity, which late interaction does not compute, so
    null is mapped to the candidate count (the tuning table then shows K = K_c).
    """
    if config.similarity_top_k is None:
        return replace(config, similarity_top_k=graph.k_max)
    return config


def maxsim_graph(
    tokens: TokenEmbeddings,
    k_c: int,
    batch_size: int = 256,
    normalize: bool = True,
    reporter: Reporter | None = None,
    raw: bool = False,
) -> tuple[NeighbourGraph, int]:
    """Candidates by mean-pooled cosine, re-scored with the symmetrised MaxSim (raw sums or
    length-normalised).

    Returns the graph (indices (N, k_c) sorted by s_ij, similarities s_ij, low/high over the scored
    pairs) and the number of distinct pairs scored (each unordered pair once).
    """
    coarse = build_graph(tokens.mean_pooled(), k_c, normalize=normalize, reporter=reporter)
    n, k_c = coarse.indices.shape
    rows = np.repeat(np.arange(n, dtype=np.int64), k_c)
    cols = coarse.indices.ravel().astype(np.int64)
    # A pair that is a candidate in both directions is scored once: s_ij is symmetric.
    codes = np.minimum(rows, cols) * n + np.maximum(rows, cols)
    unique, inverse = np.unique(codes, return_inverse=True)
    scores = pair_scores(tokens, unique // n, unique % n, batch_size, reporter, raw)
    similarities = scores[inverse].reshape(n, k_c)
    order = np.argsort(-similarities, axis=1, kind="stable")
    graph = NeighbourGraph(
        indices=np.take_along_axis(coarse.indices, order, axis=1),
        similarities=np.take_along_axis(similarities, order, axis=1),
        low=float(scores.min()),
        high=float(scores.max()),
        normalize=normalize,
        embeddings=None,
        mode=MODE,
    )
    return graph, len(unique)


# -- token embeddings -----------------------------------------------------------------------------
