"""report.json and report.md built from an audit of the sample data (engine/outputs/)."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from helpers import SAMPLE_CSV, clustered_embeddings

from engine.embedding.vectors import Embedded
from engine.input.responses import Responses, load_responses
from engine.outputs.report.item_content import report_dict
from engine.outputs.report.markdown import markdown_report as report_markdown
from engine.outputs.tables import prediction_table
from engine.outputs.write import csv_text, json_text
from engine.pipeline import run_audit

SECTIONS = (
    "## Data",
    "## Settings",
    "## Agreement between the model and the human scores",
    "## Second rater",
    "## Confusion matrix",
    "## Top 20 responses to review",
    "## Consistency: near-duplicates with different scores",
    "## Parameters",
    "## What the uncertainty figures mean",
)


@pytest.fixture(scope="module")
def sample_run(sample_config, sample_embeddings):
    config = sample_config.updated(second_score_column="score2", bootstrap_samples=50)
    responses = load_responses(SAMPLE_CSV, config)
    return run_audit(responses, config, embedded=Embedded.precomputed(sample_embeddings))


def test_report_markdown_has_every_section(sample_run):
    text = report_markdown(sample_run)
    positions = [text.index(section) for section in SECTIONS]
    assert positions == sorted(positions)
    assert "standard error (neighbour sandwich)" in text
    assert "95% interval" in text
    assert "Cross-fitted (5 folds): kappa" in text


def test_report_top_list_is_the_review_screens_list_and_predictions_carry_the_severity(
    sample_run,
):
    from engine.results.queue import review_view
    from engine.results.review import review_set

    text = report_markdown(sample_run)
    section = text[text.index("## Top 20 responses to review") :].split("\n## ")[0]
    listed = [int(row) for row in re.findall(r"^\| (\d+) \|", section, flags=re.M)]
    expected = sample_run.responses.rows[review_view(review_set([sample_run]))[:20]]
    assert listed == expected.tolist()
    header, rows = prediction_table(sample_run)
    table = list(csv.DictReader(io.StringIO(csv_text(header, rows))))
    severity = np.array([float(r["severity"]) for r in table])
    np.testing.assert_allclose(severity, sample_run.severity, atol=5e-7)
    assert np.all((severity >= 0) & (severity <= 1))
    data = json.loads(json_text(report_dict(sample_run)))
    assert data["severity"].startswith("the probability that another read would give")
    assert "1 - p(human score) from models that never saw the response's score" in data["severity"]


def test_report_json_holds_second_rater_uncertainty_and_near_duplicates(sample_run):
    data = json.loads(json_text(report_dict(sample_run)))
    second = data["second_rater"]
    assert second["column"] == "score2"
    assert set(second["rater1_vs_rater2"]) == {"exact", "adjacent", "kappa", "qwk"}
    assert second["raters_disagree"] == int(sample_run.raters_disagree.sum())
    bootstrap = data["uncertainty"]["bootstrap"]
    assert bootstrap["samples"] == 50
    assert "predictions are held fixed" in bootstrap["method"]
    for metric in ("accuracy", "kappa", "qwk"):
        interval = bootstrap["intervals"][metric]
        assert interval["low"] <= data["metrics"][metric] <= interval["high"]
    crossed = data["uncertainty"]["cross_fit"]
    assert crossed["folds"] == 5
    assert crossed["in_sample"]["kappa"] == data["metrics"]["kappa"]
    assert data["standard_errors"] == "neighbour sandwich"
    assert data["uncertainty"]["standard_errors"]["method"] == "neighbour sandwich"
    assert "neighbour of i" in data["uncertainty"]["standard_errors"]["definition"]
    assert isinstance(data["near_duplicates"], list)
    assert data["evidence_format"].startswith("row:score:weight")


def test_predictions_mark_rows_where_the_raters_disagree(sample_run):
    header, rows = prediction_table(sample_run)
    table = list(csv.DictReader(io.StringIO(csv_text(header, rows))))
    disagree = [r["raters_disagree"] == "True" for r in table]
    np.testing.assert_array_equal(disagree, sample_run.raters_disagree)
    assert all(r["evidence"].count(":") == 2 * 5 for r in table)


def test_report_lists_near_duplicates_with_both_texts():
    vectors, scores = clustered_embeddings(80, 2, noise=0.8, seed=9)
    vectors[1] = vectors[0]
    scores[0], scores[1] = 0, 1
    texts = [f"answer number {i}" for i in range(80)]
    texts[0], texts[1] = "water and light | sun", "water and light, sun"
    responses = Responses(
        texts=texts,
        scores=scores.astype(np.int64),
        labels=("0", "1"),
        ids=[f"S{i}" for i in range(80)],
        rows=np.arange(1, 81),
        source="dupes.csv",
    )
    config_changes = {"similarity_top_k": [5, 10], "bootstrap_samples": 0, "cross_fit_folds": 0}
    from engine.input.settings.config import load_defaults

    result = run_audit(
        responses, load_defaults().updated(**config_changes), embedded=Embedded.precomputed(vectors)
    )
    pair = report_dict(result)["near_duplicates"][0]
    assert {pair["first"]["text"], pair["second"]["text"]} == {texts[0], texts[1]}
    assert {pair["first"]["score"], pair["second"]["score"]} == {"0", "1"}
    text = report_markdown(result)
    section = text[text.index("## Consistency") :]
    assert "water and light \\| sun" in section  # table cells escape the pipe
    assert "water and light, sun" in section
    assert "## Second rater" not in text
    assert "Cross-fitted (" not in text


def test_low_qwk_is_marked_in_the_report(sample_config):
    vectors, _ = clustered_embeddings(200, 3, noise=0.6, seed=2)
    scores = np.random.default_rng(0).integers(0, 3, size=200)
    responses = Responses(
        texts=[f"t{i}" for i in range(200)],
        scores=scores,
        labels=("0", "1", "2"),
        ids=[str(i) for i in range(200)],
        rows=np.arange(1, 201),
    )
    config = sample_config.updated(similarity_top_k=[5], bootstrap_samples=0, cross_fit_folds=0)
    result = run_audit(responses, config, embedded=Embedded.precomputed(vectors))
    assert result.metrics["qwk"] < 0.7
    assert "**below 0.70**" in report_markdown(result)
