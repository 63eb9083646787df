"""`run_audit` (engine/pipeline.py): one item's audit from its embedding to the checks, and the
embedding stage's typed facts on the way to the report."""

from __future__ import annotations

import pytest
from helpers import clustered_embeddings, random_tokens, small_config, synthetic_responses

import engine.pipeline
from engine.core.errors import EmbeddingError
from engine.embedding.vectors import Embedded, EmbeddingFacts
from engine.outputs.report.item_content import report_dict
from engine.pipeline import run_audit


def test_run_audit_refuses_embeddings_that_do_not_match_the_responses(
    sample_responses, sample_embeddings, sample_config
):
    with pytest.raises(EmbeddingError, match="one per response"):
        run_audit(
            sample_responses, sample_config, embedded=Embedded.precomputed(sample_embeddings[:-3])
        )


def test_precomputed_vectors_are_named_so_in_the_report():
    vectors, scores = clustered_embeddings(80, 3, seed=2)
    result = run_audit(
        synthetic_responses(scores), small_config(), embedded=Embedded.precomputed(vectors)
    )
    assert result.embedding == EmbeddingFacts("precomputed")
    assert report_dict(result)["embedding"] == {
        "model": "precomputed",
        "cached": False,
        "seconds": 0.0,
        "truncated": 0,
    }


def test_late_interaction_keeps_the_warnings_of_the_embedding_and_of_the_graph(monkeypatch):
    """Vectors handed in are not used in late-interaction mode (it needs token vectors): the run
    says so, beside what building the graph had to say (more candidates asked than responses)."""
    vectors, scores = clustered_embeddings(60, 3, seed=4)
    facts = EmbeddingFacts("my-colbert", seconds=0.5, device="cpu", token_model="sentence")
    monkeypatch.setattr(
        engine.pipeline,
        "embed_tokens",
        lambda texts, *args, **_: (random_tokens(len(texts)), facts),
    )
    config = small_config(embedding_model="my-colbert", colbert_top_k=100, similarity_top_k=[5])
    result = run_audit(synthetic_responses(scores), config, embedded=Embedded.precomputed(vectors))
    assert any("Precomputed embeddings were not used" in w for w in result.warnings)
    assert any("colbert_top_k = 100 but there are only 60 responses" in w for w in result.warnings)
    assert result.embedding.model == "my-colbert" and result.late_interaction.candidates == 59
    record = report_dict(result)["embedding"]
    assert list(record) == [
        "model", "cached", "seconds", "truncated", "device", "token_model",
        "candidates", "pairs", "tokens",
    ]  # fmt: skip
