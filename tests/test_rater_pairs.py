"""Leniency from co-raters and the robust reference (engine/audit/raters/pairs.py, and its use in
engine/audit/raters/effects.py): simulations with known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.audit.raters.pairs import (
    CoReads,
    co_reads,
    combine,
    join,
    paired_leniency,
    robust_members,
)


def double_reads(rng, lenience: np.ndarray, answers: int, sd: float = 1.0, third: float = 0.0):
    """Answers each read by two (a share `third`: three) distinct raters at random: a true
    score per answer plus the rater's leniency plus noise (sd points, heavier for some answers)."""
    raters = np.array([f"R{j}" for j in range(lenience.size)])
    parts = []
    for k in range(answers):
        n = 3 if rng.random() < third else 2
        who = rng.choice(lenience.size, n, replace=False)
        true = rng.integers(0, 4)
        noise = rng.normal(0, sd * (2.0 if k % 3 == 0 else 1.0), n)
        parts.append(co_reads(np.zeros(n, int), raters[who], true + lenience[who] + noise, k))
    return raters, join(parts)


def test_pairs_of_one_answer():
    """Three reads of one answer give three pairs, unnamed reads none; clusters are offset."""
    co = co_reads(np.array([0, 0, 0, 1, 1]), ["A", "B", "C", "A", ""],
                  np.array([3.0, 2.0, 1.0, 0.0, 4.0]), 10)  # fmt: skip
    assert list(zip(co.a, co.b, co.diff, co.cluster)) == [
        ("A", "B", 1.0, 10), ("A", "C", 2.0, 10), ("B", "C", 1.0, 10)
    ]  # fmt: skip
    assert list(co.counts(np.array(["A", "B", "C", "D"]))) == [2, 2, 2, 0]
    assert len(join([])) == 0 and len(CoReads()) == 0


def test_a_lenient_rater_is_found_by_pairs():
    """Eight raters, one 0.5 points lenient: its paired leniency is the largest, about 0.5 above
    the others' within 3 standard errors (the others agree among themselves), its z far beyond 3; a rater with too few pairs
    gets none."""
    rng = np.random.default_rng(5)
    lenience = np.array([0.5, 0, 0, 0, 0, 0, 0, 0.0])
    raters, co = double_reads(rng, lenience, 500, sd=0.6)
    names = np.r_[raters, ["R99"]]
    c, se, n = paired_leniency(co, names)
    assert np.isnan(c[-1]) and n[-1] == 0
    others = np.median(c[1:8])
    assert abs(c[0] - others - 0.5) < 3 * se[0] and se[0] < 0.15
    assert (c[0] - others) / se[0] > 5
    assert np.all(np.abs(c[1:8] - others) < 3 * se[1:8])


def test_the_paired_standard_error_covers():
    """Over 400 simulated sessions (heteroscedastic noise, a fifth of answers read three times),
    the 95% interval of each rater's paired leniency (minimum-norm origin: the raters' mean)
    covers the truth 93-97% of the time."""
    rng = np.random.default_rng(11)
    lenience = np.array([0.4, -0.3, 0.0, 0.1, 0.0, -0.2])
    truth = lenience - lenience.mean()
    hits = []
    for _ in range(400):
        raters, co = double_reads(rng, lenience, 150, third=0.2)
        c, se, _ = paired_leniency(co, raters)
        hits.append(np.abs(c - truth) <= 1.96 * se)
    assert 0.93 <= np.mean(hits) <= 0.97


def test_combine_moves_pairs_onto_the_model_origin():
    """The paired figure is moved by the median of b - c, then weighed by inverse variance; a
    rater without pairs keeps the model's figure."""
    b, b_se = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.2, 0.2, 0.2, 0.2])
    c, c_se = np.array([0.0, 1.0, 2.2, np.nan]), np.array([0.1, 0.1, 0.1, np.nan])
    value, se = combine(b, b_se, c, c_se)
    moved = c + 1.0  # median of (1, 1, 0.8)
    w = np.array([25.0, 100.0])
    assert value[2] == pytest.approx((w[0] * 3.0 + w[1] * moved[2]) / w.sum())
    assert se[0] == pytest.approx(1 / np.sqrt(w.sum()))
    assert value[3] == 4.0 and se[3] == 0.2


def test_combine_counts_the_covariance_of_figures_from_the_same_reads():
    """With cov(b, c) given, the combination's variance is u_b^2 se_b^2 + u_c^2 se_c^2 +
    2 u_b u_c cov (u the normalised inverse-variance weights): at a correlation of 1 the
    standard error is u_b se_b + u_c se_c, at 0 the independent 1 / sqrt(w_b + w_c); a
    covariance beyond the two standard errors' product is cut to it."""
    b, b_se = np.array([0.0, 1.0, 2.0]), np.array([0.2, 0.2, 0.2])
    c, c_se = np.array([0.0, 1.0, 2.0]), np.array([0.1, 0.1, 0.1])
    u_b, u_c = 0.2, 0.8  # weights 25 and 100
    _, se = combine(b, b_se, c, c_se, covariance=np.array([0.02, 0.0, 5.0]))
    assert se[0] == pytest.approx(u_b * 0.2 + u_c * 0.1)
    assert se[1] == pytest.approx(1 / np.sqrt(125.0))
    assert se[2] == pytest.approx(se[0])
    assert combine(b, b_se, c, c_se)[1] == pytest.approx(se[1])  # no covariance: independent


