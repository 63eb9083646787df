"""engine.embedding.whole_file and `parm embed`: every data row of a file embedded in file order
into one array, written with its sidecar (engine.embedding.sidecar) that `--embeddings` checks,
so vectors of another file, an edited file, another column or another row count are refused."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import FAST_CLI, SESSIONS_CSV, SESSIONS_FLAGS, cli, parm_command

from engine.core.errors import ConfigError, EmbeddingError, ExportError
from engine.embedding import whole_file
from engine.embedding.sidecar import FORMAT, check_sidecar, read_sidecar, sidecar_path
from engine.embedding.vectors import EmbeddingFacts
from engine.input.settings.config import load_defaults

DIM = 8


def text_vector(text: str) -> np.ndarray:
    """A unit vector that depends on the text only (its SHA-256 seeds the draw)."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vector = np.random.default_rng(seed).normal(size=DIM)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


@pytest.fixture
def embedded_texts(monkeypatch):
    """embed_texts replaced by text_vector, remembering the texts and the device asked for."""
    calls = []

    def fake(texts, model, batch_size=32, reporter=None, use_cache=True, device="auto", **_):
        calls.append((list(texts), model, batch_size, device))
        facts = EmbeddingFacts(model, device="cpu")
        return np.stack([text_vector(t) for t in texts]), facts

    monkeypatch.setattr(whole_file, "embed_texts", fake)
    return calls


@pytest.fixture
def sessions(tmp_path):
    """The sessions sample in the test's own folder."""
    return Path(shutil.copy(SESSIONS_CSV, tmp_path))


def embed(*args):
    return parm_command("embed", *args)


# -- the engine -----------------------------------------------------------------------------------
def test_every_data_row_is_embedded_in_file_order_blank_answers_included(embedded_texts, tmp_path):
    path = tmp_path / "a.csv"
    path.write_text('id,item,answer,score\n1,A,"b, c",1\n2,B,,0\n3,A,=1+1,2\n', encoding="utf-8")
    config = load_defaults().updated(text_column="answer", embedding_batch_size=7, device="cpu")
    vectors, record = whole_file.embed_file(path, config)
    texts, model, batch, device = embedded_texts[0]
    assert texts[0] == "b, c" and texts[1] == "" and len(texts) == 3
    assert (model, batch, device) == (config.embedding_model, 7, "cpu")
    np.testing.assert_array_equal(vectors, np.stack([text_vector(t) for t in texts]))
    assert record["rows"] == 3 and record["dim"] == DIM and record["format"] == FORMAT
    assert record["file_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (record["text_column"], record["file"], record["device"]) == ("answer", "a.csv", "cpu")


def test_the_array_and_its_sidecar_are_written_together_and_read_back(tmp_path):
    vectors = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float64)
    record = {"format": FORMAT, "rows": 5}
    written = whole_file.write_embeddings(tmp_path / "v.npy", vectors, record)
    assert written == [tmp_path / "v.npy", tmp_path / "v.npy.json"]
    loaded = np.load(tmp_path / "v.npy")
    assert loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, vectors.astype(np.float32))
    assert read_sidecar(tmp_path / "v.npy") == record


