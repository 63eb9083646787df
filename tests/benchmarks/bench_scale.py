"""Speed and memory of parm on large synthetic assessments, against a naive dense implementation.

    python tests/benchmarks/bench_scale.py                 # N = 15,000 grid + Brent + naive
    python tests/benchmarks/bench_scale.py --large         # also N = 100,000, default settings
    python tests/benchmarks/bench_scale.py --naive-k 1 25 50 --skip-naive

Data: clustered unit vectors (d = 384, 12 clusters, 4 score categories, 20 % of scores
re-drawn), written as a CSV plus an .npy of embeddings, so the parm side is the real command
`parm audit FILE --embeddings E.npy` (process start, CSV reading and report writing included),
timed with /usr/bin/time -v for wall clock and peak memory. Progress-event spacing and the stage
breakdown come from an in-process `run_audit` on the same data.

The naive side follows the paper literally: an N x N float64 cosine matrix, min-max over the
off-diagonal, and per K a dense top-K mask (argpartition per row), the union with its transpose,
the features as dense products, and the same L-BFGS-B fit of the pseudo-likelihood (the
objective of tests/naive.py). It is timed on a few K values and extrapolated to the 50-value
grid: setup + 50 x (mean time per K).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from machine import timed

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

FLOPS_NUMPY, FLOPS_TORCH = 75e9, 115e9  # float32 GEMM on 2 cores, FACTS.md


def synthetic(n: int, dim: int = 384, n_classes: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(12, dim))
    cluster = rng.integers(0, 12, size=n)
    vectors = centres[cluster] + 1.5 * rng.normal(size=(n, dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    noise = (rng.random(n) < 0.2) * rng.integers(0, n_classes, n)
    return vectors.astype(np.float32), (cluster % n_classes + noise) % n_classes


def write_inputs(folder: Path, emb: np.ndarray, scores: np.ndarray) -> tuple[Path, Path]:
    table, array = folder / "responses.csv", folder / "embeddings.npy"
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "answer", "score"])
        writer.writerows((f"r{i}", f"synthetic answer {i}", int(s)) for i, s in enumerate(scores))
    np.save(array, emb)
    return table, array


def run_cli(table: Path, array: Path, out: Path, settings: dict[str, str]) -> dict:
    """`parm audit` under /usr/bin/time -v: wall and CPU seconds and peak resident memory."""
    parm = Path(sys.executable).with_name("parm")
    command = [str(parm), "audit", str(table), "--embeddings", str(array)]
    command += ["--out", str(out), "--force", "--quiet"]
    for key, value in settings.items():
        command += ["--set", f"{key}={value}"]
    measured = timed(command)
    return {"seconds": measured["wall"], "cpu": measured["cpu"], "peak_gb": measured["peak_gb"]}


def in_process(emb: np.ndarray, scores: np.ndarray, settings: dict) -> dict:
    """run_audit with a progress callback: stage timings and the largest gap between events."""
    from engine.embedding.vectors import Embedded
    from engine.input.responses import Responses
    from engine.input.settings.config import load_defaults
    from engine.pipeline import run_audit

    n = len(scores)
    responses = Responses(
        texts=[f"synthetic answer {i}" for i in range(n)],
        scores=scores,
        labels=tuple(str(c) for c in range(int(scores.max()) + 1)),
        ids=[f"r{i}" for i in range(n)],
        rows=np.arange(1, n + 1),
        file_rows=n,
    )
    config = load_defaults().updated(**settings)
    stamps: list[tuple[float, str]] = []
    started = time.perf_counter()
    record = lambda e: stamps.append((time.perf_counter(), f"{e.stage}: {e.message}"))  # noqa: E731
    result = run_audit(responses, config, record, embedded=Embedded.precomputed(emb))
    total = time.perf_counter() - started
    times = [started] + [t for t, _ in stamps] + [started + total]
    labels = ["start"] + [m for _, m in stamps]
    gaps = np.diff(times)
    return {
        "seconds": total,
        "timings": result.timings,
        "max_gap": float(gaps.max()) if gaps.size else float("nan"),
        "events": len(times) - 1,
        "gap_after": labels[int(np.argmax(gaps))] if gaps.size else "",
        "rows": len(result.tuning.rows),
        "selected": result.selected,
    }


def naive_run(emb: np.ndarray, scores: np.ndarray, ks: list[int], grid: int) -> dict:
    """The paper's equations, dense: setup once, then per K mask + symmetrise + features + fit."""
    import naive
    from scipy.optimize import minimize

    from engine.model.pseudo_likelihood import one_blas_thread

    n_classes = int(scores.max()) + 1
    weights = naive.balanced_weights(scores, n_classes)
    onehot = np.eye(n_classes)[scores]
    started, cpu_started = time.perf_counter(), time.process_time()
    x = emb.astype(np.float64)
    sim = x @ x.T
    np.fill_diagonal(sim, np.nan)
    low, high = np.nanmin(sim), np.nanmax(sim)
    normalised = (sim - low) / (high - low)
    np.fill_diagonal(normalised, 0.0)
    np.fill_diagonal(sim, -np.inf)
    setup, setup_cpu = time.perf_counter() - started, time.process_time() - cpu_started
    per_k, per_k_cpu = [], []
    for k in ks:
        mark, cpu_mark = time.perf_counter(), time.process_time()
        top = np.argpartition(sim, sim.shape[0] - k, axis=1)[:, -k:]
        mask = np.zeros(sim.shape, dtype=bool)
        np.put_along_axis(mask, top, True, axis=1)
        mask |= mask.T
        graph = np.where(mask, normalised, 0.0)
        t, s = graph @ onehot, graph.sum(axis=1)
        with one_blas_thread():  # as parm does, so the comparison is not about BLAS threads
            minimize(
                naive.objective,
                np.zeros(3 * (n_classes - 1)),
                args=(t, s, scores, weights),
                jac=True,
                method="L-BFGS-B",
                bounds=[(-1000.0, 1000.0)] * (3 * (n_classes - 1)),
            )
        per_k.append(time.perf_counter() - mark)
        per_k_cpu.append(time.process_time() - cpu_mark)
        del top, mask, graph
    return {
        "setup": setup,
        "per_k": per_k,
        "extrapolated": setup + grid * float(np.mean(per_k)),
        "extrapolated_cpu": setup_cpu + grid * float(np.mean(per_k_cpu)),
        "ks": ks,
    }


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
        f"numpy {np.__version__}, load average {load:.1f} at start"
    )


