"""Sentence embeddings: one unit vector per response, from a sentence-transformers model (the
bundled all-MiniLM-L6-v2 by default), each distinct text embedded once and kept in the answer
cache (engine.embedding.cache.run_cache), read as the `long_answers` setting says
(engine.embedding.reading)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from engine.core.progress import EMBEDDING, Reporter
from engine.embedding.cache.run_cache import RunCache
from engine.embedding.loading import model_for
from engine.embedding.reading import TRUNCATE, encode_plan, plan_reading
from engine.embedding.vectors import EmbeddingFacts
from engine.input.settings.declared import DEFAULT_CACHE_MB, DEFAULT_MODEL


@dataclass(frozen=True)
class Reading:
    """The settings that decide how texts become vectors and where they are kept."""

    model_name: str = DEFAULT_MODEL
    batch_size: int = 32
    device: str = "auto"
    long_answers: str = TRUNCATE
    cache_mb: int = DEFAULT_CACHE_MB

    @classmethod
    def of(cls, config) -> Reading:
        """The reading an `AuditConfig` asks for."""
        return cls(
            config.embedding_model,
            config.embedding_batch_size,
            config.device,
            config.long_answers,
            config.embedding_cache_mb,
        )


def embed_texts(
    texts: list[str],
    model_name: str = DEFAULT_MODEL,
    batch_size: int = 32,
    reporter: Reporter | None = None,
    use_cache: bool = True,
    device: str = "auto",
    long_answers: str = TRUNCATE,
    cache_mb: int = DEFAULT_CACHE_MB,
) -> tuple[np.ndarray, EmbeddingFacts]:
    """Embed texts into (N, d) float32 unit vectors on `device` (auto, cpu, cuda), each
    distinct text once, the answer cache first (`use_cache`; `cache_mb` bounds it). Returns
    the vectors in input order and the facts of how they were made."""
    reading = Reading(model_name, batch_size, device, long_answers, cache_mb if use_cache else 0)
    [(vectors, facts)] = embed_text_lists([texts], reading, reporter)
    return vectors, facts


def embed_text_lists(
    text_lists: list[list[str]], reading: Reading, reporter: Reporter | None = None
) -> list[tuple[np.ndarray, EmbeddingFacts]]:
    """Each list of texts embedded, (N_k, d) unit vectors in its order, with its facts: every
    distinct text of all the lists is looked up or embedded once (a session's items share
    their answers' vectors). A list's facts say `cached` when none of its texts was embedded
    now, its share of the seconds, its truncated texts; the first list that needed the model
    carries the seconds spent loading it."""
    reporter = reporter or Reporter()
    position: dict[str, int] = {}
    for texts in text_lists:
        for text in texts:
            position.setdefault(text, len(position))
    distinct = list(position)
    run = RunCache(reading.model_name, reading.cache_mb)
    try:
        arrays, readings = _from_cache(run, distinct, text_lists, position, reading.long_answers)
        missing = [k for k in range(len(distinct)) if arrays[k] is None]
        cached = len(distinct) - len(missing)
        made = _embed_missing(run, reading, [distinct[k] for k in missing], reporter, cached)
        for j, k in enumerate(missing):
            arrays[k], readings[k] = made.vectors[j], made.readings[j]
        if not missing:
            # The bar counts distinct answers (N/N): the words say where they came from.
            reporter(
                EMBEDDING, len(distinct), len(distinct), f"all {len(distinct):,} from the cache"
            )
    finally:
        run.close()
    vectors = np.stack(arrays) if arrays else np.zeros((0, 0), dtype=np.float32)
    new = np.zeros(len(distinct), dtype=bool)
    new[missing] = True
    truncated = np.array([r == TRUNCATE for r in readings], dtype=bool)
    out, first = [], True
    for texts in text_lists:
        index = np.array([position[t] for t in texts], dtype=np.int64)
        now = int(np.unique(index[new[index]]).size)
        facts = EmbeddingFacts(
            reading.model_name,
            cached=now == 0,
            seconds=round(made.seconds * now / max(1, len(missing)), 3),
            truncated=int(truncated[index].sum()),
            device=made.device if now else None,
            loading_seconds=round(made.loading, 3) if now and first else 0.0,
            warnings=tuple(run.notes),
        )
        first = first and not now
        out.append((vectors[index] if len(index) else _empty(vectors), facts))
    return out


@dataclass(frozen=True)
class _Made:
    vectors: list
    readings: list[str]
    seconds: float = 0.0
    loading: float = 0.0
    device: str | None = None


def _embed_missing(
    run: RunCache, reading: Reading, texts: list[str], reporter, cached: int = 0
) -> _Made:
    """The texts the cache lacks, embedded (the model loaded once per process) and kept;
    `cached`: how many the cache had (said in the progress)."""
    if not texts:
        return _Made([], [])
    model, loading = model_for(reading.model_name, reporter, reading.device)
    run.notes += list(getattr(model, "notes", None) or ())
    started = time.perf_counter()
    plan = plan_reading(model, texts, reading.long_answers)
    encoded = encode_plan(model, plan, reading.batch_size, reporter, cached)
    seconds = time.perf_counter() - started
    run.keep(texts, list(encoded), plan.readings)
    device = str(getattr(model, "device", "cpu"))
    return _Made(list(encoded), plan.readings, seconds, loading, device)


def _from_cache(run: RunCache, distinct, text_lists, position, long_answers):
    """(arrays, readings) per distinct text from the answer cache, then from earlier versions'
    entries for whole lists; None where neither has it."""
    arrays: list = [None] * len(distinct)
    readings: list = [None] * len(distinct)
    for k, found in run.find(distinct, long_answers).items():
        arrays[k], readings[k] = found.array, found.reading
    for texts in text_lists:
        index = [position[t] for t in texts]
        lacking = [k for k in index if arrays[k] is None]
        if not lacking:
            continue
        earlier = run.earlier(texts, long_answers)
        if earlier is None:
            continue
        vectors, reading = earlier
        copied = sorted(set(lacking))
        for row, k in enumerate(index):
            if arrays[k] is None:
                arrays[k], readings[k] = vectors[row], reading
        # Kept in the answer cache, so the next run needs no entry of the earlier version.
        run.keep(
            [distinct[k] for k in copied], [arrays[k] for k in copied], [reading] * len(copied)
        )
    _same_width(arrays, readings)
    return arrays, readings


def _same_width(arrays: list, readings: list) -> None:
    """Vectors of one model all have one width; a cached one that does not is embedded again."""
    widths = [a.shape for a in arrays if a is not None]
    if not widths:
        return
    common = max(set(widths), key=widths.count)
    for k, array in enumerate(arrays):
        if array is not None and (array.shape != common or array.dtype != np.float32):
            arrays[k], readings[k] = None, None


def _empty(vectors: np.ndarray) -> np.ndarray:
    return np.zeros((0, vectors.shape[1] if vectors.ndim == 2 else 0), dtype=np.float32)
