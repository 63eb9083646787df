"""Loading sentence-transformers models: the bundled all-MiniLM-L6-v2 for its names (on the CPU by
engine.embedding.minilm, the same vectors without importing sentence-transformers), any other
model by name or path, once per process, with errors that say what to do.

torch and sentence-transformers are imported inside functions, so that nothing heavy loads
until a run actually embeds.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from engine.core.errors import EmbeddingError
from engine.embedding.bundled import (
    BUNDLED_NAMES,
    bundled_identity,
    folder_fingerprint,
    quiet_loaders,
    resolve_model,
)
from engine.embedding.minilm import MiniLM, readable
from engine.embedding.static import static_identity
from engine.input.settings.config import DEFAULT_MODEL, is_static_model


def model_identity(name: str) -> str:
    """What decides a model's vectors, for the embedding cache's key: the bundled model's package
    version; for a local folder, its files' names, sizes and modification times; for a hub name,
    the name and the revision in the Hugging Face cache (a new download changes the key); for
    the static model, its recipe and the bundled model's identity (engine.embedding.static)."""
    if is_static_model(name):
        return static_identity()
    if name.strip().lower() in BUNDLED_NAMES:
        return bundled_identity()
    folder = Path(name).expanduser()
    if folder.exists():
        return f"folder:{folder_fingerprint(folder)}"
    return f"hub:{name}@{_hub_revision(name)}"


def _hub_revision(name: str) -> str:
    """The commit the Hugging Face cache's `main` points to for a hub model, else "unknown"."""
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:
        return "unknown"
    ref = Path(HF_HUB_CACHE) / f"models--{name.replace('/', '--')}" / "refs" / "main"
    try:
        return ref.read_text(encoding="utf-8").strip() or "unknown"
    except (OSError, UnicodeDecodeError):
        return "unknown"


def pick_device() -> str:
    """The best device PyTorch sees here: CUDA, then Apple MPS, then the CPU."""
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def resolve_device(requested: str = "auto") -> str:
    """The torch device for the `device` setting: "auto" picks (`pick_device`), "cpu" is the
    CPU, "cuda" the GPU, which must be there: asking for one PyTorch cannot see is an error
    naming the machine, so a cluster's worker without a GPU says which one it is."""
    if requested == "auto":
        return pick_device()
    if requested != "cuda":
        return requested
    import torch

    if torch.cuda.is_available():
        return "cuda"
    build = torch.version.cuda
    why = (
        f"PyTorch {torch.__version__} was built without CUDA (a CPU build)"
        if build is None
        else f"PyTorch {torch.__version__} (CUDA {build}) finds no usable GPU or driver"
    )
    raise EmbeddingError(
        f"Setting 'device' = \"cuda\", but PyTorch on {socket.gethostname()} sees no CUDA GPU: "
        f"{why}. Install the CUDA build of PyTorch that matches the driver "
        "(https://pytorch.org/get-started/locally/), or set device to auto or cpu."
    )


_MODELS: dict[tuple[str, str, str], object] = {}


def load_sentence_model(name: str, factory=None, device: str = "auto"):
    """Load (once per process) a sentence-transformers model; errors say what to do.

    factory: the model class to load with (default SentenceTransformer; the late-interaction
    mode passes MultiVectorEncoder for ColBERT checkpoints). device: the `device` setting
    (auto, cpu, cuda; `resolve_device`).
    """
    device = resolve_device(device)
    resolved = resolve_model(name)
    if factory is None and _light(name, resolved, device):
        key = (resolved, device, MiniLM.__name__)
        if key not in _MODELS:
            _MODELS[key] = MiniLM(Path(resolved))
        return _MODELS[key]
    if factory is None:
        from sentence_transformers import SentenceTransformer

        factory = SentenceTransformer

    quiet_loaders()
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


def _light(name: str, resolved: str, device: str) -> bool:
    """Whether the model loads as engine.embedding.minilm's encoder: the bundled model, on the
    CPU, from a folder that encoder reads (its vectors are sentence-transformers', bit for bit;
    loading it skips importing sentence-transformers)."""
    return name.strip().lower() in BUNDLED_NAMES and device == "cpu" and readable(Path(resolved))


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