def test_each_answers_part_of_the_paired_figure_adds_up_to_its_clustered_variance():
    """paired_leniency's influence: each answer's part of c - E[c]; summed in squares over the
    answers (times G / (G - 1)) it is the clustered variance the standard error is from."""
    rng = np.random.default_rng(5)
    raters, co = double_reads(rng, np.array([0.3, 0.0, -0.2, 0.1]), 200, third=0.3)
    c, se, _, moves = paired_leniency(co, raters, influence=True)
    groups = moves.answers.size
    clustered = np.sum(moves.by_answer**2, axis=0) * groups / (groups - 1)
    # Heteroscedastic answers: the clustered variance is above the plain one for every rater.
    np.testing.assert_allclose(se, np.sqrt(clustered), rtol=1e-12)


def test_the_reference_is_the_largest_group_that_agrees():
    """Four neutral raters at 0 and four pushing up by different amounts: the neutral four are
    the reference (a median of all eight sits between the two groups)."""
    values = np.array([0.0, 0.02, -0.03, 0.01, 0.4, 0.55, 0.7, 0.9])
    errors = np.full(8, 0.06)
    assert list(robust_members(values, errors, np.arange(8))) == [0, 1, 2, 3]
    assert list(robust_members(values, errors, np.array([0, 4, 5]))) == [4, 5]


def test_a_session_split_in_half_goes_to_the_ordinary_half():
    """Three raters at 0 and three at 0.5 agree among themselves: leniency alone cannot say
    which half is neutral; the half whose raters are less unusual otherwise (noise, middle and
    drift z) is the reference, whichever it is."""
    values = np.array([0.0, 0.01, -0.01, 0.5, 0.51, 0.49])
    errors = np.full(6, 0.05)
    everyone = np.arange(6)
    drifting_up = np.array([0.1, 0.2, 0.1, 4.0, 1.0, 0.5])
    assert list(robust_members(values, errors, everyone, drifting_up)) == [0, 1, 2]
    assert list(robust_members(values, errors, everyone, drifting_up[::-1])) == [3, 4, 5]


def same_way_session(seed: int = 3, per_item: int = 500, double: float = 0.2):
    """Three items of clustered answers on a 0-3 scale, eight raters at random; r1-r4 neutral
    (the truth, one point off on 15% of scores), r5, r6 and r8 lenient (one point up on 45%,
    35%, 40%), r7 drifting up (0 to 90% over their order): half the raters push up. A share
    `double` of answers gets a second read by another rater (score2, rater2)."""
    rng = np.random.default_rng(seed)
    up = {"r5": 0.45, "r6": 0.35, "r8": 0.4}
    rows, vectors = [], []
    for k in range(3):
        centres = rng.normal(size=(4, 24))
        for i in range(per_item):
            truth = int(rng.integers(0, 4))
            vector = centres[truth] + 0.8 * rng.normal(size=24)
            vectors.append(vector / np.linalg.norm(vector))
            who = rng.choice(8, 2, replace=False) + 1
            rows.append({"item": f"I{k}", "answer": f"I{k} answer {i}", "truth": truth,
                         "rater": f"r{who[0]}", "rater2": f"r{who[1]}",
                         "twice": rng.random() < double})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["time"] = rng.permutation(len(frame))

    def read(rater: np.ndarray) -> np.ndarray:
        score = frame["truth"].to_numpy() + np.where(
            rng.random(len(frame)) < 0.15, rng.choice([-1, 1], len(frame)), 0
        )
        for name, share in up.items():
            score += (rater == name) & (rng.random(len(frame)) < share)
        order = frame["time"].to_numpy().argsort().argsort() / (len(frame) - 1)
        score += (rater == "r7") & (rng.random(len(frame)) < 0.9 * order)
        return np.clip(score, 0, 3)

    frame["score"] = read(frame["rater"].to_numpy()).astype(str)
    frame["score2"] = read(frame["rater2"].to_numpy()).astype(str)
    frame.loc[~frame["twice"], ["score2", "rater2"]] = ""
    frame = frame.drop(columns=["truth", "twice"])
    return frame.astype(str), np.asarray(vectors, dtype=np.float32)


@pytest.mark.slow
def test_neutral_raters_are_left_alone_when_effects_do_not_cancel():
    """Half the raters push scores up (three lenient, one drifting up) and a fifth of the answers
    are read twice: the lenient raters are lenient, the drifting one drifting, and no neutral
    rater gets a verdict or is left out of the reference (a median of all eight sits between
    the two groups and called the neutral ones harsh)."""
    from helpers import audit_planted

    frame, vectors = same_way_session()
    report = audit_planted(frame, vectors, second_score_column="score2",
                           second_rater_column="rater2").raters  # fmt: skip
    rows = {row.rater: row for row in report.rows}
    verdict = {name: {v.name for v in row.effects.verdicts} for name, row in rows.items()}
    assert all(verdict[f"r{j}"] == set() for j in (1, 2, 3, 4)), verdict
    assert all("lenient" in verdict[name] for name in ("r5", "r6", "r8")), verdict
    assert "drifting" in verdict["r7"], verdict
    assert {name for name, row in rows.items() if row.effects.in_reference} == {
        "r1", "r2", "r3", "r4"
    }  # fmt: skip
    assert all(row.effects.co_reads >= 40 for row in rows.values())
