"""engine.core.stages: every stage of a run named in report.json's timings_seconds, taken by
one StageTimer, adding up to at most the run's total."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest
from helpers import SAMPLE_CSV
from typer.testing import CliRunner

from engine.core.stages import (
    MEANINGS,
    STAGES,
    TOTAL,
    WHERE_RUN,
    StageTimer,
    in_order,
    with_stage,
)
from engine.outputs.report.report_json import report_schema
from parm_tui.cli import app

# Each figure is rounded to the millisecond: a sum of n figures can exceed the rounded total
# by at most n / 2 ms (and the session's stages are sums of each item's rounded figures, one
# item here), so 1 ms per figure is a bound rounding cannot break and a lost second would.
ROUNDING = 0.001


def test_a_stage_adds_its_seconds_also_when_its_block_raises():
    timer = StageTimer()
    with timer.stage("tuning"):
        time.sleep(0.01)
    with pytest.raises(ValueError), timer.stage("tuning"):
        time.sleep(0.01)
        raise ValueError
    assert 0.02 <= timer.timings["tuning"] < timer.elapsed()


def test_moving_seconds_keeps_their_sum_and_forgetting_leaves_a_stage_out():
    timer = StageTimer({"embedding": 3.0})
    timer.move("embedding", "loading_model", 1.25)
    assert timer.timings == {"embedding": 1.75, "loading_model": 1.25}
    timer.add("raters", 0.5)
    timer.forget("raters")
    assert list(timer.rounded()) == ["loading_model", "embedding"]


def test_stages_come_in_the_order_they_happen_and_a_later_one_grows_the_total():
    timings = in_order({"total": 5.0, "extra": 1.0, "severity": 2.0, "reading": 0.5})
    assert list(timings) == ["reading", "severity", "total", "extra"]
    grown = with_stage(timings, "outputs", 0.25)
    assert grown["outputs"] == 0.25 and grown["total"] == 5.25
    assert list(grown) == ["reading", "severity", "outputs", "total", "extra"]
    # A restored run has no total (its stages are not all kept): nothing is added to it.
    assert with_stage({"severity": 2.0}, "outputs", 0.25) == {"severity": 2.0}


def test_the_schema_documents_every_stage_and_nothing_else():
    timings = report_schema()["$defs"]["timings"]
    assert list(timings["properties"]) == list(STAGES)
    assert timings["additionalProperties"] is False
    for name, node in timings["properties"].items():
        assert node["description"] == MEANINGS[name] and node["minimum"] == 0


def test_a_real_run_names_every_stage_and_they_add_up_to_at_most_its_total(tmp_path):
    """The sample file (758 answers read twice: raters, reads, the session model) through
    `parm audit` with given vectors (one per row, clustered by score, so no model is loaded)."""
    scores = pd.read_csv(SAMPLE_CSV)["score"].to_numpy()
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(4, 16))[scores] + 0.8 * rng.normal(size=(len(scores), 16))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    np.save(tmp_path / "vectors.npy", vectors.astype(np.float32))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["audit", str(SAMPLE_CSV), "--embeddings", str(tmp_path / "vectors.npy"),
         "--set", "bootstrap_samples=50", "--out", str(out), "-q"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    timings = report["timings_seconds"]
    assert list(timings) == list(STAGES)  # raters, reads and the session model all ran
    assert all(seconds >= 0 for seconds in timings.values())
    named = sum(seconds for stage, seconds in timings.items() if stage != TOTAL)
    assert named <= timings[TOTAL] + ROUNDING * len(timings)
    assert timings["outputs"] > 0 and timings["severity"] > 0
    item = report["items"][0]["timings_seconds"]
    assert set(STAGES) - set(item) == {"reading", "session_model", "outputs"}
    # Where a stage is the items' (one item here), the run's figure is the item's.
    for stage in ("neighbours", "tuning", "checks", "severity", *WHERE_RUN[:2]):
        assert timings[stage] == item[stage]
