"""engine/cluster: a session's items on a Dask cluster (in-process, and two worker processes),
with the same outputs as one process, progress per item, cancel, a worker that dies, a
scheduler that does not answer, and the parent loading no model when the workers embed."""

from __future__ import annotations

import os
import sys
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from helpers import (
    FAST_CLI,
    SESSIONS_CSV,
    SESSIONS_FLAGS,
    TALKING_CLI,
    DyingTask,
    cli,
    dying_unit,
    item_tasks,
    output_differences,
    run_frame,
    session_config,
    session_frame,
)

from engine.cluster.address import ENVIRONMENT, local_workers, scheduler_address
from engine.core.errors import Cancelled, ClusterError, ConfigError
from engine.core.machine.workers import run_units
from engine.core.progress import CancelToken, Reporter
from engine.session import audit_item

distributed = pytest.importorskip("distributed")

from engine.cluster.run import run_on_cluster  # noqa: E402 - only with Dask installed

# The sample session audited with checks that run quickly but are all there.
CHECKS = ["--set", "bootstrap_samples=20", "--set", "cross_fit_folds=2"]


def same_results(one, other) -> None:
    """Two sessions' results are the same, number for number."""
    assert [r.responses.item for r in one.results] == [r.responses.item for r in other.results]
    for a, b in zip(one.results, other.results):
        np.testing.assert_array_equal(a.fitted.proba, b.fitted.proba)
        np.testing.assert_array_equal(a.predicted, b.predicted)
        np.testing.assert_array_equal(a.severity, b.severity)
        assert a.tuning.rows == b.tuning.rows
        assert a.metrics == b.metrics


# -- which scheduler ------------------------------------------------------------------------------
def test_the_setting_wins_over_dasks_environment_variable(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT, "tcp://10.0.0.9:8786")
    assert scheduler_address("local:2") == "local:2"
    assert scheduler_address(None) == "tcp://10.0.0.9:8786"
    monkeypatch.delenv(ENVIRONMENT)
    assert scheduler_address(None) is None and scheduler_address("  ") is None


def test_local_n_is_n_worker_processes_and_a_bad_n_names_the_setting():
    assert local_workers("local:3") == 3
    assert local_workers("LOCAL") == (os.cpu_count() or 1)
    assert local_workers("tcp://10.0.0.5:8786") is None
    with pytest.raises(ConfigError, match="local:N") as caught:
        local_workers("local:zero")
    assert caught.value.key == "scheduler"


# -- an in-process cluster --------------------------------------------------------------------------
def test_a_session_on_an_in_process_cluster_equals_one_process(in_process_cluster):
    frame, vectors = session_frame()
    here = run_frame(frame, vectors, session_config(rater_column="rater"))
    address = in_process_cluster.scheduler_address
    there = run_frame(frame, vectors, session_config(rater_column="rater", scheduler=address))
    same_results(here, there)
    assert [(r.rater, r.leniency) for r in here.raters.rows] == [
        (r.rater, r.leniency) for r in there.raters.rows
    ]
    assert len({r.run_id for r in there.results}) == 1


def test_progress_reaches_the_parent_per_item_as_units_finish(in_process_cluster):
    frame, vectors = session_frame()
    events = []
    config = session_config(scheduler=in_process_cluster.scheduler_address)
    run_frame(frame, vectors, config, progress=events.append)
    cluster = [e for e in events if e.stage == "cluster"]
    assert (cluster[0].done, cluster[-1].done) == (0, 1)
    facts = cluster[-1].payload
    assert facts.workers == 2 and facts.threads == 2 and not facts.local
    assert "2 worker(s) (2 threads)" in cluster[-1].message
    items = [(e.done, e.total) for e in events if e.stage == "items"]
    assert items == [(0, 2), (1, 2), (2, 2)]
    tuning = [e.message for e in events if e.stage == "tuning"]
    assert any(m.startswith("item A: ") for m in tuning)
    assert any(m.startswith("item B: ") for m in tuning)
    assert events[-1].stage == "done"


