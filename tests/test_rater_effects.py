"""Rater effects and verdicts (engine/audit/rater_effects.py, rater_verdicts.py): a small
simulated session with planted lenient, harsh, noisy, central-tendency and drifting raters and a
biased rater x item cell (the fast version of tests/benchmarks/bench_raters.py), the reference
raters, unordered labels, and the rules by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_items import FAST

from engine.audit.drift import Drift
from engine.audit.rater_effects import reference
from engine.audit.rater_verdicts import FINE, verdict_words, verdicts
from engine.input.config import config_from_dict
from engine.input.items import split_items
from engine.session import run_session

ROLES = {"r1": "neutral", "r2": "neutral", "r3": "neutral", "r4": "lenient", "r5": "harsh",
         "r6": "noisy", "r7": "central", "r8": "drifting", "r9": "bias cell"}  # fmt: skip


def planted_session(seed: int = 0, items: int = 3, per_item: int = 600, levels: int = 4,
                    labels=None):  # fmt: skip
    """Clustered answer vectors per item, true scores, nine raters (roles above), a scoring
    order; each planted effect on 45% of a rater's scores (central: 70% of the extremes;
    drifting: from 0 to 90% over the rater's order), and r9's item I0 cell raised."""
    rng = np.random.default_rng(seed)
    rows, vectors = [], []
    for k in range(items):
        centres = rng.normal(size=(levels, 24))
        for i in range(per_item):
            truth = int(rng.integers(0, levels))
            vector = centres[truth] + 0.8 * rng.normal(size=24)
            vectors.append(vector / np.linalg.norm(vector))
            rows.append({"item": f"I{k}", "answer": f"I{k} answer {i}", "truth": truth,
                         "rater": f"r{rng.integers(1, 10)}"})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["time"] = rng.permutation(len(frame))
    top = levels - 1
    score = frame["truth"].to_numpy().copy()
    for name, role in ROLES.items():
        mine = np.flatnonzero(frame["rater"].to_numpy() == name)
        hit = mine[rng.random(mine.size) < 0.45]
        if role == "lenient":
            score[hit] = np.minimum(score[hit] + 1, top)
        elif role == "harsh":
            score[hit] = np.maximum(score[hit] - 1, 0)
        elif role == "noisy":
            score[hit] = (score[hit] + rng.integers(1, levels, hit.size)) % levels
        elif role == "central":
            pulled = mine[rng.random(mine.size) < 0.7]
            score[pulled] = np.clip(score[pulled], 1, top - 1)
        elif role == "drifting":
            order = np.argsort(np.argsort(frame["time"].to_numpy()[mine])) / (mine.size - 1)
            up = mine[rng.random(mine.size) < 0.9 * order]
            score[up] = np.minimum(score[up] + 1, top)
    cell = np.flatnonzero((frame["rater"] == "r9").to_numpy() & (frame["item"] == "I0").to_numpy())
    raised = cell[rng.random(cell.size) < 0.7]
    score[raised] = np.minimum(score[raised] + 1, top)
    frame["score"] = score if labels is None else np.asarray(labels)[score]
    return frame.drop(columns="truth").astype(str), np.asarray(vectors, dtype=np.float32)


def audit(frame, vectors, **settings):
    config = config_from_dict({"item_column": "item", "rater_column": "rater", "id_column": None,
                               "time_column": "time", **FAST, **settings})  # fmt: skip
    items = split_items(frame, config, "session.csv")
    return run_session(items, config, embeddings=[vectors[r.rows - 1] for r in items.audited])


@pytest.fixture(scope="module")
def planted():
    return audit(*planted_session())


def test_each_planted_rater_gets_its_verdict_and_the_neutral_ones_are_fine(planted):
    rows = {r.rater: r for r in planted.raters.rows}
    expected = {"lenient": "lenient", "harsh": "harsh", "noisy": "noisy",
                "central": "central tendency", "drifting": "drifting"}  # fmt: skip
    for name, role in ROLES.items():
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
    listed = [(c.rater, c.item) for c in planted.raters.bias if c.listed]
    assert ("r9", "I0") in listed
    assert planted.raters.bias[0].rater == "r9" and planted.raters.bias[0].bias > 0
    assert len(listed) <= 4  # the planted cell; a noisy or drifting rater may add one
    assert all(c.n >= 10 for c in planted.raters.bias)


def test_fair_average_and_verdict_rules_are_reported(planted):
    row = next(r for r in planted.raters.rows if r.rater == "r4")
    assert row.effects.observed_average > row.effects.fair_average
    assert "lenient" in verdict_words(row.effects.verdicts)
    assert "SE from the reference raters" in row.effects.verdicts[0].because


def test_unordered_labels_leave_out_every_effect_that_needs_an_order():
    frame, vectors = planted_session(seed=1, labels=("poor", "fair", "good", "great"))
    session = audit(frame, vectors)
    rows = {r.rater: r for r in session.raters.rows}
    for row in rows.values():
        e = row.effects
        assert e.leniency is None and e.infit is None and e.spread is None and e.drift is None
        assert {v.name for v in e.verdicts} <= {"noisy"}
    assert "noisy" in rows["r6"].verdict
    assert session.raters.bias == []


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
    assert verdicts({"central_z": -4.0, "middle_z": 1.0}) == ()
    assert verdicts({"central_z": -2.0, "middle_z": 6.0}) == ()
    assert [v.name for v in verdicts({"central_z": -4.0, "middle_z": 3.0})] == ["central tendency"]
    drift = Drift(100, 0.6, 0.15, 4.0, 0.001, [])
    assert [v.name for v in verdicts({}, drift)] == ["drifting"]
    assert verdicts({}, Drift(100, 0.2, 0.15, 2.4, 0.02, [])) == ()
