"""Token embeddings for late interaction (engine/embedding/tokens.py): a PyLate checkpoint gives the
vectors PyLate would, a sentence model's tokens are masked and unit length, and both are cached."""

from __future__ import annotations

import json
import shutil
import string

import numpy as np
import pytest

from engine.core.errors import EmbeddingError
from engine.embedding.tokens import embed_tokens, is_multi_vector_checkpoint


@pytest.fixture(scope="session")
def pylate_checkpoint(bundled_path, tmp_path_factory):
    """A PyLate-format checkpoint: MiniLM + a 384->48 projection, "[unused1] " document prefix,
    punctuation skiplist and document_length 12, saved the way PyLate v3 saves."""
    import torch
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("models") / "tiny-colbert"
    folder.mkdir()
    for path in bundled_path.iterdir():
        if path.is_file() and path.name not in (
            "modules.json",
            "config_sentence_transformers.json",
        ):
            shutil.copy(path, folder / path.name)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Dense", "type": "pylate.models.Dense.Dense"},
    ]
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "1_Dense").mkdir()
    dense = {
        "in_features": 384,
        "out_features": 48,
        "bias": False,
        "activation_function": "torch.nn.modules.linear.Identity",
    }
    (folder / "1_Dense" / "config.json").write_text(json.dumps(dense))
    weight = np.random.default_rng(0).normal(size=(48, 384)).astype(np.float32)
    save_file(
        {"linear.weight": torch.from_numpy(weight)}, str(folder / "1_Dense" / "model.safetensors")
    )
    settings = {
        "model_type": "ColBERT",
        "query_prefix": "[unused0] ",
        "document_prefix": "[unused1] ",
        "query_length": 32,
        "document_length": 12,
        "do_query_expansion": False,
        "attend_to_expansion_tokens": False,
        "skiplist_words": list(string.punctuation),
    }
    (folder / "config_sentence_transformers.json").write_text(json.dumps(settings))
    return folder, weight


def pylate_document_recipe(model_dir, weight, text: str, length: int) -> np.ndarray:
    """PyLate's document encoding, written out: truncate, put the prefix token after [CLS], run
    the transformer and the projection, drop punctuation tokens, L2-normalise each vector."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    bert = AutoModel.from_pretrained(str(model_dir)).eval()
    ids = tokenizer([text], truncation=True, max_length=length - 1, return_tensors="pt")[
        "input_ids"
    ]
    prefix = torch.tensor([[tokenizer.convert_tokens_to_ids("[unused1]")]])
    ids = torch.cat([ids[:, :1], prefix, ids[:, 1:]], dim=1)
    with torch.no_grad():
        hidden = bert(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state[0]
    vectors = hidden.numpy() @ weight.T
    skip = [tokenizer.convert_tokens_to_ids(p) for p in string.punctuation]
    vectors = vectors[~np.isin(ids[0].numpy(), skip)]
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_pylate_checkpoint_gives_the_token_vectors_pylate_would(pylate_checkpoint):
    folder, weight = pylate_checkpoint
    assert is_multi_vector_checkpoint(str(folder))
    texts = [
        "Plants, need light! And water.",
        "co2",
        "one two three four five six seven eight nine",
    ]
    tokens, info = embed_tokens(texts, str(folder), use_cache=False)
    assert info.token_model == "multi-vector"
    for i, text in enumerate(texts):
        expected = pylate_document_recipe(folder, weight, text, length=12)
        # Vectors are kept in float16 (the cache format), hence the tolerance.
        np.testing.assert_allclose(tokens.of(i), expected, atol=2e-3)


def test_sentence_model_tokens_drop_padding_and_punctuation_and_are_unit_length(colbert_minilm):
    from transformers import AutoTokenizer

    assert not is_multi_vector_checkpoint(str(colbert_minilm))
    texts = ["Plants, need light!", "a much longer answer about water and soil and sunlight"]
    tokens, info = embed_tokens(texts, str(colbert_minilm), use_cache=False)
    assert info.token_model == "sentence"
    tokenizer = AutoTokenizer.from_pretrained(str(colbert_minilm))
    for i, text in enumerate(texts):
        pieces = tokenizer.tokenize(text)
        # [CLS] and [SEP] stay; punctuation pieces go, as in PyLate's document skiplist.
        assert len(tokens.of(i)) == 2 + sum(p not in string.punctuation for p in pieces)
    np.testing.assert_allclose(np.linalg.norm(tokens.matrix, axis=1), 1.0, atol=1e-5)


def test_token_embeddings_are_cached_and_identical_when_read_back(colbert_minilm):
    texts = ["the plant grows toward the light", "roots take in water"]
    first, info = embed_tokens(texts, str(colbert_minilm))
    again, cached = embed_tokens(texts, str(colbert_minilm))
    assert not info.cached and cached.cached
    assert cached.truncated == info.truncated
    np.testing.assert_array_equal(first.matrix, again.matrix)
    np.testing.assert_array_equal(first.offsets, again.offsets)


@pytest.mark.slow
def test_unavailable_colbert_model_says_it_cannot_be_loaded():
    with pytest.raises(EmbeddingError, match="could not be loaded"):
        embed_tokens(["a", "b"], "no-such-org/no-such-colbert-model", use_cache=False)


def test_a_repeated_answer_is_encoded_once_and_shares_its_token_vectors(monkeypatch, tmp_path):
    from engine.embedding import tokens

    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path))
    seen = []

    def encode(model, kind, texts, batch_size, reporter):
        seen.extend(texts)
        rng = np.random.default_rng(len(seen))
        return [rng.normal(size=(len(t.split()), 4)).astype(np.float32) for t in texts]

    monkeypatch.setattr(tokens, "load_token_model", lambda name, device="auto": (None, "sentence"))
    monkeypatch.setattr(tokens, "_encode_groups", encode)
    monkeypatch.setattr(tokens, "_truncated", lambda model, texts: 0)
    found, _ = embed_tokens(["a b", "c d e", "a b", "a b"], "some-colbert")
    assert seen == ["a b", "c d e"]
    np.testing.assert_array_equal(found.of(0), found.of(2))
    np.testing.assert_array_equal(found.of(0), found.of(3))
    assert list(found.lengths) == [2, 3, 2, 2]
