"""Evidence (engine/audit/queue/evidence.py): the neighbours that drove each prediction are the strongest
edges of the fitted graph, and predictions.csv lists them as row:score:weight."""

from __future__ import annotations

import pytest

from engine.audit.queue.evidence import EVIDENCE_COUNT


def test_evidence_is_the_strongest_edges_of_the_fitted_graph(flipped_run):
    result, _, vectors = flipped_run
    best = result.selected
    weights = result.graph.weights(best.top_k, best.power, True).toarray()
    for i in (0, 17, 123):
        evidence = result.evidence[i]
        assert len(evidence) == EVIDENCE_COUNT
        row_weights = [nb.weight for nb in evidence]
        assert row_weights == sorted(row_weights, reverse=True)
        assert row_weights[0] == pytest.approx(weights[i].max())
        for nb in evidence:
            assert nb.index != i
            assert nb.weight == pytest.approx(weights[i, nb.index])
            assert nb.similarity == pytest.approx(float(vectors[i] @ vectors[nb.index]), abs=1e-5)


def test_evidence_text_lists_row_score_and_weight(flipped_run):
    from engine.outputs.tables import evidence_text

    result, _, _ = flipped_run
    parts = evidence_text(result, 5).split(";")
    assert len(parts) == EVIDENCE_COUNT
    for part, nb in zip(parts, result.evidence[5]):
        row, score, weight = part.split(":")
        assert int(row) == result.responses.rows[nb.index]
        assert score == result.responses.labels[result.responses.scores[nb.index]]
        assert float(weight) == pytest.approx(nb.weight, abs=5e-4)
