"""Which raters need a word (engine/audit/raters/table.py): leniency within items with intervals that
cover, flagged shares, agreement, rater pairs, and raters.csv."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from helpers import run_frame, session_config, session_frame
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

from engine.audit.raters.effects import certainty_weights
from engine.audit.raters.table import MIN_RATER_SCORES, _assess, _pool, rater_report, wilson
from engine.input.responses import Responses
from engine.outputs.declared import RATERS, WITH_EXPERT
from engine.outputs.session import raters_table, write_session

ROOT = Path(__file__).resolve().parent.parent


def fake_result(
    item, proba, scores, raters, second=None, second_raters=None, labels=("0", "1", "2"),
    score_order=None, ordered=True,
):  # fmt: skip
    """What rater_report reads from an AuditResult, with given probabilities (no fit)."""
    n = len(scores)
    responses = Responses(
        texts=[""] * n, scores=np.asarray(scores), labels=labels, ids=[str(i) for i in range(n)],
        rows=np.arange(1, n + 1), second_scores=None if second is None else np.asarray(second),
        item=item, raters=tuple(raters),
        second_raters=None if second_raters is None else tuple(second_raters),
        ordered=ordered,
    )  # fmt: skip
    predicted = proba.argmax(axis=1)
    return types.SimpleNamespace(
        responses=responses, fitted=types.SimpleNamespace(proba=proba), predicted=predicted,
        rater_proba=None,
        model_differs=predicted != np.asarray(scores),
        config=types.SimpleNamespace(score_order=score_order),
    )  # fmt: skip


def null_session(rng, raters=5, items=4, per_item=150):
    """Scores drawn from the model's own probabilities: no rater is lenient or harsh."""
    results = []
    for k in range(items):
        proba = rng.dirichlet([1, 1, 1], size=per_item)
        scores = np.array([rng.choice(3, p=p) for p in proba])
        who = [f"r{j}" for j in rng.integers(0, raters, size=per_item)]
        results.append(fake_result(f"I{k}", proba, scores, who))
    return results


def test_a_planted_lenient_rater_is_lenient_and_the_others_are_not():
    """r0 gives one point more on a third of its scores (at most the top score)."""
    frame, vectors = session_frame(items=(("A", 200, 3), ("B", 200, 3)), seed=4)
    rng = np.random.default_rng(5)
    lenient = (frame["rater"] == "r0") & (rng.random(len(frame)) < 1 / 3)
    raised = np.minimum(frame["score"].astype(int) + 1, 2)
    frame.loc[lenient, "score"] = raised[lenient].astype(str)
    session = run_frame(frame, vectors, session_config(rater_column="rater"))
    rows = {r.rater: r for r in session.raters.rows}
    assert rows["r0"].leniency_low > 0 and "lenient" in rows["r0"].verdict
    for name in ("r1", "r2", "r3"):
        assert rows[name].verdict == "fine" and abs(rows[name].leniency) < 0.1
    assert session.raters.rows[0].rater == "r0"  # the farthest from the rest comes first


@pytest.mark.slow
def test_leniency_intervals_cover_zero_about_95_percent_when_no_rater_is_biased():
    rng = np.random.default_rng(7)
    covered = [
        row.leniency_low <= 0 <= row.leniency_high
        for _ in range(150)
        for row in rater_report(null_session(rng)).rows
        if row.judged
    ]
    assert len(covered) >= 700
    assert 0.92 <= np.mean(covered) <= 0.995


def test_items_the_model_finds_harder_do_not_count_against_their_raters():
    """In item B every score is half a point above the model's expectation; rater 'b' scored
    only item B (with others), so compared within items 'b' is not lenient."""
    rng = np.random.default_rng(1)
    proba = np.tile([0.25, 0.5, 0.25], (300, 1))
    even = fake_result("A", proba, rng.choice(3, 300, p=[0.25, 0.5, 0.25]), ["a", "c"] * 150)
    high = fake_result("B", proba, rng.choice(3, 300, p=[0.05, 0.4, 0.55]), ["b", "c"] * 150)
    rows = {r.rater: r for r in rater_report([even, high]).rows}
    assert rows["b"].leniency_low <= 0 <= rows["b"].leniency_high
    assert abs(rows["b"].leniency) < 0.1


