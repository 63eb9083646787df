"""Late-interaction (ColBERT) similarities: token embeddings, candidate retrieval, MaxSim.

An `embedding_model` whose name contains colbert, lateon or late-interaction selects this mode
(`engine.input.config.is_late_interaction`). The graph is built in two stages, as in the paper:

1. Coarse retrieval. Each response's token vectors are mean-pooled and L2-normalised, and
   `engine.graph.neighbour_graph.build_graph` picks its K_c = `colbert_top_k` nearest candidates by cosine
   (null: all N - 1 candidates, i.e. MaxSim on every pair).
2. MaxSim on the candidate pairs only, `colbert_batch_size` pairs per batch, symmetrised and
   length-normalised as the mean of the two mean-max directions (see `engine.graph.maxsim`):
       s_ij = ( MaxSim(i -> j) / |T_i| + MaxSim(j -> i) / |T_j| ) / 2.

Each response's candidates are then re-sorted by s_ij into a `NeighbourGraph` (mode
"late-interaction", no embeddings), whose low/high are the min/max over the scored pairs; the usual
normalisation, power and top-K views apply unchanged. Every similarity_top_k must be
<= colbert_top_k; similarity_top_k null means "all K_c candidates" (`tuning_config`).

Token embeddings. A PyLate / ColBERT checkpoint (config_sentence_transformers.json with
model_type "ColBERT" or PyLate keys such as document_prefix, or a Stanford HF_ColBERT) is loaded
with sentence-transformers' `MultiVectorEncoder` and encoded with `encode_document`: the document
prefix (e.g. "[D] ") after [CLS], the checkpoint's document_length, its projection Dense layer,
padding and punctuation-skiplist tokens dropped, each vector L2-normalised, as PyLate does for
documents. Any other sentence-transformers model uses its transformer's token embeddings with the
same masking (padding and string.punctuation tokens dropped) and normalisation, and no prefix or
projection (`MultiVectorEncoder` would append a randomly initialised projection to such a model).
"""

from __future__ import annotations

import json
import string
import time
from pathlib import Path

import numpy as np

from engine.embedding import sentence as embed
from engine.input.config import AuditConfig, replace
from engine.input.responses import Responses
from engine.core.errors import ConfigError, EmbeddingError
from engine.graph.neighbour_graph import NeighbourGraph, build_graph
from engine.graph.maxsim import TokenEmbeddings, pair_scores, unit_rows
from engine.core.progress import Reporter

MODE = "late-interaction"
PYLATE_KEYS = ("query_prefix", "document_prefix", "skiplist_words", "document_length")