def ks_json(ks) -> str:
    return "[" + ",".join(str(k) for k in ks) + "]"


def medium(args, folder: Path) -> list[str]:
    n = args.n
    emb, scores = synthetic(n)
    table, array = write_inputs(folder, emb, scores)
    grid = {"similarity_top_k": ks_json(range(1, 51))}
    # The naive side only tunes and fits; parm's uncertainty checks (200 bootstrap samples,
    # 5-fold cross-fitting of the whole grid) are extra work, so parm is timed both ways.
    bare = {**grid, "bootstrap_samples": "0", "cross_fit_folds": "0"}
    lines = [f"## N = {n:,}, d = 384, 4 categories", ""]
    cli_bare = run_cli(table, array, folder / "out-bare", bare)
    before = product_floor(emb)[0]
    cli = run_cli(table, array, folder / "out-grid", grid)
    product = (before + product_floor(emb)[0]) / 2  # around the run, as the machine was then
    inner = in_process(emb, scores, {"similarity_top_k": list(range(1, 51))})
    brent_settings = {"similarity_top_k": [10], "similarity_power": {"min": 0.5, "max": 4.0}}
    brent = in_process(emb, scores, brent_settings)
    floor = 2.0 * n * n * 384
    lines += [
        "| run | wall s | peak GB | notes |",
        "| --- | ---: | ---: | --- |",
        f"| parm audit, K = 1..50, no bootstrap / cross-fitting (whole process) | "
        f"{cli_bare['seconds']:.1f} | {cli_bare['peak_gb']:.2f} | the naive side's work; "
        f"{cli_bare['cpu']:.0f} CPU s |",
        f"| parm audit, K = 1..50, default checks (whole process) | {cli['seconds']:.1f} | "
        f"{cli['peak_gb']:.2f} | {cli['cpu']:.0f} CPU s; in-process stages (s): "
        f"{inner['timings']} |",
        f"| run_audit, power by Brent on [0.5, 4], K = 10 | {brent['seconds']:.1f} | | "
        f"{brent['rows']} powers tried, p = {brent['selected'].power:.3f}; stages (s): "
        f"{brent['timings']} |",
        f"| neighbour-search floor (2 N^2 d = {floor:.2g} flop) | {floor / FLOPS_TORCH:.1f}"
        f"-{floor / FLOPS_NUMPY:.1f} | | at the torch-numpy GEMM rate |",
        f"| one full N x N exact (float64) product, just before and after that run | "
        f"{product:.2f} | | the neighbour search above took "
        f"{inner['timings'].get('neighbours', float('nan')):.1f} s |",
        "",
        f"parm audit, K = 1..50, default checks: {cli['seconds']:.2f} s, "
        f"{cli['seconds'] / product:.2f} exact products (goal: at most 5).",
    ]
    if not args.skip_naive:
        ref = naive_run(emb, scores, args.naive_k, 50)
        per_k = ", ".join(f"K={k}: {t:.1f} s" for k, t in zip(ref["ks"], ref["per_k"]))
        lines.append(
            f"| naive dense, K = 1..50 (extrapolated) | {ref['extrapolated']:.0f} | | setup "
            f"{ref['setup']:.1f} s + 50 x mean of timed K ({per_k}) |"
        )
        lines += [
            "",
            f"Speed-up over naive (goal >= 20x, aim 50x): "
            f"{ref['extrapolated'] / cli_bare['seconds']:.0f}x for the same work, "
            f"{ref['extrapolated'] / cli['seconds']:.0f}x with parm's default checks. "
            f"In CPU seconds (less sensitive to other load): naive "
            f"{ref['extrapolated_cpu']:.0f}, speed-up {ref['extrapolated_cpu'] / cli_bare['cpu']:.0f}x"
            f" and {ref['extrapolated_cpu'] / cli['cpu']:.0f}x.",
        ]
    lines += [
        "",
        f"Largest gap between progress events (goal <= 1 s): grid {inner['max_gap']:.2f} s "
        f"(largest after: {inner['gap_after']}), Brent {brent['max_gap']:.2f} s "
        f"(after: {brent['gap_after']}).",
    ]
    return lines


