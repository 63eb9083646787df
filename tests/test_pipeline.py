"""`run_audit` (engine/pipeline.py): one item's audit from its embedding to the checks."""

from __future__ import annotations

import pytest

from engine.pipeline import run_audit


def test_run_audit_refuses_embeddings_that_do_not_match_the_responses(
    sample_responses, sample_embeddings, sample_config
):

    from engine.core.errors import EmbeddingError

    with pytest.raises(EmbeddingError, match="one per response"):
        run_audit(sample_responses, sample_config, embeddings=sample_embeddings[:-3])
