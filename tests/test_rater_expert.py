"""Validity papers as the raters' anchor (engine/audit/raters/expert.py): each rater's accuracy on
the expert-scored answers by hand, the anchor's least squares against known leniencies, and a
session split in half (three raters lenient by one point on 45% of their scores, three neutral)
where leniency alone cannot say which half is neutral and the expert's scores on a tenth of the
answers can."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from engine.audit.raters.expert import (
    MIN_EXPERT_READS,
    ExpertReads,
    anchor,
    differences,
    expert_reads,
    figures,
)
from engine.audit.raters.table import rater_report
from engine.input.items import split_items
from engine.input.settings.config import load_defaults


def test_accuracy_on_the_expert_scored_answers_by_hand():
    values = np.array([0.0, 0.5, 1.0])
    # Answers 0-3, the expert scored 0, 2 and 3; reads by a (three) and b (two) of them.
    reads = expert_reads(np.array([0, 0, 1, 2, 2, 3]), ["a", "b", "a", "a", "b", ""],
                         np.array([0, 1, 2, 2, 0, 1]), values, np.array([0, -1, 2, 1]))  # fmt: skip
    assert list(reads.rater) == ["a", "b", "a", "b"]
    found = figures(reads, np.array(["a", "b", "c"]), ordered=True)
    assert set(found) == {"a", "b"}
    a, b = found["a"], found["b"]
    assert (a.n, a.exact, a.adjacent) == (2, 1.0, 1.0) and a.difference == 0.0
    assert (b.n, b.exact, b.adjacent) == (2, 0.0, 0.5)
    assert b.difference == pytest.approx((0.5 - 0.0 + 0.0 - 1.0) / 2)
    # a agreed exactly (s_a = 0): the pooled sd gives the interval its width.
    pooled = np.sqrt((0 + np.var([0.5, -1.0], ddof=1)) / 2)
    from scipy.stats import t

    assert a.high - a.low == pytest.approx(2 * t.ppf(0.975, 1) * pooled / np.sqrt(2))
    assert figures(reads, np.array(["a"]), ordered=False)["a"].difference is None


def test_the_anchor_recovers_leniency_against_the_expert_whatever_the_origin():
    rng = np.random.default_rng(0)
    leniency = np.array([0.0, 0.0, 0.0, 0.4, 0.4, 0.4])
    hits = []
    for _ in range(400):
        b_se, g_se = np.full(6, 0.05), np.full(6, 0.15)
        b = leniency + 0.2 + rng.normal(0, b_se)  # the model's origin is off by 0.2
        g = leniency + rng.normal(0, g_se)
        value, se, origin, origin_se = anchor(b, b_se, g, g_se)
        hits.append(np.abs(value - leniency) <= 1.96 * se)
        assert abs(origin - 0.2) <= 5 * origin_se
    assert 0.92 <= np.mean(hits) <= 0.98
    # A rater with no expert figure keeps b - origin; none with both: no anchor.
    g[0], g_se[0] = np.nan, np.nan
    value, se, origin, _ = anchor(b, b_se, g, g_se)
    assert value[0] == pytest.approx(b[0] - origin) and se[0] > b_se[0]
    assert anchor(b, b_se, np.full(6, np.nan), np.full(6, np.nan)) is None


def test_a_rater_with_one_expert_read_has_no_interval():
    reads = ExpertReads(np.array(["a"], dtype=object), np.array([1]), np.array([0]),
                        np.array([1.0]), np.array([0.0]))  # fmt: skip
    g, se, n = differences(reads, np.array(["a"]))
    assert (g[0], n[0]) == (1.0, 1) and np.isnan(se[0])
    assert figures(reads, np.array(["a"]), True)["a"].low is None


@dataclass(frozen=True)
class _Fitted:
    proba: np.ndarray


@dataclass(frozen=True)
class _Fit:
    """What the rater table reads of an item (engine.audit.raters.table.ItemFit), with a model whose
    expectation follows the raters: every score's distribution centred on the truth plus half
    the lenient raters' mean shift (a model fitted on everyone leans their way)."""

    responses: object
    config: object
    fitted: _Fitted
    predicted: np.ndarray
    flagged: np.ndarray
    rater_proba: np.ndarray


