"""engine.embedding.static: the static model is distilled on first use with progress, cached
with a manifest of checksums, checked before every load, made again when damaged, and its
distillation can be cancelled without leaving anything behind. A tiny BERT made here stands in
for the bundled model (distilling that takes minutes)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from engine.core.errors import Cancelled
from engine.core.progress import CancelToken, Reporter
from engine.embedding import loading, static

WORDS = (
    "the plant grows towards light water sun leaf root soil seed green energy food makes "
    "needs without dies because photosynthesis oxygen carbon air a an of in and is it to"
).split()


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A one-layer BERT with a vocabulary of about 400 word pieces, random weights."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"[unused{i}]" for i in range(5)]
    vocab += WORDS + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab += [f"##{chr(c)}" for c in range(ord("a"), ord("z") + 1)] + list(".,;!?")
    vocab += [f"w{i}" for i in range(300)]  # more than one batch of model2vec's distillation
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(folder)
    tokenizer = BertTokenizerFast(vocab={token: i for i, token in enumerate(vocab)})
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
def models(tmp_path, monkeypatch, tiny_bert):
    """An empty model folder, and the tiny BERT as what the static model is distilled from."""
    monkeypatch.setenv("PARM_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setattr(static, "distillation_source", lambda: str(tiny_bert))
    monkeypatch.setattr(loading, "_LOADS", {})  # nothing loaded yet in this process
    return tmp_path / "models"


def _events():
    seen = []
    return seen, Reporter(seen.append)


def test_first_use_distils_with_progress_then_loads_from_the_cache(models):
    seen, reporter = _events()
    first = static.load_static(reporter)
    stages = [e for e in seen if e.stage == static.DISTILL_STAGE]
    assert stages and stages[-1].done == stages[-1].total > 0
    assert [e.done for e in stages[1:]] == sorted(e.done for e in stages[1:])
    folder = static.static_folder()
    assert folder.parent == models and (folder / static.MANIFEST).is_file()
    seen2, reporter2 = _events()
    second = static.load_static(reporter2)
    assert seen2 == []  # made once: the second use only loads
    texts = ["the plant grows towards the light", "roots need water", "x"]
    a, b = first.encode(texts), second.encode(texts)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32 and a.shape[0] == 3
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)


def test_texts_are_not_truncated(models):
    encoder = static.load_static()
    assert encoder.max_seq_length is None
    long = " ".join(["the plant grows"] * 400)  # far beyond 512 tokens
    longer = long + " " + " ".join(["water"] * 400)
    first, second = encoder.encode([long, longer])
    assert not np.allclose(first, second)  # the words past 512 tokens count


@pytest.mark.parametrize("damage", ["truncate", "flip", "manifest"])
def test_a_damaged_model_is_made_again_never_used(models, damage):
    static.load_static()
    folder = static.static_folder()
    weights = folder / "model.safetensors"
    if damage == "truncate":
        weights.write_bytes(weights.read_bytes()[:1000])
    elif damage == "flip":
        data = bytearray(weights.read_bytes())
        data[-10] ^= 0xFF
        weights.write_bytes(bytes(data))
    else:
        (folder / static.MANIFEST).unlink()
    seen, reporter = _events()
    encoder = static.load_static(reporter)
    assert any(e.stage == static.DISTILL_STAGE for e in seen)
    assert encoder.notes and "failed its checksum check" in encoder.notes[0]
    assert static._verified(folder)


def test_a_manifest_of_another_recipe_is_not_trusted(models, monkeypatch):
    static.load_static()
    folder = static.static_folder()
    manifest = json.loads((folder / static.MANIFEST).read_text(encoding="utf-8"))
    manifest["identity"] = "something else"
    (folder / static.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    assert not static._verified(folder)


def test_the_key_follows_the_recipe_and_model2vec_version(models, monkeypatch):
    before = static.static_folder()
    monkeypatch.setattr(static, "STATIC_RECIPE", static.STATIC_RECIPE + " (changed)")
    assert static.static_folder() != before
    monkeypatch.undo()
    monkeypatch.setattr(static, "model2vec_version", lambda: "99.0")
    assert static.static_folder() != before


def test_cancelling_the_distillation_leaves_nothing_behind(models):
    token = CancelToken()

    def cancel_after_first_batch(event):
        if event.stage == static.DISTILL_STAGE and event.done > 0:
            token.cancel()

    with pytest.raises(Cancelled):
        static.load_static(Reporter(cancel_after_first_batch, token))
    assert not static.static_folder().exists()
    assert list(models.glob(".partial-*")) == []


def test_half_made_folders_of_dead_processes_are_removed(models):
    models.mkdir(parents=True)
    dead = models / ".partial-999999999-abcd"
    dead.mkdir()
    alive = models / f".partial-{os.getpid()}-ef01"
    alive.mkdir()
    static.load_static()
    assert not dead.exists()
    assert alive.exists()  # this process's own (another thread's) is left alone


def test_embed_texts_with_the_static_model_is_cached_under_its_own_key(models):
    from engine.embedding.cache import entries
    from engine.embedding.sentence import embed_texts

    texts = ["the leaf makes food", "roots take water from the soil"]
    vectors, info = embed_texts(texts, "static")
    assert not info.cached and info.truncated == 0
    again, info2 = embed_texts(texts, "Static")
    assert info2.cached
    np.testing.assert_array_equal(vectors, again)
    assert entries.cache_key("static", texts) != entries.cache_key(
        "sentence-transformers/all-MiniLM-L6-v2", texts
    )


def test_without_model2vec_the_message_says_what_to_install(monkeypatch, models):
    import builtins

    real = builtins.__import__

    def no_model2vec(name, *args, **kwargs):
        if name == "model2vec" or name.startswith("model2vec."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_model2vec)
    from engine.core.errors import EmbeddingError

    with pytest.raises(EmbeddingError, match=r"pip install -e '\.\[fast\]'"):
        static.load_static()


def test_parm_audit_with_model_static_runs_the_fast_path(models, tmp_path):
    from helpers import SAMPLE_CSV
    from typer.testing import CliRunner

    from parm_tui.cli import app

    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["audit", str(SAMPLE_CSV), "--model", "static", "--out", str(out), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["config"]["embedding_model"] == "static"
    assert report["timings_seconds"]["loading_model"] > 0
    assert static.static_folder().is_dir()
