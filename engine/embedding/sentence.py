"""Sentence embeddings: one unit vector per response, from a sentence-transformers model (the
bundled all-MiniLM-L6-v2 by default), cached on disk by model and text content."""

from __future__ import annotations

import time

import numpy as np

from engine.core.progress import EMBEDDING, Reporter
from engine.embedding import cache
from engine.embedding.loading import model_for
from engine.embedding.models import count_truncated
from engine.embedding.vectors import EmbeddingFacts, unit_rows
from engine.input.config import DEFAULT_MODEL


def embed_texts(
    texts: list[str],
    model_name: str = DEFAULT_MODEL,
    batch_size: int = 32,
    reporter: Reporter | None = None,
    use_cache: bool = True,
    device: str = "auto",
) -> tuple[np.ndarray, EmbeddingFacts]:
    """Embed texts into (N, d) float32 unit vectors on `device` (the `device` setting: auto,
    cpu, cuda).

    Texts are sorted by length so batches pad little, encoded in groups (progress and cancel
    checks between groups), then put back in input order. Returns the vectors and the facts of
    how they were made (cached, seconds, truncated count, device).
    """
    reporter = reporter or Reporter()
    key = cache.cache_key(model_name, texts)
    notes: list[str] = []
    if use_cache:
        vectors, truncated, note = _cached(key, len(texts))
        if vectors is not None:
            reporter(EMBEDDING, len(texts), len(texts), "loaded from cache")
            return vectors, EmbeddingFacts(model_name, cached=True, truncated=truncated)
        notes += [note] if note else []
    # Once per process, as stage "model" (engine.embedding.loading): not once per item.
    model, loading = model_for(model_name, reporter, device)
    notes += list(getattr(model, "notes", None) or ())
    reporter(EMBEDDING, 0, len(texts), f"0 of {len(texts):,} responses")
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
        reporter(EMBEDDING, done, len(texts), f"{done:,} of {len(texts):,} responses")
    vectors = unit_rows(vectors)
    seconds = time.perf_counter() - started
    truncated = count_truncated(model, texts)
    if use_cache:
        stored = {"vectors": vectors, "truncated": np.array([truncated], dtype=np.int64)}
        note = cache.write_arrays(key, stored)
        notes += [note] if note else []
    return vectors, EmbeddingFacts(
        model_name,
        seconds=round(seconds, 3),
        truncated=truncated,
        device=str(getattr(model, "device", "cpu")),
        loading_seconds=round(loading, 3),
        warnings=tuple(notes),
    )


def _cached(key: str, n: int) -> tuple[np.ndarray | None, int, str | None]:
    """(vectors, truncated count, None) from a verified cache entry; (None, 0, warning or
    None) when there is none or it was damaged (engine.embedding.cache)."""
    arrays, note = cache.read_arrays(key)
    if arrays is None:
        return None, 0, note
    vectors, truncated = arrays.get("vectors"), arrays.get("truncated")
    fits = (
        vectors is not None
        and truncated is not None
        and vectors.dtype == np.float32
        and vectors.ndim == 2
        and vectors.shape[0] == n
        and vectors.shape[1] > 0
        and truncated.shape == (1,)
    )
    if not fits:
        path = cache.entry_path(key)
        return None, 0, cache.discard(path, f"it does not hold {n:,} float32 vectors")
    return vectors, int(truncated[0]), None
