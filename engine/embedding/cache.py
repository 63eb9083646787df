"""The on-disk embedding cache (engine.core.places.cache_dir), keyed by model and text content.
Every write is best effort and atomic: a cache that cannot be written only costs time later."""

from __future__ import annotations

import hashlib
import os

import numpy as np

from engine.core.places import cache_dir
from engine.embedding.models import model_identity

# 2: the key hashes length-prefixed texts and the model's identity (name and revision).
CACHE_VERSION = "2"


def cache_key(model_name: str, texts: list[str], kind: str = "sentence") -> str:
    """SHA-256 over the cache version, the kind of vectors, the model's identity (name plus
    revision, or a local folder's fingerprint: engine.embedding.models.model_identity) and every
    text, each part prefixed by its length so that no two different inputs give the same bytes."""
    digest = hashlib.sha256()
    for part in (CACHE_VERSION, kind, model_identity(model_name), *texts):
        encoded = part.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
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
    tmp = folder / f".{key}.{os.getpid()}.tmp.npy"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        np.save(tmp, array, allow_pickle=False)
        os.replace(tmp, folder / f"{key}.npy")
    except OSError:
        pass
    finally:
        # After an error, Ctrl+C or SIGTERM: no half-written cache file stays behind.
        _discard(tmp)


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
    tmp = folder / f".{key}.{os.getpid()}.tmp.npz"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(tmp, **arrays)
        os.replace(tmp, folder / f"{key}.npz")
    except OSError:
        pass
    finally:
        _discard(tmp)


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


def _discard(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