def product_floor(emb: np.ndarray, rows: int = 4096) -> tuple[float, float]:
    """Wall and CPU seconds (all threads) of one full N x N similarity product, E @ E.T, as
    parm computes its tiles since the products became exact (engine.graph.similarity: the
    vectors on the 2^-21 grid, multiplied in float64 by torch), in blocks of `rows` rows into
    one reused buffer: the floor the whole run is compared with, measured in the same run so
    the machine's load is about the same."""
    import torch

    from engine.graph.similarity import on_grid

    tensor = torch.from_numpy(on_grid(emb))
    out = torch.empty((min(rows, emb.shape[0]), emb.shape[0]), dtype=torch.float64)
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, emb.shape[0], rows):
        stop = min(emb.shape[0], start + rows)
        torch.matmul(tensor[start:stop], tensor.T, out=out[: stop - start])
    return time.perf_counter() - started, time.process_time() - cpu


def large(folder: Path, n: int = 100_000) -> list[str]:
    """`parm audit` at N with the default settings (K = 5, 10, ..., 50, 200 bootstrap samples,
    5-fold cross-fitting, the severity), against one full N x N product measured before and
    after it (the mean of the two is the floor)."""
    emb, scores = synthetic(n, seed=1)
    table, array = write_inputs(folder, emb, scores)
    (before, before_cpu) = product_floor(emb)
    cli = run_cli(table, array, folder / "out-large", {})
    (after, after_cpu) = product_floor(emb)
    floor, floor_cpu = (before + after) / 2, (before_cpu + after_cpu) / 2
    report = json.loads((folder / "out-large" / "report.json").read_text(encoding="utf-8"))
    # A one-item run's stages are its item's (report.json's top level has the session's).
    items = report.get("items") or [{}]
    stages = {**report.get("timings_seconds", {}), **(items[0].get("timings_seconds") or {})}
    flop = 2.0 * n * n * 384
    others = sum(v for k, v in stages.items() if k not in ("total", "neighbours"))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return [
        "",
        f"## N = {n:,}, d = 384, default settings",
        "",
        "| run | wall s | peak GB |",
        "| --- | ---: | ---: |",
        f"| parm audit (whole process; {cli['cpu']:.0f} CPU s) | {cli['seconds']:.0f} | "
        f"{cli['peak_gb']:.2f} |",
        f"| stages inside that run (report.json) | {stages} | |",
        f"| one full N x N exact (float64) product (torch), before / after the run | "
        f"{before:.0f} / {after:.0f} ({before_cpu:.0f} / {after_cpu:.0f} CPU s) | |",
        f"| 2 N^2 d = {flop:.2g} flop at 115 / 75 GFLOP/s | "
        f"{flop / FLOPS_TORCH:.0f} / {flop / FLOPS_NUMPY:.0f} | |",
        "",
        f"Whole run / product floor: {cli['seconds'] / floor:.2f} in wall time (goal: at most "
        f"2), {cli['cpu'] / floor_cpu:.2f} in CPU time (less sensitive to other work on the "
        f"machine). Neighbour "
        f"search / floor: {stages.get('neighbours', float('nan')) / floor:.2f}; the other stages "
        f"take {others:.0f} s (severity {stages.get('severity', float('nan')):.0f} s). "
        f"Load average {load:.1f} at the end.",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=15_000)
    parser.add_argument("--naive-k", type=int, nargs="+", default=[1, 25, 50])
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--large", action="store_true", help="also run N = 100,000")
    parser.add_argument("--large-only", action="store_true", help="only run N = 100,000")
    parser.add_argument("--large-n", type=int, default=100_000, help="N of the large run")
    args = parser.parse_args()
    lines = [f"Machine: {machine()}", ""]
    with tempfile.TemporaryDirectory(prefix="parm-bench-") as tmp:
        if not args.large_only:
            lines += medium(args, Path(tmp))
        print("\n".join(lines), flush=True)
        if args.large or args.large_only:
            more = large(Path(tmp), args.large_n)
            print("\n".join(more), flush=True)


if __name__ == "__main__":
    main()