def test_rater_effects_are_the_weighted_least_squares_two_way_fit():
    """Leniency is the rater part of d = a_item + b_rater + e fitted by least squares with each
    score weighted by 1 / sqrt(W), checked against numpy's lstsq on the dummy design."""
    rng = np.random.default_rng(3)
    scores, _ = _pool(null_session(rng, raters=4, items=3, per_item=80))
    effects = {name: e.leniency for name, e in _assess(scores)[0].items()}
    d = scores.value - scores.expected
    raters, rater_of = np.unique(scores.rater, return_inverse=True)
    items, item_of = np.unique(scores.item, return_inverse=True)
    design = np.zeros((d.size, items.size + raters.size - 1))
    design[np.arange(d.size), item_of] = 1.0
    dummies = np.flatnonzero(rater_of > 0)
    design[dummies, items.size + rater_of[dummies] - 1] = 1.0
    root = np.sqrt(certainty_weights(scores.variance))
    coefficients = np.linalg.lstsq(design * root[:, None], d * root, rcond=None)[0]
    expected = np.r_[0.0, coefficients[items.size :]]  # relative to the first rater
    fitted = np.array([effects[name] for name in raters])
    np.testing.assert_allclose(fitted - fitted[0], expected, atol=1e-9)


def test_a_pairs_figures_over_items_are_its_item_figures_weighted_by_shared_answers():
    """Two binary items of different difficulty read by the same two raters: pooling them into
    one confusion table would credit the raters for telling the items apart; the pair's kappa
    and QWK are the items' figures (scikit-learn's) weighted by the answers both read, as the
    session's agreement table gives them."""
    rng = np.random.default_rng(11)
    results, per_item = [], []
    for item, (share, n) in {"easy": (0.9, 300), "hard": (0.4, 200)}.items():
        scores = (rng.random(n) < share).astype(int)
        second = np.where(rng.random(n) < 0.85, scores, 1 - scores)
        proba = np.full((n, 2), 0.5)
        result = fake_result(item, proba, scores, ["a"] * n, second, ["b"] * n, labels=("0", "1"))
        results.append(result)
        per_item.append((cohen_kappa_score(scores, second), n))
    (pair,) = rater_report(results).pairs
    weighted = sum(k * n for k, n in per_item) / sum(n for _, n in per_item)
    scores = np.concatenate([r.responses.scores for r in results])
    seconds = np.concatenate([r.responses.second_scores for r in results])
    pooled = cohen_kappa_score(scores, seconds)
    assert abs(pooled - weighted) > 0.01  # the two definitions differ here
    assert pair.n == 500
    assert pair.kappa == pytest.approx(weighted) and pair.qwk == pytest.approx(weighted)
    assert pair.exact == pytest.approx(np.mean(scores == seconds))


