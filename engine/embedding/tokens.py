"""Token embeddings for late interaction (ColBERT): every response as a matrix of unit token
vectors, cached on disk.

A PyLate / ColBERT checkpoint (config_sentence_transformers.json with
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

from engine.core.errors import EmbeddingError
from engine.core.progress import EMBEDDING, Reporter
from engine.embedding.bundled import resolve_model
from engine.embedding.cache import entries as cache
from engine.embedding.models import count_truncated, load_sentence_model
from engine.embedding.vectors import EmbeddingFacts, TokenEmbeddings, unit_rows

PYLATE_KEYS = ("query_prefix", "document_prefix", "skiplist_words", "document_length")


def embed_tokens(
    texts: list[str],
    model_name: str,
    batch_size: int = 32,
    reporter: Reporter | None = None,
    use_cache: bool = True,
    device: str = "auto",
) -> tuple[TokenEmbeddings, EmbeddingFacts]:
    """Token embeddings of `texts` (unit vectors), cached on disk as float16 matrix + offsets.

    Vectors are rounded to float16 whether or not they came from the cache, so a cached run
    gives exactly the same graph as the first one.
    """
    reporter = reporter or Reporter()
    key = cache.cache_key(model_name, texts, kind="token")
    cached, note = cache.read_arrays(key) if use_cache else (None, None)
    if cached is not None and not _fits(cached, len(texts)):
        path = cache.entry_path(key)  # an entry was read: the cache has a folder
        note = cache.discard(path, f"it does not hold {len(texts):,} answers") if path else note
        cached = None
    if cached is not None:
        reporter(EMBEDDING, len(texts), len(texts), "token embeddings loaded from cache")
        tokens = _from_half(cached["matrix"], cached["offsets"])
        truncated = int(cached["truncated"].reshape(-1)[0])
        return tokens, EmbeddingFacts(model_name, cached=True, truncated=truncated)
    notes = [note] if note else []
    reporter(EMBEDDING, 0, len(texts), f"loading model {model_name}")
    model, kind = load_token_model(model_name, device)
    started = time.perf_counter()
    # Each distinct text once; a repeated answer shares its tokens' vectors.
    position: dict[str, int] = {}
    index = [position.setdefault(text, len(position)) for text in texts]
    distinct = _encode_groups(model, kind, list(position), batch_size, reporter)
    vectors = [distinct[k] for k in index]
    exact = TokenEmbeddings.from_list(vectors)
    half = exact.matrix.astype(np.float16)
    tokens = _from_half(half, exact.offsets)
    truncated = _truncated(model, texts)
    if use_cache:
        stored = {"matrix": half, "offsets": exact.offsets, "truncated": np.array([truncated])}
        note = cache.write_arrays(key, stored)
        notes += [note] if note else []
    return tokens, EmbeddingFacts(
        model_name,
        seconds=round(time.perf_counter() - started, 3),
        truncated=truncated,
        device=str(getattr(model, "device", "cpu")),
        token_model=kind,
        warnings=tuple(notes),
    )


def _fits(cached: dict, n: int) -> bool:
    offsets, matrix = cached.get("offsets"), cached.get("matrix")
    truncated = cached.get("truncated")
    return (
        offsets is not None
        and matrix is not None
        and truncated is not None
        and truncated.size == 1
        and matrix.ndim == 2
        and offsets.dtype.kind == "i"
        and offsets.shape == (n + 1,)
        and int(offsets[0]) == 0
        and int(offsets[-1]) == matrix.shape[0]
        and bool(np.all(np.diff(offsets) > 0))
    )


def _from_half(half: np.ndarray, offsets: np.ndarray) -> TokenEmbeddings:
    return TokenEmbeddings(unit_rows(half.astype(np.float32)), offsets.astype(np.int64))


def _truncated(model, texts: list[str]) -> int:
    try:
        return count_truncated(model, texts)
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
        reporter(EMBEDDING, done, len(texts), f"{done:,} of {len(texts):,} responses (tokens)")
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


def load_token_model(name: str, device: str = "auto"):
    """The model on `device` and how to read its tokens: ("multi-vector" | "sentence")."""
    if is_multi_vector_checkpoint(name):
        try:
            from sentence_transformers import MultiVectorEncoder
        except ImportError:
            raise EmbeddingError(
                f"Embedding model '{name}' is a ColBERT (PyLate) checkpoint; loading it needs "
                "sentence-transformers with MultiVectorEncoder (6.2 is tested). Upgrade it with "
                "'pip install -U sentence-transformers'."
            ) from None
        factory = MultiVectorEncoder
        return load_sentence_model(name, factory=factory, device=device), "multi-vector"
    # sentence-transformers itself (never engine.embedding.minilm's encoder, which gives only
    # the pooled vector): the token vectors come from its `output_value=None`.
    from sentence_transformers import SentenceTransformer

    return load_sentence_model(name, factory=SentenceTransformer, device=device), "sentence"


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
    resolved = resolve_model(name)
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