def test_dasks_environment_variable_sends_a_session_to_its_cluster(in_process_cluster, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT, in_process_cluster.scheduler_address)
    frame, vectors = session_frame()
    events = []
    run_frame(frame, vectors, session_config(), progress=events.append)
    assert any(e.stage == "cluster" for e in events)


def test_cancelling_stops_every_unit_on_the_cluster(in_process_cluster):
    frame, vectors = session_frame(items=(("A", 200, 3), ("B", 200, 4), ("C", 200, 3)))
    token = CancelToken()

    def cancel_at_first_tuning(event):
        if event.stage == "tuning":
            token.cancel()

    config = session_config(scheduler=in_process_cluster.scheduler_address, cross_fit_folds=5)
    with pytest.raises(Cancelled):
        run_frame(frame, vectors, config, progress=cancel_at_first_tuning, cancel=token)
    scheduler = in_process_cluster.scheduler
    for _ in range(200):  # a guard against hanging, not a timing test
        left = [k for k in scheduler.tasks if str(k).startswith("parm-item-")]
        if not left:
            break
        time.sleep(0.05)
    assert left == []


def test_an_error_in_a_unit_on_a_worker_is_the_same_error_as_here(in_process_cluster):
    """Item B has too few answers for K = 20: the unit's ConfigError comes back as it is."""
    frame, vectors = session_frame(items=(("A", 60, 3), ("B", 15, 3)))
    with pytest.raises(ConfigError) as here:
        run_frame(frame, vectors, session_config(similarity_top_k=20))
    config = session_config(similarity_top_k=20, scheduler=in_process_cluster.scheduler_address)
    with pytest.raises(ConfigError) as there:
        run_frame(frame, vectors, config)
    assert str(there.value) == str(here.value) and "(15)" in str(here.value)


def test_a_scheduler_that_does_not_answer_is_a_clear_message_after_the_timeout():
    frame, vectors = session_frame()
    # Port 9 (discard) on this machine: refused, so Dask keeps trying until the timeout.
    config = session_config(scheduler="tcp://127.0.0.1:9", scheduler_timeout=0.5)
    with pytest.raises(ClusterError) as caught:
        run_frame(frame, vectors, config)
    message = str(caught.value)
    assert "tcp://127.0.0.1:9 did not answer within 0.5 s" in message
    assert "'scheduler_timeout'" in message and "dask scheduler" in message


def test_an_address_dask_cannot_read_is_named():
    frame, vectors = session_frame()
    with pytest.raises(ClusterError, match="'nonsense' is not a Dask scheduler address"):
        run_frame(frame, vectors, session_config(scheduler="nonsense"))


def test_a_scheduler_without_workers_says_to_start_them():
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        frame, vectors = session_frame()
        config = session_config(scheduler=empty.scheduler_address, scheduler_timeout=0.5)
        with pytest.raises(ClusterError, match="has no workers .* `dask worker "):
            run_frame(frame, vectors, config)


def test_a_scheduler_without_dask_installed_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    frame, vectors = session_frame()
    with pytest.raises(ConfigError, match=r"pip install 'parm\[dask\]'") as caught:
        run_frame(frame, vectors, session_config(scheduler="local:2"))
    assert caught.value.key == "scheduler"


def test_an_unreachable_scheduler_exits_2_from_the_command_line(tmp_path):
    vectors = np.random.default_rng(0).normal(size=(600, 8)).astype(np.float32)
    np.save(tmp_path / "v.npy", vectors)
    code, output = cli(
        SESSIONS_CSV, *SESSIONS_FLAGS, "--embeddings", tmp_path / "v.npy", *FAST_CLI,
        "--scheduler", "tcp://127.0.0.1:9", "--set", "scheduler_timeout=0.5",
        "--out", tmp_path / "out",
    )  # fmt: skip
    assert code == 2
    assert "Error: The Dask scheduler at tcp://127.0.0.1:9 did not answer within 0.5 s" in output
    assert not (tmp_path / "out").exists()


