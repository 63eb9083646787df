"""The on-disk embedding cache (engine.core.places.cache_dir), keyed by model and text content.

An entry is one file, `<key>.npz`: a zip of the arrays as .npy members plus `parm.json`, which
gives each array's SHA-256 (of its data bytes), shape and dtype. Reading verifies all of it, and
that float arrays hold finite numbers, before an array is used; a damaged entry (a torn write
after a crash, a bad disk block, a truncated copy) is removed and reported in one line, and the
caller embeds again: a damaged cache costs time, never a wrong result and never the run.

Writing is best effort and atomic (a temporary file renamed into place): a cache that cannot be
written only costs time later, and is reported once per run with where to point
PARM_CACHE_DIR.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path

import numpy as np

from engine.core.files import reason, remove_stale_temporaries
from engine.core.places import cache_dir
from engine.embedding.models import model_identity

# 2: the key hashes length-prefixed texts and the model's identity (name and revision).
# 3: one .npz per entry with every array's SHA-256, shape and dtype, verified on reading.
CACHE_VERSION = "3"
# Every warning about the cache starts so (a session lists it once, not once per item).
CACHE_NOTE = "Embedding cache: "
_META = "parm.json"
_MAX_META_BYTES = 1 << 16


def cache_key(model_name: str, texts: list[str], kind: str = "sentence") -> str:
    """SHA-256 over the cache version, the kind of vectors, the model's identity (name plus
    revision, or a local folder's fingerprint: engine.embedding.models.model_identity) and every
    text, each part prefixed by its length so that no two different inputs give the same bytes."""
    digest = hashlib.sha256()
    for part in (CACHE_VERSION, kind, model_identity(model_name), *texts):
        encoded = part.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
    return digest.hexdigest()


# report.html's plots, kept by what they draw (engine.outputs.report.plots.kept), in this folder
# of the cache folder: `parm cache` counts them and `parm cache clear` removes them.
PLOTS_FOLDER = "plots"
# At most this many (about 16 KB each, Mohler's: about 65 MB), the least recently used go first.
PLOTS_LIMIT = 4000


def cache_folder() -> tuple[Path | None, str | None]:
    """The cache folder, or (None, why) when there is no usable one (no home folder)."""
    try:
        folder = cache_dir()
    except (KeyError, RuntimeError, OSError) as exc:  # platformdirs with no home at all
        return None, f"no cache folder could be found (no usable home folder: {exc})"
    if not folder.is_absolute():
        # platformdirs gives "~/.cache/..." unexpanded when the home folder is unknown.
        return None, "no cache folder could be found (no usable home folder)"
    return folder, None


def entry_path(key: str) -> Path | None:
    folder, _ = cache_folder()
    return None if folder is None else folder / f"{key}.npz"


def read_arrays(key: str) -> tuple[dict[str, np.ndarray] | None, str | None]:
    """The arrays cached under `key`, verified (SHA-256, shape, dtype, finite values), and a
    warning: (arrays, None), (None, None) when there is no entry, or (None, warning) when the
    entry was damaged (it is then removed)."""
    path = entry_path(key)
    if path is None or not path.is_file():
        return None, None
    try:
        return _verified(path), None
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        return None, discard(path, _why(exc))


def discard(path: Path, why: str) -> str:
    """Remove a damaged entry; the one-line warning that says so."""
    try:
        os.unlink(path)
        fate = "it was removed and the answers were embedded again"
    except FileNotFoundError:
        fate = "the answers were embedded again"
    except OSError as exc:
        fate = f"it could not be removed ({reason(exc)}), was not used, and the answers were "
        fate += "embedded again"
    return f"{CACHE_NOTE}the cached embeddings in {path} were damaged ({why}); {fate}."


def _why(exc: BaseException) -> str:
    if isinstance(exc, zipfile.BadZipFile):
        return f"not a readable cache file: {exc}"
    return str(exc) or type(exc).__name__


def _verified(path: Path) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(_META)
        if info.file_size > _MAX_META_BYTES:
            raise ValueError("its description is too large")
        meta = json.loads(archive.read(info).decode("utf-8"))
        if not isinstance(meta, dict) or meta.get("version") != CACHE_VERSION:
            raise ValueError("written by another cache version")
        described = meta["arrays"]
        if not isinstance(described, dict) or not described:
            raise ValueError("it describes no arrays")
        return {name: _array(archive, name, facts) for name, facts in described.items()}


def _array(archive: zipfile.ZipFile, name: str, facts: dict) -> np.ndarray:
    """One member read and checked against its description before it is used."""
    info = archive.getinfo(f"{name}.npy")
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        reader = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = reader(member)
        if fortran or dtype.hasobject:
            raise ValueError(f"array '{name}' is not a plain array")
        if list(shape) != list(facts["shape"]) or dtype.str != facts["dtype"]:
            raise ValueError(
                f"array '{name}' is {dtype.str} {list(shape)}, described as "
                f"{facts['dtype']} {list(facts['shape'])}"
            )
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if info.file_size - member.tell() != size:
            raise ValueError(f"array '{name}' has {info.file_size - member.tell()} data bytes")
        data = member.read(size)  # a zip CRC mismatch raises BadZipFile here
    if len(data) != size or hashlib.sha256(data).hexdigest() != facts["sha256"]:
        raise ValueError(f"array '{name}' does not match its checksum")
    array = np.frombuffer(bytearray(data), dtype=dtype).reshape(shape)
    if array.dtype.kind in "fc" and not np.all(np.isfinite(array)):
        raise ValueError(f"array '{name}' holds values that are not finite")
    return array


def write_arrays(key: str, arrays: dict[str, np.ndarray]) -> str | None:
    """Cache `arrays` under `key` (best effort, atomic); a warning when the cache folder cannot
    be used or written, else None."""
    folder, problem = cache_folder()
    if folder is None:
        return unwritable(problem or "")
    path = folder / f"{key}.npz"
    tmp = folder / f".{path.name}.parm-{os.getpid()}-{os.urandom(4).hex()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(folder)
        _write_entry(tmp, arrays)
        os.replace(tmp, path)
    except OSError as exc:
        return unwritable(f"{folder} cannot be written ({reason(exc)})")
    finally:
        # After an error, Ctrl+C or SIGTERM: no half-written cache file stays behind.
        _discard(tmp)
    return None


def unwritable(problem: str) -> str:
    return (
        f"{CACHE_NOTE}{problem}, so the embeddings were not cached and the next run embeds "
        "them again; set PARM_CACHE_DIR to a writable folder to keep them."
    )


def _write_entry(path: Path, arrays: dict[str, np.ndarray]) -> None:
    described = {}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            array = np.asarray(value)
            if not array.flags.c_contiguous:
                array = np.ascontiguousarray(array)
            described[name] = {
                "shape": list(array.shape),
                "dtype": array.dtype.str,
                "sha256": hashlib.sha256(array.data).hexdigest(),
            }
            with archive.open(f"{name}.npy", "w", force_zip64=array.nbytes > 1 << 30) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
        meta = {"version": CACHE_VERSION, "arrays": described}
        archive.writestr(_META, json.dumps(meta))
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def _discard(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def legacy_entries(folder: Path) -> list[tuple[Path, int, float]]:
    """The entries in `folder` (path, bytes, modification time): sentence vectors of earlier
    parm versions, one per list of texts, read while they last (engine.embedding.cache.run_cache), and
    token vectors for late interaction."""
    found: list = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        if len(entry.name) == 68 and entry.name.endswith(".npz"):
            try:
                facts = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found.append((Path(entry.path), facts.st_size, facts.st_mtime))
    return found


def entry_exists(key: str) -> bool:
    """Whether the cache folder has an entry under `key` (verified only when it is read)."""
    path = entry_path(key)
    return path is not None and path.exists()
