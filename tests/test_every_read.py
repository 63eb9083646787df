"""Raters counted right in every shape (engine/audit/raters/every_read.py, issue 43): every read is
its rater's score, so a wide file of three score columns and the same reads in long form give
the same raters.csv, agreement.csv and consensus.csv, every rater with their row, verdict and
reads; a planted lenient rater whose reads are never the audited ones is found; and a leniency
interval that combines the model's figure with the co-raters' pairs, which now share their
reads, still covers a rater with no effect."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import ROOT, TALKING_CLI, cli

from engine.audit.raters.every_read import every_read, read_pairs
from engine.audit.raters.table import rater_report
from engine.input.items import split_items
from engine.input.settings.config import load_defaults

GRADERS = ("G1", "G2", "G3")
COMPARED = ("raters.csv", "agreement.csv", "consensus.csv")


def three_graders(seed: int = 0, items=(("A", 70, 3), ("B", 60, 4))):
    """A wide table (id, item, answer, G1, G2, G3; G3 blank on every fifth answer) whose
    graders read the answer's true score, each wrong by one step on 12% of answers and G2
    lenient (one step up on 40% of its reads); and one unit vector per row, clustered by score."""
    rng = np.random.default_rng(seed)
    rows, vectors = [], []
    for name, n, levels in items:
        centres = rng.normal(size=(levels, 12))
        for i in range(n):
            truth = int(rng.integers(0, levels))
            vector = centres[truth] + 0.6 * rng.normal(size=12)
            vectors.append(vector / np.linalg.norm(vector))
            row = {"id": f"{name}{i}", "item": name, "answer": f"{name} answer {i} of {truth}"}
            for grader in GRADERS:
                score = truth + (rng.choice([-1, 1]) if rng.random() < 0.12 else 0)
                score += grader == "G2" and rng.random() < 0.4
                row[grader] = str(int(np.clip(score, 0, levels - 1)))
            row["G3"] = "" if i % 5 == 0 else row["G3"]
            rows.append(row)
    return pd.DataFrame(rows), np.asarray(vectors, dtype=np.float32)


def as_long(wide: pd.DataFrame, vectors: np.ndarray):
    """The same reads one row per read (pandas.melt: every G1 row, then G2, then G3; blank reads
    left out), and each row's vector (its answer's)."""
    long = wide.reset_index().melt(id_vars=["index", "id", "item", "answer"], value_vars=GRADERS,
                                   var_name="rater", value_name="score")  # fmt: skip
    long = long[long["score"] != ""]
    return long.drop(columns="index"), vectors[long["index"].to_numpy()]


def audit_both(tmp_path: Path, wide: pd.DataFrame, vectors: np.ndarray) -> dict[str, tuple]:
    """`parm audit` on each shape, columns guessed, with the vectors as --embeddings: {shape:
    (exit code, output, out folder)}."""
    long, long_vectors = as_long(wide, vectors)
    found = {}
    for shape, frame, rows in (("wide", wide, vectors), ("long", long, long_vectors)):
        path, npy, out = tmp_path / f"{shape}.csv", tmp_path / f"{shape}.npy", tmp_path / shape
        frame.to_csv(path, index=False)
        np.save(npy, rows)
        code, output = cli(path, "--embeddings", npy, "--out", out, *TALKING_CLI,
                           "--set", "session_model=off")  # fmt: skip
        found[shape] = (code, output, out)
    return found


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as f:
        return [{k: v for k, v in row.items() if k != "run_id"} for row in csv.DictReader(f)]


def same_cells(a: str, b: str) -> bool:
    """Equal text, or numbers within 1e-9: the two shapes give the engine the same reads in the
    same order (the audited read first, then file order), so the same arithmetic runs on both
    and any difference could only be summation order, far below the 1e-6 a CSV prints."""
    try:
        return abs(float(a) - float(b)) <= 1e-9
    except ValueError:
        return a == b


def test_a_wide_and_a_long_file_of_three_graders_give_the_same_rater_files(tmp_path):
    wide, vectors = three_graders()
    found = audit_both(tmp_path, wide, vectors)
    for shape, (code, output, _) in found.items():
        assert code == 0, output
        # Every grader is counted, in the summary as in the table.
        assert "3 raters, farthest from the rest:" in " ".join(output.split()), shape
    for name in COMPARED:
        one, other = read_csv(found["wide"][2] / name), read_csv(found["long"][2] / name)
        assert len(one) == len(other) > 0, name
        for a, b in zip(one, other):
            assert a.keys() == b.keys(), name
            bad = [k for k in a if not same_cells(a[k], b[k])]
            assert not bad, (name, bad, a, b)
    raters = {row["rater"]: row for row in read_csv(found["wide"][2] / "raters.csv")}
    assert set(raters) == set(GRADERS)
    for grader in GRADERS:
        reads = int((wide[grader] != "").sum())
        assert int(raters[grader]["n"]) == reads and raters[grader]["verdict"], grader
    # G2's reads are never the audited ones, and its leniency is found all the same.
    assert "lenient" in raters["G2"]["verdict"] and float(raters["G2"]["leniency_low"]) > 0
    assert "lenient" not in raters["G1"]["verdict"] + raters["G3"]["verdict"]
    # One name per rater in every file: the score columns', never a place.
    for out in (found["wide"][2], found["long"][2]):
        agreement = read_csv(out / "agreement.csv")
        assert {r["rater_a"] for r in agreement} | {r["rater_b"] for r in agreement} == {
            *GRADERS, "all", ""}  # fmt: skip
        header = next(csv.reader((out / "consensus.csv").open(encoding="utf-8")))
        assert [h for h in header if h.startswith("score_")] == [f"score_{g}" for g in GRADERS]
        report = (out / "report.md").read_text(encoding="utf-8")
        assert "rater 1" not in report.lower() and "read 1" not in report
        assert "G1 vs G2 (exact, kappa)" in report


def test_every_read_counts_as_its_raters_score():
    wide, _ = three_graders(items=(("A", 40, 3),))
    config = load_defaults().updated(score_column="G1", score_columns=list(GRADERS))
    responses = split_items(wide, config).audited[0]
    reads = every_read(responses)
    for grader in GRADERS:
        mine = reads.rater == grader
        given = wide.loc[wide[grader] != "", grader].astype(int).to_numpy()
        np.testing.assert_array_equal(np.asarray(responses.labels, int)[reads.code[mine]], given)
    # Pairs: each two reads of one answer once (3 reads: 3 pairs; 2 reads: 1).
    pairs = read_pairs(reads.answer, reads.rater, reads.code)
    per_answer = np.bincount(reads.answer)
    assert len(pairs.a) == int(np.sum(per_answer * (per_answer - 1) // 2))


@pytest.mark.slow
def test_leniency_intervals_cover_a_rater_with_no_effect_when_every_answer_is_read_three_times():
    """Every grader reads every answer and none has an effect: the combined leniency's 95%
    interval covers 0 for about 95% of the graders who are not the reference median (whose
    figure is 0 by construction): 96% of 240. Counted as independent, the model's figure and
    the pairs gave 87% here (their shared reads counted twice)."""
    rng = np.random.default_rng(43)
    covered = []
    for _ in range(120):
        results = [_crossed_fake(rng, n=200) for _ in range(2)]
        for row in rater_report(results).rows:
            if row.judged and row.leniency != 0.0:
                covered.append(row.leniency_low <= 0 <= row.leniency_high)
    assert len(covered) >= 200
    assert 0.92 <= np.mean(covered) <= 0.995


def _crossed_fake(rng, n: int):
    """A fake item result (what rater_report reads) of n answers read by G1, G2 and G3, their
    scores drawn from the model's own probabilities: no rater has an effect."""
    import types

    from engine.input.responses import Responses
    from engine.input.several_reads import Reads

    proba = rng.dirichlet([2, 2, 2], size=n)
    codes = np.array([[rng.choice(3, p=p) for _ in GRADERS] for p in proba])
    reads = Reads(
        answer=np.repeat(np.arange(n), 3), rater=GRADERS * n, score=codes.ravel(),
        time=np.full(3 * n, np.nan), row=np.repeat(np.arange(1, n + 1), 3),
        first=np.tile([True, False, False], n),
    )  # fmt: skip
    responses = Responses(
        texts=[""] * n, scores=codes[:, 0], labels=("0", "1", "2"),
        ids=[str(i) for i in range(n)], rows=np.arange(1, n + 1), second_scores=codes[:, 1],
        item=str(rng.integers(1_000_000)), raters=("G1",) * n, second_raters=("G2",) * n,
        reads=reads,
    )  # fmt: skip
    predicted = proba.argmax(axis=1)
    return types.SimpleNamespace(
        responses=responses, fitted=types.SimpleNamespace(proba=proba), predicted=predicted,
        rater_proba=None, flagged=predicted != codes[:, 0],
        config=types.SimpleNamespace(score_order=None),
    )  # fmt: skip