def test_the_preload_loads_no_model_when_a_scheduler_is_set(monkeypatch):
    from engine.embedding import loading

    started = []
    monkeypatch.setattr(loading, "preload_model", lambda *args: started.append(args))
    frame, _ = session_frame()
    config = session_config(scheduler="tcp://10.0.0.9:8786")
    from engine.input.items import split_items

    loading.preload_for(split_items(frame, config), config)
    time.sleep(0.2)
    assert started == []


# -- the worker's setup ---------------------------------------------------------------------------
def test_a_worker_shares_its_hosts_cores_as_jobs_does(monkeypatch):
    from threadpoolctl import threadpool_info

    from engine.cluster.worker import WorkerSetup

    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    worker = SimpleNamespace(address="tcp://127.0.0.1:4000", state=SimpleNamespace(nthreads=1))
    cores = os.cpu_count() or 1
    setup = WorkerSetup({"127.0.0.1": 1}, ("elsewhere", 0), None)
    try:
        setup.setup(worker)
        assert os.environ["OMP_NUM_THREADS"] == str(cores)
        assert {pool["num_threads"] for pool in threadpool_info()} == {cores}
        monkeypatch.delenv("OMP_NUM_THREADS")
        crowded = WorkerSetup({"127.0.0.1": 4 * cores}, ("elsewhere", 0), None)
        crowded.setup(worker)
        assert os.environ["OMP_NUM_THREADS"] == "1"
        crowded.teardown(worker)
    finally:
        setup.teardown(worker)


def test_a_worker_inside_the_parent_leaves_the_parents_threads_alone(monkeypatch):
    import socket

    from engine.cluster.worker import WorkerSetup

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    worker = SimpleNamespace(address="inproc://x/1/2", state=SimpleNamespace(nthreads=1))
    WorkerSetup({}, (socket.gethostname(), os.getpid()), "/nonexistent/log").setup(worker)
    assert "OMP_NUM_THREADS" not in os.environ


# -- two worker processes ---------------------------------------------------------------------------
@pytest.mark.slow
def test_the_sample_session_gives_the_same_outputs_on_clusters_as_with_jobs_1(
    sessions_embeddings_file, one_thread_cluster, tmp_path
):
    """sessions.csv through `parm audit`: --jobs 1, an in-process cluster and `local:2` write
    the same predictions, probabilities, severity and tables, bit for bit; only run ids, dates,
    timings and the scheduler setting differ. The in-process cluster has one worker thread: BLAS's
    thread limit (engine.core.machine.threads, threadpoolctl) is the process's, set and restored
    by each fit, so two worker threads of one process change it under each other's products and
    their iterative fits end a few last bits apart, which fits that stop at a tolerance carry to
    the fourth decimal (fresh clones' runs with two threads: consensus_p 0.606318 against
    0.606327, severity 0.282792 against 0.282913). Worker processes (`local:2`) have their own."""
    common = [SESSIONS_CSV, *SESSIONS_FLAGS, "--embeddings", sessions_embeddings_file, *CHECKS]
    outputs = {}
    for name, where in (
        ("jobs1", ["--jobs", "1"]),
        ("inproc", ["--scheduler", one_thread_cluster.scheduler_address]),
        ("local2", ["--scheduler", "local:2"]),
    ):
        code, output = cli(*common, *where, "--out", tmp_path / name)
        assert code == 0, output
        outputs[name] = tmp_path / name
    assert "Dask cluster: 2 worker(s) (2 threads) started here" in output
    assert output_differences(outputs["jobs1"], outputs["inproc"]) == []
    assert output_differences(outputs["jobs1"], outputs["local2"]) == []


