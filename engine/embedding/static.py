"""The fast embedding path: a static model distilled from the bundled all-MiniLM-L6-v2.

model2vec's distillation passes every token of the bundled model's vocabulary through the model
once, keeps the output vectors (reduced to STATIC_DIMENSIONS by PCA, weighted by Zipf's law),
and embeds a text as the mean of its tokens' vectors: about 140 times faster than the
transformer on a CPU (see docs/explanation/benchmarks.md). The distillation takes one to three
minutes on two cores, so it happens once per machine, on first use, with progress (stage
"distilling"), and the model is kept in the user cache folder (engine.core.places.models_dir)
under a key made from the bundled model's identity, the recipe and model2vec's version: a new
bundled model or recipe makes a new one. The folder holds a manifest with the SHA-256 of every
file, written last and checked before every load; a folder that fails the check is made
again, never used.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.core.errors import EmbeddingError
from engine.core.places import models_dir
from engine.core.progress import DISTILLING, Reporter
from engine.core.versions import package_version
from engine.embedding.bundled import bundled_identity, quiet_loaders, resolve_model
from engine.input.settings.config import DEFAULT_MODEL

# model2vec's defaults, written out because they are part of the model's identity: 256 PCA
# dimensions, SIF weighting 1e-4, float16 storage, mean pooling of the token outputs.
STATIC_DIMENSIONS = 256
STATIC_RECIPE = f"model2vec distill: pca {STATIC_DIMENSIONS}, sif 1e-4, float16, mean; v1"
MANIFEST = "parm-manifest.json"
# Texts per model.encode call: a few tenths of a second, so progress and cancel stay prompt.
ENCODE_GROUP = 2048
# Tokens per forward pass in model2vec's distillation (its _DEFAULT_BATCH_SIZE).
DISTILL_BATCH = 256
DISTILL_STAGE = DISTILLING
_UNUSED_TOKEN = re.compile(r"\[unused\d+\]")
_LOCK = threading.Lock()


@dataclass
class StaticEncoder:
    """A loaded static model, with the interface parm's embedding loop uses: `encode(texts)`
    gives (N, STATIC_DIMENSIONS) float32 unit vectors. Texts are never truncated (a static
    model has no input limit and its cost is linear in the text), so max_seq_length is None."""

    model: Any  # a model2vec StaticModel, imported only when a static model is used
    folder: Path
    notes: list[str] = field(default_factory=list)
    max_seq_length: None = None
    device: str = "cpu"
    encode_group: int = ENCODE_GROUP

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        vectors = self.model.encode(
            list(texts), max_length=None, batch_size=ENCODE_GROUP, use_multiprocessing=False
        )
        return np.asarray(vectors, dtype=np.float32)


def model2vec_version() -> str:
    return package_version("model2vec") or "absent"


def static_identity() -> str:
    """What decides the static model's vectors: the recipe, model2vec's version and the bundled
    model's identity (so the embedding cache and the model folder change when any does)."""
    return f"static:{STATIC_RECIPE}:model2vec=={model2vec_version()}:{bundled_identity()}"


def static_folder() -> Path:
    digest = hashlib.sha256(static_identity().encode("utf-8")).hexdigest()
    return models_dir() / f"static-{digest[:16]}"


def load_static(reporter: Reporter | None = None) -> StaticEncoder:
    """The static model: from the cache when it passes its check, else distilled now (stage
    "distilling", cancellable between batches of tokens) and cached. One thread at a time makes
    it; the others wait and then load the folder it wrote."""
    reporter = reporter or Reporter()
    _require_model2vec()
    folder = static_folder()
    notes: list[str] = []
    with _LOCK:
        if folder.exists() and not _verified(folder):
            notes.append(
                f"The cached static model in {folder} failed its checksum check and was made again."
            )
            _discard(folder)
        if not folder.exists():
            distill_static(folder, reporter)
    from model2vec import StaticModel

    try:
        model = StaticModel.from_pretrained(folder)
    except Exception as exc:  # noqa: BLE001 - a verified folder that does not load is a bug
        raise EmbeddingError(f"The static model in {folder} could not be loaded: {exc}") from None
    return StaticEncoder(model, folder, notes)


