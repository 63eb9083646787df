"""Blank answers are audited: one shared representation (engine.embedding.blank) in single-vector
mode, with precomputed embeddings and in late-interaction mode; a blank scored high comes first
in the review queue; files with blanks run and their reports count the blanks."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from helpers import clustered_embeddings, small_config

from engine.core.errors import DataError
from engine.core.progress import Reporter
from engine.embedding.blank import with_blank_tokens, with_blank_vectors
from engine.embedding.vectors import Embedded, TokenEmbeddings
from engine.graph.maxsim import pair_scores, symmetric_score
from engine.input.responses import Responses, blank_answers, load_responses
from engine.input.settings.config import load_defaults
from engine.pipeline import embed_responses, run_audit, with_blank_answers

BLANKS = ["", " ", "\t", "  \n "]


def test_blank_answers_are_empty_or_whitespace_only():
    texts = ["", " ", "\t\n", "0", "no", " x ", "\u00a0"]
    assert blank_answers(texts).tolist() == [True, True, True, False, False, False, True]


def test_without_blanks_vectors_and_tokens_are_returned_unchanged():
    vectors, _ = clustered_embeddings(20, 2)
    assert with_blank_vectors(vectors, np.zeros(20, dtype=bool)) is vectors
    tokens = TokenEmbeddings.from_list([np.eye(3)[:2], np.eye(3)[1:]])
    assert with_blank_tokens(tokens, np.zeros(2, dtype=bool)) is tokens


def test_blanks_share_one_unit_vector_orthogonal_to_every_answer():
    vectors, _ = clustered_embeddings(30, 3)
    blank = np.zeros(30, dtype=bool)
    blank[[2, 11, 29]] = True
    out = with_blank_vectors(vectors, blank)
    assert out.shape == (30, vectors.shape[1] + 1) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    sims = out @ out.T
    np.testing.assert_allclose(sims[np.ix_(blank, blank)], 1.0)
    np.testing.assert_allclose(sims[np.ix_(blank, ~blank)], 0.0)
    # Answers keep their similarities to each other.
    answers = vectors[~blank]
    np.testing.assert_allclose(sims[np.ix_(~blank, ~blank)], answers @ answers.T, atol=1e-6)


def test_blank_rows_of_zeros_in_a_precomputed_file_become_the_blank_vector():
    vectors, scores = clustered_embeddings(24, 2)
    vectors[[0, 5]] = 0.0  # what a GPU recipe may write for an empty string
    texts = [f"answer {i}" for i in range(24)]
    texts[0], texts[5] = "", "   "
    responses = Responses(texts, scores, ("0", "1"), texts, np.arange(1, 25))
    given = Embedded.precomputed(vectors)
    found = embed_responses(responses, load_defaults(), Reporter(), given)
    assert found.facts.model == "precomputed"
    embedded = with_blank_answers(found, responses).vectors
    np.testing.assert_allclose(embedded[0], embedded[5])
    assert embedded[0, -1] == 1.0 and np.count_nonzero(embedded[0]) == 1


def test_blank_tokens_are_one_shared_token_and_maxsim_is_one_between_blanks_zero_otherwise():
    rng = np.random.default_rng(0)
    tokens = TokenEmbeddings.from_list([rng.normal(size=(k, 6)) for k in (3, 2, 4, 1, 5)])
    blank = np.array([False, True, False, True, False])
    out = with_blank_tokens(tokens, blank)
    assert out.lengths.tolist() == [3, 1, 4, 1, 5]
    for i in np.flatnonzero(~blank):  # answers' tokens kept, with a zero coordinate appended
        np.testing.assert_allclose(out.of(i)[:, :-1], tokens.of(i))
        assert not out.of(i)[:, -1].any()
    assert symmetric_score(out, 1, 3) == pytest.approx(1.0)
    for raw in (False, True):
        assert symmetric_score(out, 1, 0, raw=raw) == pytest.approx(0.0)
        assert symmetric_score(out, 4, 3, raw=raw) == pytest.approx(0.0)
    left, right = np.triu_indices(5, k=1)
    scores = pair_scores(out, left, right)
    np.testing.assert_allclose(
        scores, [symmetric_score(out, a, b) for a, b in zip(left, right)], atol=1e-6
    )
    np.testing.assert_allclose(out.mean_pooled()[1], out.of(1)[0])


def blank_file_rows(blank_high: bool = True):
    """60 answers in three clusters scored by cluster (0, 1, 2) and 16 blanks scored 0, one of
    which is scored 2 when `blank_high`."""
    vectors, scores = clustered_embeddings(60, 3, noise=0.3, seed=5)
    rows = [[f"s{i}", f"answer {i} about topic {s}", str(s)] for i, s in enumerate(scores)]
    blanks = [[f"b{i}", BLANKS[i % len(BLANKS)], "0"] for i in range(16)]
    if blank_high:
        blanks[7][2] = "2"
    zeros = np.zeros((16, vectors.shape[1]), dtype=np.float32)
    return rows + blanks, np.vstack([vectors, zeros])


def write_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "answer", "score"])
        writer.writerows(rows)
    return path


def test_a_blank_scored_high_among_blanks_scored_zero_is_first_in_the_review_queue(tmp_path):
    rows, vectors = blank_file_rows()
    config = small_config()
    responses = load_responses(write_csv(tmp_path / "blanks.csv", rows), config)
    assert responses.blank.sum() == 16 and len(responses) == 76
    result = run_audit(responses, config, embedded=Embedded.precomputed(vectors))
    high = responses.ids.index("b7")
    assert result.review_order()[0] == high
    assert result.severity[high] > 0.5
    others = responses.blank & (responses.scores == 0)
    assert result.severity[others].max() < result.severity[high]
    assert any("16 blank answer(s)" in w for w in result.warnings)


def test_blank_answers_no_longer_stop_the_run_and_missing_scores_still_do(tmp_path):
    rows, _ = blank_file_rows(blank_high=False)
    path = write_csv(tmp_path / "blanks.csv", rows)
    assert len(load_responses(path, load_defaults())) == 76
    rows[3][2] = ""
    with pytest.raises(DataError, match=r"missing score in 1 row\(s\) \(4\)"):
        load_responses(write_csv(tmp_path / "missing.csv", rows), load_defaults())
    skipped = load_responses(path.with_name("missing.csv"), small_config(on_bad_rows="skip"))
    assert len(skipped) == 75 and skipped.blank.sum() == 16


def test_a_file_with_blanks_runs_end_to_end_and_the_reports_count_them(tmp_path):
    from typer.testing import CliRunner

    from parm_tui.cli import app

    rows, vectors = blank_file_rows()
    path = write_csv(tmp_path / "blanks.csv", rows)
    np.save(tmp_path / "blanks.npy", vectors)
    out = tmp_path / "out"
    args = ["audit", str(path), "--embeddings", str(tmp_path / "blanks.npy"), "--out", str(out)]
    result = CliRunner().invoke(app, args + ["--set", "bootstrap_samples=0", "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["input"]["blank_answers"] == 16 and report["input"]["responses"] == 76
    assert "- Blank answers: 16 (audited, all alike)" in (out / "report.md").read_text("utf-8")
    with open(out / "predictions.csv", newline="", encoding="utf-8") as handle:
        predicted = {r["id"]: r for r in csv.DictReader(handle)}
    assert predicted["b7"]["score"] == "2" and predicted["b3"]["text"] == BLANKS[3]


def test_a_session_report_counts_blanks_over_its_items(tmp_path):
    from engine.input.items import load_items
    from engine.outputs.report.report_json import session_dict
    from engine.outputs.session import session_markdown
    from engine.session import run_session

    rows, vectors = blank_file_rows()
    items = [[*row, "Q1"] for row in rows] + [
        [f"q2-{i}", *row[1:], "Q2"] for i, row in enumerate(rows)
    ]
    path = tmp_path / "session.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "answer", "score", "item"])
        writer.writerows(items)
    config = small_config(item_column="item")
    loaded = load_items(path, config)
    session = run_session(loaded, config, embeddings=[vectors, vectors])
    assert session_dict(session)["input"]["blank_answers"] == 32
    assert "152 responses (32 blank)" in session_markdown(session)
    for result in session.results:
        assert result.review_order()[0] == result.responses.ids.index(
            "b7" if result.responses.item == "Q1" else "q2-67"
        )


@pytest.mark.slow
def test_blanks_embedded_by_the_model_share_the_blank_vector(tmp_path):
    rows, _ = blank_file_rows()
    config = small_config()
    responses = load_responses(write_csv(tmp_path / "blanks.csv", rows), config)
    embedded = with_blank_answers(embed_responses(responses, config, Reporter()), responses).vectors
    blank = responses.blank
    sims = embedded @ embedded.T
    np.testing.assert_allclose(sims[np.ix_(blank, blank)], 1.0, atol=1e-6)
    np.testing.assert_allclose(sims[np.ix_(blank, ~blank)], 0.0, atol=1e-6)
