"""engine.runners: a session's items run where the settings say, through one contract: this
process for jobs 1, worker processes for more, a Dask cluster when there is a scheduler (the
setting, else DASK_SCHEDULER_ADDRESS); only a cluster's units embed their own answers."""

from __future__ import annotations

from engine.input.settings.config import load_defaults
from engine.runners import RUNNERS, Dask, Here, Processes, runner_for


def test_the_settings_choose_the_runner(monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    defaults = load_defaults()
    assert runner_for(defaults) == Here()
    assert runner_for(defaults.updated(jobs=3)) == Processes(jobs=3)
    cluster = runner_for(defaults.updated(scheduler="tcp://10.0.0.5:8786", jobs=3))
    assert cluster == Dask("tcp://10.0.0.5:8786", defaults.scheduler_timeout)
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://10.0.0.9:8786")
    assert runner_for(defaults).name == "dask"


def test_only_a_clusters_units_embed_where_they_run():
    assert {name: runner.embeds_here for name, runner in RUNNERS.items()} == {
        "here": True, "processes": True, "dask": False,
    }  # fmt: skip


def test_a_cluster_counts_its_workers_seconds_and_here_the_parents():
    class Result:
        def __init__(self, seconds):
            self.timings = {"loading_model": seconds, "embedding": 2 * seconds}

    results = [Result(1.0), Result(0.5)]
    assert Dask("local:2", 5.0).timings(results, 9.0, 9.0) == {
        "loading_model": 1.5, "embedding": 3.0,
    }  # fmt: skip
    assert Here().timings(results, 0.25, 4.0) == {"loading_model": 0.25, "embedding": 4.0}


def test_each_item_stage_is_summed_over_the_items_and_one_no_item_had_is_left_out():
    class Result:
        def __init__(self, timings):
            self.timings = timings

    results = [Result({"tuning": 1.5, "severity": 2.0, "raters": 0.25}), Result({"tuning": 0.5})]
    summed = {"tuning": 2.0, "severity": 2.0, "raters": 0.25}
    assert Here().timings(results, 0.0, 1.0) == {"loading_model": 0.0, "embedding": 1.0, **summed}
    assert Processes(jobs=2).timings(results, 0.0, 1.0)["tuning"] == 2.0
    # On a cluster the parent embeds nothing: its own seconds (9.0) do not count.
    assert Dask("local:2", 5.0).timings(results, 9.0, 9.0) == summed