DATA = Path(os.environ.get("PARM_DATA_ROOT", ROOT.parent / "shared" / "data"))
POWERGRADING = DATA / "powergrading" / "answers.csv"


@pytest.mark.slow
@pytest.mark.skipif(not POWERGRADING.exists(), reason="../shared/data is not here")
def test_powergradings_three_graders_are_the_same_raters_in_both_shapes(tmp_path):
    """Two Powergrading questions (120 answers each), wide as shipped and long by pandas.melt,
    columns guessed; vectors from the answers' character trigrams (the raters' figures, not the
    embedding, are under test)."""
    wide = pd.read_csv(POWERGRADING, dtype=str, keep_default_na=False)
    wide = wide[wide["question_id"].isin(["1", "13"])].groupby("question_id").head(120)
    wide = wide.drop(columns="student_id").reset_index(drop=True)
    vectors = trigram_vectors(wide["answer"].tolist())
    wide = wide.rename(columns={"question_id": "item"})
    found = audit_both(tmp_path, wide, vectors)
    for name in COMPARED:
        one, other = read_csv(found["wide"][2] / name), read_csv(found["long"][2] / name)
        assert len(one) == len(other) > 0
        assert all(same_cells(a[k], b[k]) for a, b in zip(one, other) for k in a), name
    raters = read_csv(found["long"][2] / "raters.csv")
    assert sorted(r["rater"] for r in raters) == list(GRADERS)
    assert all(int(r["n"]) == 240 and r["verdict"] for r in raters)