def distillation_source() -> str:
    """The folder of the model the static model is distilled from: the bundled one."""
    return resolve_model(DEFAULT_MODEL)


def distill_static(folder: Path, reporter: Reporter) -> None:
    """Distil the static model from `distillation_source()` into `folder`: written beside it,
    manifest last, then renamed into place, so a folder with a manifest is always whole.
    Cancelled (Reporter) leaves nothing behind."""
    quiet_loaders()
    source = distillation_source()
    folder.parent.mkdir(parents=True, exist_ok=True)
    _discard_stale_partials(folder.parent)
    partial = folder.parent / f".partial-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        reporter(DISTILL_STAGE, 0, 1, "making the static model (once per machine)")
        model = _distil(source, reporter)
        model.save_pretrained(str(partial))
        _write_manifest(partial)
        try:
            os.replace(partial, folder)
        except OSError:
            if not _verified(folder):  # another process finished first: use its folder
                raise
    except OSError as exc:
        raise EmbeddingError(
            f"The static model could not be written to {folder.parent}: {exc}. Set "
            "PARM_MODEL_DIR to a writable folder."
        ) from None
    finally:
        _discard(partial)


def _distil(source: str, reporter: Reporter):
    """model2vec's distill_from_model on the source model, with progress and cancel checks
    from a hook that runs before each forward pass (one per DISTILL_BATCH tokens)."""
    from model2vec.distill import distill_from_model
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(source)
    tokenizer = AutoTokenizer.from_pretrained(source, use_fast=True)
    total = sum(1 for token in tokenizer.get_vocab() if not _UNUSED_TOKEN.fullmatch(token))
    done = [0]

    def before_batch(_module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        reporter(DISTILL_STAGE, min(done[0], total), total, _message(done[0], total))
        done[0] += 0 if ids is None else int(ids.shape[0])

    hook = model.register_forward_pre_hook(before_batch, with_kwargs=True)
    try:
        with _quiet_tqdm():
            static = distill_from_model(
                model=model, tokenizer=tokenizer, pca_dims=STATIC_DIMENSIONS
            )
    finally:
        hook.remove()
    reporter(DISTILL_STAGE, total, total, "static model made")
    return static


def _message(done: int, total: int) -> str:
    return f"making the static model (once per machine): {min(done, total):,} of {total:,} tokens"


@contextlib.contextmanager
def _quiet_tqdm():
    """model2vec draws a tqdm bar over the vocabulary; parm shows its own progress instead."""
    import functools

    from model2vec.distill import inference

    original = inference.tqdm
    inference.tqdm = functools.partial(original, disable=True)
    try:
        yield
    finally:
        inference.tqdm = original


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _write_manifest(folder: Path) -> None:
    files = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name != MANIFEST)
    manifest = {
        "identity": static_identity(),
        "files": {name: _file_digest(folder / name) for name in files},
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def _verified(folder: Path) -> bool:
    """Whether `folder` holds a whole static model: its manifest names this identity and every
    file it lists has its recorded SHA-256 (a truncated or altered file fails)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = manifest["files"]
        if manifest.get("identity") != static_identity() or "model.safetensors" not in files:
            return False
        return all(_file_digest(folder / name) == digest for name, digest in files.items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _discard(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def _discard_stale_partials(parent: Path) -> None:
    """Half-made folders of processes that no longer run (killed during a distillation)."""
    for partial in parent.glob(".partial-*"):
        try:
            pid = int(partial.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if not _running(pid):
            _discard(partial)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # no permission to signal it: it exists
        return True
    return True


def _require_model2vec() -> None:
    try:
        import model2vec  # noqa: F401
    except ImportError:
        raise EmbeddingError(
            "The static embedding model needs the optional model2vec package: "
            "pip install -e '.[fast]' in parm's folder (or pip install 'model2vec[distill]==0.7.0')."
        ) from None