def test_an_existing_output_is_kept_without_force(tmp_path):
    (tmp_path / "v.npy.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ExportError, match="v.npy.json exists; --force replaces it"):
        whole_file.check_output(tmp_path / "v.npy", overwrite=False)
    whole_file.check_output(tmp_path / "v.npy", overwrite=True)


def test_a_late_interaction_model_is_refused_naming_the_setting(tmp_path):
    config = load_defaults().updated(embedding_model="late-interaction")
    with pytest.raises(ConfigError) as caught:
        whole_file.embed_file(tmp_path / "never-read.csv", config)
    assert caught.value.key == "embedding_model"


def test_an_array_without_a_sidecar_is_not_checked(tmp_path):
    check_sidecar(tmp_path / "hand-made.npy", tmp_path / "any.csv", "answer", 10)


@pytest.mark.parametrize("content", [b"[1, 2]", b'{"format": "other"}', b"\xff\xfe", b"{" * 5000])
def test_a_sidecar_parm_did_not_write_is_refused_naming_it(tmp_path, content):
    sidecar_path(tmp_path / "v.npy").write_bytes(content)
    with pytest.raises(EmbeddingError, match="v.npy.json is not one `parm embed` wrote"):
        read_sidecar(tmp_path / "v.npy")


# -- parm embed, then parm audit --embeddings ------------------------------------------------------
def test_parm_embed_writes_what_parm_audit_takes(embedded_texts, sessions, tmp_path):
    code, output = embed(sessions, "--text-col", "answer", "--out", tmp_path / "v.npy", "-q")
    assert code == 0, output
    assert "Wrote " in output and "600 rows x 8 float32" in output
    table = pd.read_csv(sessions, dtype=str, keep_default_na=False)
    expected = np.stack([text_vector(t) for t in table["answer"]])
    np.testing.assert_array_equal(np.load(tmp_path / "v.npy"), expected)
    code, output = cli(
        sessions, *SESSIONS_FLAGS, "--embeddings", tmp_path / "v.npy", *FAST_CLI,
        "--out", tmp_path / "out",
    )  # fmt: skip
    assert code == 0, output
    # Again without --force: nothing is replaced.
    code, output = embed(sessions, "--out", tmp_path / "v.npy", "-q")
    assert code != 0 and "exists; --force replaces it" in output


def test_vectors_of_an_edited_file_are_refused(embedded_texts, sessions, tmp_path):
    assert embed(sessions, "--out", tmp_path / "v.npy", "-q")[0] == 0
    text = sessions.read_text(encoding="utf-8")
    sessions.write_text(text.replace("volcano", "volcanoes", 1), encoding="utf-8")
    code, output = cli(
        sessions, *SESSIONS_FLAGS, "--embeddings", tmp_path / "v.npy", *FAST_CLI,
        "--out", tmp_path / "out",
    )  # fmt: skip
    assert code == 2
    assert "was made by `parm embed` from sessions.csv (SHA-256 " in output
    assert "the file changed since, or it is another file" in output
    assert not (tmp_path / "out").exists()


def test_vectors_of_another_row_count_or_column_are_refused(embedded_texts, sessions, tmp_path):
    assert embed(sessions, "--out", tmp_path / "v.npy", "-q")[0] == 0
    with pytest.raises(EmbeddingError, match=r"\(600 rows\), but the input .* has 599 data rows"):
        check_sidecar(tmp_path / "v.npy", sessions, "answer", 599)
    with pytest.raises(EmbeddingError, match="column 'answer', but this run reads .* 'id'"):
        check_sidecar(tmp_path / "v.npy", sessions, "id", 600)
    check_sidecar(tmp_path / "v.npy", sessions, "answer", 600)


def test_a_cuda_device_where_there_is_none_exits_2_writing_nothing(monkeypatch, tmp_path):
    """Answers no test embedded before (a cached file is written from the cache, model unused)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    path = tmp_path / "new.csv"
    path.write_text(f"id,answer,score\n1,never embedded {tmp_path.name},1\n", encoding="utf-8")
    code, output = embed(path, "--device", "cuda", "--out", tmp_path / "v.npy", "-q")
    assert code == 2 and "Setting 'device' = \"cuda\"" in output
    assert list(tmp_path.glob("v.npy*")) == []


def test_the_sidecar_records_the_bundled_model(sessions_embeddings_file):
    """The fixture's file was written by `parm embed`'s engine with the bundled model."""
    record = json.loads(sidecar_path(sessions_embeddings_file).read_text(encoding="utf-8"))
    vectors = np.load(sessions_embeddings_file)
    assert record["rows"] == len(vectors) == 600 and record["dim"] == vectors.shape[1] == 384
    assert record["model"] == load_defaults().embedding_model and record["model_identity"]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