def half_lenient_session(expert_share: float, seed: int = 6):
    """Three items of 400 answers on 0-3, six raters at random: r1-r3 neutral (the truth, one
    point off on 15% of scores), r4-r6 one point up on 45% more; the expert's score (the
    truth) on a share of the answers."""
    rng = np.random.default_rng(seed)
    rows, truths = [], []
    for k in range(3):
        for i in range(400):
            truth = int(rng.integers(0, 4))
            rater = int(rng.integers(1, 7))
            score = truth + (rng.choice([-1, 1]) if rng.random() < 0.15 else 0)
            score += rater >= 4 and rng.random() < 0.45
            expert = str(truth) if rng.random() < expert_share else ""
            rows.append({"item": f"I{k}", "answer": f"I{k} answer {i}", "rater": f"r{rater}",
                         "score": str(int(np.clip(score, 0, 3))), "expert": expert})  # fmt: skip
            truths.append(truth)
    frame = pd.DataFrame(rows)
    config = load_defaults().updated(item_column="item", rater_column="rater", id_column=None,
                                     expert_column="expert" if expert_share else None)  # fmt: skip
    items = split_items(frame, config, "session.csv").audited
    fits = []
    for responses in items:
        truth = np.asarray(truths)[responses.rows - 1]
        centre = truth + 0.2  # half of the lenient half's 0.45 x 1 point, roughly
        values = np.array([float(v) for v in responses.labels])
        logits = -((values[None, :] - centre[:, None]) ** 2) / 0.6
        proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        fits.append(_Fit(responses, config, _Fitted(proba), proba.argmax(axis=1),
                         np.zeros(len(responses), bool), proba))  # fmt: skip
    return fits


def verdicts(report) -> dict[str, str]:
    return {row.rater: row.verdict for row in report.rows}


def test_with_expert_scores_on_a_tenth_of_the_answers_the_neutral_half_is_fine():
    report = rater_report(half_lenient_session(0.10))
    assert report.anchored and sum(f.n for f in report.expert.values()) >= MIN_EXPERT_READS
    assert "Against the expert" in report.method
    found = verdicts(report)
    assert all(found[f"r{j}"] == "fine" for j in (1, 2, 3)), found
    assert all("lenient" in found[f"r{j}"].split(", ") for j in (4, 5, 6)), found
    assert all(row.effects.anchored for row in report.rows)
    # The typical raters for noise and the rest: those the expert calls neither lenient nor
    # harsh, not the lenient half (which agrees as well among itself).
    assert {row.rater for row in report.rows if row.effects.in_reference} == {"r1", "r2", "r3"}
    neutral = max(report.expert[f"r{j}"].difference for j in (1, 2, 3))
    assert all(report.expert[f"r{j}"].difference > neutral for j in (4, 5, 6))


def test_without_expert_scores_this_split_session_goes_to_the_wrong_half():
    """The same session with no expert: the tie between the halves goes to the lenient one
    (seed 6, as in 2 of 12 seeds), and the neutral raters are called harsh: what the anchor
    fixes."""
    report = rater_report(half_lenient_session(0.0))
    assert not report.anchored and report.expert is None
    found = verdicts(report)
    assert all(found[f"r{j}"] == "harsh" for j in (1, 2, 3)), found
    assert all(found[f"r{j}"] == "fine" for j in (4, 5, 6)), found


def test_too_few_expert_scores_leave_the_reference_to_the_raters():
    """Expert scores on 1% of 1,200 answers (about 12 reads, under MIN_EXPERT_READS): the
    raters' figures against the expert are reported, the leniencies are today's."""
    few, none = rater_report(half_lenient_session(0.01)), rater_report(half_lenient_session(0.0))
    assert not few.anchored and 0 < sum(f.n for f in few.expert.values()) < MIN_EXPERT_READS
    assert few.method == none.method
    assert verdicts(few) == verdicts(none)
    assert [r.leniency for r in few.rows] == [r.leniency for r in none.rows]