def trigram_vectors(texts: list[str], dim: int = 64) -> np.ndarray:
    """Unit vectors of hashed character trigrams (a blank answer: one fixed direction)."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        padded = f"  {text.lower()} "
        for k in range(len(padded) - 2):
            out[i, sum(map(ord, padded[k : k + 3])) * 2654435761 % dim] += 1.0
        out[i] = out[i] if out[i].any() else np.eye(dim, dtype=np.float32)[0]
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_the_queue_reads_each_answers_audited_read_whatever_the_files_shape():
    """engine.pipeline.audited_reads: the row of each answer's audited read among every_read's
    rows (the rater expectation's), in a long file whose reads come in any order and in a file
    read once."""
    from engine.pipeline import audited_reads

    wide, vectors = three_graders(items=(("A", 40, 3),))
    long, _ = as_long(wide, vectors)
    long = long.sample(frac=1.0, random_state=4).reset_index(drop=True)  # reads in any order
    config = load_defaults().updated(
        reads="long", id_column="id", item_column="item", rater_column="rater",
        text_column="answer", score_column="score",
    )  # fmt: skip
    responses = split_items(long, config).audited[0]
    reads = every_read(responses)
    rows = audited_reads(responses)
    np.testing.assert_array_equal(reads.answer[rows], np.arange(len(responses)))
    np.testing.assert_array_equal(reads.code[rows], responses.scores)
    assert np.all(responses.reads.first[rows])
    once = split_items(wide, load_defaults().updated(score_column="G1")).audited[0]
    np.testing.assert_array_equal(audited_reads(once), np.arange(len(once)))
    np.testing.assert_array_equal(every_read(once).code[audited_reads(once)], once.scores)
