"""The embedding cache (engine.embedding.cache.entries): an entry is verified (SHA-256, shape, dtype,
finite values) before use, a damaged one is removed, reported in one line and recomputed, and a
cache folder that cannot be used is said once, with where to point PARM_CACHE_DIR."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers import damage

from engine.embedding.cache import entries as cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PARM_CACHE_DIR", str(folder))
    return folder


ARRAYS = {
    "vectors": np.random.default_rng(1).normal(size=(7, 5)).astype(np.float32),
    "truncated": np.array([2], dtype=np.int64),
}


def test_an_entry_reads_back_exactly(cache_dir):
    assert cache.write_arrays("k" * 64, ARRAYS) is None
    arrays, warning = cache.read_arrays("k" * 64)
    assert warning is None
    for name, value in ARRAYS.items():
        np.testing.assert_array_equal(arrays[name], value)
        assert arrays[name].dtype == value.dtype and arrays[name].flags.writeable


@pytest.mark.parametrize("how", ["zeroed", "random", "short"])
def test_a_damaged_entry_is_never_used_and_is_removed_with_one_warning(cache_dir, how):
    cache.write_arrays("k" * 64, ARRAYS)
    path = cache.entry_path("k" * 64)
    damage(path, how)
    arrays, warning = cache.read_arrays("k" * 64)
    assert arrays is None and not path.exists()
    assert warning.startswith(f"Embedding cache: the cached embeddings in {path} were damaged")
    assert "\n" not in warning and warning.endswith("embedded again.")


def test_an_entry_whose_checksum_does_not_match_its_data_is_damaged(cache_dir):
    cache.write_arrays("k" * 64, ARRAYS)
    path = cache.entry_path("k" * 64)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["parm.json"] = members["parm.json"].replace(b'"sha256": "', b'"sha256": "0')
    with zipfile.ZipFile(path, "w") as archive:  # a consistent zip with a wrong checksum
        for name, data in members.items():
            archive.writestr(name, data)
    arrays, warning = cache.read_arrays("k" * 64)
    assert arrays is None and "does not match its checksum" in warning


def test_an_entry_with_values_that_are_not_finite_is_damaged(cache_dir):
    bad = dict(ARRAYS, vectors=np.full((7, 5), np.nan, dtype=np.float32))
    cache.write_arrays("k" * 64, bad)
    arrays, warning = cache.read_arrays("k" * 64)
    assert arrays is None and "not finite" in warning


def test_an_entry_of_another_format_is_damaged(cache_dir):
    cache_dir.mkdir()
    np.savez(cache_dir / ("k" * 64 + ".npz"), vectors=ARRAYS["vectors"])  # no parm.json
    arrays, warning = cache.read_arrays("k" * 64)
    assert arrays is None and "damaged" in warning


@pytest.mark.parametrize("how", ["zeroed", "random", "short"])
def test_a_damaged_entry_of_an_earlier_version_is_not_used(cache_dir, monkeypatch, how):
    """Sentence vectors of earlier versions are still read (engine.embedding.cache.run_cache); a damaged
    one is removed with one warning and the answers embedded."""
    from helpers import FakeEncoder, use_fake_model

    from engine.embedding.sentence import embed_texts
    from engine.input.settings.config import DEFAULT_MODEL

    texts = [f"Plants need light {i}." for i in range(12)]
    model = use_fake_model(monkeypatch, FakeEncoder())
    earlier = {"vectors": FakeEncoder(seed_salt="x").encode(texts), "truncated": np.array([0])}
    cache.write_arrays(cache.cache_key(DEFAULT_MODEL, texts), earlier)
    path = next(cache_dir.glob("*.npz"))
    damage(path, how)
    vectors, info = embed_texts(texts)
    assert not info.cached and len(info.warnings) == 1
    assert str(path) in info.warnings[0] and not path.exists()
    assert sorted(model.encoded) == sorted(texts)
    np.testing.assert_allclose(vectors, model.encode(texts), atol=1e-7)


def test_damaged_token_vectors_are_embedded_again(cache_dir, monkeypatch):
    from engine.embedding import tokens

    rng = np.random.default_rng(2)
    encoded = [rng.normal(size=(n, 4)).astype(np.float32) for n in (3, 5, 2)]
    monkeypatch.setattr(tokens, "load_token_model", lambda name, device="auto": (None, "sentence"))
    monkeypatch.setattr(tokens, "_encode_groups", lambda *args: list(encoded))
    monkeypatch.setattr(tokens, "_truncated", lambda model, texts: 1)
    texts = ["a b c", "d e f g h", "i j"]
    first, info = tokens.embed_tokens(texts, "some-colbert")
    damage(next(cache_dir.glob("*.npz")), "zeroed", "matrix.npy")
    again, info = tokens.embed_tokens(texts, "some-colbert")
    assert not info.cached and "were damaged" in info.warnings[0]
    np.testing.assert_array_equal(first.matrix, again.matrix)
    _, info = tokens.embed_tokens(texts, "some-colbert")
    assert info.cached and info.truncated == 1


def test_a_cache_folder_that_cannot_be_written_is_said_with_parm_cache_dir(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("PARM_CACHE_DIR", str(blocker / "cache"))
    warning = cache.write_arrays("k" * 64, ARRAYS)
    assert warning.startswith(f"Embedding cache: {blocker / 'cache'} cannot be written (")
    assert "set PARM_CACHE_DIR to a writable folder" in warning


def test_a_read_only_cache_folder_is_named_as_such(cache_dir, monkeypatch):
    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(cache, "_write_entry", read_only)
    assert "cannot be written (read-only file system)" in cache.write_arrays("k" * 64, ARRAYS)


def test_without_a_home_folder_the_cache_is_skipped_with_one_warning(tmp_path, monkeypatch):
    import pwd

    for name in ("PARM_CACHE_DIR", "HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)

    def unknown(uid):
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", unknown)
    assert cache.read_arrays("k" * 64) == (None, None)
    warning = cache.write_arrays("k" * 64, ARRAYS)
    assert "no usable home folder" in warning and "PARM_CACHE_DIR" in warning
    assert not (Path.cwd() / "~").exists()  # not a folder named "~" in the working folder


def test_a_session_says_an_unwritable_cache_once_not_per_item(tmp_path, monkeypatch):
    from helpers import session_config, session_frame

    from engine.input.items import split_items
    from engine.session import run_session

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("PARM_CACHE_DIR", str(blocker / "cache"))
    frame, _ = session_frame(items=(("A", 30, 3), ("B", 30, 3)))
    cfg = session_config()
    session = run_session(split_items(frame, cfg, source="session.csv"), cfg)
    notes = [w.text for w in session.warnings if "Embedding cache" in w.message]
    assert len(notes) == 1 and notes[0].startswith("Embedding cache: ")
    assert all("cannot be written" in w for w in notes)


def test_writing_an_entry_leaves_no_temporary_file_and_tidies_a_killed_writers(cache_dir):
    cache_dir.mkdir()
    leftover = cache_dir / f".{'j' * 64}.npz.parm-999999999-abcd1234.tmp"
    leftover.write_bytes(b"half")
    cache.write_arrays("k" * 64, ARRAYS)
    assert sorted(p.name for p in cache_dir.iterdir()) == ["k" * 64 + ".npz"]
    assert os.path.getsize(cache_dir / ("k" * 64 + ".npz")) > 0
