"""Sentence embeddings: one unit vector per response, from a sentence-transformers model (the
bundled all-MiniLM-L6-v2 by default), cached on disk by model and text content."""

from __future__ import annotations

import time

import numpy as np

from engine.core.progress import Reporter
from engine.embedding import cache
from engine.embedding.loading import model_for
from engine.embedding.models import count_truncated
from engine.embedding.vectors import unit_rows
from engine.input.config import DEFAULT_MODEL


def is_cached(texts: list[str], model_name: str = DEFAULT_MODEL) -> bool:
    """Whether the cache holds these texts' vectors (and their truncation count) for the
    model, so that embedding them will not need the model."""
    key = cache.cache_key(model_name, texts)
    if cache.read_cache_count(key) is None:
        return False
    cached = cache.read_cache(key)
    return cached is not None and cached.shape[0] == len(texts)


def embed_texts(
    texts: list[str],
    model_name: str = DEFAULT_MODEL,
    batch_size: int = 32,
    reporter: Reporter | None = None,
    use_cache: bool = True,
) -> tuple[np.ndarray, dict]:
    """Embed texts into (N, d) float32 unit vectors.

    Texts are sorted by length so batches pad little, encoded in groups (progress and cancel
    checks between groups), then put back in input order. Returns the vectors and facts for
    the report (cached, seconds, truncated count, device).
    """
    reporter = reporter or Reporter()
    key = cache.cache_key(model_name, texts)
    if use_cache:
        cached = cache.read_cache(key)
        if cached is not None and cached.shape[0] == len(texts):
            reporter("embedding", len(texts), len(texts), "loaded from cache")
            truncated = cache.read_cache_count(key)
            loading = 0.0
            if truncated is None:
                model, loading = model_for(model_name, reporter)
                truncated = count_truncated(model, texts)
            facts = {"cached": True, "seconds": 0.0, "truncated": truncated}
            return cached, {**facts, "loading_seconds": round(loading, 3)}
    # Once per process, as stage "model" (engine.embedding.loading): not once per item.
    model, loading = model_for(model_name, reporter)
    reporter("embedding", 0, len(texts), f"0 of {len(texts):,} responses")
    started = time.perf_counter()
    order = np.argsort([len(t) for t in texts], kind="stable")[::-1]
    vectors = None
    # One batch per call: about a second of work on a CPU, so progress and cancel stay prompt
    # (a static model encodes a few thousand texts in that time).
    group = getattr(model, "encode_group", batch_size)
    for start in range(0, len(texts), group):
        reporter.check()
        chunk = [texts[i] for i in order[start : start + group]]
        encoded = model.encode(
            chunk, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        if vectors is None:
            vectors = np.empty((len(texts), encoded.shape[1]), dtype=np.float32)
        vectors[order[start : start + group]] = encoded
        done = min(start + group, len(texts))
        reporter("embedding", done, len(texts), f"{done:,} of {len(texts):,} responses")
    vectors = unit_rows(vectors)
    seconds = time.perf_counter() - started
    truncated = count_truncated(model, texts)
    if use_cache:
        cache.write_cache(key, vectors)
        cache.write_cache_count(key, truncated)
    return vectors, {
        "cached": False,
        "seconds": round(seconds, 3),
        "truncated": truncated,
        "device": str(getattr(model, "device", "cpu")),
        "loading_seconds": round(loading, 3),
        **({"warnings": list(model.notes)} if getattr(model, "notes", None) else {}),
    }