# -- the graph ------------------------------------------------------------------------------------
def late_interaction_graph(
    responses: Responses, config: AuditConfig, reporter: Reporter | None = None
) -> tuple[NeighbourGraph, dict]:
    """Token-embed the responses and build the MaxSim neighbour graph.

    Returns the graph ((N, K_c) candidates sorted by s_ij) and facts for the report, including
    "embedding_seconds", "candidates" (K_c), "pairs" (MaxSim pairs scored) and "warnings".
    """
    reporter = reporter or Reporter()
    started = time.perf_counter()
    tokens, info = embed_tokens(
        responses.texts, config.embedding_model, config.embedding_batch_size, reporter
    )
    info["embedding_seconds"] = round(time.perf_counter() - started, 3)
    warnings: list[str] = []
    k_c = candidate_count(config, tokens.n, warnings)
    graph, pairs = maxsim_graph(
        tokens, k_c, config.colbert_batch_size, config.normalize_similarities, reporter
    )
    info.update(candidates=k_c, pairs=pairs, tokens=int(tokens.lengths.sum()), warnings=warnings)
    return graph, info


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
            f"{json.dumps(config.colbert_top_k)}, {n} responses); use values <= {k_c}."
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
) -> tuple[NeighbourGraph, int]:
    """Candidates by mean-pooled cosine, re-scored with the symmetrised MaxSim.

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
    scores = pair_scores(tokens, unique // n, unique % n, batch_size, reporter)
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
def embed_tokens(
    texts: list[str],
    model_name: str,
    batch_size: int = 32,
    reporter: Reporter | None = None,
    use_cache: bool = True,
) -> tuple[TokenEmbeddings, dict]:
    """Token embeddings of `texts` (unit vectors), cached on disk as float16 matrix + offsets.

    Vectors are rounded to float16 whether or not they came from the cache, so a cached run
    gives exactly the same graph as the first one.
    """
    reporter = reporter or Reporter()
    key = embed.cache_key(model_name, texts, kind="token")
    cached = embed.read_cache_arrays(key) if use_cache else None
    if cached is not None and _fits(cached, len(texts)):
        reporter("embedding", len(texts), len(texts), "token embeddings loaded from cache")
        tokens = _from_half(cached["matrix"], cached["offsets"])
        truncated = int(cached["truncated"]) if "truncated" in cached else 0
        return tokens, {"model": model_name, "cached": True, "seconds": 0.0, "truncated": truncated}
    reporter("embedding", 0, len(texts), f"loading model {model_name}")
    model, kind = load_token_model(model_name)
    started = time.perf_counter()
    vectors = _encode_groups(model, kind, texts, batch_size, reporter)
    exact = TokenEmbeddings.from_list(vectors)
    half = exact.matrix.astype(np.float16)
    tokens = _from_half(half, exact.offsets)
    truncated = _truncated(model, texts)
    if use_cache:
        stored = {"matrix": half, "offsets": exact.offsets, "truncated": np.array(truncated)}
        embed.write_cache_arrays(key, stored)
    return tokens, {
        "model": model_name,
        "cached": False,
        "seconds": round(time.perf_counter() - started, 3),
        "truncated": truncated,
        "device": str(getattr(model, "device", "cpu")),
        "token_model": kind,
    }


def _fits(cached: dict, n: int) -> bool:
    offsets, matrix = cached.get("offsets"), cached.get("matrix")
    return (
        offsets is not None
        and matrix is not None
        and offsets.shape == (n + 1,)
        and int(offsets[-1]) == matrix.shape[0]
        and bool(np.all(np.diff(offsets) > 0))
    )


def _from_half(half: np.ndarray, offsets: np.ndarray) -> TokenEmbeddings:
    return TokenEmbeddings(unit_rows(half.astype(np.float32)), offsets.astype(np.int64))


def _truncated(model, texts: list[str]) -> int:
    try:
        return embed.count_truncated(model, texts)
    except Exception:  # noqa: BLE001 - only a count for the report
        return 0


def _encode_groups(model, kind: str, texts, batch_size: int, reporter: Reporter):
    """Encode longest first in groups (progress and cancel between groups); input order out."""
    order = np.argsort([len(t) for t in texts], kind="stable")[::-1]
    vectors: list[np.ndarray | None] = [None] * len(texts)
    group = batch_size * 4
    for start in range(0, len(texts), group):
        reporter.check()
        chosen = order[start : start + group]
        encoded = _encode(model, kind, [texts[i] for i in chosen], batch_size)
        for i, v in zip(chosen, encoded):
            vectors[i] = v
        done = min(start + group, len(texts))
        reporter("embedding", done, len(texts), f"{done:,} of {len(texts):,} responses (tokens)")
    return vectors


def _encode(model, kind: str, texts: list[str], batch_size: int) -> list[np.ndarray]:
    """(|T_i|, d) float32 vectors per text, padding and skiplist tokens dropped."""
    if kind == "multi-vector":
        out = model.encode_document(texts, batch_size=batch_size, show_progress_bar=False)
        return [np.asarray(v.float().cpu() if hasattr(v, "cpu") else v, np.float32) for v in out]
    skiplist = _skiplist_ids(model.tokenizer)
    outputs = model.encode(texts, batch_size=batch_size, output_value=None, show_progress_bar=False)
    vectors = []
    for item in outputs:
        keep = item["attention_mask"].bool().cpu().numpy()
        ids = item["input_ids"].cpu().numpy()
        kept = keep & ~np.isin(ids, skiplist)
        # A text of punctuation only keeps its tokens rather than vanishing from the graph.
        mask = kept if kept.any() else keep
        vectors.append(item["token_embeddings"].float().cpu().numpy()[mask])
    return vectors


def _skiplist_ids(tokenizer) -> np.ndarray:
    """Token ids of the single-character punctuation PyLate skips in documents (known ids only)."""
    vocab = tokenizer.get_vocab()
    return np.array([vocab[p] for p in string.punctuation if p in vocab], dtype=np.int64)


def load_token_model(name: str):
    """The model and how to read its tokens: ("multi-vector" | "sentence")."""
    if is_multi_vector_checkpoint(name):
        try:
            from sentence_transformers import MultiVectorEncoder
        except ImportError:
            raise EmbeddingError(
                f"Embedding model '{name}' is a ColBERT (PyLate) checkpoint; loading it needs "
                "sentence-transformers with MultiVectorEncoder (6.2 is tested). Upgrade it with "
                "'pip install -U sentence-transformers'."
            ) from None
        return embed.load_sentence_model(name, factory=MultiVectorEncoder), "multi-vector"
    return embed.load_sentence_model(name), "sentence"


def is_multi_vector_checkpoint(name: str) -> bool:
    """True for a PyLate / ColBERT checkpoint (see the module docstring for the markers)."""
    settings = _checkpoint_json(name, "config_sentence_transformers.json")
    if settings.get("model_type") in ("ColBERT", "MultiVectorEncoder"):
        return True
    if any(key in settings for key in PYLATE_KEYS):
        return True
    return "HF_ColBERT" in (_checkpoint_json(name, "config.json").get("architectures") or [])


def _checkpoint_json(name: str, filename: str) -> dict:
    """A JSON file of a local folder or a cached hub model; {} when it cannot be found.

    A name that cannot be found at all fails later, in the loader, with its usual message.
    """
    resolved = embed.resolve_model(name)
    folder = Path(resolved).expanduser()
    path = folder / filename if folder.is_dir() else _hub_file(resolved, filename)
    try:
        return json.loads(Path(path).read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}


def _hub_file(name: str, filename: str) -> str | None:
    import os

    from sentence_transformers.util import load_file_path

    for local_only in (True, False):
        if not local_only and os.environ.get("HF_HUB_OFFLINE") == "1":
            return None
        try:
            found = load_file_path(name, filename, local_files_only=local_only)
        except Exception:  # noqa: BLE001 - missing files and offline hubs raise anything
            found = None
        if found:
            return found
    return None
