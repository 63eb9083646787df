"""The same results on any machine: the neighbour graph's similarities are exact on every BLAS
path (numpy or torch, one BLAS thread or two), parm asks OpenBLAS for one set of kernels before
numpy loads (engine.core.machine.kernels), and the sample session audited on every path parm can take (1
or 2 BLAS threads, the torch or numpy product, numpy's and torch's SIMD paths of an AVX2-only
CPU, worker processes) gives identical discrete results (predicted scores, flags, evidence, the
selected K and p, the queue's order, the raters' verdicts) and numbers within one unit of their
last written digit (helpers.NUMBER_TOLERANCE)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import (
    NUMBER_TOLERANCE,
    SESSIONS_CSV,
    SESSIONS_FLAGS,
    cli,
    output_differences,
    read_rows,
)
from threadpoolctl import threadpool_info, threadpool_limits

import engine.graph.similarity as similarity
from engine.core.machine import kernels
from engine.graph.search import build_graph


def _unit_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dim))
    vectors[rng.random(n) < 0.2] = vectors[0]  # exact ties, decided by index
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32)


def test_neighbour_lists_are_identical_on_every_blas_path(monkeypatch):
    vectors = _unit_vectors(900, 384, seed=3)
    graphs = []
    for use_torch in (False, True):
        monkeypatch.setattr(similarity, "USE_TORCH", use_torch)
        for threads in (1, 2):
            with threadpool_limits(threads):
                graphs.append(build_graph(vectors, 30, chunk=128))
    for graph in graphs[1:]:
        np.testing.assert_array_equal(graph.indices, graphs[0].indices)
        np.testing.assert_array_equal(graph.similarities, graphs[0].similarities)
        assert (graph.low, graph.high) == (graphs[0].low, graphs[0].high)


def test_the_grid_moves_a_coordinate_by_at_most_half_a_step_and_needs_unit_vectors():
    vectors = _unit_vectors(50, 384, seed=1)
    grid = similarity.on_grid(vectors)
    assert grid.dtype == np.float64
    assert np.abs(grid - vectors).max() <= 0.5 / similarity.GRID
    np.testing.assert_array_equal(np.rint(grid * similarity.GRID), grid * similarity.GRID)
    with pytest.raises(ValueError, match="unit vectors"):
        similarity.on_grid(vectors * 100)


# -- the pinned kernels -------------------------------------------------------------------------
def test_the_kernels_are_pinned_only_where_they_run_and_never_over_the_users_choice(monkeypatch):
    monkeypatch.setattr(kernels.platform, "machine", lambda: "x86_64")
    monkeypatch.delitem(sys.modules, "numpy")  # as before numpy is imported
    environ: dict[str, str] = {}
    assert kernels.pin_blas_kernels(environ, {"avx2", "fma", "sse2"}) == "Haswell"
    assert environ == {"OPENBLAS_CORETYPE": "Haswell"}
    assert kernels.pin_blas_kernels({}, {"sse2", "avx"}) is None  # an older CPU: its own kernels
    users = {"OPENBLAS_CORETYPE": "Zen"}
    assert kernels.pin_blas_kernels(users, {"avx2", "fma"}) == "Zen"
    assert users == {"OPENBLAS_CORETYPE": "Zen"}
    monkeypatch.setattr(kernels.platform, "machine", lambda: "aarch64")
    assert kernels.pin_blas_kernels({}, {"avx2", "fma"}) is None


def test_once_numpy_is_loaded_it_is_too_late_to_pin():
    assert "numpy" in sys.modules
    assert kernels.pin_blas_kernels({}, {"avx2", "fma"}) is None


def test_cpu_flags_are_read_from_the_cpuinfo_file(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\n", encoding="ascii")
    assert kernels.cpu_flags(str(info)) == {"fpu", "sse2", "avx2", "fma"}
    assert kernels.cpu_flags(str(tmp_path / "missing")) == set()


def _pinnable() -> bool:
    return (
        os.environ.get("OPENBLAS_CORETYPE", "Haswell") == "Haswell"
        and kernels.pin_blas_kernels({}, kernels.cpu_flags()) is None  # numpy is loaded here
        and all(flag in kernels.cpu_flags() for flag in kernels.NEEDS)
    )


@pytest.mark.skipif(not _pinnable(), reason="a CPU without AVX2 and FMA, or the user's own kernels")
def test_the_tests_and_parm_compute_with_the_pinned_kernels():
    blas = [pool for pool in threadpool_info() if pool["internal_api"] == "openblas"]
    assert blas and {pool["architecture"] for pool in blas} == {"Haswell"}
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    code = "import engine, numpy, threadpoolctl; print(threadpoolctl.threadpool_info()[0]['architecture'])"
    shown = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert shown.stdout.strip() == "Haswell", shown.stderr


# -- the sample session on every path -----------------------------------------------------------
def _queue(out) -> list[str]:
    """The review queue's order as predictions.csv gives it: most severe first, ties by row."""
    rows = read_rows(out / "predictions.csv")
    return [row["id"] for row in sorted(rows, key=lambda r: (-float(r["severity"]), int(r["row"])))]


def _numpy_without_avx512() -> str:
    """NPY_DISABLE_CPU_FEATURES for numpy's AVX2 paths on this CPU (an AVX2-only machine)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return " ".join(
        f for f in __cpu_dispatch__ if f.startswith("AVX512") and __cpu_features__.get(f)
    )


@pytest.mark.slow
def test_the_sample_session_gives_the_same_results_on_every_path(
    sessions_embeddings_file, tmp_path, monkeypatch
):
    common = [SESSIONS_CSV, *SESSIONS_FLAGS, "--embeddings", sessions_embeddings_file,
              "--set", "bootstrap_samples=20", "--set", "cross_fit_folds=2", "-q"]  # fmt: skip
    outputs = {}
    # In this process: BLAS threads and the similarity product's library.
    for name, use_torch, threads in (("one", False, 1), ("two", False, 2), ("torch", True, 2)):
        monkeypatch.setattr(similarity, "USE_TORCH", use_torch)
        with threadpool_limits(threads):
            code, output = cli(*common, "--out", tmp_path / name)
        assert code == 0, output
        outputs[name] = tmp_path / name
    # `parm audit` itself: its own thread count, another CPU's SIMD paths, worker processes.
    other_cpu = {"NPY_DISABLE_CPU_FEATURES": _numpy_without_avx512(), "ATEN_CPU_CAPABILITY": "avx2"}
    for name, env, extra in (
        ("threads1", {"OMP_NUM_THREADS": "1"}, []),
        ("avx2", other_cpu, []),
        ("jobs2", {}, ["--jobs", "2"]),
    ):
        command = [sys.executable, "-m", "parm_tui.launch", "audit", *map(str, common)]
        done = subprocess.run(
            [*command, *extra, "--out", str(tmp_path / name)],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        outputs[name] = tmp_path / name
    first = outputs.pop("one")
    for name, out in outputs.items():
        assert output_differences(first, out, NUMBER_TOLERANCE) == [], name
        assert _queue(out) == _queue(first), name
