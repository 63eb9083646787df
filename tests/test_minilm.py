"""engine.embedding.minilm: the bundled model on the CPU without sentence-transformers. Its
vectors are compared with sentence-transformers' own (the oracle) on the sample's answers and on
texts chosen for their edges: empty, blank, longer than the model's 256 word pieces, accents and
other scripts, batches with and without padding. Bit for bit today; the tolerance, 1e-6, is ten
times the last-bit movement that padding alone causes (engine.embedding.reading), so a future
torch that reorders a sum passes while a wrong operation (about 1e-2) does not."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.core.progress import Reporter
from engine.embedding import models
from engine.embedding.bundled import resolve_model
from engine.embedding.minilm import MiniLM, readable
from engine.embedding.reading import WINDOWS, encode_plan, plan_reading
from engine.input.settings.config import DEFAULT_MODEL

ROOT = Path(__file__).resolve().parents[1]
FOLDER = Path(resolve_model(DEFAULT_MODEL))
TOLERANCE = 1e-6

EDGES = [
    "",
    "   ",
    "a",
    "roots " * 400,  # 400 words: cut at 256 word pieces
    "x" * 3000,
    "Les racines absorbent l'eau; élève n°3 — naïve façade",
    "植物需要水和阳光",
    "emoji 🌱🌞 and tabs\tand\nnewlines",
    "same length one",
    "same length two",
]


@pytest.fixture(scope="module")
def encoders():
    from sentence_transformers import SentenceTransformer

    return MiniLM(FOLDER), SentenceTransformer(str(FOLDER), device="cpu")


@pytest.fixture(scope="module")
def texts() -> list[str]:
    with open(ROOT / "sample_data" / "plant_growth.csv", newline="", encoding="utf-8") as handle:
        return [row["answer"] for row in csv.DictReader(handle)]


def test_the_sample_and_the_edges_are_sentence_transformers_vectors(encoders, texts):
    ours, theirs = encoders
    for batch_size in (32, 7):
        mine = ours.encode(texts + EDGES, batch_size=batch_size)
        oracle = theirs.encode(texts + EDGES, batch_size=batch_size, convert_to_numpy=True)
        assert mine.dtype == np.float32 and mine.shape == oracle.shape == (len(texts) + 10, 384)
        assert np.abs(mine - oracle).max() <= TOLERANCE
        assert np.allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize(
    "batch",
    [["one"], ["same length one", "same length two"], ["a b c", "d e f", "g h i"], EDGES[3:5]],
)
def test_batches_without_padding_are_theirs_too(encoders, batch):
    """No text of these batches is padded: the encoder passes no mask, as transformers does."""
    ours, theirs = encoders
    assert (
        np.abs(ours.encode(batch) - theirs.encode(batch, convert_to_numpy=True)).max() <= TOLERANCE
    )


def test_windows_are_planned_and_encoded_as_with_sentence_transformers(encoders):
    """The long-answers setting reads through the tokenizer's lengths, offsets and words."""
    ours, theirs = encoders
    long = [" ".join(f"word{k % 37} plant-growth" for k in range(300)), "short", EDGES[5] * 60]
    mine, oracle = plan_reading(ours, long, WINDOWS), plan_reading(theirs, long, WINDOWS)
    assert mine.pieces == oracle.pieces and mine.readings == oracle.readings
    assert np.array_equal(mine.owner, oracle.owner) and np.array_equal(mine.weight, oracle.weight)
    assert len(mine.pieces) > len(long)  # the long texts were cut into windows
    found = encode_plan(ours, mine, 32, Reporter())
    expected = encode_plan(theirs, oracle, 32, Reporter())
    assert np.abs(found - expected).max() <= TOLERANCE


def test_the_bundled_model_on_the_cpu_loads_without_sentence_transformers(tmp_path):
    code = (
        "import sys\n"
        "from engine.embedding.sentence import embed_texts\n"
        "vectors, facts = embed_texts(['roots take up water'], device='cpu', use_cache=False)\n"
        "print(vectors.shape, facts.device, 'sentence_transformers' in sys.modules,"
        " 'transformers' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=True)  # fmt: skip
    assert done.stdout.split() == ["(1,", "384)", "cpu", "False", "False"]


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(FOLDER, folder)
    return folder


def test_a_folder_this_encoder_does_not_compute_is_left_to_sentence_transformers(tmp_path):
    assert readable(FOLDER)
    folder = _copy(tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"hidden_act": "relu"}))
    assert not readable(folder)
    folder = _copy(tmp_path / "b")
    pooling = folder / "1_Pooling" / "config.json"
    pooling.write_text(json.dumps(json.loads(pooling.read_text()) | {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}))  # fmt: skip
    assert not readable(folder)
    folder = _copy(tmp_path / "c")
    (folder / "model.safetensors").unlink()
    assert not readable(folder)


def test_only_the_bundled_model_on_the_cpu_is_loaded_so(monkeypatch):
    monkeypatch.setattr(models, "_MODELS", {})
    assert isinstance(models.load_sentence_model(DEFAULT_MODEL, device="cpu"), MiniLM)
    assert isinstance(models.load_sentence_model("all-MiniLM-L6-v2", device="cpu"), MiniLM)
    assert models._light(DEFAULT_MODEL, str(FOLDER), "cpu")
    assert not models._light(DEFAULT_MODEL, str(FOLDER), "cuda")
    assert not models._light(str(FOLDER), str(FOLDER), "cpu")  # a folder by path: as asked


def test_token_vectors_come_from_sentence_transformers_even_for_the_bundled_model(monkeypatch):
    """The encoder gives pooled vectors only; late interaction reads every token's."""
    from engine.embedding.tokens import load_token_model

    monkeypatch.setattr(models, "_MODELS", {})
    model, kind = load_token_model(DEFAULT_MODEL, device="cpu")
    assert kind == "sentence" and not isinstance(model, MiniLM)
    assert hasattr(model.tokenizer, "get_vocab")
