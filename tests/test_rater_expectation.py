"""The expectation without the rater's own scores (engine/audit/raters/expectation.py): whole
raters per fold, a rater's expected scores untouched by anything that rater scored, kept in a
saved session."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from helpers import run_frame, session_config, session_frame

from engine.audit.raters.expectation import rater_folds, rater_left_out_proba, smooth
from engine.core.files import atomic_write_files
from engine.model.classifier import stratified_folds
from engine.saved.archive import load_result, result_files


def test_raters_are_dealt_whole_to_at_most_five_balanced_folds():
    raters = np.array(["a"] * 50 + ["b"] * 40 + ["c"] * 30 + ["d"] * 30 + ["e"] * 20 + ["f"] * 20
                      + ["g"] * 10 + [""] * 5)  # fmt: skip
    folds = rater_folds(raters)
    assert len(folds) == 5
    assert sorted(np.concatenate(folds).tolist()) == list(range(raters.size))
    for fold in folds:
        for name in set(raters[fold]):
            assert set(np.flatnonzero(raters == name)) <= set(fold.tolist())
    sizes = sorted(fold.size for fold in folds)
    assert sizes == [35, 40, 40, 40, 50]  # largest first, each to the emptiest fold
    assert len(rater_folds(np.array(["a", "b", "a"]))) == 2
    assert rater_folds(np.array(["a"] * 10)) == []


def problem(seed=0, n=240, raters=6):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, 16))
    scores = rng.integers(0, 3, n)
    vectors = centres[scores] + 0.9 * rng.normal(size=(n, 16))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    who = np.array([f"r{k}" for k in rng.integers(0, raters, n)])
    return vectors, scores, who


def test_a_raters_expected_scores_do_not_depend_on_anything_that_rater_scored():
    vectors, scores, who = problem()
    before = rater_left_out_proba(vectors, scores, 3, who)
    changed = scores.copy()
    mine = who == "r2"
    changed[mine] = (changed[mine] + 1) % 3  # r2 scores everything differently
    after = rater_left_out_proba(vectors, changed, 3, who)
    np.testing.assert_allclose(after[mine], before[mine], atol=1e-12)
    assert not np.allclose(after[~mine], before[~mine])  # the others' models saw r2's scores
    np.testing.assert_allclose(before.sum(axis=1), 1.0)
    assert before.min() > 0  # smoothed: no score is impossible


def test_stratified_folds_would_let_a_rater_lean_on_their_own_scores():
    """The same property fails for folds that split raters, so the test above can fail."""
    vectors, scores, who = problem(seed=1)
    changed = scores.copy()
    mine = who == "r2"
    changed[mine] = (changed[mine] + 1) % 3
    strata = stratified_folds(scores, 5, 0)
    before = rater_left_out_proba(vectors, scores, 3, who, parts=strata)
    after = rater_left_out_proba(vectors, changed, 3, who, parts=strata)
    assert not np.allclose(after[mine], before[mine])


def test_a_single_rater_has_no_one_to_learn_from_and_smoothing_keeps_rows_summing_to_one():
    vectors, scores, _ = problem(n=60)
    assert rater_left_out_proba(vectors, scores, 3, ["x"] * 60) is None
    smoothed = smooth(np.array([[1.0, 0.0, 0.0]]))
    assert smoothed.sum() == pytest.approx(1.0) and smoothed.min() > 0


def test_a_session_with_raters_keeps_the_expectation_and_a_saved_result_restores_it(tmp_path):
    frame, vectors = session_frame(items=(("A", 120, 3), ("B", 100, 3)), seed=3)
    session = run_frame(frame, vectors, session_config(rater_column="rater"))
    result = session.results[0]
    assert result.rater_proba.shape == result.fitted.proba.shape
    assert "raters" in result.timings
    atomic_write_files(result_files(result, tmp_path, "r"))
    restored = load_result(tmp_path, "r", result.responses)
    np.testing.assert_array_equal(restored.rater_proba, result.rater_proba)
    without = run_frame(frame, vectors, session_config())
    assert without.results[0].rater_proba is None


def test_every_read_has_its_expectation_and_one_saved_per_answer_falls_back(tmp_path):
    """Two reads an answer (score and score2, raters r0-r3 and the column score2): one row of
    probabilities per read, from a model without that read's rater; a result saved with one row
    per answer (before every read counted) restores without it, so the raters fall back to the
    fitted probabilities instead of mismatching reads and rows."""
    frame, vectors = session_frame(items=(("A", 120, 3),), seed=3)
    frame["score2"] = frame["score"].sample(frac=1, random_state=2).to_numpy()
    session = run_frame(frame, vectors, session_config(rater_column="rater",
                                                       second_score_column="score2"))  # fmt: skip
    result = session.results[0]
    reads = result.responses.reads
    assert result.rater_proba.shape == (len(reads), result.responses.n_classes) == (240, 3)
    np.testing.assert_allclose(result.rater_proba.sum(axis=1), 1.0)
    assert {row.rater for row in session.raters.rows} == {"r0", "r1", "r2", "r3", "score2"}
    result = replace(result, rater_proba=result.rater_proba[reads.first])  # as saved before
    atomic_write_files(result_files(result, tmp_path, "r"))
    assert load_result(tmp_path, "r", result.responses).rater_proba is None