@pytest.mark.parametrize("successes, n", [(0, 20), (7, 40), (33, 40), (120, 120), (5, 9)])
def test_wilson_interval_matches_scipy(successes, n):
    expected = binomtest(successes, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson(successes, n) == pytest.approx((expected.low, expected.high), abs=1e-9)


def test_raters_with_too_few_scores_are_listed_but_not_judged():
    rng = np.random.default_rng(2)
    proba = rng.dirichlet([1, 1, 1], size=100)
    scores = proba.argmax(axis=1)
    who = ["busy"] * (100 - MIN_RATER_SCORES + 1) + ["brief"] * (MIN_RATER_SCORES - 1)
    report = rater_report([fake_result("A", proba, scores, who)])
    brief = next(r for r in report.rows if r.rater == "brief")
    assert not brief.judged and brief.leniency is None and brief.model_differs_low is None
    assert report.rows[-1].rater == "brief"


def test_rater_agreement_and_pairs_match_scikit_learn():
    """Every read counts as its rater's score (the audited one and the second alike): each
    rater's agreement with the model over all their reads, with their co-raters over every
    answer they read with another, and each pair of raters once."""
    rng = np.random.default_rng(6)
    n = 240
    proba = rng.dirichlet([2, 2, 2], size=n)
    scores = rng.integers(0, 3, n)
    second = np.where(rng.random(n) < 0.5, rng.integers(0, 3, n), -1)
    who = np.array([f"r{i % 3}" for i in range(n)])
    second_who = np.array([f"r{(i + 1) % 3}" if second[i] >= 0 else "" for i in range(n)])
    result = fake_result("A", proba, scores, who, second, second_who)
    report = rater_report([result])
    predicted = proba.argmax(axis=1)
    both = second >= 0
    for row in report.rows:
        first, other = who == row.rater, second_who == row.rater
        own = np.r_[scores[first], second[other]]
        model = np.r_[predicted[first], predicted[other]]
        assert row.n == own.size == first.sum() + other.sum()
        assert row.exact == pytest.approx(np.mean(own == model))
        assert row.kappa == pytest.approx(cohen_kappa_score(own, model, labels=[0, 1, 2]))
        mine, theirs = (
            np.r_[scores[first & both], second[other]],
            np.r_[second[first & both], scores[other]],
        )
        assert row.second_n == mine.size
        assert row.second_kappa == pytest.approx(cohen_kappa_score(mine, theirs, labels=[0, 1, 2]))
    # Each pair once, named in sorted order (r2 scored first and r0 second: the pair r0, r2).
    assert {(p.first, p.second) for p in report.pairs} == {("r0", "r1"), ("r1", "r2"), ("r0", "r2")}
    for pair in report.pairs:
        mine = ((who == pair.first) & (second_who == pair.second)) | (
            (who == pair.second) & (second_who == pair.first)
        )
        assert pair.n == mine.sum()
        assert pair.exact == pytest.approx(np.mean(scores[mine] == second[mine]))


def test_a_pair_of_raters_in_both_roles_is_counted_once_with_scikit_learns_kappa():
    """R1 first and R4 second, and R4 first and R1 second: one pair, all their answers."""
    rng = np.random.default_rng(9)
    n = 300
    proba = rng.dirichlet([2, 2, 2], size=n)
    scores = rng.integers(0, 3, n)
    second = np.where(rng.random(n) < 0.6, (scores + (rng.random(n) < 0.3)) % 3, -1)
    swap = rng.random(n) < 0.5
    who = np.where(swap, "R4", "R1")
    second_who = np.where(second >= 0, np.where(swap, "R1", "R4"), "")
    report = rater_report([fake_result("A", proba, scores, list(who), second, list(second_who))])
    (pair,) = report.pairs
    both = second >= 0
    r1 = np.where(swap, second, scores)[both]  # R1's score of each answer both scored
    r4 = np.where(swap, scores, second)[both]
    assert (pair.first, pair.second, pair.n) == ("R1", "R4", both.sum())
    assert pair.kappa == pytest.approx(cohen_kappa_score(r1, r4, labels=[0, 1, 2]))
    assert pair.qwk == pytest.approx(
        cohen_kappa_score(r1, r4, labels=[0, 1, 2], weights="quadratic")
    )


def test_scores_without_a_rater_are_counted_apart():
    rng = np.random.default_rng(8)
    proba = rng.dirichlet([1, 1, 1], size=60)
    who = ["x"] * 50 + [""] * 10
    report = rater_report([fake_result("A", proba, proba.argmax(axis=1), who)])
    assert report.unassigned == 10 and [r.rater for r in report.rows] == ["x"]


def test_leniency_is_in_score_points_of_the_labels():
    """Labels 0, 5, 10: one category up is five points."""
    rng = np.random.default_rng(9)
    proba = np.tile([0.3, 0.4, 0.3], (400, 1))
    scores = rng.choice(3, 400, p=[0.3, 0.4, 0.3])
    who = np.array(["a", "b", "c", "d"] * 100)
    scores[(who == "a") & (scores < 2)] += 1
    result = fake_result("A", proba, scores, who, labels=("0", "5", "10"))
    rows = {r.rater: r for r in rater_report([result]).rows}
    assert 2.5 < rows["a"].leniency < 5.5


def test_stated_score_order_puts_items_with_some_labels_on_one_scale():
    """Item A uses low, high; item B low, medium, high: with score_order, 'high' is two points
    above 'low' on both, and the pooled scale follows the order, not each item's positions."""
    from engine.input.scale import pooled_labels, score_values

    order = ("low", "medium", "high")
    assert pooled_labels([("low", "high"), ("low", "medium", "high")], order) == order
    np.testing.assert_array_equal(score_values(("low", "high"), order), [0.0, 2.0])
    rng = np.random.default_rng(3)
    who = np.array(["a", "b", "c", "d"] * 50)
    item_a = fake_result("A", np.tile([0.5, 0.5], (200, 1)), rng.choice(2, 200), who,
                         labels=("low", "high"), score_order=order)  # fmt: skip
    item_b = fake_result("B", np.tile([0.3, 0.4, 0.3], (200, 1)), rng.choice(3, 200), who,
                         labels=order, score_order=order)  # fmt: skip
    rows = rater_report([item_a, item_b]).rows
    assert all(r.leniency is not None and r.qwk is not None for r in rows if r.judged)


def test_unordered_labels_give_no_leniency_or_qwk():
    """Text labels without an order have no points to be lenient by."""
    rng = np.random.default_rng(4)
    who = np.array(["a", "b", "c", "d"] * 100)
    scores = rng.choice(3, 400)
    result = fake_result("A", np.tile([0.3, 0.4, 0.3], (400, 1)), scores, who,
                         labels=("fair", "good", "poor"), ordered=False)  # fmt: skip
    report = rater_report([result])
    assert all(r.judged for r in report.rows)
    assert all(r.leniency is None and r.leniency_low is None and r.qwk is None
               for r in report.rows)  # fmt: skip
    assert all(r.model_differs_low is not None for r in report.rows)


def test_raters_csv_has_the_documented_columns(tmp_path):
    frame, vectors = session_frame()
    session = run_frame(frame, vectors, session_config(rater_column="rater"))
    header, rows = raters_table(session)
    assert header == RATERS.without(WITH_EXPERT).header  # no expert column: as before it
    assert {"rater", "n", "exact", "kappa", "model_differs_share", "leniency", "leniency_low",
            "leniency_high"} <= set(header)  # fmt: skip
    write_session(session, tmp_path)
    with (tmp_path / "raters.csv").open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert [row["rater"] for row in table] == [r.rater for r in session.raters.rows]
    assert sum(int(row["n"]) for row in table) == len(frame)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert text.index("## Items") < text.index("## Raters") < text.index("## Item A\n")


@pytest.mark.slow
def test_the_sample_session_shows_its_planted_raters(tmp_path):
    """sample_data/sessions.csv through `parm audit` with the bundled model: the planted
    lenient rater R4 is lenient, the noisy R6 is noisy, the two with the most flags, each with the
    rule that says so (lenient first for R4), the others are fine, R7 is too few to judge."""
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "parm_tui.cli", "audit", str(ROOT / "sample_data" / "sessions.csv"),
        "--item-col", "item", "--rater-col", "rater", "--second-score-col", "score2",
        "--second-rater-col", "rater2", "--out", str(out), "--quiet",
        "--set", "bootstrap_samples=0", "--set", "cross_fit_folds=0",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with (out / "raters.csv").open(encoding="utf-8") as handle:
        rows = {row["rater"]: row for row in csv.DictReader(handle)}
    assert float(rows["R4"]["leniency_low"]) > 0
    shares = {name: float(row["model_differs_share"]) for name, row in rows.items() if name != "R7"}
    # Both planted raters change a third of their scores (R4 up, R6 anywhere): every read of
    # theirs counted, they have the two highest shares (0.46 each, the others 0.25-0.35).
    assert set(sorted(shares, key=shares.get)[-2:]) == {"R4", "R6"}
    assert rows["R7"]["note"] == "too few to judge"
    # Strongest verdict first: R4 raised a third of their scores, which is lenient first and
    # also less consistent than the others.
    assert rows["R4"]["verdict"].split(", ")[0] == "lenient"
    assert (
        rows["R4"]["rule"].startswith("lenient: ") and "(rule: leniency >= " in rows["R4"]["rule"]
    )
    assert rows["R6"]["verdict"] == "noisy" and "(rule: infit >= " in rows["R6"]["rule"]
    assert {rows[name]["verdict"] for name in ("R1", "R2", "R3", "R5")} == {"fine"}
    with (out / "items.csv").open(encoding="utf-8") as handle:
        items = {row["item"]: row["status"] for row in csv.DictReader(handle)}
    assert items == dict.fromkeys(("volcano", "recycling", "fractions"), "audited")


def test_an_expert_score_column_adds_each_raters_accuracy_to_every_output(tmp_path):
    """With expert scores on every third answer (the human score itself, or one above it for
    r1's answers, so r1 scores below the expert), raters.csv gains the expert columns,
    report.md and report.html their section, report.json `raters.expert`; r1 is -1 point on
    the answers where the expert differs."""
    frame, vectors = session_frame()
    raised = [str(int(s) + 1) if r == "r1" and int(s) < 2 else s
              for s, r in zip(frame["score"], frame["rater"])]  # fmt: skip
    frame["expert_score"] = [v if k % 3 == 0 else "" for k, v in enumerate(raised)]
    config = session_config(rater_column="rater", expert_column="expert_score")
    session = run_frame(frame, vectors, config)
    header, rows = raters_table(session)
    assert header == RATERS.header
    expert = session.raters.expert
    assert set(expert) == {"r0", "r1", "r2", "r3"}
    assert sum(f.n for f in expert.values()) == sum(1 for k in range(len(frame)) if k % 3 == 0)
    assert expert["r0"].exact == 1.0 and expert["r0"].difference == 0.0
    assert expert["r1"].difference < 0 and expert["r1"].adjacent == 1.0
    write_session(session, tmp_path)
    with (tmp_path / "raters.csv").open(encoding="utf-8") as handle:
        table = {row["rater"]: row for row in csv.DictReader(handle)}
    assert int(table["r1"]["expert_n"]) == expert["r1"].n
    assert float(table["r0"]["expert_exact"]) == 1.0
    anchored = session.raters.anchored
    assert anchored == (sum(f.n for f in expert.values()) >= 50)
    assert {row["reference"] for row in table.values()} <= (
        {"expert"} if anchored else {"yes", "no"}
    )
    assert "### Against the expert (validity papers)" in (tmp_path / "report.md").read_text()
    assert "Against the expert (validity papers)" in (tmp_path / "report.html").read_text()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["raters"]["expert"]["column"] == "expert_score"
    assert {r["rater"] for r in report["raters"]["expert"]["raters"]} == set(expert)


def test_an_expert_column_with_too_few_papers_changes_no_other_column():
    """Expert scores on 20 answers (under MIN_EXPERT_READS): raters.csv has the expert columns,
    and every other cell is the one the file has without an expert column."""
    frame, vectors = session_frame()
    plain = raters_table(run_frame(frame, vectors, session_config(rater_column="rater")))
    frame["expert_score"] = [s if k < 20 else "" for k, s in enumerate(frame["score"])]
    config = session_config(rater_column="rater", expert_column="expert_score")
    header, rows = raters_table(run_frame(frame, vectors, config))
    assert header[: len(plain[0])] == plain[0] and len(header) == len(plain[0]) + 6
    assert [row[: len(plain[0])] for row in rows] == plain[1]