@pytest.mark.slow
def test_a_worker_that_dies_mid_run_has_its_unit_run_again(tmp_path):
    frame, vectors = session_frame(items=(("A", 80, 3), ("B", 60, 4), ("C", 50, 3)))
    tasks, names, sizes = item_tasks(frame, vectors, session_config())
    marker = tmp_path / "died-once"
    dying = [DyingTask(task, str(marker) if k == 1 else None) for k, task in enumerate(tasks)]
    reporter = Reporter()
    here = run_units(audit_item, tasks, 1, reporter, lambda k, event: None)
    there = run_on_cluster(
        dying_unit, dying, "local:2", 30, reporter, lambda k, event: None, names, sizes
    )
    assert marker.exists()  # item B's worker died once
    for a, b in zip(here, there):
        np.testing.assert_array_equal(a.fitted.proba, b.fitted.proba)
        np.testing.assert_array_equal(a.severity, b.severity)


@pytest.mark.slow
def test_a_unit_that_keeps_killing_its_workers_stops_the_run_naming_the_item():
    frame, vectors = session_frame(items=(("A", 60, 3), ("B", 50, 4)))
    tasks, names, sizes = item_tasks(frame, vectors, session_config())
    dying = [DyingTask(task, always=k == 1) for k, task in enumerate(tasks)]
    with pytest.raises(ClusterError) as caught:
        run_on_cluster(
            dying_unit, dying, "local:2", 30, Reporter(), lambda k, event: None, names, sizes
        )
    message = str(caught.value)
    assert message.startswith("The Dask workers running item B died ")
    assert "nothing was written" in message and "dask.log" in message


@pytest.mark.slow
def test_a_local_cluster_writes_nothing_of_dasks_to_the_terminal(tmp_path):
    """`parm audit --scheduler local:2` in a process of its own: its stderr holds parm's own
    lines only, none of Dask's logging, warnings or the workers' output."""
    import subprocess

    frame, vectors = session_frame()
    frame.insert(0, "id", [f"R{i}" for i in range(len(frame))])
    frame.to_csv(tmp_path / "s.csv", index=False)
    np.save(tmp_path / "s.npy", vectors)
    command = [
        sys.executable, "-m", "parm_tui.cli", "audit", str(tmp_path / "s.csv"), "--item-col",
        "item", "--embeddings", str(tmp_path / "s.npy"), "--scheduler", "local:2",
        "--out", str(tmp_path / "out"), "--no-guess", *TALKING_CLI,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    # parm's own notices (columns not used) may come first, then the cluster's line.
    started = "Dask cluster: 2 worker(s) (2 threads) started here; "
    first = next(k for k, line in enumerate(lines) if line.startswith("Dask cluster: "))
    assert lines[first].startswith(started) and all(
        line.startswith("Not used") for line in lines[:first]
    )
    dasks = ("distributed", "dask", "UserWarning", "Traceback", " INFO ", " ERROR ", "Worker")
    assert not [line for line in lines if any(word in line for word in dasks)]
    assert lines[-1].startswith("Wrote ")


@pytest.mark.slow
def test_workers_embed_their_own_items_and_the_parent_loads_no_model(monkeypatch, tmp_path):
    """Without given embeddings each unit embeds its item on its worker (the bundled model, on
    the CPU here): the parent loads nothing, and the results are those of a run embedded here."""
    from engine.embedding import loading
    from engine.input.items import split_items
    from engine.session import run_session

    table = pd.read_csv(SESSIONS_CSV, dtype=str, keep_default_na=False)
    frame = table.groupby("item", sort=False).head(40).reset_index(drop=True)
    config = session_config(id_column="id")
    items = split_items(frame, config, source="sessions.csv")
    here = run_session(items, config)
    monkeypatch.setattr(loading, "_LOADS", {})
    # The workers' own cache folder (they inherit the environment): empty, so they embed.
    monkeypatch.setenv("PARM_CACHE_DIR", str(tmp_path / "workers-cache"))
    there = run_session(items, config.updated(scheduler="local:2"))
    assert loading._LOADS == {}  # the parent never asked for a model
    for a, b in zip(here.results, there.results):
        assert b.embedding.model == a.embedding.model
        assert not b.embedding.cached and b.embedding.device == "cpu"
        np.testing.assert_allclose(a.fitted.proba, b.fitted.proba, atol=1e-5)
        np.testing.assert_array_equal(a.predicted, b.predicted)
