"""Rater effects and verdicts (engine/audit/raters/effects.py, verdicts.py): a small
simulated session with planted lenient, harsh, noisy, central-tendency and drifting raters and a
biased rater x item cell (the fast version of tests/benchmarks/bench_raters.py), the reference
raters, unordered labels, and the rules by hand."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import PLANTED_ROLES, audit_planted, planted_session

from engine.audit.raters.drift import Drift
from engine.audit.raters.effects import reference
from engine.audit.raters.verdicts import FINE, below_size, verdict_words, verdicts


@pytest.fixture(scope="module")
def planted():
    return audit_planted(*planted_session())


def test_each_planted_rater_gets_its_verdict_and_the_neutral_ones_are_fine(planted):
    rows = {r.rater: r for r in planted.raters.rows}
    expected = {"lenient": "lenient", "harsh": "harsh", "noisy": "noisy",
                "central": "central tendency", "drifting": "drifting"}  # fmt: skip
    for name, role in PLANTED_ROLES.items():
        found = {v.name for v in rows[name].effects.verdicts}
        if role == "neutral":
            assert rows[name].verdict == FINE, (name, rows[name].effects.verdicts)
        elif role in expected:
            assert expected[role] in found, (name, role, rows[name].effects.verdicts)
    assert rows["r4"].effects.leniency > 0.2 and rows["r5"].effects.leniency < -0.2
    assert rows["r6"].effects.infit > rows["r1"].effects.infit
    assert rows["r7"].effects.spread < 0.95 and rows["r7"].effects.middle_z > 3
    assert rows["r8"].effects.drift.change > 0.3 and len(rows["r8"].effects.drift.periods) >= 2


def test_the_biased_cell_is_listed_and_few_others_are(planted):
    """r9's raised cell is listed, and no neutral rater's cell. The lenient and harsh raters (r4,
    r5) are shifted by a point on 45% of their scores whatever the model's certainty, which the
    expectation (shifts on the model's scale, engine.audit.raters.bias) reads partly as
    interaction where the model is sure: their cells may be listed too."""
    listed = [(c.rater, c.item) for c in planted.raters.bias if c.listed]
    r9 = next(c for c in planted.raters.bias if (c.rater, c.item) == ("r9", "I0"))
    assert r9.listed and r9.bias > 0
    assert not [cell for cell in listed if cell[0] in ("r1", "r2", "r3")]
    assert len(listed) <= 4  # the planted cell; r4, r5 or a noisy or drifting rater may add some
    assert all(c.n >= 10 for c in planted.raters.bias)


def test_fair_average_and_verdict_rules_are_reported(planted):
    row = next(r for r in planted.raters.rows if r.rater == "r4")
    assert row.effects.observed_average > row.effects.fair_average
    assert "lenient" in verdict_words(row.effects.verdicts)
    assert "SE from the reference raters" in row.effects.verdicts[0].because


def test_unordered_labels_leave_out_every_effect_that_needs_an_order():
    frame, vectors = planted_session(seed=1, labels=("poor", "fair", "good", "great"))
    session = audit_planted(frame, vectors)
    rows = {r.rater: r for r in session.raters.rows}
    for row in rows.values():
        e = row.effects
        assert e.leniency is None and e.infit is None and e.spread is None and e.drift is None
        assert {v.name for v in e.verdicts} <= {"noisy"}
    assert "noisy" in rows["r6"].verdict
    assert session.raters.bias == []


def test_a_sure_but_tiny_leniency_is_no_verdict():
    """Leniency needs a size as well as a significance: Powergrading's third grader was called
    harsh for -0.013 points at 5.9 SE (0.06 of the residual SD) on 3,490 reads."""
    tiny = {"leniency": -0.013, "leniency_z": -5.9, "leniency_size": -0.04}
    assert verdicts(tiny) == ()
    found = verdicts({**tiny, "leniency": -0.06, "leniency_size": -0.16})
    assert [v.name for v in found] == ["harsh"]
    assert "(-0.16 SD)" in found[0].because
    # On the boundary the rule holds; without a size (not measured) significance alone decides.
    assert [v.name for v in verdicts({**tiny, "leniency_size": -0.15})] == ["harsh"]
    assert verdicts({**tiny, "leniency_size": -0.149}) == ()
    # The rater table says why such a rater is fine.
    assert below_size(-0.013, -5.9, -0.04) == (
        "leniency -0.01 points, -5.9 SE from the reference raters, but -0.04 SD, under the 0.15 "
        "a verdict needs"
    )
    assert below_size(-0.013, -2.0, -0.04) is None and below_size(-0.2, -5.9, -0.3) is None
    assert below_size(None, None, None) is None
    assert [v.name for v in verdicts({"leniency": -0.013, "leniency_z": -5.9})] == ["harsh"]


def test_leniency_size_is_leniency_over_one_residual_sd(planted):
    """Every judged rater's size is their leniency over the same residual SD (one ratio for
    all), with its sign; the planted lenient and harsh raters clear the size rule."""
    rows = {r.rater: r for r in planted.raters.rows if r.effects is not None}
    ratios = {r: e.effects.leniency_size / e.effects.leniency for r, e in rows.items()
              if abs(e.effects.leniency) > 1e-9}  # fmt: skip
    unit = np.median(list(ratios.values()))
    assert unit > 0 and all(v == pytest.approx(unit, rel=1e-9) for v in ratios.values())
    assert rows["r4"].effects.leniency_size >= 0.15 and rows["r5"].effects.leniency_size <= -0.15


def test_the_reference_is_the_median_with_its_standard_error():
    values = np.array([0.0, 1.0, 2.0, 10.0, 3.0])
    errors = np.array([1.0, 1.0, 1.0, 1.0, 1.0])
    centre, se = reference(values, errors, np.array([0, 1, 2, 4]))
    assert centre == 1.5 and se == pytest.approx(np.sqrt(np.pi / 8))
    assert reference(values, errors, np.array([3]))[1] == pytest.approx(1.0)


def test_rules_need_both_size_and_significance():
    assert verdicts({"leniency": 0.3, "leniency_z": 2.9}) == ()
    assert [v.name for v in verdicts({"leniency": -0.3, "leniency_z": -3.1})] == ["harsh"]
    assert verdicts({"noise": 1.3, "noise_z": 8.0}) == ()
    assert [v.name for v in verdicts({"noise": 1.6, "noise_z": 3.5})] == ["noisy"]
    assert verdicts({"noise": 1.6, "noise_z": 2.4}) == ()
    nominal = {"noise": 1.3, "noise_z": 3.5, "ordered": False}
    assert [v.name for v in verdicts(nominal)] == ["noisy"]
    # Central tendency: the middle over-used, neither end over-used, the residual slope below.
    assert verdicts({"central_z": -4.0, "middle_z": 1.0}) == ()
    assert verdicts({"central_z": 0.5, "middle_z": 6.0}) == ()
    central = {"central_z": -0.5, "middle_z": 3.6, "low_z": -2.0, "high_z": 0.9}
    assert [v.name for v in verdicts(central)] == ["central tendency"]
    # A harsh rater at a ceiling moves scores into the middle but uses the lowest score more.
    assert verdicts({**central, "low_z": 1.5}) == ()
    assert verdicts({**central, "middle_z": 3.4}) == ()
    drift = Drift(100, 0.6, 0.15, 4.0, 0.001, [])
    assert [v.name for v in verdicts({}, drift)] == ["drifting"]
    assert verdicts({}, Drift(100, 0.2, 0.15, 2.4, 0.02, [])) == ()


def test_a_noisy_verdict_shows_the_raters_infit_and_the_typical_one(planted):
    import re

    row = next(r for r in planted.raters.rows if r.rater == "r6")
    noisy = next(v for v in row.effects.verdicts if v.name == "noisy")
    found = re.search(r"infit ([\d.]+) x the reference raters' \(([\d.]+) against ([\d.]+), ",
                      noisy.because)  # fmt: skip
    assert found, noisy.because
    ratio, own, typical = map(float, found.groups())
    assert own == pytest.approx(row.effects.infit, abs=0.006)  # the table's infit column
    assert ratio == pytest.approx(own / typical, rel=0.02)  # both printed to 2 decimals
