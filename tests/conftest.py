"""Shared fixtures. The sample data is embedded once per session with the bundled model."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CSV = ROOT / "sample_data" / "plant_growth.csv"


@pytest.fixture(scope="session", autouse=True)
def isolated_dirs(tmp_path_factory):
    """Keep tests out of the user's cache and data folders."""
    base = tmp_path_factory.mktemp("parm-dirs")
    names = ("PARM_CACHE_DIR", "PARM_MODEL_DIR", "PARM_DATA_DIR", "HF_HUB_OFFLINE")
    old = {k: os.environ.get(k) for k in names}
    os.environ["PARM_CACHE_DIR"] = str(base / "cache")
    os.environ["PARM_MODEL_DIR"] = str(base / "models")
    os.environ["PARM_DATA_DIR"] = str(base / "data")
    os.environ["HF_HUB_OFFLINE"] = "1"
    yield base
    for key, value in old.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(autouse=True)
def own_working_dir(tmp_path, monkeypatch):
    """Every test starts in its own empty folder, so outputs a user's runs (`parm-out/`) or
    other tests left in the working folder cannot change a result; and with its own data
    folder, so sessions, decisions and recent files saved by other tests (a resume question
    for the sample file) cannot either."""
    monkeypatch.chdir(tmp_path)
    # Beside the working folder, not in it: some tests check the working folder stays empty.
    monkeypatch.setenv("PARM_DATA_DIR", str(tmp_path.with_name(tmp_path.name + "-data")))
    return tmp_path


@pytest.fixture
def sample_copy(tmp_path):
    """The sample file in a folder of its own, so its decisions belong to this test only."""
    path = tmp_path / "plant_growth.csv"
    shutil.copy(SAMPLE_CSV, path)
    return path


@pytest.fixture(scope="session")
def sample_config():
    from engine.input.config import load_defaults

    return load_defaults()


@pytest.fixture(scope="session")
def sample_responses(sample_config):
    from engine.input.responses import load_responses

    return load_responses(SAMPLE_CSV, sample_config)


@pytest.fixture(scope="session")
def sample_embeddings(sample_responses) -> np.ndarray:
    """The sample answers embedded with the bundled model (about 5 s, once per session)."""
    from engine.embedding.sentence import embed_texts

    vectors, _ = embed_texts(sample_responses.texts)
    return vectors


@pytest.fixture(scope="session")
def sample_embeddings_file(sample_embeddings, tmp_path_factory) -> Path:
    """The sample embeddings as a .npy file, one row per input row."""
    path = tmp_path_factory.mktemp("emb") / "plant_growth.npy"
    np.save(path, sample_embeddings)
    return path


def clustered_embeddings(n: int, n_classes: int, dim: int = 16, noise: float = 0.6, seed: int = 0):
    """Synthetic unit vectors in clusters, one cluster per score, and the scores."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_classes, dim))
    scores = rng.integers(0, n_classes, size=n)
    vectors = centres[scores] + noise * rng.normal(size=(n, dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32), scores
