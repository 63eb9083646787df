"""engine.live.alerts.rules and engine.live.alerts.alert: a planted drifting rater and a planted falling item
are alerted on the day they start, a steady session is not, nothing is judged on too few reads,
and a rule never drops an alert when its figure gets worse or its p threshold looser."""

from __future__ import annotations

import dataclasses

import pytest
from helpers import live_config, live_reads
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.live.alerts import rules
from engine.live.alerts.alert import open_alerts
from engine.live.alerts.figures import Cell, double_reads, session_cells
from engine.live.intake.reading import read_file_reads
from engine.live.intake.session_reads import load_reads
from engine.live.intake.store import open_store
from engine.live.monitor import judge

CONFIG = live_config()


def judged(tmp_path, frames, config=CONFIG):
    with open_store(tmp_path / "s") as store:
        for k, frame in enumerate(frames):
            store.add(read_file_reads(frame, config, f"d{k}", ("", "")), f"d{k}", str(k), "r")
        reads = load_reads(store)
    pairs = double_reads(reads)
    cells, _ = session_cells(reads)
    history, latest = judge(reads, pairs, cells, config)
    return reads, history, open_alerts(history, latest)


def test_a_steady_session_raises_no_alert(tmp_path):
    """At p < 0.001 (the default 0.01 gives about one alert in a hundred judgements of a steady
    unit; tests/benchmarks/bench_monitor.py measures the rate)."""
    frames = live_reads(days=6, answers_per_day=60, accuracy=0.95, seeds_per_rater=4, seed=11)
    _, history, _ = judged(tmp_path, frames, CONFIG.updated(monitor_alert_p=0.001))
    assert history == []


def test_a_drifting_rater_is_alerted_from_the_day_they_drift(tmp_path):
    """Eight raters: with fewer, a drifter is a large share of each co-rater's pairs, and their
    co-raters' leniency against them moves too (the benchmark has twenty)."""
    frames = live_reads(days=6, answers_per_day=80, accuracy=0.95, seed=12,
                        raters=tuple("ABCDEFGH"), drift=("B", 4, 0.6))  # fmt: skip
    reads, history, now = judged(tmp_path, frames)
    drift_day = reads.days[4]
    drifts = [a for a in history if a.kind == "rater_drift"]
    assert {a.rater for a in drifts} == {"B"} and min(a.period for a in drifts) == drift_day
    assert all(a.rater in ("B", "") for a in history)
    assert any(a.kind == "rater_drift" and a.rater == "B" for a in now)
    drift = next(a for a in drifts if a.period == drift_day)
    assert drift.figure > 0 and drift.p < CONFIG.monitor_alert_p and "more lenient" in drift.message


def test_a_falling_item_is_alerted_on_the_afternoon_it_falls(tmp_path):
    frames = live_reads(days=6, answers_per_day=80, accuracy=0.95, seed=13,
                        fall=("q2", 5, 0.5))  # fmt: skip
    reads, history, now = judged(tmp_path, frames)
    day = reads.days[5]
    kinds = {a.kind for a in history if a.item == "q2"}
    assert "item_within_day" in kinds and kinds & {"item_history_red", "item_history_yellow"}
    assert all(a.period.startswith(day) for a in history if a.item)
    assert not [a for a in history if a.item == "q1"]
    within = next(a for a in now if a.kind == "item_within_day")
    assert within.period == f"{day} pm" and within.figure < within.threshold


def test_a_rater_off_the_validity_papers_is_alerted(tmp_path):
    frames = live_reads(days=4, answers_per_day=10, accuracy=0.95, seeds_per_rater=8, seed=14,
                        drift=("C", 1, 0.9))  # fmt: skip
    _, history, _ = judged(tmp_path, frames)
    validity = [a for a in history if a.kind == "rater_validity"]
    assert validity and {a.rater for a in validity} == {"C"}
    assert all(a.figure < a.threshold for a in validity)


def test_nothing_is_judged_on_fewer_reads_than_the_minimum(tmp_path):
    frames = live_reads(days=6, answers_per_day=60, accuracy=0.95, seed=12, drift=("B", 4, 0.6))
    strict = CONFIG.updated(monitor_min_reads=10_000)
    _, history, _ = judged(tmp_path, frames, strict)
    assert history == []


def test_each_alert_sentence_states_its_figure_threshold_and_how_sure(tmp_path):
    frames = live_reads(days=6, answers_per_day=80, accuracy=0.95, seed=13, fall=("q2", 5, 0.5))
    _, history, _ = judged(tmp_path, frames)
    for alert in history:
        assert "p = " in alert.message and alert.message.endswith(".")
        if alert.kind.startswith("item_"):
            assert f"{alert.figure:.1%}" in alert.message


def cell(exact: int, pairs: int = 50, period: str = "2026-05-10") -> Cell:
    return Cell("q", "", period, pairs=pairs, exact=exact)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 50), st.integers(0, 50), st.sampled_from([0.001, 0.01, 0.05]))
def test_a_worse_figure_or_a_looser_p_never_drops_an_alert(better, worse, p):
    """Monotone: the target rule alerts a lower exact count whenever it alerts a higher one, and
    a larger monitor_alert_p keeps every alert of a smaller one."""
    better, worse = max(better, worse), min(better, worse)
    config = CONFIG.updated(monitor_alert_p=p)
    looser = CONFIG.updated(monitor_alert_p=min(p * 10, 1.0))
    for rule_config in (config, looser):
        said = [rules._against_target(cell(k), 0.8, None, 3, rule_config) for k in (better, worse)]
        if said[0] is not None:
            assert said[1] is not None
    if rules._against_target(cell(worse), 0.8, None, 3, config) is not None:
        assert rules._against_target(cell(worse), 0.8, None, 3, looser) is not None
    past = [cell(45, period=f"2026-05-0{d}") for d in range(1, 6)]
    strict = rules._against_history(cell(better), past, 20.0, 5.0, config)
    if strict is not None:
        assert rules._against_history(cell(worse), past, 20.0, 5.0, config) is not None


def test_targets_follow_the_scale_size():
    targets = CONFIG.exact_targets
    assert [rules.target(targets, n) for n in (1, 2, 3, 4, 5, 6, 9)] == [
        None, 0.85, 0.8, 0.75, 0.75, 0.6, 0.6]  # fmt: skip
    assert rules.target(CONFIG.qualify_targets, 5) == 0.7


def test_open_alerts_are_those_on_their_units_latest_judged_day():
    old = rules.Alert("item_target", "q", "", "2026-05-01", 0.5, 0.8, "m", 0.001, 30, "item_target")
    new = dataclasses.replace(old, period="2026-05-03")
    assert open_alerts([old, new], {("item_target", "q", ""): "2026-05-03"}) == [new]
    assert open_alerts([old], {("item_target", "q", ""): "2026-05-03"}) == []
    with pytest.raises(KeyError):
        _ = rules.Alert("unknown", "", "", "", 0, 0, "").level
