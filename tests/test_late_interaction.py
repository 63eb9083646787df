"""The late-interaction (ColBERT) graph (engine/graph/late_interaction.py): candidates by the
mean-pooled vectors, rows sorted by the symmetrised MaxSim, colbert_top_k and similarity_top_k
together, cancelling; and whole runs in late-interaction mode."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from helpers import SAMPLE_CSV, random_tokens

from engine.core.errors import Cancelled, ConfigError
from engine.core.progress import CancelToken, Reporter
from engine.embedding.tokens import embed_tokens
from engine.graph.late_interaction import (
    candidate_count,
    late_interaction_graph,
    maxsim_graph,
    tuning_config,
)
from engine.graph.maxsim import symmetric_score
from engine.input.settings.config import config_from_dict


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
    from engine.input.responses import load_responses
    from engine.input.settings.config import load_defaults
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
    assert colbert and colbert[-1].done == colbert[-1].total == result.late_interaction.pairs
    assert result.late_interaction.candidates == 40
    assert 0.0 <= result.metrics["accuracy"] <= 1.0


def test_late_interaction_severity_uses_the_mean_pooled_token_vectors(
    late_interaction_run, colbert_minilm
):
    from engine.audit.queue.calibration import calibrated
    from engine.audit.queue.severity import review_severity

    result = late_interaction_run[0]
    responses = result.responses
    tokens, _ = embed_tokens(responses.texts, str(colbert_minilm))  # cached by the run
    raw = review_severity(
        tokens.mean_pooled(),
        responses.texts,
        result.tuning.features,
        responses.scores,
        responses.n_classes,
        0,
    )
    # on the one scale of every item, as the pipeline puts it
    expected = calibrated(raw, responses.scores, responses.n_classes)
    np.testing.assert_array_equal(result.severity, expected)


def test_report_json_says_late_interaction(late_interaction_run, tmp_path):
    from engine.outputs.write import write_outputs

    write_outputs(late_interaction_run[0], tmp_path)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["items"][0]["similarity_mode"] == "late-interaction"


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
    assert report["items"][0]["similarity_mode"] == "late-interaction"
    # similarity_top_k null in this mode uses all colbert_top_k candidates.
    tuning = pd.read_csv(out / "tuning.csv")
    assert set(tuning["top_k"]) == {15}
